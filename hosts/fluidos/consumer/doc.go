// Package consumer is the buying side of a FLUIDOS node: it knows peers,
// discovers their flavors, and runs Solvers through discovery,
// reservation and purchase.
//
// # Peers
//
// A Registry holds the REAR endpoints of the peers: the static ones of the
// configuration, which never expire, and the ones learned at run time
// (added through the API, or seen buying from this node), which expire
// when not seen for the registry's TTL. A peer that answers a discovery is
// seen.
//
// # Discovery
//
// Discover asks every peer at once, each bounded by the peer timeout: a
// peer that fails, hangs or answers garbage is reported in its PeerResult
// and never holds up or aborts the others. What a peer answers is filtered
// again with the selector, so a peer that ignores filters (a reference
// node given a filter it does not know) cannot slip in a flavor that does
// not match; a flavor whose owner is not the node the peer's certificate
// names is refused.
//
// # Solvers
//
// A Solver is stored, then run by its own goroutine through its phases,
// each reported in its status as it changes and each bounded by its
// timeout (the solver's, else the node's), which cancels what the phase is
// doing when it fires:
//
//   - discovery: the selector is asked of every peer; the flavors found
//     become PeeringCandidates; none is a FAILED discovery;
//   - reservation (when reserve_and_buy): candidates are tried in order of
//     price (lowest first), then of the selector's preference (for a
//     K8Slice, the least oversized: least CPU, then memory), then
//     discovery order; a K8Slice partition is raised to each flavor's
//     minimums and steps; a refusal (sold out, a configuration the
//     flavor's template refuses, amounts that do not fit once raised, an
//     unreachable seller) is recorded as an attempt and the next
//     candidate tried;
//   - purchase: the transaction is bought from its seller; transport
//     errors are retried until the phase's timeout, a refusal is final;
//   - allocation (when establish_peering): the solver waits for the
//     seller to provision what was bought, showing the seller's progress
//     in its message, until the allocation is ACTIVE (the solver ends
//     SOLVED with the credentials the seller handed over) or failed; one
//     that does not complete within the phase's timeout is released. A
//     seller without allocation routes (a reference node answers 404)
//     fails the phase at its first answer (ErrNoAllocationRoute): the
//     purchase stays SOLVED and the contract kept, with its peering
//     credentials. Without establish_peering the allocation phase stays
//     IDLE and the solver ends SOLVED once bought.
//
// A phase that fails or times out ends the solver FAILED with a message
// saying which and why. A solver whose node stops mid-run is resumed at
// the next Start: with a contract bought it goes on to the allocation,
// with a reserved transaction to the purchase, otherwise it starts again
// at discovery.
//
// # What was bought
//
// A contract bought is kept under BoughtID, its seller's node id and the
// seller's contract id ("<seller>/<contract>"), as sellers name their
// contracts independently; its allocation is "a-" and that id. The seller
// is always asked under its own id (SellerContractID). ResolveBought
// accepts the seller's bare id when it names one contract bought. Start
// first re-stores the records an earlier version kept under the seller's
// id alone.
//
// Every contract bought gets an Allocation of kind BoughtAllocation,
// which the keeper (run by Start) keeps up to date with what its seller
// reports over edgekit's REAR routes (rear.RouteContractRenew): asked
// every PollInterval while it is provisioned or released, renewed every
// RenewInterval (sooner when the contract's end is near) while it is in
// use, so that a seller sees its buyer alive and the buyer sees the
// seller's health (ACTIVE, DEGRADED) and credentials. ReleaseBought, and
// deleting the solver that bought it, record the release at once; the
// keeper asks it of the seller until the seller reports the allocation
// ended, then marks the contract RELEASED on this side too. A seller that
// cannot be reached is asked again, and says so in the allocation's
// message; a seller that does not have the routes (a reference node) is
// not followed, and ReleaseBought of its contract asks nothing and says
// so (ErrNoReleaseRoute): such a contract ends at its expiration time.
// Slice and SliceClient let the node run instances on a K8Slice it
// bought, with the seller's credentials, under its own certificate.
package consumer
