// Package edgekitpb is protoc-gen-go's and protoc-gen-go-edgekit's output
// for gogocompat/v1/compat.proto, the side a gogo user migrates to.
package edgekitpb
