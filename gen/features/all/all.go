// Package all registers every feature of protoc-gen-go-edgekit, in the order
// they are emitted.
package all

import (
	_ "github.com/edgekit/edgekit/gen/features/fields"
)
