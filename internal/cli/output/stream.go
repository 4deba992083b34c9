package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"sigs.k8s.io/yaml"
)

// ListWriter prints a list one message at a time, as it arrives, exactly
// as WriteList prints the whole list: a JSON array (each element written
// as soon as it is added) or a YAML sequence (one entry per message).
// Close ends the list; nothing is written before the first Add, so a
// caller may still print an error instead of an empty list.
type ListWriter struct {
	w     io.Writer
	f     Format
	count int
}

// NewListWriter returns a ListWriter of format f (JSON or YAML) on w.
func NewListWriter(w io.Writer, f Format) (*ListWriter, error) {
	if f != JSON && f != YAML {
		return nil, fmt.Errorf("output: format %q does not print lists as documents", f)
	}
	return &ListWriter{w: w, f: f}, nil
}

// Add prints m as the next element of the list.
func (l *ListWriter) Add(m proto.Message) error {
	j, err := MarshalJSON(m)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	switch l.f {
	case JSON:
		if l.count == 0 {
			out.WriteString("[\n  ")
		} else {
			out.WriteString(",\n  ")
		}
		if err := json.Indent(&out, j, "  ", "  "); err != nil {
			return err
		}
	case YAML:
		// A sequence of one, whose text is this element's entry in the
		// whole sequence.
		y, err := yaml.JSONToYAML(append(append([]byte{'['}, j...), ']'))
		if err != nil {
			return err
		}
		out.Write(y)
	}
	l.count++
	_, err = l.w.Write(out.Bytes())
	return err
}

// Len returns the number of elements added.
func (l *ListWriter) Len() int { return l.count }

// Close ends the list: "]" after the elements, or an empty list.
func (l *ListWriter) Close() error {
	var err error
	switch {
	case l.count == 0:
		_, err = io.WriteString(l.w, "[]\n")
	case l.f == JSON:
		_, err = io.WriteString(l.w, "\n]\n")
	}
	return err
}

// PagedTable prints a table as its rows arrive, a page at a time: it holds
// up to a page of rows, then prints them lined up, the header before the
// first page. A later page with a wider cell widens its column and prints
// the header again at the new widths before its rows, so that no row is
// out of line with the header above it. A table of one page prints exactly
// as WriteTable.
type PagedTable struct {
	w      io.Writer
	cols   []Column
	page   int
	rows   [][]string
	widths []int
}

// NewPagedTable returns a PagedTable printing cols to w, pageRows rows at
// a time (at least one).
func NewPagedTable(w io.Writer, cols []Column, pageRows int) *PagedTable {
	return &PagedTable{w: w, cols: cols, page: max(pageRows, 1)}
}

// Row adds the row of m, printing the page when it is full.
func (t *PagedTable) Row(m protoreflect.Message) error {
	cells := make([]string, len(t.cols))
	for i, c := range t.cols {
		cells[i] = cleanCell(c.Cell(m))
	}
	t.rows = append(t.rows, cells)
	if len(t.rows) >= t.page {
		return t.Flush()
	}
	return nil
}

// Flush prints the rows held, if any.
func (t *PagedTable) Flush() error {
	if len(t.rows) == 0 {
		return nil
	}
	grew := false
	if t.widths == nil {
		t.widths = make([]int, len(t.cols))
		for i, c := range t.cols {
			t.widths[i] = utf8.RuneCountInString(c.Header)
		}
		grew = true
	}
	for _, r := range t.rows {
		for i, c := range r {
			if n := utf8.RuneCountInString(c); n > t.widths[i] {
				t.widths[i] = n
				grew = true
			}
		}
	}
	var b strings.Builder
	if grew {
		headers := make([]string, len(t.cols))
		for i, c := range t.cols {
			headers[i] = cleanCell(c.Header)
		}
		t.line(&b, headers)
	}
	for _, r := range t.rows {
		t.line(&b, r)
	}
	t.rows = t.rows[:0]
	_, err := io.WriteString(t.w, b.String())
	return err
}

// line writes cells padded to their columns, two spaces apart, with no
// white space at the end.
func (t *PagedTable) line(b *strings.Builder, cells []string) {
	var l strings.Builder
	for i, c := range cells {
		l.WriteString(c)
		if i < len(cells)-1 {
			l.WriteString(strings.Repeat(" ", t.widths[i]-utf8.RuneCountInString(c)+2))
		}
	}
	b.WriteString(strings.TrimRight(l.String(), " "))
	b.WriteByte('\n')
}
