package rear

import (
	"context"
	"fmt"
	"net/http"

	"github.com/edgekit/edgekit/fluidos"
)

// The routes of a bought K8Slice, on its seller's REAR endpoint (edgekit's
// own, see RouteContractAllocation). Every call carries the slice's token
// ("Authorization: Bearer <token>") and, over mutual TLS, the buyer's
// certificate.
const (
	// RouteSliceInstances (GET) lists the instances of a slice
	// (fluidos.ListSliceInstancesResponse).
	RouteSliceInstances = "/api/v2/slices/{sliceID}/instances"
	// RouteSliceInstance (GET, PUT, DELETE) is one instance
	// (fluidos.SliceInstance): PUT creates or changes it and waits for its
	// outcome within the request, DELETE deletes it.
	RouteSliceInstance = "/api/v2/slices/{sliceID}/instances/{name}"
)

// SlicePath is the path of a slice route for a slice and, for
// RouteSliceInstance, an instance.
func SlicePath(route, sliceID, name string) string {
	return replaceParam(replaceParam(route, "{sliceID}", sliceID), "{name}", name)
}

// Slice is a K8Slice bought from a seller, as its credentials name it.
type Slice struct {
	// Seller is the node that sold it (its certificate must name it).
	Seller string
	// Credentials are those the seller handed over: Endpoint (host:port
	// of the seller's REAR endpoint), ClusterId (the slice) and Token.
	Credentials *fluidos.PeeringTargetCredentials
}

func (s Slice) exchange(method, path string, body []byte) (exchange, error) {
	cr := s.Credentials
	if cr.GetEndpoint() == "" || cr.GetClusterId() == "" || cr.GetToken() == "" {
		return exchange{}, fmt.Errorf("%w: the slice's credentials need an endpoint, a cluster id and a token", ErrInvalid)
	}
	return exchange{method: method, addr: cr.GetEndpoint(), path: path, body: body,
		header: http.Header{"Authorization": {"Bearer " + cr.GetToken()}}}, nil
}

// SliceDeploy creates or changes an instance on a slice; the seller
// answers once the instance runs or failed, or when the request's
// deadline passes (then its state is still CREATING or UPDATING).
func (c *Client) SliceDeploy(ctx context.Context, s Slice, inst *fluidos.SliceInstance) (*fluidos.SliceInstance, error) {
	b, err := MarshalProto(inst)
	if err != nil {
		return nil, err
	}
	x, err := s.exchange(http.MethodPut, SlicePath(RouteSliceInstance, s.Credentials.GetClusterId(), inst.GetName()), b)
	if err != nil {
		return nil, err
	}
	return c.sliceInstance(ctx, s, x)
}

// SliceGet returns an instance of a slice.
func (c *Client) SliceGet(ctx context.Context, s Slice, name string) (*fluidos.SliceInstance, error) {
	x, err := s.exchange(http.MethodGet, SlicePath(RouteSliceInstance, s.Credentials.GetClusterId(), name), nil)
	if err != nil {
		return nil, err
	}
	return c.sliceInstance(ctx, s, x)
}

// SliceDelete deletes an instance of a slice; the seller answers once it
// is gone (state DELETE_DONE) or when the request's deadline passes.
func (c *Client) SliceDelete(ctx context.Context, s Slice, name string) (*fluidos.SliceInstance, error) {
	x, err := s.exchange(http.MethodDelete, SlicePath(RouteSliceInstance, s.Credentials.GetClusterId(), name), nil)
	if err != nil {
		return nil, err
	}
	return c.sliceInstance(ctx, s, x)
}

// SliceList lists the instances of a slice.
func (c *Client) SliceList(ctx context.Context, s Slice) ([]*fluidos.SliceInstance, error) {
	x, err := s.exchange(http.MethodGet, SlicePath(RouteSliceInstances, s.Credentials.GetClusterId(), ""), nil)
	if err != nil {
		return nil, err
	}
	body, err := c.toSeller(ctx, s.Seller, x)
	if err != nil {
		return nil, err
	}
	var out fluidos.ListSliceInstancesResponse
	if err := unmarshalProto(body, &out); err != nil {
		return nil, fmt.Errorf("%w: slice instances from %s: %w", ErrGarbage, x.addr, err)
	}
	return out.GetInstances(), nil
}

func (c *Client) sliceInstance(ctx context.Context, s Slice, x exchange) (*fluidos.SliceInstance, error) {
	body, err := c.toSeller(ctx, s.Seller, x)
	if err != nil {
		return nil, err
	}
	out := &fluidos.SliceInstance{}
	if err := unmarshalProto(body, out); err != nil {
		return nil, fmt.Errorf("%w: slice instance from %s: %w", ErrGarbage, x.addr, err)
	}
	return out, nil
}
