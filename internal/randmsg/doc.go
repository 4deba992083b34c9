// Package randmsg populates any protobuf message with deterministic random
// content by reflection, for property tests, differential tests and fuzzing.
//
// Everything is driven by a *rand.Rand (math/rand/v2): the same seed and
// the same message type give the same message. New and FromBytes derive a
// rand from a seed or from fuzz input.
//
//   - Fill sets a random subset of the fields of a message, covering the
//     edge cases that break hand-written code: NaN, infinities and -0 in
//     floats, nil versus empty bytes, multi-byte strings, undefined values
//     of open enums (Options.UndefinedEnums), empty and long lists and maps,
//     oneofs holding any member or none, explicit presence, nested messages
//     down to Options.MaxDepth (so recursive types terminate), well-known
//     types with valid content, and unknown fields (Options.Unknown).
//   - Mutate changes a few fields of a message, so that diffs against the
//     original are small.
//   - FieldMap draws a random set of flags (and list actions) of a
//     fieldmap.Schema.
package randmsg
