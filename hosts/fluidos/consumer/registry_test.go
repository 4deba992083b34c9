package consumer

import (
	"slices"
	"testing"
	"time"
)

func TestRegistryExpiresLearnedPeers(t *testing.T) {
	t.Parallel()
	r, err := NewRegistry([]string{"10.0.0.1:7443"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return now }
	if err := r.Add("10.0.0.2:7443"); err != nil {
		t.Fatal(err)
	}
	if err := r.Add("10.0.0.3:7443"); err != nil {
		t.Fatal(err)
	}
	if got := r.Peers(); !slices.Equal(got, []string{"10.0.0.1:7443", "10.0.0.2:7443", "10.0.0.3:7443"}) {
		t.Fatalf("peers %v", got)
	}
	now = now.Add(50 * time.Second)
	r.Seen("10.0.0.3:7443") // answered a discovery
	r.Seen("10.0.0.1:7443") // static: nothing to refresh
	now = now.Add(20 * time.Second)
	if got := r.Peers(); !slices.Equal(got, []string{"10.0.0.1:7443", "10.0.0.3:7443"}) {
		t.Errorf("after 70s peers %v, want the static one and the one seen at 50s", got)
	}
	now = now.Add(time.Hour)
	if got := r.Peers(); !slices.Equal(got, []string{"10.0.0.1:7443"}) || !r.Static("10.0.0.1:7443") {
		t.Errorf("after an hour peers %v, want the static one only", got)
	}
	for _, bad := range []string{"", "host", "host:0", "host:70000", ":7443", "host:port"} {
		if err := r.Add(bad); err == nil {
			t.Errorf("Add(%q) succeeded", bad)
		}
	}
	if _, err := NewRegistry([]string{"nope"}, 0); err == nil {
		t.Error("a bad static peer was accepted")
	}
}
