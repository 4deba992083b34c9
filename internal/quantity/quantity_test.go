package quantity_test

import (
	"errors"
	"testing"

	"github.com/edgekit/edgekit/internal/quantity"
)

func TestTypedParsers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in    string
		parse func(string) (int64, error)
		want  int64
	}{
		{"250m", quantity.CPU, 250},
		{"1.5", quantity.CPU, 1500},
		{"128Mi", quantity.Bytes, 128 << 20},
		{"1e3", quantity.Bytes, 1000},
		{"10", quantity.Count, 10},
		{"1500m", quantity.Count, 2}, // rounded up
	} {
		got, err := c.parse(c.in)
		if err != nil || got != c.want {
			t.Errorf("%q: got %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestErrorsMatchTheirSentinel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want error
	}{
		{"", quantity.ErrSyntax},
		{"12x", quantity.ErrSyntax},
		{"-1", quantity.ErrNegative},
		{"1e30", quantity.ErrTooLarge},
	} {
		if _, err := quantity.Bytes(c.in); !errors.Is(err, c.want) {
			t.Errorf("%q: got %v, want %v", c.in, err, c.want)
		}
	}
	if got := quantity.FormatBytes(3 << 30); got != "3Gi" {
		t.Errorf("FormatBytes: %q", got)
	}
	if got := quantity.FormatCPU(1500); got != "1500m" {
		t.Errorf("FormatCPU: %q", got)
	}
}
