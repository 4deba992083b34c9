package local

import (
	"errors"
	"net"
	"strconv"
	"testing"
)

// listenOn holds ports first..last on 127.0.0.1 until the test ends, as
// something else on the host would.
func listenOn(t *testing.T, first, last int) {
	t.Helper()
	for q := first; q <= last; q++ {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(q)))
		if err != nil {
			t.Fatalf("port %d: %v", q, err)
		}
		t.Cleanup(func() { _ = l.Close() })
	}
}

// TestPortAllocationTriesEveryPort: an instance gets a port of its
// cluster's range even when most of the range is busy on the host; only
// when every port is busy does the create fail with ErrNoFreePorts, and
// then it holds no reservation.
func TestPortAllocationTriesEveryPort(t *testing.T) {
	t.Parallel()
	const size = 20
	e := newEnv(t, func(c *Config) { c.PortRangeSize = size })
	e.createCluster(e.cluster)
	first := e.ports.first // the first cluster's range starts there
	listenOn(t, first, first+size-3)
	inst := e.newInst("a1")
	rt, err := e.p.CreateAppInst(e.ctx(), e.cluster, newApp(), inst, e.res, nil)
	if err != nil {
		t.Fatalf("create with %d of %d ports busy: %v", size-2, size, err)
	}
	if p := int(rt.Ports[0]); p < first+size-2 || p > first+size-1 {
		t.Errorf("port %d, want one of the two free ones", p)
	}
	other := first + size - 2
	if int(rt.Ports[0]) == other {
		other++
	}
	listenOn(t, other, other)
	_, err = e.p.CreateAppInst(e.ctx(), e.cluster, newApp(), e.newInst("a2"), e.res, nil)
	if !errors.Is(err, ErrNoFreePorts) {
		t.Fatalf("create with every port taken: %v, want ErrNoFreePorts", err)
	}
	if got := e.reserved(KindPort, appOwner(e.newInst("a2").Key)); len(got) != 0 {
		t.Errorf("failed create holds ports %v", got)
	}
}
