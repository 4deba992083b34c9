// Package gen is the engine of protoc-gen-go-edgekit.
//
// It reads a CodeGeneratorRequest through protogen, analyses every message of
// the files to generate once (field flags, options, name clashes), reports
// bad input as "file.proto:line:col: message" diagnostics, and then lets each
// selected feature emit its part of "<file>_edgekit.pb.go".
//
// Features live in gen/features/<name>, register themselves with Register,
// and implement one method: GenerateFile(*protogen.File) bool, which reports
// whether it emitted anything for the file. Each declares the Go names it
// generates for a message with DeclareNames (in its names.go), so that the
// engine reports a clash with a field, with protoc-gen-go's names or with
// another feature's names before emitting anything; the engine keeps no
// list of its own.
package gen
