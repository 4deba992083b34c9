package gentest

import "testing"

func TestLineDiff(t *testing.T) {
	t.Parallel()
	cases := []struct{ want, got, diff string }{
		{"a\nb\n", "a\nb\n", ""},
		{"1\n2\n3\n4\n5\n6\n", "1\n2\n3\n4\nX\n6\n",
			"@@ golden lines 5-5, generated lines 5-5 @@\n  2\n  3\n  4\n- 5\n+ X\n  6\n  \n"},
		{"a\nc\n", "a\nb\nc\n", "@@ golden lines 2-1, generated lines 2-2 @@\n  a\n+ b\n  c\n  \n"},
		{"a\nb", "a\n", "@@ golden lines 2-2, generated lines 2-2 @@\n  a\n- b\n+ \n"},
	}
	for _, c := range cases {
		if got := lineDiff(c.want, c.got); got != c.diff {
			t.Errorf("lineDiff(%q, %q) =\n%s\nwant\n%s", c.want, c.got, got, c.diff)
		}
	}
}
