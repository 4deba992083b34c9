// Package output prints protobuf messages for people and programs: as a
// table of chosen columns, as JSON (protojson with proto field names,
// indented, stable) or as YAML (the same JSON through sigs.k8s.io/yaml).
//
// A list prints as a JSON array or a YAML sequence; a stream of events
// (Stream) prints one compact JSON object per line or one YAML document per
// event, and table rows as they come, with columns that widen as needed.
package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"
)

// Format is an output format.
type Format string

// The formats.
const (
	Table Format = "table"
	JSON  Format = "json"
	YAML  Format = "yaml"
)

// Formats lists the formats, for help and errors.
var Formats = []Format{Table, JSON, YAML}

// ParseFormat returns the format s names (case-insensitive); "" is Table.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(s)); f {
	case "":
		return Table, nil
	case Table, JSON, YAML:
		return f, nil
	}
	return "", fmt.Errorf("unknown output format %q; want table, json or yaml", s)
}

var marshal = protojson.MarshalOptions{UseProtoNames: true}

// MarshalJSON returns m as compact JSON with proto field names and stable
// spacing (protojson's own output varies its white space on purpose).
func MarshalJSON(m proto.Message) ([]byte, error) {
	b, err := marshal.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// listJSON returns the messages as a compact JSON array.
func listJSON(msgs []proto.Message) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, m := range msgs {
		if i > 0 {
			b.WriteByte(',')
		}
		j, err := MarshalJSON(m)
		if err != nil {
			return nil, err
		}
		b.Write(j)
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// WriteList prints msgs as a JSON array or a YAML sequence. Table output
// is Table.Write's.
func WriteList(w io.Writer, f Format, msgs []proto.Message) error {
	j, err := listJSON(msgs)
	if err != nil {
		return err
	}
	return writeJSONAs(w, f, j)
}

// WriteOne prints one message as a JSON object or a YAML mapping.
func WriteOne(w io.Writer, f Format, m proto.Message) error {
	j, err := MarshalJSON(m)
	if err != nil {
		return err
	}
	return writeJSONAs(w, f, j)
}

func writeJSONAs(w io.Writer, f Format, j []byte) error {
	switch f {
	case JSON:
		var out bytes.Buffer
		if err := json.Indent(&out, j, "", "  "); err != nil {
			return err
		}
		out.WriteByte('\n')
		_, err := w.Write(out.Bytes())
		return err
	case YAML:
		y, err := yaml.JSONToYAML(j)
		if err != nil {
			return err
		}
		_, err = w.Write(y)
		return err
	}
	return fmt.Errorf("output: format %q does not print messages as documents", f)
}

// WriteEvent prints one message of a stream: a compact JSON line, or a YAML
// document starting with "---".
func WriteEvent(w io.Writer, f Format, m proto.Message) error {
	j, err := MarshalJSON(m)
	if err != nil {
		return err
	}
	switch f {
	case JSON:
		_, err = w.Write(append(j, '\n'))
		return err
	case YAML:
		y, err := yaml.JSONToYAML(j)
		if err != nil {
			return err
		}
		_, err = w.Write(append([]byte("---\n"), y...))
		return err
	}
	return fmt.Errorf("output: format %q does not print events as documents", f)
}
