package node_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
)

// refPeer behaves as the reference node's gateway does (see REAR.md), on
// plain HTTP, defects included: it lists its one flavor (the recorded
// payload, under owner) while available; refuses filter keys it does not
// know (a string regex among them) with 400; refuses a reservation
// without the buyer's liqoID; answers a re-reservation of the flavor by
// the same buyer with the earlier transaction and its earlier
// configuration; consumes a transaction before storing its contract (a
// repeated purchase is 500), names contracts after the flavor (a second
// purchase of it is 500 AlreadyExists), marks the flavor unavailable once
// sold and never restores it; its contracts expire after a year; it has
// no renewal, release or allocation route (404).
type refPeer struct {
	addr    string
	owner   string
	refused atomic.Int32 // discoveries refused with 400
	bought  atomic.Int32 // purchases answered 200

	mu        sync.Mutex
	flavor    map[string]any
	txs       map[string]map[string]any // by transaction ID
	contracts map[string]bool           // contract names made
	released  []string                  // contract IDs asked released (ContractRoutes)
	n         int
}

// releasedIDs are the contract IDs a buyer asked p to release.
func (p *refPeer) releasedIDs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.released)
}

// refOptions shape a refPeer: the owner of its flavor (default the
// recorded one), the flavor's ID (default the recorded one), and the name
// of the contracts it makes of it (default contract-<flavorID>-1a2b).
type refOptions struct {
	Owner, FlavorID, ContractName string
	// Flavor changes the recorded flavor before it is served.
	Flavor func(map[string]any)
	// BeforePurchase, if set, runs at the start of every purchase.
	BeforePurchase func()
	// ContractRoutes serves edgekit's renewal and release routes for the
	// contracts it made (which a reference node does not have), so that
	// a test sees which contract a buyer asks it to release.
	ContractRoutes bool
}

func newRefPeer(t *testing.T, o refOptions) *refPeer {
	t.Helper()
	p := &refPeer{flavor: payload(t, "flavor_k8slice.json"), txs: map[string]map[string]any{}, contracts: map[string]bool{}}
	if o.Owner != "" {
		p.flavor["owner"].(map[string]any)["ID"] = o.Owner
		p.flavor["providerID"] = o.Owner
	}
	if o.FlavorID != "" {
		p.flavor["flavorID"] = o.FlavorID
	}
	if o.Flavor != nil {
		o.Flavor(p.flavor)
	}
	p.owner = p.flavor["owner"].(map[string]any)["ID"].(string)
	flavorID := p.flavor["flavorID"].(string)
	name := o.ContractName
	if name == "" {
		name = "contract-" + flavorID + "-1a2b"
	}
	keys := regexp.MustCompile(`^filter\[(architecture|cpu|memory|pods|storage)\]\[(match|range)\](?:\[(min|max|regex)\])?$`)
	mux := http.NewServeMux()
	list := func(w http.ResponseWriter, _ *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.flavor["availability"] != true {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		b, _ := json.Marshal([]any{p.flavor})
		_, _ = w.Write(b)
	}
	mux.HandleFunc("GET /api/v2/flavors", list)
	mux.HandleFunc("GET /api/v2/flavors/k8slice", func(w http.ResponseWriter, r *http.Request) {
		for k := range r.URL.Query() {
			m := keys.FindStringSubmatch(k)
			if m == nil || (m[1] == "architecture" && m[2] != "match") {
				p.refused.Add(1)
				http.Error(w, "Error building the selector from the URL query parameters", http.StatusBadRequest)
				return
			}
		}
		list(w, r)
	})
	mux.HandleFunc("POST /api/v2/reservations", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			FlavorID      string          `json:"flavorID"`
			Buyer         map[string]any  `json:"buyerID"`
			Configuration json.RawMessage `json:"configuration"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		info, _ := req.Buyer["additionalInformation"].(map[string]any)
		if liqo, _ := info["liqoID"].(string); liqo == "" {
			http.Error(w, "Error: LiqoID not provided", http.StatusBadRequest)
			return
		}
		if req.FlavorID != flavorID {
			http.Error(w, "Error getting the Flavor", http.StatusInternalServerError)
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, tx := range p.txs { // the earlier transaction, with its earlier configuration
			if tx["flavorID"] == req.FlavorID && tx["buyer"].(map[string]any)["ID"] == req.Buyer["ID"] {
				b, _ := json.Marshal(tx)
				_, _ = w.Write(b)
				return
			}
		}
		p.n++
		tx := payload(t, "transaction.json")
		tx["transactionID"] = fmt.Sprintf("tx-%s-%d", p.owner, p.n)
		tx["flavorID"], tx["configuration"], tx["buyer"] = req.FlavorID, req.Configuration, req.Buyer
		tx["clusterID"] = info["liqoID"]
		tx["expirationTime"] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		p.txs[tx["transactionID"].(string)] = tx
		b, _ := json.Marshal(tx)
		_, _ = w.Write(b)
	})
	mux.HandleFunc("POST /api/v2/transactions/{id}/purchase", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Liqo *struct{ ClusterID string } `json:"liqoCredentials"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if o.BeforePurchase != nil {
			o.BeforePurchase()
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		tx, ok := p.txs[r.PathValue("id")]
		if !ok {
			http.Error(w, "Error getting the Transaction", http.StatusInternalServerError)
			return
		}
		delete(p.txs, r.PathValue("id")) // consumed before the contract is stored
		if req.Liqo == nil {
			http.Error(w, "Error: liqoCredentials not provided", http.StatusBadRequest)
			return
		}
		if p.contracts[name] {
			http.Error(w, fmt.Sprintf("Error creating the Contract: contracts.reservation.fluidos.eu %q already exists", name), http.StatusInternalServerError)
			return
		}
		p.contracts[name] = true
		p.flavor["availability"] = false // and never restored
		c := payload(t, "contract.json")
		c["contractID"], c["transactionID"], c["flavor"] = name, tx["transactionID"], p.flavor
		c["buyerID"], c["buyerClusterID"], c["configuration"] = tx["buyer"], tx["clusterID"], tx["configuration"]
		c["seller"] = p.flavor["owner"]
		c["expirationTime"] = time.Now().AddDate(1, 0, 0).UTC().Format(time.RFC3339)
		b, _ := json.Marshal(c)
		p.bought.Add(1)
		_, _ = w.Write(b)
	})
	if o.ContractRoutes {
		answer := func(w http.ResponseWriter, r *http.Request, state fluidos.AllocationState) {
			id := r.PathValue("contractID")
			p.mu.Lock()
			known := p.contracts[id]
			if known && state != fluidos.AllocationState_ALLOCATION_STATE_ACTIVE {
				p.released = append(p.released, id)
			}
			p.mu.Unlock()
			if !known {
				http.Error(w, "no contract "+id, http.StatusNotFound)
				return
			}
			b, _ := rear.MarshalProto(&fluidos.Allocation{Id: "a-" + id, ContractId: id, Seller: &fluidos.NodeIdentity{NodeId: p.owner},
				Status: &fluidos.AllocationStatus{State: state, Message: "as the test peer says"}})
			_, _ = w.Write(b)
		}
		mux.HandleFunc("POST "+rear.RouteContractRenew, func(w http.ResponseWriter, r *http.Request) {
			answer(w, r, fluidos.AllocationState_ALLOCATION_STATE_ACTIVE)
		})
		mux.HandleFunc("POST "+rear.RouteContractRelease, func(w http.ResponseWriter, r *http.Request) {
			answer(w, r, fluidos.AllocationState_ALLOCATION_STATE_RELEASED)
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.addr = strings.TrimPrefix(srv.URL, "http://")
	return p
}

// referenceProvider is a refPeer with the recorded flavor.
func referenceProvider(t *testing.T) (addr string, refused *atomic.Int32) {
	p := newRefPeer(t, refOptions{})
	return p.addr, &p.refused
}

// refCall POSTs a JSON body to a refPeer route and returns the status and
// the decoded answer (nil unless 200).
func refCall(t *testing.T, addr, path string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post("http://"+addr+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, m
}

// refReserve reserves the recorded flavor at p as buyer, with cfg (the
// wire configuration), and returns the transaction.
func refReserve(t *testing.T, p *refPeer, buyer string, cfg map[string]any) map[string]any {
	t.Helper()
	p.mu.Lock()
	fid := p.flavor["flavorID"]
	p.mu.Unlock()
	code, tx := refCall(t, p.addr, "/api/v2/reservations", map[string]any{
		"flavorID": fid, "buyerID": map[string]any{"ID": buyer, "additionalInformation": map[string]any{"liqoID": buyer}}, "configuration": cfg,
	})
	if code != http.StatusOK {
		t.Fatalf("reserving as %s: %d", buyer, code)
	}
	return tx
}
