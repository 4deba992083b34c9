package fieldmap_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/edgekit/edgekit/fieldmap"
)

func TestAppendKeyValue(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"acme", "acme"},
		{"a b-c_d.e/f:g", "a b-c_d.e/f:g"},
		{"a,b", "a%2Cb"},
		{"a=b", "a%3Db"},
		{"100%", "100%25"},
		{"%2C", "%252C"},
		{"tab\there", "tab%09here"},
		{"nl\n", "nl%0A"},
		{"\x00\x1f\x7f", "%00%1F%7F"},
		{"héllo", "héllo"},
		{"日本", "日本"},
		{"\u0085", "%C2%85"},          // C1 control
		{"\u00a0", "\u00a0"},          // first rune after the C1 block
		{"\xff", "%FF"},               // not UTF-8
		{"a\xe6\x97", "a%E6%97"},      // truncated sequence
		{"\xed\xa0\x80", "%ED%A0%80"}, // surrogate
		{"\ufffd", "\ufffd"},          // a real replacement character
	}
	for _, c := range cases {
		if got := string(fieldmap.AppendKeyValue(nil, c.in)); got != c.want {
			t.Errorf("AppendKeyValue(%q) = %q, want %q", c.in, got, c.want)
		}
		back, err := fieldmap.UnescapeKeyValue(c.want)
		if err != nil || back != c.in {
			t.Errorf("UnescapeKeyValue(%q) = %q, %v; want %q", c.want, back, err, c.in)
		}
	}
	if got := string(fieldmap.AppendKeyValue([]byte("x="), "a,b")); got != "x=a%2Cb" {
		t.Errorf("AppendKeyValue appends to b: got %q", got)
	}
}

func TestUnescapeKeyValue(t *testing.T) {
	ok := []struct{ in, want string }{
		{"%2c%2C", ",,"},
		{"%41", "A"},
		{"plain", "plain"},
		{"\x01", "\x01"}, // literal bytes are accepted as they are
	}
	for _, c := range ok {
		if got, err := fieldmap.UnescapeKeyValue(c.in); err != nil || got != c.want {
			t.Errorf("UnescapeKeyValue(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"%", "%4", "a%", "%zz", "%4g", "a,b", "a=b", "%%41"} {
		if got, err := fieldmap.UnescapeKeyValue(in); !errors.Is(err, fieldmap.ErrKeyBadEscape) {
			t.Errorf("UnescapeKeyValue(%q) = %q, %v; want ErrKeyBadEscape", in, got, err)
		}
	}
	// A key string is UTF-8 text: AppendKeyValue writes other bytes as %XX,
	// so a literal one is refused, naming it and where it is.
	for _, c := range []struct{ in, where string }{
		{"\xff", "byte 0xFF at byte 0"},
		{"ab\xe6\x97", "byte 0xE6 at byte 2"},
		{"\xed\xa0\x80", "byte 0xED at byte 0"}, // a surrogate
	} {
		got, err := fieldmap.UnescapeKeyValue(c.in)
		if !errors.Is(err, fieldmap.ErrKeyInvalidUTF8) || !strings.Contains(err.Error(), c.where) {
			t.Errorf("UnescapeKeyValue(%q) = %q, %v; want ErrKeyInvalidUTF8 naming %s", c.in, got, err, c.where)
		}
	}
	// Escaped, the same bytes unescape: a proto2 string field takes them.
	if got, err := fieldmap.UnescapeKeyValue("%FF"); err != nil || got != "\xff" {
		t.Errorf("UnescapeKeyValue(%%FF) = %q, %v", got, err)
	}
}

func TestParseKeyUTF8(t *testing.T) {
	for _, s := range []string{"", "acme", "zürich 東京", "\ufffd", "\u0085"} {
		if got, err := fieldmap.ParseKeyUTF8(s); err != nil || got != s {
			t.Errorf("ParseKeyUTF8(%q) = %q, %v", s, got, err)
		}
	}
	for _, c := range []struct{ in, where string }{
		{"\xff", "byte 0xFF at byte 0"},
		{"ok\xc3", "byte 0xC3 at byte 2"},   // truncated sequence
		{"\xc0\x80", "byte 0xC0 at byte 0"}, // overlong NUL
	} {
		got, err := fieldmap.ParseKeyUTF8(c.in)
		if got != "" || !errors.Is(err, fieldmap.ErrKeyInvalidUTF8) || !strings.Contains(err.Error(), c.where) {
			t.Errorf("ParseKeyUTF8(%q) = %q, %v; want ErrKeyInvalidUTF8 naming %s", c.in, got, err, c.where)
		}
	}
}

// pairs collects the pairs ParseKeyFields reports, accepting the names in
// known.
func pairs(s string, known ...string) ([][2]string, error) {
	var out [][2]string
	err := fieldmap.ParseKeyFields("test.Msg", s, func(field, value string) error {
		for _, k := range known {
			if k == field {
				out = append(out, [2]string{field, value})
				return nil
			}
		}
		return fieldmap.UnknownKeyField(field)
	})
	return out, err
}

func TestParseKeyFields(t *testing.T) {
	got, err := pairs("b=x%2Cy,a=,c.d=%3D", "a", "b", "c.d")
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"b", "x,y"}, {"a", ""}, {"c.d", "="}}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	if got, err := pairs("", "a"); err != nil || len(got) != 0 {
		t.Errorf("empty string: %q, %v", got, err)
	}

	bad := []struct {
		in    string
		want  error
		field string
	}{
		{"a=1,zz=2", fieldmap.ErrKeyUnknownField, "zz"},
		{"a=1,a=2", fieldmap.ErrKeyDuplicateField, "a"},
		{"a=1,b", fieldmap.ErrKeyMissingEquals, ""},
		{"a=1,,b=2", fieldmap.ErrKeyMissingEquals, ""},
		{"a=1,", fieldmap.ErrKeyMissingEquals, ""},
		{"a=%g0", fieldmap.ErrKeyBadEscape, "a"},
		{"a=x=y", fieldmap.ErrKeyBadEscape, "a"},
		{"=1", fieldmap.ErrKeyUnknownField, ""},
		{"a=\xff", fieldmap.ErrKeyInvalidUTF8, "a"},
		{"a=1,b=x\xc3", fieldmap.ErrKeyInvalidUTF8, "b"},
		{"a=1,\xffb=2", fieldmap.ErrKeyInvalidUTF8, ""}, // the name itself is not text
		{"a\xff", fieldmap.ErrKeyInvalidUTF8, ""},
	}
	for _, c := range bad {
		_, err := pairs(c.in, "a", "b")
		if !errors.Is(err, c.want) || !errors.Is(err, fieldmap.ErrBadKeyString) {
			t.Errorf("%q: error %v, want %v and ErrBadKeyString", c.in, err, c.want)
			continue
		}
		var ke *fieldmap.KeyStringError
		if !errors.As(err, &ke) || ke.Message != "test.Msg" || ke.Field != c.field {
			t.Errorf("%q: error %#v, want field %q of test.Msg", c.in, err, c.field)
		}
		if !strings.Contains(err.Error(), "test.Msg") {
			t.Errorf("%q: error %q does not name the message", c.in, err)
		}
	}
	// The offset of a bad byte counts from the start of the key string.
	if _, err := pairs("a=1,b=x\xc3", "a", "b"); err == nil || !strings.Contains(err.Error(), "byte 0xC3 at byte 7") {
		t.Errorf("error %v does not locate the byte", err)
	}
}

func TestParseKeyScalars(t *testing.T) {
	if n, err := fieldmap.ParseKeyInt("-12", 32); err != nil || n != -12 {
		t.Errorf("ParseKeyInt: %d, %v", n, err)
	}
	if n, err := fieldmap.ParseKeyUint("18446744073709551615", 64); err != nil || n != 1<<64-1 {
		t.Errorf("ParseKeyUint: %d, %v", n, err)
	}
	if f, err := fieldmap.ParseKeyFloat("-Inf", 64); err != nil || f > 0 {
		t.Errorf("ParseKeyFloat: %v, %v", f, err)
	}
	if b, err := fieldmap.ParseKeyBool("true"); err != nil || !b {
		t.Errorf("ParseKeyBool: %v, %v", b, err)
	}
	if n, err := fieldmap.ParseKeyEnumNumber("-3", "e.E"); err != nil || n != -3 {
		t.Errorf("ParseKeyEnumNumber: %v, %v", n, err)
	}
	for _, err := range []error{
		second(fieldmap.ParseKeyInt("2147483648", 32)),
		second(fieldmap.ParseKeyInt("1.5", 64)),
		second(fieldmap.ParseKeyUint("-1", 64)),
		second(fieldmap.ParseKeyUint("", 32)),
		second(fieldmap.ParseKeyFloat("x", 32)),
	} {
		if !errors.Is(err, fieldmap.ErrKeyBadNumber) {
			t.Errorf("got %v, want ErrKeyBadNumber", err)
		}
	}
	for _, s := range []string{"TRUE", "1", "t", ""} {
		if _, err := fieldmap.ParseKeyBool(s); !errors.Is(err, fieldmap.ErrKeyBadBool) {
			t.Errorf("ParseKeyBool(%q): %v, want ErrKeyBadBool", s, err)
		}
	}
	if _, err := fieldmap.ParseKeyEnumNumber("RED", "e.E"); !errors.Is(err, fieldmap.ErrKeyUnknownEnum) || !strings.Contains(err.Error(), "e.E") {
		t.Errorf("ParseKeyEnumNumber: %v, want ErrKeyUnknownEnum naming e.E", err)
	}
}

func second[T any](_ T, err error) error { return err }

// FuzzKeyString checks that escaping round trips, never lets a separator
// through, and that parsing any input either fails cleanly or yields pairs
// that render back to a string parsing to the same pairs.
func FuzzKeyString(f *testing.F) {
	for _, s := range []string{"", "a=1", "organization=acme,name=c1,version=1", "a=%2C,b=%ZZ", "\xff,=%", "日本=x", "a=b=c", ",,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		esc := string(fieldmap.AppendKeyValue(nil, s))
		if strings.ContainsAny(esc, ",=") || !utf8.ValidString(esc) {
			t.Fatalf("AppendKeyValue(%q) = %q holds a separator or invalid UTF-8", s, esc)
		}
		for i := 0; i < len(esc); i++ {
			if c := esc[i]; c < 0x20 || c == 0x7f {
				t.Fatalf("AppendKeyValue(%q) = %q holds control byte %#x", s, esc, c)
			}
		}
		if back, err := fieldmap.UnescapeKeyValue(esc); err != nil || back != s {
			t.Fatalf("UnescapeKeyValue(AppendKeyValue(%q)) = %q, %v", s, back, err)
		}

		var got [][2]string
		err := fieldmap.ParseKeyFields("test.Msg", s, func(field, value string) error {
			got = append(got, [2]string{field, value})
			return nil
		})
		if err != nil {
			if !errors.Is(err, fieldmap.ErrBadKeyString) {
				t.Fatalf("ParseKeyFields(%q): error %v does not match ErrBadKeyString", s, err)
			}
			return
		}
		var b []byte
		for i, p := range got {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, p[0]...)
			b = append(b, '=')
			b = fieldmap.AppendKeyValue(b, p[1])
		}
		var again [][2]string
		if err := fieldmap.ParseKeyFields("test.Msg", string(b), func(field, value string) error {
			again = append(again, [2]string{field, value})
			return nil
		}); err != nil {
			t.Fatalf("ParseKeyFields(%q) (rendered from %q): %v", b, s, err)
		}
		if len(again) != len(got) {
			t.Fatalf("round trip of %q: %q, then %q", s, got, again)
		}
		for i := range got {
			if got[i] != again[i] {
				t.Fatalf("round trip of %q: %q, then %q", s, got, again)
			}
		}
	})
}
