// Package uitest helps test the status page and its sources: a Recorder is
// a ui.Emitter that keeps the rows it is given and waits on them; a Client
// logs in to a page and follows its event stream, as the page's script
// does.
package uitest

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/hosts/controller/ui"
)

// Recorder is a ui.Emitter that keeps the rows it is given.
type Recorder struct {
	mu      sync.Mutex
	rows    map[string]ui.Row
	changed chan struct{} // closed and replaced on every change
}

var _ ui.Emitter = (*Recorder)(nil)

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{rows: map[string]ui.Row{}, changed: make(chan struct{})}
}

// Put implements ui.Emitter.
func (r *Recorder) Put(row ui.Row) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows[row.Kind+"/"+row.Key] = row
	r.changedLocked()
}

// Delete implements ui.Emitter.
func (r *Recorder) Delete(kind, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.rows, kind+"/"+key)
	r.changedLocked()
}

func (r *Recorder) changedLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// Rows returns the rows, sorted by kind and key.
func (r *Recorder) Rows() []ui.Row {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]ui.Row, 0, len(r.rows))
	for _, row := range r.rows {
		out = append(out, row)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind+"/"+out[i].Key < out[j].Kind+"/"+out[j].Key })
	return out
}

// Wait waits until the row of kind and key satisfies ok (found is false
// when there is no such row), and returns it; after timeout it fails the
// test, saying that no row was what.
func (r *Recorder) Wait(t testing.TB, kind, key string, timeout time.Duration, what string, ok func(row ui.Row, found bool) bool) ui.Row {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		row, found := r.rows[kind+"/"+key]
		changed := r.changed
		r.mu.Unlock()
		if ok(row, found) {
			return row
		}
		select {
		case <-changed:
		case <-deadline.C:
			var ids []string
			for _, x := range r.Rows() {
				ids = append(ids, x.Kind+"/"+x.Key)
			}
			t.Fatalf("%s %s: no row %s within %v; the last: %+v (present: %v; rows: %q)", kind, key, what, timeout, row, found, ids)
		}
	}
}

// Run runs srcs into out until the test ends.
func Run(t testing.TB, out ui.Emitter, srcs ...ui.Source) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, src := range srcs {
		wg.Go(func() { _ = src.Run(ctx, out) })
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// Serve serves a status page of cfg on a loopback port until the test
// ends (its sources run until then) and returns the HTTP server; its page
// is at URL + "/ui/".
func Serve(t testing.TB, cfg ui.Config) *httptest.Server {
	t.Helper()
	page, err := ui.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = page.Start(ctx); close(done) }()
	srv := httptest.NewServer(page)
	t.Cleanup(func() {
		stop() // ends the page's event streams
		<-done
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// Client is a status page's client: it logs in and opens event streams.
type Client struct {
	t    testing.TB
	base string // the page's URL, ending in /ui/
	http *http.Client
}

// NewClient returns a client of the page at base (".../ui/") using
// transport (nil: http.DefaultTransport).
func NewClient(t testing.TB, base string, transport http.RoundTripper) *Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Client{t: t, base: base, http: &http.Client{Jar: jar, Timeout: 10 * time.Second, Transport: transport}}
}

// Login logs in with token, failing the test unless the page accepts it.
func (c *Client) Login(token string) {
	c.t.Helper()
	resp, err := c.http.PostForm(c.base+"login", url.Values{"token": {token}})
	if err != nil {
		c.t.Fatalf("log in to the status page: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		c.t.Fatalf("log in to the status page: %s", resp.Status)
	}
}

// Object fetches the page of the object of kind and key (/ui/object) and
// returns the response's status code and body.
func (c *Client) Object(kind, key string) (int, string) {
	c.t.Helper()
	resp, err := c.http.Get(c.base + "object?" + url.Values{"kind": {kind}, "key": {key}}.Encode())
	if err != nil {
		c.t.Fatalf("fetch %s %s: %v", kind, key, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("fetch %s %s: %v", kind, key, err)
	}
	return resp.StatusCode, string(body)
}

// Open opens an event stream; the test's end closes it.
func (c *Client) Open() *Stream {
	c.t.Helper()
	// The stream outlives the client's timeout: no timeout for it.
	hc := *c.http
	hc.Timeout = 0
	resp, err := hc.Get(c.base + "events")
	if err != nil {
		c.t.Fatalf("open the event stream: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		c.t.Fatalf("open the event stream: %s", resp.Status)
	}
	s := &Stream{t: c.t, data: make(chan Event, 1024), body: resp.Body}
	go func() {
		defer close(s.data)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		name := ""
		for sc.Scan() {
			if n, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				name = n
			}
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				s.data <- Event{Name: name, Data: d}
				name = ""
			}
		}
	}()
	c.t.Cleanup(s.Close)
	return s
}

// Event is one event of a stream: its name ("snapshot", "put",
// "delete", "detail") and its data.
type Event struct {
	Name, Data string
}

// Stream is an open event stream.
type Stream struct {
	t    testing.TB
	data chan Event
	body interface{ Close() error }
	once sync.Once
}

// Next returns the data of the next event (the first is the snapshot),
// failing the test when none comes within timeout or the stream ended.
func (s *Stream) Next(timeout time.Duration) string {
	s.t.Helper()
	return s.NextEvent(timeout).Data
}

// NextEvent is Next with the event's name.
func (s *Stream) NextEvent(timeout time.Duration) Event {
	s.t.Helper()
	select {
	case ev, ok := <-s.data:
		if !ok {
			s.t.Fatal("the event stream ended")
		}
		return ev
	case <-time.After(timeout):
		s.t.Fatalf("no event within %v", timeout)
		return Event{}
	}
}

// Received returns the data of the events that arrived and were not
// taken by Next yet, without waiting for more.
func (s *Stream) Received() []string {
	var out []string
	for {
		select {
		case ev, ok := <-s.data:
			if !ok {
				return out
			}
			out = append(out, ev.Data)
		default:
			return out
		}
	}
}

// Close closes the stream, as a page that closes does.
func (s *Stream) Close() { s.once.Do(func() { _ = s.body.Close() }) }
