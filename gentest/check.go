package gentest

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/gen"
)

// DefaultGolden is the directory of the golden files when Config.Golden is
// empty.
const DefaultGolden = "testdata/golden"

// Check generates the files of c (see Generate) and compares each with its
// golden file under c.Golden, failing t for every file that differs (with a
// diff), is missing, or is golden but no longer generated. With c.Update it
// writes the generated files and removes the stale ones instead. Input that
// does not compile or that the plugin refuses fails t at once.
func Check(t testing.TB, c Config) {
	t.Helper()
	golden := c.Golden
	if golden == "" {
		golden = DefaultGolden
	}
	files, err := Generate(c)
	if err != nil {
		t.Fatalf("gentest: %v", err)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		path := filepath.Join(golden, filepath.FromSlash(name))
		if c.Update {
			if err := writeFile(path, files[name]); err != nil {
				t.Fatalf("gentest: %v", err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("gentest: %s is generated but has no golden file (%v): run the test with -update to write it", name, err)
			continue
		}
		if diff := lineDiff(string(want), files[name]); diff != "" {
			t.Errorf("gentest: %s differs from its golden file %s (-golden +generated); run the test with -update to accept:\n%s", name, path, diff)
		}
	}
	stale, err := staleFiles(golden, files)
	if err != nil {
		t.Fatalf("gentest: %v", err)
	}
	for _, path := range stale {
		if c.Update {
			if err := os.Remove(path); err != nil {
				t.Fatalf("gentest: %v", err)
			}
			continue
		}
		t.Errorf("gentest: golden file %s is no longer generated: run the test with -update to remove it", path)
	}
}

// staleFiles lists the generated files under golden (by their suffix) that
// are not in files.
func staleFiles(golden string, files map[string]string) ([]string, error) {
	var stale []string
	err := filepath.WalkDir(golden, func(p string, d fs.DirEntry, err error) error {
		if os.IsNotExist(err) && p == golden {
			return filepath.SkipDir // nothing written yet
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(p, gen.FileSuffix) {
			return err
		}
		rel, err := filepath.Rel(golden, p)
		if err != nil {
			return err
		}
		if _, ok := files[filepath.ToSlash(rel)]; !ok {
			stale = append(stale, p)
		}
		return nil
	})
	slices.Sort(stale)
	return stale, err
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// lineDiff shows where want and got differ, "" when they do not: the lines
// from the first to the last that differ, golden ones marked "-" and
// generated ones "+", with three lines of context on each side.
func lineDiff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.SplitAfter(want, "\n"), strings.SplitAfter(got, "\n")
	pre := 0
	for pre < len(w) && pre < len(g) && w[pre] == g[pre] {
		pre++
	}
	suf := 0
	for suf < len(w)-pre && suf < len(g)-pre && w[len(w)-1-suf] == g[len(g)-1-suf] {
		suf++
	}
	const context, most = 3, 50
	var b strings.Builder
	fmt.Fprintf(&b, "@@ golden lines %d-%d, generated lines %d-%d @@\n", pre+1, len(w)-suf, pre+1, len(g)-suf)
	show := func(mark string, ls []string) {
		for i, l := range ls {
			if i == most {
				fmt.Fprintf(&b, "%s ... %d more lines\n", mark, len(ls)-most)
				return
			}
			b.WriteString(mark + " " + strings.TrimSuffix(l, "\n") + "\n")
		}
	}
	show(" ", w[max(0, pre-context):pre])
	show("-", w[pre:len(w)-suf])
	show("+", g[pre:len(g)-suf])
	show(" ", w[len(w)-suf:min(len(w), len(w)-suf+context)])
	return b.String()
}
