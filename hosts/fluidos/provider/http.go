package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/internal/devtls"
)

// maxRequestBody bounds a REAR request body (MaxRequestBody).
const maxRequestBody = MaxRequestBody

// MaxRequestBody bounds the body of a request to the provider's routes:
// a larger one is refused with 413, from its Content-Length before it is
// read when the request declares one.
const MaxRequestBody = 1 << 20

// typeRoutes are the flavor types of the typed discovery routes, by path
// element.
var typeRoutes = map[string]fluidos.FlavorType{
	"k8slice": fluidos.FlavorType_FLAVOR_TYPE_K8SLICE,
	"service": fluidos.FlavorType_FLAVOR_TYPE_SERVICE,
	"vm":      fluidos.FlavorType_FLAVOR_TYPE_VM,
	"sensors": fluidos.FlavorType_FLAVOR_TYPE_SENSOR,
}

// Handler serves the REAR v2 provider routes. With secure set, a caller
// is the node its verified client certificate names (the server must
// require client certificates); otherwise the buyer a request names is
// trusted. Errors are plain text with the status of HTTPStatus, or 400
// naming what is wrong in a request (413 for a body over 1 MiB).
func (p *Provider) Handler(secure bool) http.Handler {
	h := &handler{p: p, secure: secure}
	mux := http.NewServeMux()
	mux.Handle("GET "+rear.RouteFlavors, h.route("flavors", h.listAll))
	mux.Handle("GET "+rear.RouteFlavors+"/{type}", h.route("flavors_by_type", h.listType))
	mux.Handle("POST "+rear.RouteReservations, h.route("reservations", h.reserve))
	mux.Handle("POST "+rear.RoutePurchase, h.route("purchase", h.purchase))
	mux.Handle("GET "+rear.RouteContractAllocation, h.route("contract_allocation", h.contractAllocation))
	mux.Handle("POST "+rear.RouteContractRenew, h.route("contract_renew", h.renew))
	mux.Handle("POST "+rear.RouteContractRelease, h.route("contract_release", h.release))
	return mux
}

type handler struct {
	p      *Provider
	secure bool
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

func (h *handler) route(name string, fn func(w http.ResponseWriter, r *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		fn(sw, r)
		h.p.cfg.Metrics.served(name, sw.code)
	})
}

// peer is the caller's verified identity; false when a secure handler
// got a request without one (answered 401).
func (h *handler) peer(w http.ResponseWriter, r *http.Request) (string, bool) {
	if !h.secure {
		return "", true
	}
	id, err := devtls.PeerFromRequest(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return "", false
	}
	return id.Name, true
}

func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := HTTPStatus(err)
	if code == http.StatusInternalServerError {
		h.p.log.ErrorContext(r.Context(), "REAR request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		http.Error(w, "internal error", code)
		return
	}
	http.Error(w, err.Error(), code)
}

func (h *handler) listAll(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.peer(w, r); !ok {
		return
	}
	if len(r.URL.Query()) > 0 {
		http.Error(w, "filters go to the typed routes, for example "+rear.RouteK8SliceFlavors, http.StatusBadRequest)
		return
	}
	h.list(w, r, nil)
}

func (h *handler) listType(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.peer(w, r); !ok {
		return
	}
	t, ok := typeRoutes[r.PathValue("type")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	sel, err := rear.ParseQuery(t, r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.list(w, r, sel)
}

// list answers the available flavors sel selects (all when nil).
func (h *handler) list(w http.ResponseWriter, r *http.Request, sel *fluidos.Selector) {
	flavors, err := h.p.Flavors(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := make([]*rear.Flavor, 0, len(flavors))
	for _, f := range flavors {
		if !f.GetAvailability() {
			continue
		}
		if ok, _ := sel.Match(f); !ok {
			continue
		}
		wf, err := rear.EncodeFlavor(f)
		if err != nil {
			h.p.log.WarnContext(r.Context(), "flavor left out of discovery", "flavor", f.GetId(), "err", err)
			continue
		}
		out = append(out, wf)
	}
	writeJSON(w, out)
}

func (h *handler) reserve(w http.ResponseWriter, r *http.Request) {
	peer, ok := h.peer(w, r)
	if !ok {
		return
	}
	var wr rear.ReserveRequest
	if err := readJSON(w, r, &wr); err != nil {
		badBody(w, err)
		return
	}
	req, err := rear.DecodeReserveRequest(&wr)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	t, err := h.p.Reserve(r.Context(), peer, req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	wt, err := rear.EncodeTransaction(t, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, wt)
}

func (h *handler) purchase(w http.ResponseWriter, r *http.Request) {
	peer, ok := h.peer(w, r)
	if !ok {
		return
	}
	var wr rear.PurchaseRequest
	if err := readJSON(w, r, &wr); err != nil {
		badBody(w, err)
		return
	}
	c, err := h.p.Purchase(r.Context(), peer, r.PathValue("transactionID"), rear.DecodePurchaseRequest(&wr))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	wc, err := rear.EncodeContract(c)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, wc)
}

func (h *handler) contractAllocation(w http.ResponseWriter, r *http.Request) {
	if peer, ok := h.peer(w, r); ok {
		a, err := h.p.ContractAllocation(r.Context(), peer, r.PathValue("contractID"))
		h.answerAllocation(w, r, peer, a, err)
	}
}

func (h *handler) renew(w http.ResponseWriter, r *http.Request) {
	if peer, ok := h.peer(w, r); ok {
		a, err := h.p.Renew(r.Context(), peer, r.PathValue("contractID"))
		h.answerAllocation(w, r, peer, a, err)
	}
}

func (h *handler) release(w http.ResponseWriter, r *http.Request) {
	peer, ok := h.peer(w, r)
	if !ok {
		return
	}
	var req rear.ReleaseRequest
	if err := readJSON(w, r, &req); err != nil {
		badBody(w, err)
		return
	}
	if len(req.Reason) > 512 {
		http.Error(w, "reason: at most 512 bytes", http.StatusBadRequest)
		return
	}
	a, err := h.p.Release(r.Context(), peer, r.PathValue("contractID"), req.Reason)
	h.answerAllocation(w, r, peer, a, err)
}

// answerAllocation answers an allocation to its buyer: its credentials
// go only over an authenticated transport.
func (h *handler) answerAllocation(w http.ResponseWriter, r *http.Request, peer string, a *fluidos.Allocation, err error) {
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if peer == "" {
		a = a.Redacted()
	}
	b, err := rear.MarshalProto(a)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// readJSON decodes a request body of at most maxRequestBody bytes; an
// empty body is an empty object. A body over the limit is a
// *BodyTooLargeError, refused from its Content-Length before any of it is
// read when the request declares one.
func readJSON(w http.ResponseWriter, r *http.Request, into any) error {
	if r.ContentLength > maxRequestBody {
		return &BodyTooLargeError{Limit: maxRequestBody}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return &BodyTooLargeError{Limit: mb.Limit}
		}
		return fmt.Errorf("reading request body: %w", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("request body is not the JSON expected: %w", err)
	}
	return nil
}

// BodyTooLargeError is a request body over a route's limit: 413.
type BodyTooLargeError struct{ Limit int64 }

func (e *BodyTooLargeError) Error() string {
	return fmt.Sprintf("request body exceeds %d bytes", e.Limit)
}

// badBody answers an error of readJSON: 413 for a body over the limit,
// else 400.
func badBody(w http.ResponseWriter, err error) {
	code := http.StatusBadRequest
	var tl *BodyTooLargeError
	if errors.As(err, &tl) {
		code = http.StatusRequestEntityTooLarge
	}
	http.Error(w, err.Error(), code)
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
