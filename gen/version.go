package gen

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
)

// ModulePath is the module the generator belongs to; its version is the
// generator's.
const ModulePath = "github.com/edgekit/edgekit"

// Devel is the version of a generator built from a work tree rather than
// from a module version.
const Devel = "(devel)"

var buildInfo = sync.OnceValues(debug.ReadBuildInfo)

// Version returns the version of protoc-gen-go-edgekit written in the header
// of every generated file: the version of module ModulePath recorded in the
// binary's build info, when the binary was built from that module version
// (go install github.com/edgekit/edgekit/cmd/protoc-gen-go-edgekit@v1.2.3,
// or the generator linked into another binary as a dependency). A binary
// built from a work tree (go build, go run or go test in a checkout, or
// with the module replaced by a directory) gives Devel, whatever version
// the go command derived from the checkout, so that files generated there
// do not change with every commit.
func Version() string {
	bi, ok := buildInfo()
	if !ok {
		return Devel
	}
	v, _ := versionOf(bi)
	return v
}

// VersionDetail returns Version followed, for a work tree build, by what
// the build info tells of it (the version the go command derived, the VCS
// revision and whether the tree was modified): what --version prints.
func VersionDetail() string {
	bi, ok := buildInfo()
	if !ok {
		return Devel + " (no build info)"
	}
	v, detail := versionOf(bi)
	if detail == "" {
		return v
	}
	return v + " (" + detail + ")"
}

// versionOf returns the version of ModulePath in bi and, for a work tree
// build, what else bi tells of it.
func versionOf(bi *debug.BuildInfo) (version, detail string) {
	mod := &bi.Main
	if bi.Main.Path != ModulePath {
		mod = nil
		for _, d := range bi.Deps {
			if d.Path == ModulePath {
				mod = d
				break
			}
		}
	}
	if mod == nil {
		return Devel, "module " + ModulePath + " not in the build info"
	}
	if r := mod.Replace; r != nil {
		if r.Version == "" {
			return Devel, "replaced by " + r.Path
		}
		mod = r
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	workTree := mod == &bi.Main && settings["vcs"] != ""
	if !workTree && mod.Version != "" && mod.Version != Devel {
		return mod.Version, ""
	}
	var parts []string
	if mod.Version != "" && mod.Version != Devel {
		parts = append(parts, "built as "+mod.Version)
	}
	if rev := settings["vcs.revision"]; rev != "" {
		parts = append(parts, fmt.Sprintf("%s revision %s", settings["vcs"], rev))
	}
	if settings["vcs.modified"] == "true" {
		parts = append(parts, "with local changes")
	}
	return Devel, strings.Join(parts, ", ")
}
