#!/usr/bin/env bash
# Measures what the generated files cost a package's build: the compile
# step (CPU seconds, timed through -toolexec) and the size of the package
# archive, for edgeproto and fluidos built from protoc-gen-go's files
# alone, with the edgekit files added, and (fluidos, edgeproto) with
# vtprotobuf's clone+equal files instead (internal/testpb/vtbench).
#   internal/testpb/scale/buildcost.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/mod/cost"
printf 'module example.com\n\ngo 1.26\n\nrequire (\n\tgithub.com/edgekit/edgekit v0.0.0\n\tgithub.com/planetscale/vtprotobuf v0.6.0\n\tgoogle.golang.org/protobuf v1.36.12\n)\n\nreplace github.com/edgekit/edgekit => %s\n' "$root" >"$tmp/mod/go.mod"
cp "$root/go.sum" "$tmp/mod/go.sum"
for p in edgeproto fluidos; do
	mkdir -p "$tmp/mod/cost/$p-go" "$tmp/mod/cost/$p-edgekit" "$tmp/mod/cost/$p-vtproto"
	for f in "$root/$p"/*.pb.go; do
		case $f in
		*_edgekit.pb.go) cp "$f" "$tmp/mod/cost/$p-edgekit/" ;;
		*) cp "$f" "$tmp/mod/cost/$p-go/"; cp "$f" "$tmp/mod/cost/$p-edgekit/" ;;
		esac
	done
	cp "$root/internal/testpb/vtbench/${p}vt"/*.pb.go "$tmp/mod/cost/$p-vtproto/"
done
# The vtproto copies import each other under vtbench paths: rewrite them.
sed -i 's#github.com/edgekit/edgekit/internal/testpb/vtbench/edgeprotovt#example.com/cost/edgeproto-vtproto#' "$tmp/mod/cost/"*-vtproto/*.go
# A file unique to this run in each package, so that the build cache
# cannot answer (the timer sees only compiles that run).
for d in "$tmp/mod/cost"/*/; do
	pkg=$(sed -n 's/^package \([a-z0-9_]*\).*/\1/p' "$d"/*.go | head -1)
	echo "package $pkg // $(date +%s%N)" >"$d/nonce.go"
done
mkdir -p "$tmp/cost"
export COST_DIR="$tmp/cost"
(cd "$tmp/mod" && GOFLAGS=-mod=mod GOPROXY=off go build -toolexec "$root/internal/testpb/scale/compiletimer.sh" ./cost/...)
printf '%-18s %12s %12s\n' package "compile CPU" archive
for p in edgeproto fluidos; do
	for v in go edgekit vtproto; do
		read -r u s <"$tmp/cost/$p-$v.time"
		printf '%-18s %11.2fs %10d B\n' "$p-$v" "$(echo "$u + $s" | bc)" "$(cat "$tmp/cost/$p-$v.size")"
	done
done
