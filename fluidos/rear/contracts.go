package rear

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/fluidos"
)

// edgekit's routes beside REAR's: a buyer follows, renews and releases
// what it bought, and runs instances on a K8Slice it bought. A reference
// node has none of them (it answers 404). Their bodies are the protojson
// of the typed objects (fluidos.Allocation, fluidos.SliceInstance...).
const (
	// RouteContractAllocation (GET) answers the allocation of a contract
	// to its buyer, with the credentials once it is ACTIVE.
	RouteContractAllocation = "/api/v2/contracts/{contractID}/allocation"
	// RouteContractRenew (POST) pushes the contract's end back by the
	// seller's lease and answers as RouteContractAllocation.
	RouteContractRenew = "/api/v2/contracts/{contractID}/renew"
	// RouteContractRelease (POST, body ReleaseRequest) ends the contract:
	// the seller tears down what it provisioned. It answers the
	// allocation, RELEASING or RELEASED.
	RouteContractRelease = "/api/v2/contracts/{contractID}/release"
)

// ContractPath is the path of a contract route (one of RouteContract*)
// for a contract.
func ContractPath(route, contractID string) string {
	return replaceParam(route, "{contractID}", contractID)
}

func replaceParam(route, param, value string) string {
	return strings.Replace(route, param, url.PathEscape(value), 1)
}

// ReleaseRequest is the body of a release.
type ReleaseRequest struct {
	// Reason is why, for the seller's record.
	Reason string `json:"reason,omitempty"`
}

// ContractAllocation asks the seller at addr (the node seller names) for
// the allocation of a contract it sold to this node.
func (c *Client) ContractAllocation(ctx context.Context, addr, seller, contractID string) (*fluidos.Allocation, error) {
	body, err := c.toSeller(ctx, seller, exchange{method: http.MethodGet, addr: addr, path: ContractPath(RouteContractAllocation, contractID)})
	if err != nil {
		return nil, err
	}
	return decodeAllocation(addr, body)
}

// RenewContract asks the seller to push a contract's end back, and
// returns its allocation.
func (c *Client) RenewContract(ctx context.Context, addr, seller, contractID string) (*fluidos.Allocation, error) {
	body, err := c.toSeller(ctx, seller, exchange{method: http.MethodPost, addr: addr, path: ContractPath(RouteContractRenew, contractID), body: []byte("{}")})
	if err != nil {
		return nil, err
	}
	return decodeAllocation(addr, body)
}

// ReleaseContract asks the seller to end a contract, and returns its
// allocation (RELEASING, or RELEASED when the seller is done).
func (c *Client) ReleaseContract(ctx context.Context, addr, seller, contractID, reason string) (*fluidos.Allocation, error) {
	b, err := json.Marshal(ReleaseRequest{Reason: reason})
	if err != nil {
		return nil, err
	}
	body, err := c.toSeller(ctx, seller, exchange{method: http.MethodPost, addr: addr, path: ContractPath(RouteContractRelease, contractID), body: b})
	if err != nil {
		return nil, err
	}
	return decodeAllocation(addr, body)
}

func decodeAllocation(addr string, body []byte) (*fluidos.Allocation, error) {
	a := &fluidos.Allocation{}
	if err := unmarshalProto(body, a); err != nil {
		return nil, fmt.Errorf("%w: allocation from %s: %w", ErrGarbage, addr, err)
	}
	if a.GetId() == "" || a.GetContractId() == "" {
		return nil, fmt.Errorf("%w: allocation from %s has no id or contract", ErrGarbage, addr)
	}
	return a, nil
}

// protoJSON is how edgekit's routes write their bodies.
var protoJSON = protojson.MarshalOptions{}

// MarshalProto is the body of an edgekit route: the protojson of m.
func MarshalProto(m proto.Message) ([]byte, error) { return protoJSON.Marshal(m) }

// unmarshalProto reads the body of an edgekit route, ignoring fields
// this version does not know.
func unmarshalProto(b []byte, m proto.Message) error {
	return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(b, m)
}

// UnmarshalProto reads the body of an edgekit route into m, ignoring
// fields this version does not know.
func UnmarshalProto(b []byte, m proto.Message) error { return unmarshalProto(b, m) }
