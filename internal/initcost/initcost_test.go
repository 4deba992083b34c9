package initcost_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fluidos"
)

// maxInitAllocs is the most heap allocations the init of one package of the
// module may make (GODEBUG=inittrace=1): edgekitAllocs for the edgekit files
// (issue 26's budget) on top of protoGoAllocs for protoc-gen-go's files,
// plus, under the race detector, its runtime's own (raceAllocs). The counts
// vary by a few allocations from run to run.
const maxInitAllocs = protoGoAllocs + edgekitAllocs + raceAllocs

const (
	// protoGoAllocs bounds the init of protoc-gen-go's files alone
	// (registering the descriptors): about 190 for edgeproto, 146 for
	// fluidos (internal/testpb/scale/initsize.sh).
	protoGoAllocs = 200
	// edgekitAllocs is the budget of the edgekit files: they build their
	// tables on first use, so they add next to nothing (before, building
	// every schema at init, about 7,000 for edgeproto and 14,000 for
	// fluidos).
	edgekitAllocs = 200
)

// childEnv marks the re-executed test binary, whose init is traced.
const childEnv = "EDGEKIT_INITCOST_CHILD"

// measured are the packages whose init the test must see in the trace.
var measured = []string{
	"github.com/edgekit/edgekit/edgeproto",
	"github.com/edgekit/edgekit/fluidos",
}

// initLine is one line of GODEBUG=inittrace=1:
// "init pkg @0.5 ms, 0.1 ms clock, 1234 bytes, 56 allocs".
var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

// marshalOne uses the packages the way a program that calls none of the
// edgekit code does: it marshals one message of each.
func marshalOne(t *testing.T) {
	for _, m := range []proto.Message{
		&edgeproto.Flavor{RamMb: 1024, Vcpus: 1},
		&fluidos.Contract{},
	} {
		if _, err := proto.Marshal(m); err != nil {
			t.Fatalf("marshal %T: %v", m, err)
		}
	}
}

// TestInitAllocs re-executes the test binary with GODEBUG=inittrace=1 and
// checks the heap allocations of the init of every package of the module
// against maxInitAllocs. It counts allocations, never time.
func TestInitAllocs(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		marshalOne(t)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestInitAllocs$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1", "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("traced run: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.Bytes())
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(stderr.Bytes()))
	for sc.Scan() {
		m := initLine.FindStringSubmatch(sc.Text())
		if m == nil || !strings.HasPrefix(m[1], "github.com/edgekit/edgekit/") {
			continue
		}
		pkg := m[1]
		if strings.HasPrefix(pkg, "github.com/edgekit/edgekit/internal/initcost") {
			continue // this test's own package
		}
		allocs, err := strconv.Atoi(m[3])
		if err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		seen[pkg] = true
		t.Logf("init %s: %s bytes, %d allocs", pkg, m[2], allocs)
		if allocs > maxInitAllocs {
			t.Errorf("init of %s makes %d heap allocations, more than the budget of %d: generated code builds tables at init instead of on first use", pkg, allocs, maxInitAllocs)
		}
	}
	for _, pkg := range measured {
		if !seen[pkg] {
			t.Errorf("no init trace line for %s in the traced run; stderr:\n%s", pkg, stderr.Bytes())
		}
	}
}
