package gen

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Diagnostic is an error about the input protos, located in a source file.
type Diagnostic struct {
	File      string // path of the .proto file, as the compiler names it
	Line, Col int    // 1-based; 0 when the compiler gave no source info
	Msg       string
}

func (d *Diagnostic) Error() string {
	if d.Line == 0 {
		return fmt.Sprintf("%s: %s", d.File, d.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Col, d.Msg)
}

// diagnostics collects Diagnostics; the engine reports all of them at once.
type diagnostics struct{ list []*Diagnostic }

// at records a diagnostic located at desc's declaration.
func (ds *diagnostics) at(desc protoreflect.Descriptor, format string, args ...any) {
	fd := desc.ParentFile()
	d := &Diagnostic{File: fd.Path(), Msg: fmt.Sprintf(format, args...)}
	if loc := fd.SourceLocations().ByDescriptor(desc); loc.Path != nil {
		d.Line, d.Col = loc.StartLine+1, loc.StartColumn+1
	}
	ds.list = append(ds.list, d)
}

func (ds *diagnostics) err() error {
	if len(ds.list) == 0 {
		return nil
	}
	slices.SortStableFunc(ds.list, func(a, b *Diagnostic) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	errs := make([]error, len(ds.list))
	for i, d := range ds.list {
		errs[i] = d
	}
	return errors.Join(errs...)
}
