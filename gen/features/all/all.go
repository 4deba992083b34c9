// Package all registers every feature of protoc-gen-go-edgekit, in the order
// they are emitted.
package all

import (
	_ "github.com/edgekit/edgekit/gen/features/clone"
	_ "github.com/edgekit/edgekit/gen/features/copyin"
	_ "github.com/edgekit/edgekit/gen/features/diff"
	_ "github.com/edgekit/edgekit/gen/features/equal"
	_ "github.com/edgekit/edgekit/gen/features/fields"
	_ "github.com/edgekit/edgekit/gen/features/keys"
	_ "github.com/edgekit/edgekit/gen/features/redact"
	_ "github.com/edgekit/edgekit/gen/features/validate"
)
