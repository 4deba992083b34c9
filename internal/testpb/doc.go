// Package testpb holds the messages the generator's behaviour tests run on:
// every construct of proto2, proto3 and edition 2023 that
// protoc-gen-go-edgekit handles, generated from internal/testpb/proto. Its
// tests hold the generated methods to the protobuf library and to the
// reflection reference implementation (internal/reference), and measure
// them against both.
package testpb
