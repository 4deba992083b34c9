// Package ui is the controller's read-only status page: a web page (no
// build step: plain HTML and JavaScript embedded in the binary) that shows
// the region's objects with their live state and a message that goes with
// it (the latest progress while a change runs), updated as they change
// through server-sent events.
//
// The page authenticates with the same bearer tokens as the API: the token
// is posted once to /ui/login and exchanged for a session cookie
// (HttpOnly, SameSite=Strict), so it never appears in a URL. A session sees
// what its principal may see through the API. Rows carry display fields
// only (kind, key, organization, state, cloudlet, message, errors, links,
// location, usage), built by the sources from stored objects; no field of
// an object is sent unless a source puts it in a row, so secrets never
// reach the page. A row's Detail (the object's fields and Info, built from
// redacted copies, and its recent history, see History) is left out of
// the event streams and served for one object at a time by /ui/object, to
// the viewers that may see the row.
package ui

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"
)

//go:embed assets
var assets embed.FS

// AdminOnly is a Row.Org no organization can have (organization names
// never hold control characters): only viewers that see everything (the
// admin) see its rows.
const AdminOnly = "\x00admin"

// Emitter receives the rows a source produces.
type Emitter interface {
	// Put adds or replaces a row.
	Put(Row)
	// Delete removes the row of kind and key.
	Delete(kind, key string)
}

// Source produces rows: Run emits the current rows and then their changes
// until ctx ends.
type Source interface {
	Run(ctx context.Context, out Emitter) error
}

// SourceFunc adapts a function to Source.
type SourceFunc func(ctx context.Context, out Emitter) error

// Run calls f.
func (f SourceFunc) Run(ctx context.Context, out Emitter) error { return f(ctx, out) }

// WhileWatched is implemented by a Source that costs something while it
// runs, one that polls for example: when WhileWatched reports true, the
// server runs the source only while someone watches the page (an event
// stream is open) and until Config.Linger after the last one closes. The
// source should withdraw its rows when its Run ends with its context: they
// would go stale. A page that opens when no one watched gets such a
// source's rows as they come, after its snapshot.
type WhileWatched interface {
	Source
	// WhileWatched reports whether the source runs only while watched.
	WhileWatched() bool
}

// DefaultLinger is how long a source that runs only while watched keeps
// running after the last page closes, so that a reload costs nothing.
const DefaultLinger = 15 * time.Second

// Viewer is who looks at the page.
type Viewer interface {
	// Sees reports whether the viewer may see what org owns.
	Sees(org string) bool
}

// Authenticator maps a bearer token to a viewer.
type Authenticator func(token string) (Viewer, bool)

// Config is what a Server needs.
type Config struct {
	// Authenticate checks the tokens users log in with. Required.
	Authenticate Authenticator
	// Sources produce the rows.
	Sources []Source
	// Logger receives logs; nil discards.
	Logger *slog.Logger
	// SessionTTL is how long a login lasts; 0 means 12 hours.
	SessionTTL time.Duration
	// Linger is how long a source that runs only while watched (see
	// WhileWatched) keeps running after the last page closes; 0 means
	// DefaultLinger.
	Linger time.Duration
}

// Server serves the page under /ui/.
type Server struct {
	cfg Config
	log *slog.Logger
	mux *http.ServeMux

	mu       sync.Mutex
	rows     map[string]Row
	subs     map[*subscriber]struct{}
	sessions map[string]session
	closed   bool          // Start returned: no new streams
	watchers int           // open event streams
	watchCh  chan struct{} // closed and replaced when watchers changes
}

type session struct {
	viewer  Viewer
	expires time.Time
}

// subscriber is one open event stream.
type subscriber struct {
	viewer Viewer
	ch     chan event
	gone   chan struct{} // closed when the subscriber is dropped for being slow
	once   sync.Once
}

type event struct {
	name string // "put", "delete"
	data []byte
}

// subscriberBuffer is how many events a slow page may lag before it is
// dropped (its browser reconnects and gets a fresh snapshot).
const subscriberBuffer = 1024

// New returns a server; Start runs its sources.
func New(cfg Config) (*Server, error) {
	if cfg.Authenticate == nil {
		return nil, errors.New("ui: Config.Authenticate is required")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.Linger <= 0 {
		cfg.Linger = DefaultLinger
	}
	s := &Server{cfg: cfg, log: cfg.Logger, rows: map[string]Row{}, subs: map[*subscriber]struct{}{}, sessions: map[string]session{},
		watchCh: make(chan struct{})}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	s.mux = http.NewServeMux()
	s.mux.Handle("GET /ui/", http.StripPrefix("/ui/", noCache(http.FileServerFS(static))))
	s.mux.HandleFunc("POST /ui/login", s.login)
	s.mux.HandleFunc("POST /ui/logout", s.logout)
	s.mux.HandleFunc("GET /ui/events", s.events)
	s.mux.HandleFunc("GET /ui/object", s.object)
	// session tells the page whether it is logged in, with a 200 either
	// way: a 401 on every first visit would be an error in the browser's
	// console.
	s.mux.HandleFunc("GET /ui/session", func(w http.ResponseWriter, r *http.Request) {
		_, ok := s.viewer(r)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = fmt.Fprintf(w, `{"session":%t}`, ok)
	})
	s.mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ui/", http.StatusFound) })
	return s, nil
}

// ServeHTTP serves /ui and below.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	s.mux.ServeHTTP(w, r)
}

func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// Start runs the sources until ctx ends (those that run only while
// watched, only while someone watches; see WhileWatched); a source that
// fails is restarted after a pause. When ctx ends, every open event stream
// is ended too, so that an HTTP server shutting down does not wait for
// them.
func (s *Server) Start(ctx context.Context) error {
	defer s.closeStreams()
	var wg sync.WaitGroup
	for _, src := range s.cfg.Sources {
		if w, ok := src.(WhileWatched); ok && w.WhileWatched() {
			wg.Go(func() { s.runWhileWatched(ctx, src) })
			continue
		}
		wg.Go(func() { s.run(ctx, src) })
	}
	wg.Wait()
	return nil
}

// run runs src until ctx ends, restarting it after a pause when it fails.
func (s *Server) run(ctx context.Context, src Source) {
	for ctx.Err() == nil {
		if err := src.Run(ctx, s); err != nil && ctx.Err() == nil {
			s.log.Warn("ui source failed; restarting", slog.Any("error", err))
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
			}
		}
	}
}

// runWhileWatched runs src while someone watches, until ctx ends.
func (s *Server) runWhileWatched(ctx context.Context, src Source) {
	for s.waitWatched(ctx) {
		rctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.run(rctx, src)
		}()
		s.waitUnwatched(ctx)
		stop()
		<-done
	}
}

// watching returns how many event streams are open and a channel closed
// when that changes.
func (s *Server) watching() (int, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watchers, s.watchCh
}

// addWatcherLocked counts an event stream opening (d=1) or closing (d=-1).
func (s *Server) addWatcherLocked(d int) {
	s.watchers += d
	close(s.watchCh)
	s.watchCh = make(chan struct{})
}

// waitWatched waits until an event stream is open; false when ctx ended
// first.
func (s *Server) waitWatched(ctx context.Context) bool {
	for ctx.Err() == nil {
		n, changed := s.watching()
		if n > 0 {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
		}
	}
	return false
}

// waitUnwatched waits until no event stream has been open for Linger, or
// ctx ends.
func (s *Server) waitUnwatched(ctx context.Context) {
	for {
		n, changed := s.watching()
		if n > 0 {
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				return
			}
		}
		linger := time.NewTimer(s.cfg.Linger)
		select {
		case <-changed:
			linger.Stop()
		case <-linger.C:
			return
		case <-ctx.Done():
			linger.Stop()
			return
		}
	}
}

// closeStreams ends every open event stream.
func (s *Server) closeStreams() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for sub := range s.subs {
		delete(s.subs, sub)
		sub.once.Do(func() { close(sub.gone) })
	}
}

// Put implements Emitter.
func (s *Server) Put(r Row) {
	if r.Updated.IsZero() {
		r.Updated = time.Now()
	}
	brief := r
	brief.Detail = nil
	data, err := json.Marshal(brief)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.rows[r.id()]
	if ok && sameRow(old, r) {
		return
	}
	s.rows[r.id()] = r
	if ok && old.Org == r.Org {
		oldBrief := old
		oldBrief.Detail = nil
		if sameRow(oldBrief, brief) {
			// Only the detail changed: a page showing the object fetches
			// it again; the row's event would repeat what pages have.
			ref, _ := json.Marshal(map[string]string{"kind": r.Kind, "key": r.Key})
			s.publishLocked(r.Org, event{name: "detail", data: ref})
			return
		}
	}
	s.publishLocked(r.Org, event{name: "put", data: data})
}

// Delete implements Emitter.
func (s *Server) Delete(kind, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := kind + "/" + key
	old, ok := s.rows[id]
	if !ok {
		return
	}
	delete(s.rows, id)
	data, _ := json.Marshal(map[string]string{"kind": kind, "key": key})
	s.publishLocked(old.Org, event{name: "delete", data: data})
}

func sameRow(a, b Row) bool {
	a.Updated, b.Updated = time.Time{}, time.Time{}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func (s *Server) publishLocked(org string, ev event) {
	for sub := range s.subs {
		if org != "" && !sub.viewer.Sees(org) {
			continue
		}
		select {
		case sub.ch <- ev:
		default:
			delete(s.subs, sub)
			sub.once.Do(func() { close(sub.gone) })
		}
	}
}

const cookieName = "edgekit_ui"

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	viewer, ok := s.cfg.Authenticate(r.PostForm.Get("token"))
	if !ok {
		http.Error(w, "unknown token", http.StatusUnauthorized)
		return
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		http.Error(w, "no session", http.StatusInternalServerError)
		return
	}
	id := base64.RawURLEncoding.EncodeToString(b)
	s.mu.Lock()
	now := time.Now()
	for k, v := range s.sessions {
		if now.After(v.expires) {
			delete(s.sessions, k)
		}
	}
	s.sessions[id] = session{viewer: viewer, expires: now.Add(s.cfg.SessionTTL)}
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/ui", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: int(s.cfg.SessionTTL.Seconds())})
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil {
		s.mu.Lock()
		delete(s.sessions, c.Value)
		s.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/ui", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) viewer(r *http.Request) (Viewer, bool) {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[c.Value]
	if !ok || time.Now().After(sess.expires) {
		return nil, false
	}
	return sess.viewer, true
}

// events streams the rows the viewer may see: a snapshot, then changes.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	viewer, ok := s.viewer(r)
	if !ok {
		http.Error(w, "log in first", http.StatusUnauthorized)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	sub := &subscriber{viewer: viewer, ch: make(chan event, subscriberBuffer), gone: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	snapshot := make([]Row, 0, len(s.rows))
	for _, row := range s.rows {
		if row.Org == "" || viewer.Sees(row.Org) {
			row.Detail = nil
			snapshot = append(snapshot, row)
		}
	}
	s.subs[sub] = struct{}{}
	s.addWatcherLocked(1)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subs, sub)
		s.addWatcherLocked(-1)
		s.mu.Unlock()
	}()
	sort.Slice(snapshot, func(i, j int) bool { return snapshot[i].id() < snapshot[j].id() })

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	data, _ := json.Marshal(snapshot)
	if err := writeEvent(w, "snapshot", data); err != nil {
		return
	}
	flusher.Flush()
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	for {
		select {
		case ev := <-sub.ch:
			if err := writeEvent(w, ev.name, ev.data); err != nil {
				return
			}
			flusher.Flush()
		case <-keepalive.C:
			if _, err := fmt.Fprint(w, ": keepalive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		case <-sub.gone:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// object serves one object's row with its detail, as JSON: 404 when
// there is none the viewer may see (an object of another organization is
// not told apart from one that does not exist).
func (s *Server) object(w http.ResponseWriter, r *http.Request) {
	viewer, ok := s.viewer(r)
	if !ok {
		http.Error(w, "log in first", http.StatusUnauthorized)
		return
	}
	kind, key := r.URL.Query().Get("kind"), r.URL.Query().Get("key")
	if kind == "" || key == "" {
		http.Error(w, "kind and key are required", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	row, ok := s.rows[kind+"/"+key]
	s.mu.Unlock()
	if !ok || (row.Org != "" && !viewer.Sees(row.Org)) {
		http.Error(w, "no "+kind+" "+key, http.StatusNotFound)
		return
	}
	data, err := json.Marshal(row)
	if err != nil {
		http.Error(w, "cannot encode the object", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(data)
}

func writeEvent(w http.ResponseWriter, name string, data []byte) error {
	_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
	return err
}
