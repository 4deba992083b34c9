// Package gogopb is gogo's protoc-gen-gogo output for
// gogocompat/v1/compat.proto, as a gogo user has it, plus the Go types its
// gogoproto options name.
package gogopb

// Megabytes is the casttype of Resources.ram.
type Megabytes uint64
