package fieldmap

// SupportPackageIsVersion5 is referenced by every file protoc-gen-go-edgekit
// generates for version 5 of this package's API (version 4 and
// CloneUnknownFields, CloneUnknown, EqualNilElem, CopyMessage and the
// non-generic shape Values EqMessage, EqMessageList, EqMember and
// OpMember), in
//
//	const _ = fieldmap.SupportPackageIsVersion5
//
// so that generated code compiled against a fieldmap too old for it fails
// to compile with "undefined: fieldmap.SupportPackageIsVersion5" instead
// of an error about some helper deep in the file: upgrade
// github.com/edgekit/edgekit to at least the version of the generator. A
// release that drops support for code generated for an old version of the
// API removes that version's constant, and such code fails the same way:
// regenerate it.
const SupportPackageIsVersion5 = true

// SupportPackageIsVersion4 (FieldMap.FirstWindow),
// SupportPackageIsVersion3 (shapes with the Go layout of messages, CopyIn,
// Diff), SupportPackageIsVersion2 and SupportPackageIsVersion1 are
// referenced by files generated for earlier versions of the API, which
// this package still supports.
const (
	SupportPackageIsVersion4 = true
	SupportPackageIsVersion3 = true
	SupportPackageIsVersion2 = true
	SupportPackageIsVersion1 = true
)
