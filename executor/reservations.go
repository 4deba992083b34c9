package executor

import "context"

// Reservations hands out values that platforms must not hand out twice
// (subnets, IP addresses, port ranges) per cloudlet, each with an owner.
//
// Update runs fn on the current reservation set of a cloudlet and stores
// what fn left in it atomically. Implementations backed by a shared store
// (etcd) re-run fn when another writer changed the set meanwhile, so fn must
// have no effect besides modifying set.
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
