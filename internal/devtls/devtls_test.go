package devtls_test

import (
	"errors"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/devtls"
)

func TestOpenCACreatesOnceAndReloads(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "tls")
	ca1, err := devtls.OpenCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !ca1.Certificate().IsCA {
		t.Fatal("authority certificate is not a CA")
	}
	checkMode(t, dir, 0o700)
	checkMode(t, filepath.Join(dir, devtls.CAKeyFile), 0o600)
	checkMode(t, filepath.Join(dir, devtls.CACertFile), 0o644)

	ca2, err := devtls.OpenCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !ca1.Certificate().Equal(ca2.Certificate()) {
		t.Fatal("second OpenCA created another authority instead of reloading")
	}
}

func TestOpenCAConcurrentCreatesOneAuthority(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const n = 8
	cas := make([]*devtls.CA, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { cas[i], errs[i] = devtls.OpenCA(dir) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if !cas[i].Certificate().Equal(cas[0].Certificate()) {
			t.Fatalf("OpenCA %d got another authority", i)
		}
	}
}

func TestIssueLeaf(t *testing.T) {
	t.Parallel()
	ca, err := devtls.OpenCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("spiffe://example.org/node-a")
	opts := devtls.LeafOptions{DNSNames: []string{"node-a.example.org"}, IPs: []net.IP{net.ParseIP("10.0.0.7")}, URIs: []*url.URL{u}}
	b, err := ca.Issue("node-a", opts)
	if err != nil {
		t.Fatal(err)
	}
	leaf := b.Certificate.Leaf
	if b.Name() != "node-a" || leaf.Subject.CommonName != "node-a" {
		t.Fatalf("Common Name %q, want node-a", leaf.Subject.CommonName)
	}
	for _, d := range []string{"localhost", "node-a", "node-a.example.org"} {
		if err := leaf.VerifyHostname(d); err != nil {
			t.Errorf("leaf does not cover %s: %v", d, err)
		}
	}
	for _, ip := range []string{"127.0.0.1", "::1", "10.0.0.7"} {
		if err := leaf.VerifyHostname(ip); err != nil {
			t.Errorf("leaf does not cover %s: %v", ip, err)
		}
	}
	if len(leaf.URIs) != 1 || leaf.URIs[0].String() != u.String() {
		t.Errorf("URIs %v, want [%s]", leaf.URIs, u)
	}
	checkMode(t, ca.KeyPath("node-a"), 0o600)

	again, err := ca.Issue("node-a", opts)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Certificate.Leaf.Equal(leaf) {
		t.Error("second Issue with the same options issued a new leaf instead of reloading")
	}
	more, err := ca.Issue("node-a", devtls.LeafOptions{DNSNames: []string{"other.example.org"}})
	if err != nil {
		t.Fatal(err)
	}
	if more.Certificate.Leaf.Equal(leaf) {
		t.Error("Issue asking for a new DNS name kept the old leaf")
	}
	if err := more.Certificate.Leaf.VerifyHostname("other.example.org"); err != nil {
		t.Error(err)
	}
}

func TestIssueReissuesExpiredAndForeignLeaves(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, err := devtls.OpenCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	short, err := ca.Issue("n", devtls.LeafOptions{Validity: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	renewed, err := ca.Issue("n", devtls.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if renewed.Certificate.Leaf.Equal(short.Certificate.Leaf) {
		t.Error("a leaf about to expire was kept")
	}

	// Replace the authority: the leaf on disk is now foreign.
	for _, f := range []string{devtls.CACertFile, devtls.CAKeyFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	ca2, err := devtls.OpenCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ca2.Issue("n", devtls.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Certificate.Leaf.Equal(renewed.Certificate.Leaf) {
		t.Error("a leaf of another authority was kept")
	}
	if err := b.Certificate.Leaf.CheckSignatureFrom(ca2.Certificate()); err != nil {
		t.Error(err)
	}
}

func TestInvalidNames(t *testing.T) {
	t.Parallel()
	ca, err := devtls.OpenCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", "ca", "../x", "a/b", ".hidden", "-x", "sp ace", string(make([]byte, 64))} {
		if _, err := ca.Issue(name, devtls.LeafOptions{}); !errors.Is(err, devtls.ErrInvalidName) {
			t.Errorf("Issue(%q) = %v, want ErrInvalidName", name, err)
		}
	}
}

func TestCorruptFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, err := devtls.OpenCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Issue("n", devtls.LeafOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca.KeyPath("n"), []byte("not pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Issue("n", devtls.LeafOptions{}); !errors.Is(err, devtls.ErrInvalidFile) {
		t.Errorf("Issue with a corrupt key = %v, want ErrInvalidFile", err)
	}
	// The CA key of another authority does not match ca.crt.
	other, err := devtls.OpenCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(filepath.Join(other.Dir(), devtls.CAKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, devtls.CAKeyFile), key, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := devtls.OpenCA(dir); !errors.Is(err, devtls.ErrInvalidFile) {
		t.Errorf("OpenCA with a mismatched key = %v, want ErrInvalidFile", err)
	}
	// A leaf named as the CA files is not a CA.
	if _, err := devtls.OpenCA(filepath.Join(dir, devtls.CACertFile)); err == nil {
		t.Error("OpenCA on a file succeeded")
	}
}

func TestLoadBundle(t *testing.T) {
	t.Parallel()
	ca, err := devtls.OpenCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Issue("n", devtls.LeafOptions{}); err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(ca.Dir(), devtls.CACertFile)
	b, err := devtls.LoadBundle(ca.CertPath("n"), ca.KeyPath("n"), caFile)
	if err != nil {
		t.Fatal(err)
	}
	if b.Name() != "n" {
		t.Errorf("Name() = %q, want n", b.Name())
	}
	if _, err := devtls.LoadBundle(ca.CertPath("n"), caFile, caFile); !errors.Is(err, devtls.ErrInvalidFile) {
		t.Errorf("LoadBundle with a certificate as key = %v, want ErrInvalidFile", err)
	}
	if _, err := devtls.LoadBundle(ca.CertPath("n"), ca.KeyPath("n"), ca.KeyPath("n")); !errors.Is(err, devtls.ErrInvalidFile) {
		t.Errorf("LoadBundle with a key as CA file = %v, want ErrInvalidFile", err)
	}
	if _, err := devtls.LoadBundle(ca.CertPath("n"), ca.KeyPath("n"), filepath.Join(ca.Dir(), "absent")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadBundle with an absent CA file = %v, want fs.ErrNotExist", err)
	}
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != want {
		t.Errorf("%s mode %v, want %v", path, got, want)
	}
}
