package controller_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/ui/uitest"
)

// With --dev-tls the status page (and /metrics beside it) is served over
// HTTPS with the development authority's certificate, without asking the
// browser for a certificate; plain HTTP gets nothing from it, and the
// session cookie is Secure.
func TestStatusPageServedOverTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	running := make(chan *controller.Running, 1)
	done := make(chan error, 1)
	go func() {
		done <- controller.Run(ctx, controller.Options{DataDir: dir, Listen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0", DevTLS: true,
			StopTimeout: 2 * time.Second, Ready: func(r *controller.Running) { running <- r }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	})
	var r *controller.Running
	select {
	case r = <-running:
	case err := <-done:
		done <- err // for the cleanup, which waits for Run's end
		t.Fatalf("the controller did not start: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the controller did not start within 60s")
	}
	if !r.MetricsTLS || r.CAFile == "" {
		t.Fatalf("the controller says its HTTP listener serves TLS: %v, with the authority %q", r.MetricsTLS, r.CAFile)
	}
	caPEM, err := os.ReadFile(r.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("%s holds no certificate", r.CAFile)
	}
	askedForCert := false
	transport := &http.Transport{Proxy: nil, TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			askedForCert = true
			return &tls.Certificate{}, nil
		}}}
	t.Cleanup(transport.CloseIdleConnections)
	hc := &http.Client{Transport: transport, Timeout: 10 * time.Second}
	get := func(c *http.Client, url string) (int, string, error) {
		resp, err := c.Get(url)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}

	base := "https://" + r.MetricsAddr
	if code, body, err := get(hc, base+"/ui/"); err != nil || code != http.StatusOK || !strings.Contains(body, "edgekit region") {
		t.Fatalf("GET %s/ui/ over TLS: %d %v\n%s", base, code, err, body)
	}
	if code, body, err := get(hc, base+"/metrics"); err != nil || code != http.StatusOK || !strings.Contains(body, "go_goroutines") {
		t.Fatalf("GET %s/metrics over TLS: %d %v", base, code, err)
	}
	if askedForCert {
		t.Error("the status page asked the client for a certificate (a browser would ask its user)")
	}

	// A login over TLS gets a Secure cookie, and the event stream.
	tok, err := os.ReadFile(filepath.Join(dir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	page := uitest.NewClient(t, base+"/ui/", transport)
	page.Login(strings.TrimSpace(string(tok)))
	if snap := page.Open().Next(10 * time.Second); !strings.HasPrefix(snap, "[") {
		t.Errorf("the snapshot over TLS is %q", snap)
	}
	cookieReq, _ := http.NewRequest(http.MethodPost, base+"/ui/login", strings.NewReader("token="+strings.TrimSpace(string(tok))))
	cookieReq.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := hc.Do(cookieReq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if c := resp.Header.Get("Set-Cookie"); !strings.Contains(c, "Secure") {
		t.Errorf("the session cookie over TLS is not Secure: %q", c)
	}

	// Plain HTTP gets no page.
	plain := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second}
	if code, body, err := get(plain, "http://"+r.MetricsAddr+"/ui/"); err == nil && (code == http.StatusOK || strings.Contains(body, "edgekit region")) {
		t.Errorf("plain HTTP got the page: %d", code)
	}
}
