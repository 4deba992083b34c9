// Package fieldmap is the small runtime shared by every package that
// protoc-gen-go-edgekit generates code for.
//
// A flag names a field path by its dot-joined proto field numbers, counted
// from a top-level message: field 11 of CloudletInfo is "11", and field 3 of
// the message held there is "11.3". Numbers, not names, so that renaming a
// field never breaks a stored or wired flag.
//
// A FieldMap is a set of flags, bound to the Schema of one message type.
// Has reports whether a flag or any of its ancestors is set; HasOrHasChild
// also reports true when a descendant is set. Both run without allocating.
// Building a FieldMap from strings (New, Parse) validates every flag against
// the schema and names the first unknown one in its error.
//
// A Schema finds a flag by walking its flag tree one field number at a
// time, so a query costs a few instructions per character, not a hash of
// the string; a FieldMap bound to a schema keeps its flags as bit sets,
// which generated CopyInFields reads 64 flags at a time (Window).
//
// Generated code uses the generic helpers of this package (Clone, Equal,
// ValidateEnums, Redact) for messages it has no generated method for, such
// as messages from packages the generator did not run on and well-known
// types, and small helpers (Set, CopyList...) that keep it short. A Shape
// carries the Go layout of its message (field offsets with an Op, or a
// Value), with which Diff is the table-driven DiffFields of every
// generated message.
package fieldmap
