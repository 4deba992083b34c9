// Command protoc-gen-go-edgekit is a protoc and buf plugin that generates,
// beside protoc-gen-go's output, field flags, FieldMap schemas, CopyInFields,
// DiffFields, Clone, Equal, enum validation, redaction and key helpers for
// every message. Run with --version to print its version, which comes from
// the binary's build info (see gen.Version).
//
// Parameters: features=a+b selects features (default all); module, paths,
// M<file> and the other parameters of protoc-gen-go are handled as it does.
// Any other parameter is an error naming it.
package main

import (
	"fmt"
	"os"

	"google.golang.org/protobuf/compiler/protogen"

	"github.com/edgekit/edgekit/gen"
	_ "github.com/edgekit/edgekit/gen/features/all"
)

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "--version" || os.Args[1] == "-version") {
		fmt.Println("protoc-gen-go-edgekit", gen.VersionDetail())
		return
	}
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "protoc-gen-go-edgekit: a protoc plugin; run it through protoc or buf (--go-edgekit_out), or with --version")
		os.Exit(2)
	}
	// Without a ParamFunc protogen applies protoc-gen-go's parameters and
	// passes over the others: gen.Run reads and checks them all.
	protogen.Options{}.Run(gen.Run)
}
