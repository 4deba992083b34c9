// Package netproxy is a TCP proxy for tests that cut, refuse or freeze the
// connections between a client and a server on loopback, to see how they
// cope with a network that fails.
//
//	p := netproxy.Start(t, serverAddr) // listens on 127.0.0.1:0
//	// point the client at p.Addr()
//	p.Cut()     // close every connection and refuse new ones
//	p.Restore() // accept and forward again
//	p.Freeze()  // keep connections open but forward nothing (a dead peer)
//
// Everything is closed in t.Cleanup.
package netproxy

import (
	"net"
	"sync"
	"testing"
)

// Proxy forwards the connections it accepts to a target address.
type Proxy struct {
	lis    net.Listener
	target string

	mu     sync.Mutex
	mode   mode
	thawed chan struct{} // closed while not frozen
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

type mode int

const (
	forwarding mode = iota
	cutting
	freezing
)

// Start starts a proxy to target on a free loopback port.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{lis: lis, target: target, thawed: make(chan struct{}), conns: map[net.Conn]bool{}}
	close(p.thawed)
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

// Addr is the proxy's address.
func (p *Proxy) Addr() string { return p.lis.Addr().String() }

func (p *Proxy) accept() {
	for {
		c, err := p.lis.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.mode == cutting {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c] = true
		p.mu.Unlock()
		p.wg.Go(func() { p.serve(c) })
	}
}

func (p *Proxy) serve(c net.Conn) {
	defer p.drop(c)
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	p.mu.Lock()
	if p.mode == cutting {
		p.mu.Unlock()
		s.Close()
		return
	}
	p.conns[s] = true
	p.mu.Unlock()
	defer p.drop(s)
	var wg sync.WaitGroup
	wg.Go(func() { p.pipe(s, c) })
	wg.Go(func() { p.pipe(c, s) })
	wg.Wait()
}

// pipe copies from src to dst, holding each chunk while frozen.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			thawed := p.thawed
			p.mu.Unlock()
			<-thawed
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // EOF or a closed connection: both ends close
			return
		}
	}
}

func (p *Proxy) drop(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// Cut closes every connection and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setModeLocked(cutting)
	for c := range p.conns {
		c.Close()
	}
}

// Freeze keeps the connections open but forwards nothing until Restore,
// as a peer that died without closing them.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setModeLocked(freezing)
}

// Restore forwards again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setModeLocked(forwarding)
}

func (p *Proxy) setModeLocked(m mode) {
	wasFrozen := p.mode == freezing
	p.mode = m
	switch {
	case m == freezing && !wasFrozen:
		p.thawed = make(chan struct{})
	case m != freezing && wasFrozen:
		close(p.thawed)
	}
}

// Conns is how many connections (both sides counted) are open.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

func (p *Proxy) close() {
	p.lis.Close()
	p.Restore()
	p.Cut()
	p.wg.Wait()
}
