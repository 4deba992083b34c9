package rear

import (
	"math/big"

	"github.com/edgekit/edgekit/internal/quantity"
)

// ParseQuantity parses a Kubernetes quantity ("4000m", "16Gi", "1.5",
// "1e3") into an exact rational.
func ParseQuantity(s string) (*big.Rat, error) { return quantity.Parse(s) }

// ParseCPU parses a CPU quantity into millicores ("1" is 1000, "250m" 250).
func ParseCPU(s string) (int64, error) { return quantity.CPU(s) }

// ParseBytes parses a memory or storage quantity into bytes.
func ParseBytes(s string) (int64, error) { return quantity.Bytes(s) }

// ParseCount parses a count quantity (pods, GPU cores).
func ParseCount(s string) (int64, error) { return quantity.Count(s) }

// FormatCPU formats millicores as a quantity: whole cores without suffix,
// else millicores with "m".
func FormatCPU(milli int64) string { return quantity.FormatCPU(milli) }

// FormatBytes formats bytes as a quantity with the largest binary suffix
// that divides it exactly, else the largest decimal one, else none.
func FormatBytes(b int64) string { return quantity.FormatBytes(b) }

// FormatCount formats a count as a quantity.
func FormatCount(n int64) string { return quantity.FormatCount(n) }

// quantityField parses the quantity of a field with parse, naming the
// field in the error.
func quantityField(field, s string, parse func(string) (int64, error)) (int64, error) {
	v, err := parse(s)
	if err != nil {
		return 0, &FieldError{Field: field, Err: err}
	}
	return v, nil
}
