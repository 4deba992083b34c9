package executor

import (
	"context"

	"google.golang.org/protobuf/proto"
)

//go:generate go run go.uber.org/mock/mockgen@v0.6.0 -destination=mocks/reservations.go -package=mocks github.com/edgekit/edgekit/executor Reservations,ReservationSet

// Reservations hands out values that platforms must not hand out twice
// (subnets, IP addresses, port ranges) per cloudlet, each with an owner.
//
// Update runs fn on the current reservation set of a cloudlet and stores
// what fn left in it atomically. Implementations backed by a shared store
// (etcd) re-run fn when another writer changed the set meanwhile, so fn must
// have no effect besides modifying set. When fn returns an error nothing is
// stored and Update returns that error.
type Reservations interface {
	Update(ctx context.Context, cloudlet string, fn func(set ReservationSet) error) error
}

// ReservationSet is the reservation table of one cloudlet: kind ("subnet",
// "port") -> value -> owner.
type ReservationSet interface {
	// Owner returns who holds value of kind, or "".
	Owner(kind, value string) string
	// Reserve gives value of kind to owner; it fails with ErrReserved when
	// another owner holds it (reserving again for the same owner succeeds).
	Reserve(kind, value, owner string) error
	// Release frees every value owner holds of kind ("" for every kind).
	Release(kind, owner string)
	// Values lists the values of kind that owner holds, sorted.
	Values(kind, owner string) []string
}

// Conventional reservation kinds, so platforms sharing a cloudlet agree.
const (
	ReserveSubnet = "subnet"
	ReservePort   = "port"
	ReserveIP     = "ip"
)

// OwnerOf is the conventional owner name of the reservations made for an
// object: its message name and key string, for example
// "ClusterInst:name=c1,organization=dev". Platforms use it so that
// reservations can be traced back to objects and released by them.
func OwnerOf(obj proto.Message) string {
	if obj == nil {
		return ""
	}
	return string(obj.ProtoReflect().Descriptor().Name()) + ":" + KeyString(obj)
}

// CloudletName is the name under which reservations of a cloudlet are kept:
// the key string of its CloudletKey.
func CloudletName(key proto.Message) string { return KeyString(key) }

// ReservationsFunc adapts a function to Reservations.
type ReservationsFunc func(ctx context.Context, cloudlet string, fn func(set ReservationSet) error) error

// Update calls f.
func (f ReservationsFunc) Update(ctx context.Context, cloudlet string, fn func(set ReservationSet) error) error {
	return f(ctx, cloudlet, fn)
}

var _ Reservations = ReservationsFunc(nil)
