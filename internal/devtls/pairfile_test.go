package devtls_test

import (
	"bytes"
	"crypto/tls"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/devtls"
)

// A reader loading a leaf's pair file with LoadKeyPair while the leaf is
// issued again and again (as an etcd client reloads its files on each
// handshake) always gets a key that matches the certificate. Loading it
// with tls.LoadX509KeyPair (the file read twice, as etcd's own loader
// does) or the separate certificate and key files, replaced one after the
// other, can be caught in between; the test counts how often, for the log.
func TestPairFileNeverTorn(t *testing.T) {
	t.Parallel()
	ca, err := devtls.OpenCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// More left than the validity: every Issue issues a new leaf.
	always := devtls.LeafOptions{Validity: time.Hour, MinRemaining: 2 * time.Hour}
	if _, err := ca.Issue("n", always); err != nil {
		t.Fatal(err)
	}
	const issues = 200
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var issueErr error
	wg.Go(func() {
		defer close(stop)
		for range issues {
			if _, err := ca.Issue("n", always); err != nil {
				issueErr = err
				return
			}
		}
	})
	loads, seen, torn := 0, map[string]bool{}, 0
	for done := false; !done; {
		select {
		case <-stop:
			done = true
		default:
		}
		c, err := devtls.LoadKeyPair(ca.PairPath("n"), ca.PairPath("n"))
		if err != nil {
			t.Fatalf("loading the pair file while the leaf is issued again (after %d loads): %v", loads, err)
		}
		seen[string(c.Certificate[0])] = true
		loads++
		if _, err := tls.LoadX509KeyPair(ca.PairPath("n"), ca.PairPath("n")); err != nil {
			torn++
		}
		if _, err := tls.LoadX509KeyPair(ca.CertPath("n"), ca.KeyPath("n")); err != nil {
			torn++
		}
	}
	wg.Wait()
	if issueErr != nil {
		t.Fatal(issueErr)
	}
	if len(seen) < 2 {
		t.Fatalf("the reader saw %d leaves in %d loads, want the leaf to change under it", len(seen), loads)
	}
	t.Logf("%d loads of the pair file saw %d leaves; reading twice was caught mismatched %d times", loads, len(seen), torn)
}

// A leaf's Common Name can differ from the name of its files, so that two
// leaves of one identity live apart; the Common Name is checked like a
// name.
func TestIssueCommonNameApartFromFiles(t *testing.T) {
	t.Parallel()
	ca, err := devtls.OpenCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ca.Issue("ctl", devtls.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.Issue("etcd-client.ctl", devtls.LeafOptions{CommonName: "ctl", Validity: devtls.LongLeafValidity})
	if err != nil {
		t.Fatal(err)
	}
	if got := client.Certificate.Leaf.Subject.CommonName; got != "ctl" {
		t.Errorf("Common Name %q, want ctl", got)
	}
	if client.Certificate.Leaf.Equal(serving.Certificate.Leaf) {
		t.Error("the two leaves of one identity are one")
	}
	again, err := ca.Issue("etcd-client.ctl", devtls.LeafOptions{CommonName: "ctl", Validity: devtls.LongLeafValidity})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Certificate.Leaf.Equal(client.Certificate.Leaf) {
		t.Error("a leaf that fits was issued again")
	}
	if _, err := ca.Issue("etcd-client.x", devtls.LeafOptions{CommonName: "-x"}); !errors.Is(err, devtls.ErrInvalidName) {
		t.Errorf("an invalid Common Name: %v, want ErrInvalidName", err)
	}
	if _, err := ca.Issue(".hidden", devtls.LeafOptions{CommonName: "x"}); !errors.Is(err, devtls.ErrInvalidName) {
		t.Errorf("an invalid file name: %v, want ErrInvalidName", err)
	}
}

// A leaf kept on disk gets its pair file when it has none (a directory
// from before pair files) or a stale one.
func TestIssueWritesMissingPairFile(t *testing.T) {
	t.Parallel()
	ca, err := devtls.OpenCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ca.Issue("n", devtls.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkMode(t, ca.PairPath("n"), 0o600)
	if err := os.Remove(ca.PairPath("n")); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Issue("n", devtls.LeafOptions{}); err != nil {
		t.Fatal(err)
	}
	c, err := tls.LoadX509KeyPair(ca.PairPath("n"), ca.PairPath("n"))
	if err != nil {
		t.Fatalf("pair file after Issue of a kept leaf: %v", err)
	}
	if !bytes.Equal(c.Certificate[0], b.Certificate.Leaf.Raw) {
		t.Error("the pair file holds another leaf than the one kept")
	}
}
