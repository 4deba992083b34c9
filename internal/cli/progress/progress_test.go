package progress_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/cli/progress"
)

// clock is a manual clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func TestPlainLines(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	d := progress.New(&b, progress.Options{})
	d.Update("CREATE_REQUESTED", "")
	d.Update("CREATING", "Task 1: Creating cluster")
	d.Update("CREATING", "Task 1: Creating cluster") // repeated: not printed again
	d.Println("a line that stays")
	d.Update("CREATING", "Task 1: Creating cluster, Step: Waiting for nodes")
	d.Finish("cluster created: READY")
	d.Update("IGNORED", "after finish")
	d.Finish("twice")
	const want = "CREATE_REQUESTED\n" +
		"CREATING  Task 1: Creating cluster\n" +
		"a line that stays\n" +
		"CREATING  Task 1: Creating cluster, Step: Waiting for nodes\n" +
		"cluster created: READY\n"
	if b.String() != want {
		t.Errorf("output:\n%q\nwant:\n%q", b.String(), want)
	}
	if strings.ContainsAny(b.String(), "\r\x1b") {
		t.Error("plain output holds control characters")
	}
}

func TestTerminalLineInPlace(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	c := &clock{now: time.Unix(1000, 0)}
	d := progress.New(&b, progress.Options{Terminal: true, Width: 40, Now: c.Now})
	d.Update("CREATING", "Task 1")
	c.Add(2 * time.Second)
	d.Update("CREATING", "Task 2: a message far too long to fit in forty columns")
	d.Println("key: abc")
	c.Add(time.Second)
	d.Finish("created: READY")
	const clr = "\r\x1b[K"
	want := clr + "[0s] CREATING  Task 1" +
		clr + "[2s] CREATING  Task 2: a message far..." +
		clr + "key: abc\n" +
		clr + "[2s] CREATING  Task 2: a message far..." +
		clr + "created: READY (3s)\n"
	if b.String() != want {
		t.Errorf("output:\n%q\nwant:\n%q", b.String(), want)
	}
	for _, line := range strings.Split(b.String(), clr) {
		if n := len([]rune(strings.TrimSuffix(line, "\n"))); n > 39 {
			t.Errorf("line %q is %d columns, wider than 39", line, n)
		}
	}
}

func TestTerminalTickRedrawsAndStops(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var b strings.Builder
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return b.Write(p) })
	c := &clock{now: time.Unix(0, 0)}
	d := progress.New(w, progress.Options{Terminal: true, Tick: time.Millisecond, Now: c.Now})
	d.Update("DELETING", "")
	c.Add(5 * time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		redrawn := strings.Contains(b.String(), "[5s] DELETING")
		mu.Unlock()
		if redrawn {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the ticker never redrew the line with the new time")
		}
		time.Sleep(time.Millisecond)
	}
	d.Close()
	mu.Lock()
	n := len(b.String())
	mu.Unlock()
	if !strings.HasSuffix(b.String(), "\r\x1b[K") {
		t.Errorf("Close left the status line: %q", b.String())
	}
	d.Close() // twice is fine; Close returns after the ticker goroutine ended
	c.Add(time.Second)
	d.Update("DELETING", "after close")
	mu.Lock()
	defer mu.Unlock()
	if len(b.String()) != n {
		t.Errorf("output after Close: %q", b.String()[n:])
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
