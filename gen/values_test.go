package gen_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/gentest"
)

// genericValue matches a shape field whose Value is an instantiation of a
// generic fieldmap type, and a oneof member read through a closure.
var (
	genericValue = regexp.MustCompile(`Value: &fieldmap\.([A-Za-z]+)\[`)
	loadClosure  = regexp.MustCompile(`Load: func\(`)
)

// TestShapeValuesAreNotGeneric holds the shape literals to static data that
// costs the package no code: a generic Value costs the package three
// methods, a dictionary and type descriptors per type argument, a Load
// closure a function per oneof member. Only maps, whose key and value types
// a non-generic Value cannot read, may use a generic one. The cases cover
// oneof members of every kind, lists of messages of this and another
// package, well-known types, and messages without a generated Equal
// (the cases again with features=fields, where Eq is fieldmap.Equal).
func TestShapeValuesAreNotGeneric(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"oneofs", "repeated", "wkt", "crosspkg", "nested", "recursion", "editions", "maps"} {
		for _, param := range []string{"", "features=fields"} {
			t.Run(c+"/"+param, func(t *testing.T) { checkShapeValues(t, c, param) })
		}
	}
}

func checkShapeValues(t *testing.T, c, param string) {
	dir := filepath.Join("testdata", c)
	all, err := gentest.ProtoFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range all {
		if !strings.HasPrefix(f, "deps/") {
			files = append(files, f)
		}
	}
	out, err := gentest.Generate(gentest.Config{
		ImportPaths: []string{dir, filepath.Join(dir, "deps"), "../proto"},
		Files:       files,
		Parameter:   param,
	})
	if err != nil {
		t.Fatal(err)
	}
	shapes := 0
	for name, content := range out {
		for i, line := range strings.Split(content, "\n") {
			if strings.Contains(line, "Value: &fieldmap.") {
				shapes++
			}
			for _, m := range genericValue.FindAllStringSubmatch(line, -1) {
				if !strings.HasSuffix(m[1], "Map") {
					t.Errorf("%s:%d: a generic %s Value: %s", name, i+1, m[1], strings.TrimSpace(line))
				}
			}
			if loadClosure.MatchString(line) {
				t.Errorf("%s:%d: a Load closure: %s", name, i+1, strings.TrimSpace(line))
			}
		}
	}
	if shapes == 0 {
		t.Fatalf("case %s generated no shape field with a Value: the test checks nothing", c)
	}
}
