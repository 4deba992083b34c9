// Package store is the typed store of edgekit's objects on etcd.
//
// A Store binds an etcd client to a region. A Kind[T] reads and writes one
// generated message type T under
//
//	/edgekit/<region>/<Kind>/<key string>
//
// where Kind is the message's proto name ("ClusterInst") and the key string
// is the generated GetKeyString (for example "name=c1,organization=acme");
// a message without a key (Settings) is a singleton of key string "".
// Values are protojson, so that `etcdctl get --prefix /edgekit/` shows them
// readably; fields unknown to the reader are discarded, so that an older
// binary reads what a newer one wrote.
//
// # Encryption at rest
//
// A store given WithEncryption seals the whole value of every kind whose
// message has a debug_redact field at any depth (decided once per message
// type from its descriptor): package atrest's envelope encryption, bound to
// the value's etcd key. Every read path (Get, List, Tx reads, Decode,
// Watch, Cache) opens sealed values; one that does not open is an
// ErrBadValue naming its key. Values in clear are still read (values
// written before encryption); Rewrap (and StartRewrap at a host's start)
// seals them and moves values sealed with an older key-encryption key to
// the current one, each with a compare-and-swap; KeyUsage counts values
// per key.
//
// # Concurrency
//
// Every read-modify-write (Update, Modify, Delete with a check) is an
// optimistic compare-and-swap on the object's ModRevision: it reads the
// object, applies the change, and writes only if nobody wrote the object
// meanwhile; otherwise it re-reads and re-applies, a bounded number of
// times, then fails with ErrConflict. Update applies the caller's field
// flags with CopyInFields inside that loop, so that two concurrent updates
// of different fields of one object both land. An update that changes
// nothing writes nothing.
//
// Store.Txn runs a function over several objects in one transaction, in
// the manner of etcd's software transactional memory: reads are recorded,
// writes are buffered, and the commit applies the writes only if nothing
// read has changed, re-running the function otherwise. See Tx for exactly
// what a transaction guards. A transaction that knows the keys it will
// read prefetches them in one request (Tx.Prefetch); one whose objects a
// Cache holds reads them from it on its first run (Cache.TxGet): those
// reads are guarded like any other, so a cache that was behind costs a
// second run on etcd's values, never a write or a verdict decided on a
// stale copy.
//
// # Watching
//
// Kind.Watch streams typed events from a revision. A Cache is a watch-fed
// copy of every object of a kind that survives disconnects (it resumes from
// its last revision) and compactions (it lists again and reports what
// vanished meanwhile as deletes). Cache.Snapshot is its content at one
// revision, taken in constant time and read in key order without holding
// the cache, for answers too long to copy; Kind.Walk reads a kind from etcd
// a page at a time at one revision, for readers without a cache.
//
// # Errors
//
// Errors are *Error values naming the operation, the kind and the key, and
// matching one of the sentinels (ErrNotFound, ErrAlreadyExists,
// ErrConflict, ErrCompacted, ErrPrecondition, ErrBadValue, ErrNoSpace). A
// value in etcd that does not decode is an ErrBadValue naming its key, never
// a panic. A write etcd refuses because its NOSPACE alarm is on (the
// database reached its quota) is an ErrNoSpace; reads and deletes go on
// working then. Other errors of etcd itself (unavailable, deadline) are
// returned wrapped.
package store
