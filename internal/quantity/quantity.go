// Package quantity parses and formats Kubernetes resource quantities
// ("4000m", "16Gi", "1.5", "1e3") as the integers edgekit holds them in:
// CPU in millicores, memory and storage in bytes, counts as counts. A
// fractional quantity is rounded up, as Kubernetes does; a negative one,
// one too long (over 64 bytes) or too large for an int64 is an error.
package quantity

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Errors of Parse and the typed parsers; every error wraps ErrSyntax,
// ErrNegative or ErrTooLarge.
var (
	// ErrSyntax: the text is not a quantity.
	ErrSyntax = errors.New("not a quantity (want a number with an optional suffix such as m, k, Mi, Gi or e3)")
	// ErrNegative: a negative quantity where none is allowed.
	ErrNegative = errors.New("negative quantity")
	// ErrTooLarge: the quantity does not fit in an int64.
	ErrTooLarge = errors.New("quantity too large")
)

// maxQuantityLen bounds the text of a quantity, and maxExponent the
// exponent of one, so that parsing stays cheap on hostile input.
const (
	maxQuantityLen = 64
	maxExponent    = 30
)

var binarySuffixes = []struct {
	suffix string
	shift  uint
}{{"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}}

var decimalSuffixes = map[string]int{"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

// Parse parses a Kubernetes quantity ("4000m", "16Gi", "1.5", "1e3")
// into an exact rational.
func Parse(s string) (*big.Rat, error) {
	if s == "" || len(s) > maxQuantityLen {
		return nil, fmt.Errorf("%w: %q", ErrSyntax, s)
	}
	num, suffix := splitNumber(s)
	if num == "" || num == "+" || num == "-" {
		return nil, fmt.Errorf("%w: %q", ErrSyntax, s)
	}
	mantissa, ok := new(big.Rat).SetString(strings.TrimPrefix(num, "+"))
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrSyntax, s)
	}
	for _, b := range binarySuffixes {
		if suffix == b.suffix {
			return mantissa.Mul(mantissa, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), b.shift))), nil
		}
	}
	exp, ok := decimalSuffixes[suffix]
	if !ok {
		if len(suffix) < 2 || (suffix[0] != 'e' && suffix[0] != 'E') {
			return nil, fmt.Errorf("%w: %q", ErrSyntax, s)
		}
		e, err := strconv.Atoi(suffix[1:])
		if err != nil || e < -maxExponent || e > maxExponent {
			return nil, fmt.Errorf("%w: %q", ErrSyntax, s)
		}
		exp = e
	}
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp))), nil))
	if exp < 0 {
		return mantissa.Quo(mantissa, scale), nil
	}
	return mantissa.Mul(mantissa, scale), nil
}

// splitNumber splits s after its leading sign, digits and decimal point.
func splitNumber(s string) (num, suffix string) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits, dots := 0, 0
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && dots == 0:
			dots++
		default:
			if digits == 0 {
				return "", s
			}
			return s[:i], s[i:]
		}
	}
	if digits == 0 {
		return "", s
	}
	return s, ""
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// scaledQuantity parses s and returns it times unit, rounded up to an
// integer, as Kubernetes rounds quantities up.
func scaledQuantity(s string, unit int64) (int64, error) {
	q, err := Parse(s)
	if err != nil {
		return 0, err
	}
	if q.Sign() < 0 {
		return 0, fmt.Errorf("%w: %q", ErrNegative, s)
	}
	q.Mul(q, new(big.Rat).SetInt64(unit))
	n, rem := new(big.Int).QuoRem(q.Num(), q.Denom(), new(big.Int))
	if rem.Sign() != 0 {
		n.Add(n, big.NewInt(1))
	}
	if !n.IsInt64() {
		return 0, fmt.Errorf("%w: %q", ErrTooLarge, s)
	}
	return n.Int64(), nil
}

// CPU parses a CPU quantity into millicores ("1" is 1000, "250m" 250).
func CPU(s string) (int64, error) { return scaledQuantity(s, 1000) }

// Bytes parses a memory or storage quantity into bytes.
func Bytes(s string) (int64, error) { return scaledQuantity(s, 1) }

// Count parses a count quantity (pods, GPU cores).
func Count(s string) (int64, error) { return scaledQuantity(s, 1) }

// FormatCPU formats millicores as a quantity: whole cores without suffix,
// else millicores with "m".
func FormatCPU(milli int64) string {
	if milli%1000 == 0 {
		return strconv.FormatInt(milli/1000, 10)
	}
	return strconv.FormatInt(milli, 10) + "m"
}

// FormatBytes formats bytes as a quantity with the largest binary suffix
// that divides it exactly, else the largest decimal one, else none.
func FormatBytes(b int64) string {
	if b == 0 {
		return "0"
	}
	for i := len(binarySuffixes) - 1; i >= 0; i-- {
		if s := binarySuffixes[i]; b%(1<<s.shift) == 0 {
			return strconv.FormatInt(b>>s.shift, 10) + s.suffix
		}
	}
	for _, s := range []struct {
		suffix string
		div    int64
	}{{"E", 1e18}, {"P", 1e15}, {"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}} {
		if b%s.div == 0 {
			return strconv.FormatInt(b/s.div, 10) + s.suffix
		}
	}
	return strconv.FormatInt(b, 10)
}

// FormatCount formats a count as a quantity.
func FormatCount(n int64) string { return strconv.FormatInt(n, 10) }
