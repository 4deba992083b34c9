package region

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// printer writes Up's report, one whole line at a time, from any
// goroutine.
type printer struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func newPrinter(w io.Writer) *printer { return &printer{w: w, start: time.Now()} }

func (p *printer) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, args...)
}

// event prints one line of the readiness summary: what happened to what,
// and the time since Up began.
func (p *printer) event(verb, what, detail string) {
	t := p.since()
	p.printf("  %-8s %-26s %-60s %5.1fs\n", verb, what, detail, t.Seconds())
}

func (p *printer) since() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Since(p.start).Round(100 * time.Millisecond)
}

// reset starts the clock of the lines again.
func (p *printer) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.start = time.Now()
}
