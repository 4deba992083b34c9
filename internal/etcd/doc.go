// Package etcd runs etcd for the hosts and connects them to it.
//
// StartEmbedded starts one etcd member inside the process
// (go.etcd.io/etcd/server/v3/embed) with its data under a directory, listening
// on loopback only, and returns once the member serves requests or a bounded
// wait has run out. Unset URLs listen on free loopback ports. Several members
// form a cluster when each is given its name, its peer URL and the initial
// cluster. etcd's own logs go to the caller's *slog.Logger at warning level and
// above, or nowhere.
//
// StartEmbedded refuses to start a member whose data directory's disk
// cannot hold its write-ahead log and its database up to the quota (a
// SpaceError), so that etcd's NOSPACE alarm fires before the disk is full.
// A SpaceGuard follows that alarm and the database's size, reports them,
// and for a member the process owns compacts, defragments and disarms the
// alarm once deletes made room.
//
// NewClient connects to any etcd cluster (an embedded member or an external
// cluster) with optional TLS, for hosts started with a list of endpoints.
package etcd
