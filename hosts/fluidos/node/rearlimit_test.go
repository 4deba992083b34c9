package node_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
)

// zeros is a body of n zero bytes made as they are read, counting them.
type zeros struct {
	left int64
	read atomic.Int64
}

func (z *zeros) Read(p []byte) (int, error) {
	if z.left <= 0 {
		return 0, io.EOF
	}
	n := min(int64(len(p)), z.left)
	clear(p[:n])
	z.left -= n
	z.read.Add(n)
	return int(n), nil
}

// TestREARBodiesOverTheLimitAre413: a REAR request whose body is over the
// limit answers 413 Request Entity Too Large, whether it declares its
// length or is chunked; a 100 MB upload is refused from its Content-Length
// with a response, on the provider's routes and the slices' (whose
// authentication comes after), before the node reads it: a client that
// waits for "100 Continue" sends none of it, another at most what the
// connection buffers.
func TestREARBodiesOverTheLimitAre413(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	n := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64"), InsecureREAR: true})
	base := "http://" + n.RearAddr()
	client := &http.Client{Timeout: 60 * time.Second}
	do := func(what string, req *http.Request) (int, string) {
		t.Helper()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return resp.StatusCode, string(b)
	}
	over := bytes.Repeat([]byte(" "), provider.MaxRequestBody+10)

	req, _ := http.NewRequest(http.MethodPost, base+rear.RouteReservations, bytes.NewReader(over))
	if code, body := do("declared length", req); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "1048576") {
		t.Errorf("a body of %d bytes: %d %q, want 413 naming the limit", len(over), code, body)
	}
	req, _ = http.NewRequest(http.MethodPost, base+rear.RouteReservations, io.MultiReader(bytes.NewReader(over)))
	req.ContentLength = -1 // chunked: the limit is found while reading
	if code, body := do("chunked", req); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "1048576") {
		t.Errorf("a chunked body of %d bytes: %d %q, want 413", len(over), code, body)
	}
	for _, path := range []string{rear.RouteReservations, rear.SlicePath(rear.RouteSliceInstance, "s1", "web")} {
		huge := &zeros{left: 100 << 20}
		req, _ = http.NewRequest(http.MethodPut, base+path, huge)
		if strings.HasPrefix(path, rear.RouteReservations) {
			req.Method = http.MethodPost
		}
		req.ContentLength = huge.left
		if code, _ := do("100 MB to "+path, req); code != http.StatusRequestEntityTooLarge {
			t.Errorf("100 MB to %s: %d, want 413", path, code)
		}
		if sent := huge.read.Load(); sent > 16<<20 {
			t.Errorf("100 MB to %s: the client sent %d bytes before the answer; the node read the body", path, sent)
		}
	}
	// With "Expect: 100-continue" the client sends the body only once the
	// node starts reading it: a refusal from the Content-Length leaves the
	// body unsent.
	expecting := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{ExpectContinueTimeout: 30 * time.Second}}
	t.Cleanup(expecting.CloseIdleConnections)
	huge := &zeros{left: 100 << 20}
	req, _ = http.NewRequest(http.MethodPost, base+rear.RouteReservations, huge)
	req.ContentLength = huge.left
	req.Header.Set("Expect", "100-continue")
	resp, err := expecting.Do(req)
	if err != nil {
		t.Fatalf("100 MB with Expect: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || huge.read.Load() != 0 {
		t.Errorf("100 MB with Expect: 100-continue: %d after %d bytes of the body were sent, want 413 before any", resp.StatusCode, huge.read.Load())
	}
	// A request within the limit still gets its answer (400: not a
	// reservation).
	req, _ = http.NewRequest(http.MethodPost, base+rear.RouteReservations, strings.NewReader(`{"nope":1}`))
	if code, _ := do("small", req); code != http.StatusBadRequest {
		t.Errorf("a small bad body: %d, want 400", code)
	}
}
