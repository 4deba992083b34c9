package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
)

// probe is one health check of an application instance.
type probe struct {
	kind string // "tcp" or "http"
	port int
	path string // for "http"
}

func (pb probe) addr() string {
	a := net.JoinHostPort("127.0.0.1", strconv.Itoa(pb.port))
	if pb.kind == "http" {
		return a + pb.path
	}
	return a
}

// healthProbe picks the check of app given the first host port of each of
// its declared ports; ok is false when there is nothing to check.
//
//   - HEALTH_CHECK_NONE: no check.
//   - HEALTH_CHECK_HTTP: GET health_check_path (default "/") on the first
//     HTTP port, else the first port that is not UDP; a 2xx answer passes.
//   - HEALTH_CHECK_TCP: connect to the first port that is not UDP.
//   - HEALTH_CHECK_UNSPECIFIED: TCP when the app declares a port that is
//     not UDP, else no check.
func healthProbe(app *edgeproto.App, firsts []int) (probe, bool, error) {
	hc := app.GetHealthCheck()
	if hc == edgeproto.HealthCheck_HEALTH_CHECK_NONE {
		return probe{}, false, nil
	}
	declared := app.GetPorts()
	streamPort, httpPort := 0, 0
	for i, pt := range declared {
		switch pt.GetProto() {
		case edgeproto.PortProtocol_PORT_PROTOCOL_UDP:
		case edgeproto.PortProtocol_PORT_PROTOCOL_HTTP:
			if httpPort == 0 {
				httpPort = firsts[i]
			}
			fallthrough
		default:
			if streamPort == 0 {
				streamPort = firsts[i]
			}
		}
	}
	if len(declared) == 0 && len(firsts) > 0 {
		// No declared port: the app was given PORT, check that.
		streamPort = firsts[0]
	}
	switch hc {
	case edgeproto.HealthCheck_HEALTH_CHECK_HTTP:
		port := httpPort
		if port == 0 {
			port = streamPort
		}
		if port == 0 {
			return probe{}, false, fmt.Errorf("%w: HTTP health check needs a TCP or HTTP port", ErrInvalidObject)
		}
		path := app.GetHealthCheckPath()
		if path == "" {
			path = "/"
		}
		if path[0] != '/' {
			path = "/" + path
		}
		return probe{kind: "http", port: port, path: path}, true, nil
	case edgeproto.HealthCheck_HEALTH_CHECK_TCP:
		if streamPort == 0 {
			return probe{}, false, fmt.Errorf("%w: TCP health check needs a TCP or HTTP port", ErrInvalidObject)
		}
		return probe{kind: "tcp", port: streamPort}, true, nil
	default:
		if len(declared) == 0 || streamPort == 0 {
			return probe{}, false, nil
		}
		return probe{kind: "tcp", port: streamPort}, true, nil
	}
}

// waitHealthy probes until the check passes, the process stops being
// alive (alive returns false), or the deadline passes: ctx's deadline, or
// fallback from now when ctx has none.
func waitHealthy(ctx context.Context, pb probe, interval, fallback time.Duration, alive func() bool) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, fallback)
		defer cancel()
	}
	client := &http.Client{
		// No proxy from the environment: the probe goes to loopback.
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	defer client.CloseIdleConnections()
	var last error = errors.New("not probed yet")
	for {
		if !alive() {
			return &HealthCheckError{Check: pb.kind, Addr: pb.addr(), Exited: true, Err: last}
		}
		last = probeOnce(ctx, client, pb)
		if last == nil {
			return nil
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return &HealthCheckError{Check: pb.kind, Addr: pb.addr(), Err: fmt.Errorf("%w (last probe: %v)", ctx.Err(), last)}
		case <-t.C:
		}
	}
}

func probeOnce(ctx context.Context, client *http.Client, pb probe) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	switch pb.kind {
	case "http":
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+pb.addr(), nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return fmt.Errorf("status %s", resp.Status)
		}
		return nil
	default:
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", pb.addr())
		if err != nil {
			return err
		}
		return c.Close()
	}
}
