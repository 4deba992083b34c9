package fluidoscmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

	"github.com/edgekit/edgekit/fieldmap"
)

type format string

const (
	formatTable format = "table"
	formatJSON  format = "json"
	formatYAML  format = "yaml"
)

func parseFormat(s string) (format, error) {
	switch f := format(strings.ToLower(s)); f {
	case "", formatTable:
		return formatTable, nil
	case formatJSON, formatYAML:
		return f, nil
	}
	return "", fmt.Errorf("unknown output format %q; want table, json or yaml", s)
}

// view is how one kind prints as a table.
type view[T proto.Message] struct {
	header []string
	row    func(T) []string
	// secrets says the view prints secrets: only the credentials'. Every
	// other view prints its objects without their debug_redact fields,
	// whatever the node answered.
	secrets bool
}

// shown is o as a view that does not print secrets prints it: a copy
// without its debug_redact fields.
func shown[T proto.Message](o T) T {
	if !o.ProtoReflect().IsValid() {
		return o
	}
	return fieldmap.Redacted(o)
}

var marshal = protojson.MarshalOptions{UseProtoNames: true}

// print writes objs as the chosen format: a table of the view's columns,
// a JSON array (or object when single), or YAML; without their secrets
// unless the view is one that shows them.
func print[T proto.Message](w io.Writer, f string, v view[T], objs []T, single bool) error {
	ft, err := parseFormat(f)
	if err != nil {
		return err
	}
	if !v.secrets {
		redacted := make([]T, len(objs))
		for i, o := range objs {
			redacted[i] = shown(o)
		}
		objs = redacted
	}
	if ft == formatTable {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(v.header, "\t"))
		for _, o := range objs {
			fmt.Fprintln(tw, strings.Join(v.row(o), "\t"))
		}
		return tw.Flush()
	}
	parts := make([]json.RawMessage, len(objs))
	for i, o := range objs {
		b, err := marshal.Marshal(o)
		if err != nil {
			return err
		}
		parts[i] = b
	}
	var doc any = parts
	if single && len(parts) == 1 {
		doc = parts[0]
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	if ft == formatYAML {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}
