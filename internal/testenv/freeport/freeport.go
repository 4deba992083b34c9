// Package freeport hands tests loopback addresses that stay usable across a
// restart of the server that listens on them.
//
// A port from "127.0.0.1:0" comes from the kernel's ephemeral range: while
// a test's server is down between a stop and a restart, any outgoing
// connection of any process may take it as its source port, and the restart
// fails with "address already in use". Addr picks ports below that range,
// where the kernel never puts source ports.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// low is the lowest port Addr hands out.
const low = 12000

var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// Addr returns "127.0.0.1:PORT" with a port below the ephemeral range that
// nothing listened on when it was picked and that no other caller in this
// process got. It fails the test when none is found in a bounded number of
// tries.
func Addr(t testing.TB) string {
	t.Helper()
	addr, err := Pick()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// Pick is Addr for code that has no test at hand (a helper that starts
// servers for a whole test package): it returns an error instead of failing
// a test.
func Pick() (string, error) {
	high := EphemeralStart()
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	for range 100 {
		p := low + rand.IntN(high-low)
		if handedOut.ports[p] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		_ = l.Close()
		handedOut.ports[p] = true
		return l.Addr().String(), nil
	}
	return "", fmt.Errorf("freeport: no free port found in %d-%d", low, high-1)
}

// EphemeralStart is the first port of the kernel's ephemeral range (32768
// when it cannot be read, or when it starts too low to leave room below).
func EphemeralStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < low+1000 {
		return 32768
	}
	return n
}
