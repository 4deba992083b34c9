// Package reference is the reflection-based reference implementation of the
// field-flag contract of docs/field-flags.md: Schema, CopyInFields,
// DiffFields, Clone, Equal, Redact and ValidateEnums for any message, driven
// by protoreflect alone and needing no generated code.
//
// It is deliberately straightforward, not fast: it is the oracle that
// differential and property tests hold the code of protoc-gen-go-edgekit to,
// and the "reflection" baseline of the benchmarks. When this package and the
// generated code disagree, one of them is wrong; when this package and
// docs/field-flags.md disagree, this package is wrong.
//
// # Contract in brief
//
// A flag names a field path by dot-joined proto field numbers from the
// top-level message. Schema lists every flag of a message in flag order
// (depth first, parent before children, children by field number). Below a
// singular or repeated message field there are flags for the fields of its
// type, except below a type already on the path (recursion stops at the
// first repetition), a well-known type (package google.protobuf), a field
// with (edgekit.options.v1.field).atomic, or a message whose Go struct is
// opaque. Map fields have no flags below them.
//
// CopyInFields(dst, src, fm) copies the flagged fields of src into dst,
// deep, with presence, and returns how many fields changed. DiffFields(a, b)
// returns the flags where a and b differ, so that CopyInFields(a, b,
// DiffFields(a, b)) makes proto.Equal(a, b) true.
//
// Equal is proto.Equal: the protobuf library is the reference for it.
// Clone is a reflective deep copy rather than proto.Clone, because
// proto.Clone (protobuf-go v1.36) drops -0 from implicit-presence float and
// double fields of generated messages, so that its result is not
// proto.Equal to its input; deep copies inside CopyInFields avoid
// proto.Merge for the same reason.
//
// # Readings of the specification
//
// Where docs/field-flags.md leaves room, this package reads it as follows:
//
//   - Change counting follows the specification: singular float and double
//     fields (plain, optional, oneof members) compare bit for bit; lists,
//     maps and sub-messages under Equal rules. A known consequence: a
//     change that Equal cannot see (0 to -0 inside a list or an explicit
//     presence double, one NaN payload to another inside a sub-message)
//     is copied but not counted.
//   - Fields are visited in field number order and each visit compares the
//     field before and after that visit. When several members of one oneof
//     are flagged, setting one member clears the others before they are
//     visited, so the count of the call is the number of visits that
//     changed something, not the number of fields that differ at the end.
//   - ListActions is true on every list and map flag of a message enabling
//     list actions, except those under a list: such a flag selects the
//     enclosing list, copied as one unit with that list's own action, so
//     Schema.Check refuses an action on it, as it refuses an action on a
//     flag below a set flag (which copies the whole sub-message).
//   - A list of messages whose element type has no flags below it (a
//     well-known type, an atomic field, a recursion stop, an empty message)
//     is KindList with no children; a flag under a list is never a leaf.
//   - With the Add action, an element of src is compared (Equal rules, so
//     NaN equals NaN and -0 equals +0) with the elements of dst including
//     those appended earlier in the same call.
//   - Whether a message type is opaque is read from its registered Go type
//     (the protogen struct tag) when one is registered, else from the
//     pb.go api_level feature of an edition 2024 or later file.
//   - ValidateEnums visits map entries in key order, so its result is
//     deterministic; it skips extensions (they have no flags) and does not
//     look inside google.protobuf.Any payloads.
package reference
