// Package provider is the selling side of a FLUIDOS node: it publishes
// flavors, serves the REAR v2 provider routes (package rear), and holds,
// sells and releases capacity in the store so that nothing is ever sold
// twice.
//
// # Flavors
//
// A provider publishes one K8Slice flavor of its cloudlet's capacity (a
// CapacitySource: by default this host's CPUs, memory and disk as the local
// platform reads them), partitionable under the configured policy, and one
// Service flavor per ServiceBlueprint in the store, whose configuration
// template is the blueprint's schema and whose instance limit is the
// blueprint's. Sync recomputes every flavor from the capacity, the
// blueprints and the holds of open transactions, in one store transaction,
// so it can run at any time (at start, after a blueprint changes).
//
// # Reservations, purchases and expiry
//
// Reserve checks and takes what the buyer asks in one store transaction
// with the write of the Transaction: a K8Slice reservation takes the
// partition of its configuration (PartitionK8Slice; none takes the whole
// flavor), a Service reservation one instance after its configuration
// satisfies the flavor's template. What is left stays on sale. Concurrent
// buyers of the last unit all run the same transaction against the same
// flavor; the store lets exactly one commit, and the others see the flavor
// sold out (ErrSoldOut) or, after bounded retries, give up with ErrBusy.
// Reserving again what the same buyer holds with the same configuration
// returns the same transaction with a refreshed expiry. Reserved
// transactions are kept apart from closed ones (OpenTransactionKind), so
// that the cost of a reservation grows with the open reservations, not
// with every sale ever made.
//
// Purchase turns a reserved transaction into a Contract in one store
// transaction; what was held stays taken. Purchasing a transaction already
// bought returns its contract. A transaction not bought by its expiration
// time expires: the provider's timer (Start) fires at the earliest expiry
// of the open transactions, marks each expired and puts what it held back
// on sale; a purchase arriving after the expiry but before the timer does
// the same and fails with ErrExpired. The timer starts from the store, so
// expiries survive restarts.
//
// # Identity
//
// Every call names the peer that made it, as its verified certificate says
// (an empty peer means an unauthenticated transport, where the buyer named
// in the request is trusted, as a reference node does). A reservation is
// accepted only from the buyer it names, and a transaction is bought only
// by the node that reserved it (ErrNotBuyer); the contract, with its
// credentials, goes only to that buyer.
//
// # Contracts and allocations
//
// Purchase stores, in the same transaction as the contract, its
// Allocation (AllocationID: "a-" and the contract's id), INACTIVE, and
// wakes the Allocator, which provisions what was sold and writes its
// progress, health and credentials into the allocation. When the
// allocator issues a kubeconfig for the contract (KubeconfigIssuer: a
// K8Slice on a Kubernetes cloudlet), the purchase is answered once the
// allocation holds it (Config.KubeconfigWait at most), with it in the
// answered contract's PeeringTargetCredentials.Kubeconfig, where a
// reference buyer reads it; the stored contract never holds it. It goes
// to the verified buyer, at every purchase of the transaction, or over
// an unauthenticated transport to the purchase that made the contract
// only. A contract lasts
// Config.ContractLease after its purchase and after each renewal by its
// buyer (Renew, RouteContractRenew); one whose end passes unrenewed (a
// buyer that disappeared) is released by the expiry timer, as is one its
// buyer releases (Release) or its seller takes back (RequestRelease): the
// allocation is marked for teardown (RELEASING) and the allocator woken.
// Once the allocator has deleted what it made, Finish closes the books in
// one transaction: the allocation ends RELEASED (or ERROR for a failed
// one), the contract RELEASED, the transaction RELEASED and what it held
// back on sale, exactly once. The buyer reads its allocation
// (ContractAllocation, RouteContractAllocation); its credentials go only
// over an authenticated transport and only to the contract's buyer.
//
// Before a reservation holds anything, the Allocator admits what the
// buyer asks (Admit): a refusal is an ErrNotProvisionable error (400) that
// says why, so that nothing is sold that cannot be provisioned. Flavors
// of Config.Flavors (VM, Sensor) are published as they are and refused at
// reservation: by the Allocator, which says why, or without one as
// ErrNotSold.
//
// A ContractHandler is told of each new contract once it is stored.
package provider
