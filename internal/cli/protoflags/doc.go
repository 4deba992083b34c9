// Package protoflags turns the fields of a protobuf message into command-line
// flags, by reflection over its descriptor and the field schema that
// protoc-gen-go-edgekit generates for it, so that no flag is written by hand.
//
// Every leaf of the schema (a field that is not a message with flags below
// it, and not under a list) can become one flag. Its name is the field's path
// of proto names with each underscore turned into a dash, joined with dots:
// key.organization, platform-type, cloudlet-key.name, location.latitude.
// Values:
//
//   - strings, numbers and bools as text (a bool flag alone means true);
//   - enums by value name, case-insensitively, with or without the enum's
//     prefix, dashes read as underscores (normal-operation,
//     MAINTENANCE_STATE_NORMAL_OPERATION), or by number when it is defined;
//   - google.protobuf.Duration as a Go duration (90s, 5m), Timestamp as
//     RFC 3339;
//   - repeated scalars: one element per occurrence of the flag;
//   - maps: one key=value entry per occurrence;
//   - repeated messages: a JSON object (one element) or a JSON array per
//     occurrence; any other message field as one JSON object (protojson:
//     proto or JSON field names, enum value names).
//
// For a list or map whose message enables list actions, a Set built with
// ListActions adds two more flags, <name>-add and <name>-remove, whose values
// become elements (keys only, for a map remove) to add or remove instead of
// a replacement. Changes returns the field flags of what was set (with
// ":add" or ":remove"), ready for an update request's fields.
//
// Parse errors name the flag and the bad value; Register fails when a flag
// name clashes with a flag already defined.
package protoflags
