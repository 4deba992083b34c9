package rear

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/devtls"
)

// Bounds of what a client reads of an answer.
const (
	maxListBody   = 8 << 20
	maxObjectBody = 1 << 20
)

// ErrImpersonation: the peer's certificate names another node than the
// one the client meant to reach, or than the one its answer claims.
var ErrImpersonation = errors.New("peer certificate names another node")

// Client speaks REAR v2 to providers. Its zero value is not usable: use
// NewClient.
type Client struct {
	http    *http.Client
	scheme  string
	tls     *tls.Config
	timeout time.Duration

	mu      sync.Mutex
	sellers map[string]*http.Client // clients that only talk to one node
}

// NewClient is a client over mutual TLS with tlsConfig (its certificate is
// the node's identity), or over plain HTTP when tlsConfig is nil.
// timeout bounds each request (0 for none: use the context).
func NewClient(tlsConfig *tls.Config, timeout time.Duration) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConfig
	tr.MaxIdleConnsPerHost = 16
	scheme := "https"
	if tlsConfig == nil {
		scheme = "http"
	}
	return &Client{http: &http.Client{Transport: tr, Timeout: timeout}, scheme: scheme, tls: tlsConfig, timeout: timeout, sellers: map[string]*http.Client{}}
}

// Close releases idle connections.
func (c *Client) Close() {
	c.http.CloseIdleConnections()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range c.sellers {
		h.CloseIdleConnections()
	}
}

// sellerClient is an HTTP client whose TLS handshakes fail unless the
// server's certificate names seller, so that nothing is sent to another
// node; the plain client over plain HTTP or for no seller.
func (c *Client) sellerClient(seller string) *http.Client {
	if c.tls == nil || seller == "" {
		return c.http
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if h := c.sellers[seller]; h != nil {
		return h
	}
	cfg := c.tls.Clone()
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 || cs.PeerCertificates[0].Subject.CommonName != seller {
			name := ""
			if len(cs.PeerCertificates) > 0 {
				name = cs.PeerCertificates[0].Subject.CommonName
			}
			return fmt.Errorf("%w: certificate names %q, expected %q", ErrImpersonation, name, seller)
		}
		return nil
	}
	tr := c.http.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	h := &http.Client{Transport: tr, Timeout: c.timeout}
	c.sellers[seller] = h
	return h
}

// Answer is what a provider answered a discovery.
type Answer struct {
	// Flavors are the available flavors that match the selector, decoded.
	Flavors []*fluidos.Flavor
	// Peer is the node the provider's certificate names; empty over plain
	// HTTP.
	Peer string
	// Dropped counts flavors of the answer that did not decode; DropErr is
	// the first such error.
	Dropped int
	DropErr error
}

// ListFlavors asks the provider at addr (host:port) for its available
// flavors matching sel (every flavor when sel is nil). The provider
// filters with the full query; when it refuses the query (400, as a
// reference node does with what it does not know) the client asks again
// with the portable subset, and when it has no route for the type (404,
// 405) it asks for every flavor; whatever the provider does, the answer
// is filtered again with sel.Match and to available flavors. A flavor
// whose owner is not the node the provider's certificate names is an
// ErrImpersonation error.
func (c *Client) ListFlavors(ctx context.Context, addr string, sel *fluidos.Selector) (*Answer, error) {
	if err := sel.Validate(); err != nil {
		return nil, err
	}
	route, q := EncodeQuery(sel, false)
	list := func(route string, q url.Values) ([]byte, string, error) {
		return c.do(ctx, c.http, exchange{method: http.MethodGet, addr: addr, path: route, query: q, limit: maxListBody, want: []int{http.StatusOK, http.StatusNoContent}})
	}
	body, peer, err := list(route, q)
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusBadRequest {
		if pr, pq := EncodeQuery(sel, true); pr != route || pq.Encode() != q.Encode() {
			route, q = pr, pq
			body, peer, err = list(route, q)
		}
	}
	if errors.As(err, &se) && (se.Code == http.StatusNotFound || se.Code == http.StatusMethodNotAllowed) && route != RouteFlavors {
		body, peer, err = list(RouteFlavors, nil)
	}
	if err != nil {
		return nil, err
	}
	ans := &Answer{Peer: peer}
	if len(bytes.TrimSpace(body)) == 0 {
		return ans, nil
	}
	var wire []Flavor
	if err := json.Unmarshal(body, &wire); err != nil {
		return nil, fmt.Errorf("%w: flavors from %s: %w", ErrGarbage, addr, err)
	}
	for i := range wire {
		f, err := DecodeFlavor(&wire[i])
		if err != nil {
			if ans.Dropped++; ans.DropErr == nil {
				ans.DropErr = fmt.Errorf("flavor %q: %w", wire[i].FlavorID, err)
			}
			continue
		}
		if peer != "" && f.GetOwner().GetNodeId() != peer {
			return nil, fmt.Errorf("%w: flavor %q of %s claims owner %q, the certificate is %q", ErrImpersonation, f.GetId(), addr, f.GetOwner().GetNodeId(), peer)
		}
		if !f.GetAvailability() {
			continue
		}
		if ok, _ := sel.Match(f); ok {
			ans.Flavors = append(ans.Flavors, f)
		}
	}
	if len(wire) > 0 && ans.Dropped == len(wire) {
		return nil, fmt.Errorf("%w: no flavor from %s decodes: %w", ErrGarbage, addr, ans.DropErr)
	}
	return ans, nil
}

// Reserve asks the provider at addr, which must be the node seller names,
// to hold a flavor; flavor (may be nil) types a service configuration.
func (c *Client) Reserve(ctx context.Context, addr, seller string, req *fluidos.ReserveRequest, flavor *fluidos.Flavor) (*fluidos.Transaction, error) {
	w, err := EncodeReserveRequest(req, flavor)
	if err != nil {
		return nil, err
	}
	body, err := c.call(ctx, addr, seller, RouteReservations, w)
	if err != nil {
		return nil, err
	}
	var t Transaction
	if err := json.Unmarshal(body, &t); err != nil {
		return nil, fmt.Errorf("%w: transaction from %s: %w", ErrGarbage, addr, err)
	}
	if t.TransactionID == "" {
		return nil, fmt.Errorf("%w: transaction from %s has no transactionID", ErrGarbage, addr)
	}
	tx, err := DecodeTransaction(&t)
	if err != nil {
		return nil, fmt.Errorf("%w: transaction from %s: %w", ErrGarbage, addr, err)
	}
	return tx, nil
}

// Purchase asks the provider at addr, which must be the node seller names,
// to sell what a transaction holds.
func (c *Client) Purchase(ctx context.Context, addr, seller, transactionID string, req *fluidos.PurchaseRequest) (*fluidos.Contract, error) {
	body, err := c.call(ctx, addr, seller, PurchasePath(transactionID), EncodePurchaseRequest(req))
	if err != nil {
		return nil, err
	}
	var w Contract
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("%w: contract from %s: %w", ErrGarbage, addr, err)
	}
	ct, err := DecodeContract(&w)
	if err != nil {
		return nil, fmt.Errorf("%w: contract from %s: %w", ErrGarbage, addr, err)
	}
	return ct, nil
}

// call POSTs a JSON object and checks the peer is seller (over TLS).
func (c *Client) call(ctx context.Context, addr, seller, path string, in any) ([]byte, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	return c.toSeller(ctx, seller, exchange{method: http.MethodPost, addr: addr, path: path, body: b})
}

// toSeller sends x to the node seller names (over TLS the connection is
// refused unless the server's certificate names seller) and returns the
// body of a 200 answer.
func (c *Client) toSeller(ctx context.Context, seller string, x exchange) ([]byte, error) {
	x.limit, x.want = maxObjectBody, []int{http.StatusOK}
	body, peer, err := c.do(ctx, c.sellerClient(seller), x)
	if peer != "" && seller != "" && peer != seller {
		return nil, fmt.Errorf("%w: %s answered as %q, expected %q", ErrImpersonation, x.addr, peer, seller)
	}
	return body, err
}

// exchange is one request and what is accepted of its answer.
type exchange struct {
	method, addr, path string
	query              url.Values
	body               []byte      // nil for none
	header             http.Header // added to the request's
	limit              int64       // bytes of the answer read at most
	want               []int       // statuses whose body is returned
}

// do sends one request and returns the body of an answer with one of the
// wanted statuses, and the peer's certificate name.
func (c *Client) do(ctx context.Context, hc *http.Client, x exchange) ([]byte, string, error) {
	method, addr, limit := x.method, x.addr, x.limit
	u := url.URL{Scheme: c.scheme, Host: addr, Path: x.path}
	if len(x.query) > 0 {
		u.RawQuery = x.query.Encode()
	}
	var rd io.Reader
	if x.body != nil {
		rd = bytes.NewReader(x.body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, "", fmt.Errorf("rear: %s %s: %w", method, u.String(), err)
	}
	for k, vs := range x.header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	if x.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		if errors.Is(err, ErrImpersonation) {
			return nil, "", fmt.Errorf("rear: %s %s: %w", method, u.Redacted(), ErrImpersonation)
		}
		return nil, "", fmt.Errorf("rear: %s %s: %w", method, u.Redacted(), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, "", fmt.Errorf("rear: reading answer of %s %s: %w", method, u.Redacted(), err)
	}
	if int64(len(data)) > limit {
		return nil, "", fmt.Errorf("%w: answer of %s %s exceeds %d bytes", ErrGarbage, method, u.Redacted(), limit)
	}
	var peer string
	if resp.TLS != nil {
		id, err := devtls.PeerIdentity(resp.TLS)
		if err != nil {
			return nil, "", fmt.Errorf("rear: %s: %w", addr, err)
		}
		peer = id.Name
	}
	for _, w := range x.want {
		if resp.StatusCode == w {
			return data, peer, nil
		}
	}
	msg := strings.TrimSpace(string(data[:min(len(data), 512)]))
	return nil, peer, &StatusError{Code: resp.StatusCode, Message: msg}
}
