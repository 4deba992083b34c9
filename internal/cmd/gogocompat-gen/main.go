// Command gogocompat-gen regenerates the checked-in code of package
// internal/gogocompat (gogo's and protoc-gen-go plus protoc-gen-go-edgekit's
// output for the same gogoproto-annotated proto). go generate runs it in
// that package's directory.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/edgekit/edgekit/internal/gogocompat"
)

func main() {
	files, err := gogocompat.Generate(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "gogocompat-gen:", err)
		os.Exit(1)
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "gogocompat-gen:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gogocompat-gen:", err)
			os.Exit(1)
		}
	}
}
