package fieldmap

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Key strings
//
// The generated GetKeyString renders an object key as text that people can
// read and tools can store, and Parse<Msg>KeyString reads it back. A key
// message renders as "name=value" pairs joined by ",", one per scalar field,
// in field number order, with the fields of a nested key message flattened
// under dotted names:
//
//	organization=acme,name=c1,version=1,state=STATE_ON,sub.region=eu,sub.zone=0,sub.edge=false
//
// A scalar key renders as its value alone. Every field is rendered, zero
// values included. Values are written as follows, which depends on nothing
// that changes between runs or Go versions:
//
//   - strings: byte for byte, except that ',', '=', '%', the ASCII control
//     bytes (0x00-0x1F, 0x7F), the bytes of C1 control characters
//     (U+0080-U+009F) and every byte that is not part of valid UTF-8 are
//     percent-encoded as "%XX" (upper-case hex); see AppendKeyValue;
//   - integers in decimal, floats as strconv 'g' with the shortest
//     precision that reads back exactly ("NaN", "+Inf", "-Inf", "-0"),
//     bools as "true" or "false";
//   - enums by the name of their value, or the number when the enum
//     defines none.
//
// A key string is therefore always valid UTF-8 text.
//
// Parsing accepts the pairs in any order; a field left out reads as its
// zero value, so that a key string stays readable after a field is added to
// the key. An enum may be given by name or number, and "%xx" may use either
// case. A key string that is not valid UTF-8 is refused, and so is a value
// that unescapes to invalid UTF-8 for a string field whose proto type
// requires UTF-8 (proto3, and editions unless features.utf8_validation =
// NONE), since proto.Marshal would refuse the key; a proto2 string field
// takes any bytes, written "%XX". Everything else that is wrong is an error
// matching ErrBadKeyString (a *KeyStringError) and one of the ErrKey*
// sentinels below.

// ErrBadKeyString is matched (errors.Is) by every error about a key string
// that cannot be parsed.
var ErrBadKeyString = errors.New("bad key string")

// Sentinels saying what is wrong with a key string; a *KeyStringError
// matches one of them (errors.Is) besides ErrBadKeyString.
var (
	ErrKeyUnknownField   = errors.New("unknown key field")
	ErrKeyDuplicateField = errors.New("key field given twice")
	ErrKeyMissingEquals  = errors.New("missing '=' between key field name and value")
	ErrKeyBadNumber      = errors.New("bad number")
	ErrKeyBadBool        = errors.New("bad bool (want true or false)")
	ErrKeyUnknownEnum    = errors.New("unknown enum value")
	ErrKeyBadEscape      = errors.New("bad escape")
	ErrKeyInvalidUTF8    = errors.New("invalid UTF-8")
)

// KeyStringError reports a key string that cannot be parsed.
type KeyStringError struct {
	Message string // full proto name of the message whose key was parsed
	Field   string // dotted proto field names of the part at fault, or ""
	Err     error  // what is wrong; matches one of the ErrKey* sentinels
}

func (e *KeyStringError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: bad key string: %v", e.Message, e.Err)
	}
	return fmt.Sprintf("%s: bad key string: field %q: %v", e.Message, e.Field, e.Err)
}

// Is reports whether target is ErrBadKeyString.
func (e *KeyStringError) Is(target error) bool { return target == ErrBadKeyString }

// Unwrap returns what is wrong, so that errors.Is matches the ErrKey*
// sentinels.
func (e *KeyStringError) Unwrap() error { return e.Err }

const upperHex = "0123456789ABCDEF"

// keyLiteral reports whether ASCII byte c is written as itself.
func keyLiteral(c byte) bool {
	return c >= 0x20 && c < 0x7F && c != ',' && c != '=' && c != '%'
}

// AppendKeyValue appends s to b escaped for a key string: ',', '=', '%',
// ASCII control bytes, the bytes of C1 control characters and every byte
// that is not part of valid UTF-8 become "%XX"; everything else (printable
// ASCII and the other valid UTF-8 sequences) is copied.
func AppendKeyValue(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if keyLiteral(c) {
				b = append(b, c)
			} else {
				b = append(b, '%', upperHex[c>>4], upperHex[c&0xF])
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || r < 0xA0 {
			for _, c := range []byte(s[i : i+n]) {
				b = append(b, '%', upperHex[c>>4], upperHex[c&0xF])
			}
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return b
}

// UnescapeKeyValue reverses AppendKeyValue. It fails (ErrKeyBadEscape) on a
// '%' not followed by two hex digits, and on a literal ',' or '='; and
// (ErrKeyInvalidUTF8) when s is not valid UTF-8, which AppendKeyValue never
// writes. The result may be any bytes: see ParseKeyUTF8 for fields that
// require UTF-8.
func UnescapeKeyValue(s string) (string, error) {
	if err := checkKeyUTF8(s, 0); err != nil {
		return "", err
	}
	i := strings.IndexAny(s, "%,=")
	if i < 0 {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		c := s[i]
		switch c {
		case '%':
			if i+2 >= len(s) {
				return "", fmt.Errorf("%w: '%%' at byte %d is not followed by two hex digits", ErrKeyBadEscape, i)
			}
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if !ok1 || !ok2 {
				return "", fmt.Errorf("%w: '%%' at byte %d is not followed by two hex digits", ErrKeyBadEscape, i)
			}
			b = append(b, hi<<4|lo)
			i += 2
		case ',', '=':
			return "", fmt.Errorf("%w: %q at byte %d must be written %%%02X", ErrKeyBadEscape, string(c), i, c)
		default:
			b = append(b, c)
		}
	}
	return string(b), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// badUTF8 returns the offset of the first byte of s that is not part of
// valid UTF-8, or -1 when s is valid UTF-8.
func badUTF8(s string) int {
	if utf8.ValidString(s) {
		return -1
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// checkKeyUTF8 reports a byte of key string text s that is not part of
// valid UTF-8; base is the offset of s in the whole key string.
func checkKeyUTF8(s string, base int) error {
	if i := badUTF8(s); i >= 0 {
		return fmt.Errorf("%w: byte 0x%02X at byte %d (a key string is UTF-8 text; other bytes are written %%%02X)", ErrKeyInvalidUTF8, s[i], base+i, s[i])
	}
	return nil
}

// ParseKeyUTF8 returns s, an unescaped value of a string field whose proto
// type requires valid UTF-8 (proto3, and editions unless
// features.utf8_validation = NONE), or an ErrKeyInvalidUTF8 error when s
// is not valid UTF-8: proto.Marshal would refuse such a key.
func ParseKeyUTF8(s string) (string, error) {
	if i := badUTF8(s); i >= 0 {
		return "", fmt.Errorf("%w: the unescaped value has byte 0x%02X at byte %d, and the field's proto type requires UTF-8 text", ErrKeyInvalidUTF8, s[i], i)
	}
	return s, nil
}

// ParseKeyFields splits s, a key string of a key message of message, into
// its "name=value" pairs and calls set with each name and unescaped value,
// in the order of s. set reports an unknown name with ErrKeyUnknownField
// and a bad value with another ErrKey* sentinel. Every error is a
// *KeyStringError naming message. An empty s has no pairs; a pair that is
// not valid UTF-8 is refused (ErrKeyInvalidUTF8).
func ParseKeyFields(message, s string, set func(field, value string) error) error {
	if s == "" {
		return nil
	}
	var seen []string
	at := 0 // offset of part in s
	for part := range strings.SplitSeq(s, ",") {
		name, raw, ok := strings.Cut(part, "=")
		if err := checkKeyUTF8(part, at); err != nil {
			if badUTF8(name) >= 0 {
				name = ""
			}
			return &KeyStringError{Message: message, Field: name, Err: err}
		}
		at += len(part) + 1
		if !ok {
			return &KeyStringError{Message: message, Err: fmt.Errorf("%w in %q", ErrKeyMissingEquals, part)}
		}
		if slices.Contains(seen, name) {
			return &KeyStringError{Message: message, Field: name, Err: ErrKeyDuplicateField}
		}
		value, err := UnescapeKeyValue(raw)
		if err != nil {
			return &KeyStringError{Message: message, Field: name, Err: err}
		}
		if err := set(name, value); err != nil {
			return &KeyStringError{Message: message, Field: name, Err: err}
		}
		seen = append(seen, name)
	}
	return nil
}

// UnknownKeyField is the error a set function of ParseKeyFields returns for
// a name the key does not have.
func UnknownKeyField(name string) error {
	return fmt.Errorf("%w %q", ErrKeyUnknownField, name)
}

// ParseKeyInt parses a decimal signed integer of bits bits.
func ParseKeyInt(s string, bits int) (int64, error) {
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return 0, numberError(s, err)
	}
	return n, nil
}

// ParseKeyUint parses a decimal unsigned integer of bits bits.
func ParseKeyUint(s string, bits int) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, bits)
	if err != nil {
		return 0, numberError(s, err)
	}
	return n, nil
}

// ParseKeyFloat parses a float of bits bits as strconv.ParseFloat does
// ("NaN", "+Inf", "-Inf" included).
func ParseKeyFloat(s string, bits int) (float64, error) {
	f, err := strconv.ParseFloat(s, bits)
	if err != nil {
		return 0, numberError(s, err)
	}
	return f, nil
}

func numberError(s string, err error) error {
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		err = ne.Err
	}
	return fmt.Errorf("%w %q: %w", ErrKeyBadNumber, s, err)
}

// ParseKeyBool parses "true" or "false".
func ParseKeyBool(s string) (bool, error) {
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%w: %q", ErrKeyBadBool, s)
}

// ParseKeyEnumNumber parses the number of a value of enum (its full proto
// name), for a string that is none of the enum's value names.
func ParseKeyEnumNumber(s, enum string) (int32, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is neither a value name of %s nor a 32-bit number", ErrKeyUnknownEnum, s, enum)
	}
	return int32(n), nil
}
