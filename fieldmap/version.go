package fieldmap

// SupportPackageIsVersion2 is referenced by every file protoc-gen-go-edgekit
// generates for version 2 of this package's API (Window, Schema.Init), in
//
//	const _ = fieldmap.SupportPackageIsVersion2
//
// so that generated code compiled against a fieldmap too old for it fails
// to compile with "undefined: fieldmap.SupportPackageIsVersion2" instead
// of an error about some helper deep in the file: upgrade
// github.com/edgekit/edgekit to at least the version of the generator. A
// release that drops support for code generated for an old version of the
// API removes that version's constant, and such code fails the same way:
// regenerate it.
const SupportPackageIsVersion2 = true

// SupportPackageIsVersion1 is referenced by files generated for version 1
// of the API, which this package still supports.
const SupportPackageIsVersion1 = true
