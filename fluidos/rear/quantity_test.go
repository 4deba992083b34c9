package rear_test

import (
	"math"
	"testing"

	"github.com/edgekit/edgekit/fluidos/rear"
)

func TestParseQuantities(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in    string
		parse func(string) (int64, error)
		want  int64
	}{
		{"4", rear.ParseCPU, 4000},
		{"4000m", rear.ParseCPU, 4000},
		{"250m", rear.ParseCPU, 250},
		{"0.5", rear.ParseCPU, 500},
		{".5", rear.ParseCPU, 500},
		{"1.", rear.ParseCPU, 1000},
		{"7985105637n", rear.ParseCPU, 7986}, // rounded up, as Kubernetes does
		{"1u", rear.ParseCPU, 1},
		{"+2", rear.ParseCPU, 2000},
		{"16Gi", rear.ParseBytes, 16 << 30},
		{"512Mi", rear.ParseBytes, 512 << 20},
		{"1Ki", rear.ParseBytes, 1024},
		{"2Ei", rear.ParseBytes, 2 << 60},
		{"1G", rear.ParseBytes, 1e9},
		{"1.5Gi", rear.ParseBytes, 3 << 29},
		{"1E", rear.ParseBytes, 1e18},
		{"2e9", rear.ParseBytes, 2e9},
		{"2E9", rear.ParseBytes, 2e9},
		{"110", rear.ParseCount, 110},
		{"0", rear.ParseCount, 0},
		{"1k", rear.ParseCount, 1000},
	} {
		got, err := c.parse(c.in)
		if err != nil || got != c.want {
			t.Errorf("parse(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestParseQuantityErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "m", "-", "+", "1.2.3", "1x", "1Gb", "1e", "1e99", "1e-99", "Gi", "1 Gi", " 1", "1m2", "--1", "0x10", "NaN", "Inf", "1e3e3", "1e3m", "12345678901234567890123456789012345678901234567890123456789012345"} {
		if _, err := rear.ParseQuantity(in); err == nil {
			t.Errorf("ParseQuantity(%q) succeeded", in)
		}
	}
	for _, in := range []string{"-1", "-1Gi", "10Ei", "9223372036854775808"} {
		if _, err := rear.ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) succeeded", in)
		}
	}
	if _, err := rear.ParseCPU("9223372036854775807"); err == nil {
		t.Error("a CPU quantity overflowing millicores succeeded")
	}
}

func TestFormatQuantities(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		got, want string
	}{
		{rear.FormatCPU(4000), "4"},
		{rear.FormatCPU(2500), "2500m"},
		{rear.FormatCPU(0), "0"},
		{rear.FormatBytes(16 << 30), "16Gi"},
		{rear.FormatBytes(1536 << 20), "1536Mi"},
		{rear.FormatBytes(1e9), "1G"},
		{rear.FormatBytes(1000), "1k"},
		{rear.FormatBytes(1001), "1001"},
		{rear.FormatBytes(0), "0"},
		{rear.FormatCount(110), "110"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// FuzzQuantity: parsing never panics, and a parsed byte count formats to
// a quantity that parses back to it.
func FuzzQuantity(f *testing.F) {
	for _, s := range []string{"4000m", "16Gi", "1.5", "1e3", "-1", "7985105637n", ".5", "1E", "9Ei"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := rear.ParseBytes(s)
		if err != nil {
			return
		}
		if b < 0 || b > math.MaxInt64 {
			t.Fatalf("ParseBytes(%q) = %d", s, b)
		}
		back, err := rear.ParseBytes(rear.FormatBytes(b))
		if err != nil || back != b {
			t.Fatalf("FormatBytes(%d) = %q parses to %d, %v", b, rear.FormatBytes(b), back, err)
		}
		m, err := rear.ParseCPU(s)
		if err == nil {
			if back, err := rear.ParseCPU(rear.FormatCPU(m)); err != nil || back != m {
				t.Fatalf("FormatCPU(%d) = %q parses to %d, %v", m, rear.FormatCPU(m), back, err)
			}
		}
	})
}
