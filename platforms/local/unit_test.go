package local

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

func TestParseProcStat(t *testing.T) {
	line := "1234 (we(ird) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100 18446744073709551615\n"
	pi, err := parseProcStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if pi.state != 'S' || pi.pgrp != 1234 || pi.startTime != 987654 {
		t.Errorf("parsed %+v", pi)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 x S"} {
		if _, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
}

func TestDirNamesAreDistinct(t *testing.T) {
	keys := [][2]string{
		{"a", "b"}, {"a.b", ""}, {"", "a.b"}, {"a_2eb", ""}, {"a", "b.c"}, {"a.b", "c"},
		{"_", "x"}, {"", "x"}, {"..", "x"}, {"a/b", "c"}, {"a", "b/c"},
	}
	seen := map[string][2]string{}
	for _, k := range keys {
		n := dirName(k[0], k[1])
		if org, name, ok := parseDirName(n); !ok || org != k[0] || name != k[1] {
			t.Errorf("%q reads back as %q %q %v", n, org, name, ok)
		}
		if prev, ok := seen[n]; ok {
			t.Errorf("%v and %v both map to %q", prev, k, n)
		}
		seen[n] = k
		if n == "." || n == ".." || n[0] == '.' {
			t.Errorf("%v maps to %q", k, n)
		}
		for _, c := range n {
			if c == '/' {
				t.Errorf("%v maps to %q", k, n)
			}
		}
	}
	if _, err := clusterDirName(&edgeproto.ClusterKey{}); !errors.Is(err, errNeverCreatable) {
		t.Errorf("empty cluster name: %v", err)
	}
	// A key too long for a directory name gets a hashed one, distinct
	// per key and not readable back.
	long1, long2 := dirName("dev", strings.Repeat("x", 300)), dirName("dev", strings.Repeat("x", 301))
	if long1 == long2 || len(long1) > maxDirName || !strings.HasPrefix(long1, hashedPrefix) {
		t.Errorf("long names map to %q and %q", long1, long2)
	}
	if _, _, ok := parseDirName(long1); ok {
		t.Errorf("hashed name %q read back", long1)
	}
	for _, bad := range []string{"x", "a.b.c", "a_2E.b", "a_2.b", "a_zz.b", "a_61.b"} {
		if _, _, ok := parseDirName(bad); ok {
			t.Errorf("%q read back, though escapeName never makes it", bad)
		}
	}
}

func TestParseMeminfo(t *testing.T) {
	total, avail, err := parseMeminfo([]byte("MemTotal:       16000000 kB\nMemFree:  100 kB\nMemAvailable:    8000000 kB\n"))
	if err != nil || total != 16000000 || avail != 8000000 {
		t.Errorf("got %d %d %v", total, avail, err)
	}
	if _, _, err := parseMeminfo([]byte("nothing\n")); err == nil {
		t.Error("no MemTotal accepted")
	}
}

func TestHealthProbeChoice(t *testing.T) {
	tcp := &edgeproto.Port{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 1}
	http := &edgeproto.Port{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_HTTP, InternalPort: 2}
	udp := &edgeproto.Port{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_UDP, InternalPort: 3}
	for _, tc := range []struct {
		name   string
		app    *edgeproto.App
		firsts []int
		want   probe
		check  bool
	}{
		{"none", &edgeproto.App{HealthCheck: edgeproto.HealthCheck_HEALTH_CHECK_NONE, Ports: []*edgeproto.Port{tcp}}, []int{10}, probe{}, false},
		{"default tcp", &edgeproto.App{Ports: []*edgeproto.Port{udp, tcp}}, []int{10, 11}, probe{kind: "tcp", port: 11}, true},
		{"default no ports", &edgeproto.App{}, []int{10}, probe{}, false},
		{"default udp only", &edgeproto.App{Ports: []*edgeproto.Port{udp}}, []int{10}, probe{}, false},
		{"http prefers http port", &edgeproto.App{HealthCheck: edgeproto.HealthCheck_HEALTH_CHECK_HTTP, HealthCheckPath: "hz", Ports: []*edgeproto.Port{tcp, http}}, []int{10, 11}, probe{kind: "http", port: 11, path: "/hz"}, true},
		{"http without declared port", &edgeproto.App{HealthCheck: edgeproto.HealthCheck_HEALTH_CHECK_HTTP}, []int{10}, probe{kind: "http", port: 10, path: "/"}, true},
		{"tcp", &edgeproto.App{HealthCheck: edgeproto.HealthCheck_HEALTH_CHECK_TCP, Ports: []*edgeproto.Port{http}}, []int{10}, probe{kind: "tcp", port: 10}, true},
	} {
		got, check, err := healthProbe(tc.app, tc.firsts)
		if err != nil || check != tc.check || got != tc.want {
			t.Errorf("%s: got %+v %v %v, want %+v %v", tc.name, got, check, err, tc.want, tc.check)
		}
	}
	if _, _, err := healthProbe(&edgeproto.App{HealthCheck: edgeproto.HealthCheck_HEALTH_CHECK_TCP, Ports: []*edgeproto.Port{udp}}, []int{10}); err == nil {
		t.Error("TCP check on a UDP-only app accepted")
	}
}

func TestErrorsMatchEngineSentinels(t *testing.T) {
	for _, tc := range []struct{ err, target error }{
		{ErrUnsupported, executor.ErrUnsupported},
		{ErrUnsupported, errors.ErrUnsupported},
		{ErrNoFreePorts, executor.ErrInsufficientResources},
		{ErrClusterNotFound, executor.ErrNotFound},
		{ErrInvalidObject, executor.ErrBadObject},
		{&HealthCheckError{Err: context.DeadlineExceeded}, ErrUnhealthy},
	} {
		if !errors.Is(tc.err, tc.target) {
			t.Errorf("%v does not match %v", tc.err, tc.target)
		}
	}
	p := &Platform{}
	if err := p.UpdateTrustPolicy(context.Background(), nil, &edgeproto.TrustPolicy{OutboundSecurityRules: []*edgeproto.SecurityRule{{Protocol: "tcp"}}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("trust policy with rules: %v", err)
	}
	if err := p.UpdateTrustPolicy(context.Background(), nil, nil); err != nil {
		t.Errorf("nil trust policy: %v", err)
	}
}
