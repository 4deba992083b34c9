package controller

// SetShowWhole makes Show copy every object before sending the first, as
// it did before it streamed, for benchmarks that compare the two.
func (c *Controller) SetShowWhole(on bool) { c.showWhole.Store(on) }
