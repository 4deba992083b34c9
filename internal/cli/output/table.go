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
	// Width is the least width of the column in a StreamTable, so that
	// cells of usual widths do not widen it as they arrive.
	Width int
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

// StreamTable prints table rows one at a time (a watch), every row lined
// up with the header above it. A column starts as wide as its header, its
// Width, and, for an enum field, its longest value, so that a state
// changing never moves the columns; when a cell arrives that is wider
// still, the column widens and the header is printed again at the new
// widths before the row, so that no row is ever out of line with the
// header above it.
type StreamTable struct {
	w      io.Writer
	lead   []Column
	cols   []Column
	widths []int
	header bool
}

// NewStreamTable returns a StreamTable printing to w. Lead columns (an
// event type) come before cols; their cells are passed to Row, and only
// their Header and Width are used.
func NewStreamTable(w io.Writer, lead, cols []Column) *StreamTable {
	return &StreamTable{w: w, lead: lead, cols: cols}
}

// Row prints one row: the lead cells, then the columns of m. The header is
// printed before the first row, and again before a row that widens a
// column.
func (t *StreamTable) Row(lead []string, m protoreflect.Message) error {
	cells := make([]string, 0, len(t.lead)+len(t.cols))
	for i := range t.lead {
		c := ""
		if i < len(lead) {
			c = cleanCell(lead[i])
		}
		cells = append(cells, c)
	}
	for _, c := range t.cols {
		cells = append(cells, cleanCell(c.Cell(m)))
	}
	if !t.header {
		t.header = true
		t.widths = make([]int, len(cells))
		for i, c := range append(append([]Column(nil), t.lead...), t.cols...) {
			t.widths[i] = max(utf8.RuneCountInString(c.Header), c.Width)
			if i >= len(t.lead) && c.Value == nil {
				t.widths[i] = max(t.widths[i], enumWidth(m.Descriptor(), c.Path))
			}
		}
		t.widen(cells)
		if err := t.printHeader(); err != nil {
			return err
		}
	} else if t.widen(cells) {
		if err := t.printHeader(); err != nil {
			return err
		}
	}
	return t.print(cells)
}

// enumWidth is the length of the longest value, as FormatPath prints it,
// of the enum field at path; 0 when path is not an enum field.
func enumWidth(md protoreflect.MessageDescriptor, path string) int {
	names := strings.Split(path, ".")
	for i, name := range names {
		fd := md.Fields().ByName(protoreflect.Name(name))
		if fd == nil {
			return 0
		}
		if i < len(names)-1 {
			if fd.Message() == nil || fd.IsList() || fd.IsMap() {
				return 0
			}
			md = fd.Message()
			continue
		}
		if fd.Enum() == nil || fd.IsList() || fd.IsMap() {
			return 0
		}
		w := 0
		vals := fd.Enum().Values()
		for j := range vals.Len() {
			w = max(w, utf8.RuneCountInString(protoflags.EnumString(fd.Enum(), vals.Get(j).Number())))
		}
		return w
	}
	return 0
}

// widen makes the columns as wide as cells; it reports whether one grew.
func (t *StreamTable) widen(cells []string) bool {
	grew := false
	for i, c := range cells {
		if n := utf8.RuneCountInString(c); n > t.widths[i] {
			t.widths[i] = n
			grew = true
		}
	}
	return grew
}

func (t *StreamTable) printHeader() error {
	headers := make([]string, 0, len(t.widths))
	for _, c := range t.lead {
		headers = append(headers, c.Header)
	}
	for _, c := range t.cols {
		headers = append(headers, c.Header)
	}
	return t.print(headers)
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
