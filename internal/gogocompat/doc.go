// Package gogocompat proves the migration path from gogo/protobuf: one
// gogoproto-annotated proto (proto/gogocompat/v1/compat.proto) is generated
// both by gogo's own protoc-gen-gogo (package gogopb, as gogo users have
// their code today) and by protoc-gen-go plus protoc-gen-go-edgekit
// (package edgekitpb), and the tests hold the two sides to the same wire
// format (values cross unchanged, within what gogo's Go types can
// represent) and to the same field flags (the same flag strings select the
// same fields). docs/migrating-from-gogo.md is the guide this backs.
//
// The generated code is checked in; go generate (make generate) reproduces
// it, and a test fails when it is stale.
package gogocompat

//go:generate go run ../cmd/gogocompat-gen
