package fieldmap

// SupportPackageIsVersion1 is referenced by every file protoc-gen-go-edgekit
// generates for version 1 of this package's API, in
//
//	const _ = fieldmap.SupportPackageIsVersion1
//
// so that generated code compiled against a fieldmap too old for it fails
// to compile with "undefined: fieldmap.SupportPackageIsVersion1" instead
// of an error about some helper deep in the file: upgrade
// github.com/edgekit/edgekit to at least the version of the generator. A
// release that drops support for code generated for an old version of the
// API removes that version's constant, and such code fails the same way:
// regenerate it.
const SupportPackageIsVersion1 = true
