package gen

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, info      string
		version, detail string
	}{
		{"installed at a release",
			"path\tgithub.com/edgekit/edgekit/cmd/protoc-gen-go-edgekit\nmod\tgithub.com/edgekit/edgekit\tv1.2.3\th1:x=\n",
			"v1.2.3", ""},
		{"installed at a pseudo-version",
			"path\tgithub.com/edgekit/edgekit/cmd/protoc-gen-go-edgekit\nmod\tgithub.com/edgekit/edgekit\tv0.0.0-20260101120000-0123456789ab\th1:x=\n",
			"v0.0.0-20260101120000-0123456789ab", ""},
		{"a dependency of another binary",
			"path\texample.com/myplugin\nmod\texample.com/myplugin\t(devel)\t\ndep\tgithub.com/edgekit/edgekit\tv1.4.0\th1:x=\n",
			"v1.4.0", ""},
		{"a dependency replaced by a directory",
			"path\texample.com/myplugin\nmod\texample.com/myplugin\t(devel)\t\ndep\tgithub.com/edgekit/edgekit\tv1.4.0\t\n=>\t../edgekit\t\t\n",
			Devel, "replaced by ../edgekit"},
		{"a dependency replaced by a fork",
			"path\texample.com/myplugin\nmod\texample.com/myplugin\t(devel)\t\ndep\tgithub.com/edgekit/edgekit\tv1.4.0\t\n=>\texample.com/fork\tv1.4.1\th1:y=\n",
			"v1.4.1", ""},
		{"go build in a checkout, stamped by the go command",
			"path\tgithub.com/edgekit/edgekit/cmd/protoc-gen-go-edgekit\nmod\tgithub.com/edgekit/edgekit\tv1.2.4-0.20260101120000-0123456789ab+dirty\t\n" +
				"build\tvcs=git\nbuild\tvcs.revision=0123456789abcdef\nbuild\tvcs.modified=true\n",
			Devel, "built as v1.2.4-0.20260101120000-0123456789ab+dirty, git revision 0123456789abcdef, with local changes"},
		{"go build in a checkout at a tag",
			"path\tgithub.com/edgekit/edgekit/cmd/protoc-gen-go-edgekit\nmod\tgithub.com/edgekit/edgekit\tv1.2.3\t\nbuild\tvcs=git\nbuild\tvcs.revision=abc\nbuild\tvcs.modified=false\n",
			Devel, "built as v1.2.3, git revision abc"},
		{"go run, go test or -buildvcs=false",
			"path\tgithub.com/edgekit/edgekit/cmd/protoc-gen-go-edgekit\nmod\tgithub.com/edgekit/edgekit\t(devel)\t\n",
			Devel, ""},
		{"not linked from the module",
			"path\texample.com/other\nmod\texample.com/other\t(devel)\t\n",
			Devel, "module github.com/edgekit/edgekit not in the build info"},
	}
	for _, c := range cases {
		bi, err := debug.ParseBuildInfo(c.info)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if v, d := versionOf(bi); v != c.version || d != c.detail {
			t.Errorf("%s: versionOf = %q, %q; want %q, %q", c.name, v, d, c.version, c.detail)
		}
	}
}

// TestVersionInTests pins what golden files rely on: a test binary is a
// devel build.
func TestVersionInTests(t *testing.T) {
	t.Parallel()
	if v := Version(); v != Devel {
		t.Fatalf("Version() in a test binary = %q, want %q", v, Devel)
	}
}
