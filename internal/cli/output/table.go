package output

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/internal/cli/protoflags"
)

// Column is one column of a table.
type Column struct {
	Header string
	// Path is the dot-joined proto field names of the value, from the
	// row's message ("key.name"), when Value is nil.
	Path string
	// Value computes the cell instead, when set.
	Value func(m protoreflect.Message) string
}

// Cell returns the column's text for a row message: the value at Path
// formatted by FormatPath, or "" when a message on the path is unset.
func (c Column) Cell(m protoreflect.Message) string {
	if c.Value != nil {
		return c.Value(m)
	}
	return FormatPath(m, c.Path)
}

// FormatPath renders the value at a path of proto field names: enums without
// their prefix, lists joined with commas, maps as sorted k=v pairs, messages
// as compact JSON, durations and times in text. An unknown path renders as
// "<no field path>", so a wrong column shows rather than hides.
func FormatPath(m protoreflect.Message, path string) string {
	names := strings.Split(path, ".")
	for i, name := range names {
		fd := m.Descriptor().Fields().ByName(protoreflect.Name(name))
		if fd == nil {
			return "<no field " + path + ">"
		}
		last := i == len(names)-1
		if !last {
			if fd.Message() == nil || fd.IsList() || fd.IsMap() {
				return "<no field " + path + ">"
			}
			if !m.Has(fd) {
				return ""
			}
			m = m.Get(fd).Message()
			continue
		}
		return formatField(m, fd)
	}
	return ""
}

func formatField(m protoreflect.Message, fd protoreflect.FieldDescriptor) string {
	v := m.Get(fd)
	switch {
	case fd.IsList():
		l := v.List()
		parts := make([]string, l.Len())
		for i := range l.Len() {
			parts[i] = protoflags.FormatScalar(fd, l.Get(i))
		}
		return strings.Join(parts, ",")
	case fd.IsMap():
		var parts []string
		v.Map().Range(func(k protoreflect.MapKey, e protoreflect.Value) bool {
			parts = append(parts, k.String()+"="+protoflags.FormatScalar(fd.MapValue(), e))
			return true
		})
		sort.Strings(parts)
		return strings.Join(parts, ",")
	case fd.Message() != nil && !m.Has(fd):
		return ""
	}
	return protoflags.FormatScalar(fd, v)
}

// WriteTable prints rows under a header line, columns aligned with two
// spaces between them, no white space at the end of a line.
func WriteTable(w io.Writer, cols []Column, rows []protoreflect.Message) error {
	tw := NewTabWriter(w)
	headers := make([]string, len(cols))
	for i, c := range cols {
		headers[i] = c.Header
	}
	fmt.Fprintln(tw, strings.Join(headers, "\t"))
	for _, r := range rows {
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = cleanCell(c.Cell(r))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// NewTabWriter returns a tabwriter with the package's table layout: cells
// separated by tabs, columns two spaces apart, no white space at the end of
// a line. Flush it when done.
func NewTabWriter(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(&trimWriter{w: w}, 0, 8, 2, ' ', 0)
}

// trimWriter drops the spaces tabwriter leaves at the end of lines (after
// an empty last cell): it holds spaces back until something other than a
// line end follows them.
type trimWriter struct {
	w      io.Writer
	spaces int
}

func (t *trimWriter) Write(p []byte) (int, error) {
	out := make([]byte, 0, len(p))
	for _, c := range p {
		switch c {
		case ' ':
			t.spaces++
			continue
		case '\n':
			t.spaces = 0
		default:
			for ; t.spaces > 0; t.spaces-- {
				out = append(out, ' ')
			}
		}
		out = append(out, c)
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// cleanCell keeps a cell on one line and out of tabwriter's way.
func cleanCell(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}

// StreamTable prints table rows one at a time (a watch): each column as
// wide as the widest cell seen so far, so rows stay aligned until a wider
// cell arrives.
type StreamTable struct {
	w      io.Writer
	cols   []Column
	widths []int
	header bool
}

// NewStreamTable returns a StreamTable printing to w. Extra leading
// columns (an event type) come from the cells passed to Row.
func NewStreamTable(w io.Writer, cols []Column) *StreamTable {
	return &StreamTable{w: w, cols: cols}
}

// Row prints one row: the lead cells, then the columns of m. The header is
// printed before the first row, with leadHeaders.
func (t *StreamTable) Row(leadHeaders, lead []string, m protoreflect.Message) error {
	cells := append([]string(nil), lead...)
	for _, c := range t.cols {
		cells = append(cells, cleanCell(c.Cell(m)))
	}
	if !t.header {
		t.header = true
		headers := append([]string(nil), leadHeaders...)
		for _, c := range t.cols {
			headers = append(headers, c.Header)
		}
		t.widen(headers)
		t.widen(cells)
		if err := t.print(headers); err != nil {
			return err
		}
	}
	t.widen(cells)
	return t.print(cells)
}

func (t *StreamTable) widen(cells []string) {
	for len(t.widths) < len(cells) {
		t.widths = append(t.widths, 0)
	}
	for i, c := range cells {
		t.widths[i] = max(t.widths[i], utf8.RuneCountInString(c))
	}
}

func (t *StreamTable) print(cells []string) error {
	var b strings.Builder
	for i, c := range cells {
		b.WriteString(c)
		if i < len(cells)-1 {
			b.WriteString(strings.Repeat(" ", t.widths[i]-utf8.RuneCountInString(c)+2))
		}
	}
	_, err := io.WriteString(t.w, strings.TrimRight(b.String(), " ")+"\n")
	return err
}
