// Package progress shows the progress of a long-running change in a
// terminal: one status line redrawn in place (state, newest message, time
// so far) when the output is a terminal, and one plain line per new
// message otherwise, so that logs and pipes get readable text without
// control characters.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Options configure a Display.
type Options struct {
	// Terminal redraws one line in place; otherwise every new message is
	// its own line.
	Terminal bool
	// Width is the terminal's width in columns; the line is cut to fit so
	// that it never wraps (0 means 80).
	Width int
	// Tick redraws the line this often on a terminal so that the time
	// shown moves; 0 redraws only on updates.
	Tick time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Display is the status line of one change. Its methods are safe for
// concurrent use.
type Display struct {
	opts  Options
	w     io.Writer
	start time.Time

	mu        sync.Mutex
	state     string
	msg       string
	lastPlain string
	drawn     bool // a status line is on the terminal
	done      bool
	stop      chan struct{}
	stopped   chan struct{}
	stopOnce  sync.Once
}

// New returns a Display writing to w, starting its clock now.
func New(w io.Writer, opts Options) *Display {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Width <= 0 {
		opts.Width = 80
	}
	d := &Display{opts: opts, w: w, start: opts.Now()}
	if opts.Terminal && opts.Tick > 0 {
		d.stop, d.stopped = make(chan struct{}), make(chan struct{})
		go d.tick()
	}
	return d
}

func (d *Display) tick() {
	defer close(d.stopped)
	t := time.NewTicker(d.opts.Tick)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			d.mu.Lock()
			if d.drawn {
				d.draw()
			}
			d.mu.Unlock()
		}
	}
}

// Update shows a new state and message (msg may be empty). Off a terminal,
// a line is printed only when either changed.
func (d *Display) Update(state, msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return
	}
	d.state, d.msg = state, msg
	if d.opts.Terminal {
		d.draw()
		return
	}
	line := state
	if msg != "" {
		line += "  " + msg
	}
	if line != d.lastPlain {
		d.lastPlain = line
		fmt.Fprintln(d.w, line)
	}
}

// draw rewrites the status line; d.mu is held.
func (d *Display) draw() {
	elapsed := d.opts.Now().Sub(d.start).Round(time.Second)
	line := fmt.Sprintf("[%s] %s", elapsed, d.state)
	if d.msg != "" {
		line += "  " + d.msg
	}
	fmt.Fprint(d.w, "\r\x1b[K"+fit(line, d.opts.Width-1))
	d.drawn = true
}

// fit cuts s to n runes, ending in "..." when cut.
func fit(s string, n int) string {
	s = strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	if n <= 3 {
		return string(r[:max(n, 0)])
	}
	return string(r[:n-3]) + "..."
}

// clear removes the status line from the terminal; d.mu is held.
func (d *Display) clear() {
	if d.drawn {
		fmt.Fprint(d.w, "\r\x1b[K")
		d.drawn = false
	}
}

// Println prints a line that stays (above the status line on a terminal,
// which is redrawn under it).
func (d *Display) Println(s string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	redraw := d.drawn
	d.clear()
	fmt.Fprintln(d.w, s)
	if redraw && !d.done {
		d.draw()
	}
}

// Finish replaces the status line with a final line (on a terminal, with
// the time the change took) and stops the display. Later calls do nothing.
func (d *Display) Finish(final string) {
	d.mu.Lock()
	if d.done {
		d.mu.Unlock()
		return
	}
	d.done = true
	d.clear()
	if d.opts.Terminal {
		final = fmt.Sprintf("%s (%s)", final, d.opts.Now().Sub(d.start).Round(time.Second))
	}
	fmt.Fprintln(d.w, final)
	d.mu.Unlock()
	d.stopTicker()
}

// Close stops the display without a final line, clearing the status line.
// It is safe to call after Finish.
func (d *Display) Close() {
	d.mu.Lock()
	if !d.done {
		d.done = true
		d.clear()
	}
	d.mu.Unlock()
	d.stopTicker()
}

func (d *Display) stopTicker() {
	if d.stop == nil {
		return
	}
	d.stopOnce.Do(func() { close(d.stop) })
	<-d.stopped
}
