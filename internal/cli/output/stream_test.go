package output_test

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/cli/output"
)

func streamApps(n int) []proto.Message {
	msgs := make([]proto.Message, n)
	for i := range msgs {
		msgs[i] = &edgeproto.App{
			Key:         &edgeproto.AppKey{Organization: "dev", Name: fmt.Sprintf("app-%s", strings.Repeat("x", i%5)), Version: "1"},
			Annotations: map[string]string{"a": "1", "b": fmt.Sprint(i)},
			Ports:       []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: int32(80 + i)}},
			Args:        []string{"x", "y"},
		}
	}
	return msgs
}

// A list written one element at a time is the list WriteList writes, in
// both formats and for every length, and each element is out as soon as
// it is added.
func TestListWriterPrintsAsWriteList(t *testing.T) {
	t.Parallel()
	for _, f := range []output.Format{output.JSON, output.YAML} {
		for _, n := range []int{0, 1, 2, 5} {
			msgs := streamApps(n)
			var whole, streamed strings.Builder
			if err := output.WriteList(&whole, f, msgs); err != nil {
				t.Fatal(err)
			}
			l, err := output.NewListWriter(&streamed, f)
			if err != nil {
				t.Fatal(err)
			}
			for i, m := range msgs {
				if err := l.Add(m); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(streamed.String(), fmt.Sprint(80+i)) {
					t.Fatalf("%s: element %d not written when added:\n%s", f, i, streamed.String())
				}
			}
			if n == 0 && streamed.Len() != 0 {
				t.Fatalf("%s: %q written before Close of an empty list", f, streamed.String())
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if streamed.String() != whole.String() {
				t.Errorf("%s, %d messages: streamed\n%s\nwant (WriteList)\n%s", f, n, streamed.String(), whole.String())
			}
		}
	}
	if _, err := output.NewListWriter(&strings.Builder{}, output.Table); err == nil {
		t.Error("a table ListWriter was made")
	}
}

// A table of one page prints exactly as WriteTable; pages after the first
// print as they fill, with the header again when a cell widens a column.
func TestPagedTable(t *testing.T) {
	t.Parallel()
	cols := []output.Column{{Header: "NAME", Path: "key.name"}, {Header: "ORG", Path: "key.organization"}, {Header: "ARGS", Path: "args"}, {Header: "TRUSTED", Path: "trusted"}}
	for _, n := range []int{1, 4} {
		msgs := streamApps(n)
		rows := make([]protoreflect.Message, n)
		for i, m := range msgs {
			rows[i] = m.ProtoReflect()
		}
		var whole, paged strings.Builder
		if err := output.WriteTable(&whole, cols, rows); err != nil {
			t.Fatal(err)
		}
		p := output.NewPagedTable(&paged, cols, 4)
		for _, r := range rows {
			if err := p.Row(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Flush(); err != nil {
			t.Fatal(err)
		}
		if paged.String() != whole.String() {
			t.Errorf("%d rows: paged\n%s\nwant (WriteTable)\n%s", n, paged.String(), whole.String())
		}
	}

	var b strings.Builder
	p := output.NewPagedTable(&b, cols, 2)
	msgs := streamApps(5) // names app-, app-x, app-xx, ...
	for i, m := range msgs {
		if err := p.Row(m.ProtoReflect()); err != nil {
			t.Fatal(err)
		}
		if i == 1 && strings.Count(b.String(), "\n") != 3 {
			t.Fatalf("first page not printed when full:\n%s", b.String())
		}
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "NAME   ORG  ARGS  TRUSTED\n" +
		"app-   dev  x,y   false\n" +
		"app-x  dev  x,y   false\n" +
		"NAME     ORG  ARGS  TRUSTED\n" +
		"app-xx   dev  x,y   false\n" +
		"app-xxx  dev  x,y   false\n" +
		"NAME      ORG  ARGS  TRUSTED\n" +
		"app-xxxx  dev  x,y   false\n"
	if got := b.String(); got != want {
		t.Fatalf("paged table:\n%s\nwant:\n%s", got, want)
	}
}
