package rear

import (
	"fmt"
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

// ParseOfferedCPU parses the CPU a flavor offers into millicores, rounded
// down ("3986297634n" is 3986m): a buyer never counts on more than was
// offered. ParseCPU rounds up, as Kubernetes does for what is asked.
func ParseOfferedCPU(s string) (int64, error) { return floorQuantity(s, 1000) }

// ParseOfferedBytes parses the memory or storage a flavor offers into
// bytes, rounded down.
func ParseOfferedBytes(s string) (int64, error) { return floorQuantity(s, 1) }

// floorQuantity parses s and returns it times unit, rounded down.
func floorQuantity(s string, unit int64) (int64, error) {
	q, err := quantity.Parse(s)
	if err != nil {
		return 0, err
	}
	if q.Sign() < 0 {
		return 0, fmt.Errorf("%w: %q", quantity.ErrNegative, s)
	}
	q.Mul(q, new(big.Rat).SetInt64(unit))
	n := new(big.Int).Quo(q.Num(), q.Denom())
	if !n.IsInt64() {
		return 0, fmt.Errorf("%w: %q", quantity.ErrTooLarge, s)
	}
	return n.Int64(), nil
}
