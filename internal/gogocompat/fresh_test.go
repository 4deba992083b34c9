package gogocompat_test

import (
	"os"
	"testing"

	"github.com/edgekit/edgekit/internal/gogocompat"
)

// TestGeneratedIsFresh regenerates both sides in process and fails when a
// checked-in file differs: run go generate ./internal/gogocompat.
func TestGeneratedIsFresh(t *testing.T) {
	t.Parallel()
	files, err := gogocompat.Generate(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Errorf("generated %d files, want gogo's and protoc-gen-go's and edgekit's", len(files))
	}
	for name, content := range files {
		got, err := os.ReadFile(name)
		if err != nil || string(got) != content {
			t.Errorf("%s is stale (run go generate ./internal/gogocompat): %v", name, err)
		}
	}
}
