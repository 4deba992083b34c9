package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestAddrIsBelowTheEphemeralRangeFreeAndNeverGivenTwice(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		addr := Addr(t)
		if seen[addr] {
			t.Fatalf("%s handed out twice", addr)
		}
		seen[addr] = true
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := strconv.Atoi(port); p < low || p >= EphemeralStart() {
			t.Fatalf("%s: port outside %d-%d", addr, low, EphemeralStart()-1)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("%s is not free: %v", addr, err)
		}
		l.Close()
	}
}
