package consumer

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"
)

// DefaultPeerTTL is how long a learned peer is kept without being seen.
const DefaultPeerTTL = 10 * time.Minute

// Registry holds the REAR endpoints (host:port) of the known peers. It is
// safe for concurrent use.
type Registry struct {
	static []string
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	learned map[string]time.Time // address -> last seen
}

// NewRegistry is a registry of the static peers (never expiring) and of
// peers learned later, each kept ttl after it was last seen (DefaultPeerTTL
// when ttl is 0). A static address that is not host:port is an error.
func NewRegistry(static []string, ttl time.Duration) (*Registry, error) {
	for _, a := range static {
		if err := CheckAddress(a); err != nil {
			return nil, err
		}
	}
	if ttl <= 0 {
		ttl = DefaultPeerTTL
	}
	return &Registry{static: slices.Clone(static), ttl: ttl, now: time.Now, learned: map[string]time.Time{}}, nil
}

// CheckAddress reports whether addr is host:port with a port in 1-65535.
func CheckAddress(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("peer address %q: %w", addr, err)
	}
	n, err := strconv.Atoi(port)
	if host == "" || err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("peer address %q: want host:port with a port in 1-65535", addr)
	}
	return nil
}

// Add learns a peer (or sees it again).
func (r *Registry) Add(addr string) error {
	if err := CheckAddress(addr); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.static, addr) {
		r.learned[addr] = r.now()
	}
	return nil
}

// Seen refreshes a learned peer; static and unknown addresses are left
// alone.
func (r *Registry) Seen(addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.learned[addr]; ok {
		r.learned[addr] = r.now()
	}
}

// Peers returns the static peers, then the learned ones not expired
// (sorted), dropping the expired.
func (r *Registry) Peers() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.static)
	now := r.now()
	var learned []string
	for a, seen := range r.learned {
		if now.Sub(seen) > r.ttl {
			delete(r.learned, a)
			continue
		}
		learned = append(learned, a)
	}
	slices.Sort(learned)
	return append(out, learned...)
}

// Static reports whether addr is a static peer.
func (r *Registry) Static(addr string) bool { return slices.Contains(r.static, addr) }
