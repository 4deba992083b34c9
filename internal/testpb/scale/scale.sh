#!/usr/bin/env bash
# Generates and builds the generator's scale cases in a throwaway module:
# a chain of DEPTH nested messages (Mi { M(i+1) next = 1; string v = 2;
# optional int64 o = 3; }) and one message of FIELDS mixed fields, with
# protoc-gen-go and protoc-gen-go-edgekit, and one message of OPTIONALS
# optional int32 fields. Prints the generation time, the generated lines
# and bytes, and the build time and peak memory of each. Needs buf and
# protoc-gen-go on PATH (make tools) and GNU time at /usr/bin/time.
#   internal/testpb/scale/scale.sh [DEPTH [FIELDS [OPTIONALS [CASES]]]]
# CASES is a space-separated subset of "chain wide opt" (all by default).
set -euo pipefail
depth=${1:-200}
fields=${2:-5000}
optionals=${3:-1000}
cases=${4:-chain wide opt}
root=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/bin/protoc-gen-go-edgekit" "$root/cmd/protoc-gen-go-edgekit"
mkdir -p "$tmp/in/chain" "$tmp/in/wide" "$tmp/in/opt"
{
	echo 'syntax = "proto3";'
	echo 'package scale.chain;'
	echo 'option go_package = "example.com/scale/chain";'
	for ((i = 0; i < depth; i++)); do
		if ((i + 1 < depth)); then next="  M$((i + 1)) next = 1;"; else next=""; fi
		printf 'message M%d {\n%s\n  string v = 2;\n  optional int64 o = 3;\n}\n' "$i" "$next"
	done
} >"$tmp/in/chain/chain.proto"
{
	echo 'syntax = "proto3";'
	echo 'package scale.wide;'
	echo 'option go_package = "example.com/scale/wide";'
	echo 'message Sub { string s = 1; int32 i = 2; }'
	echo 'message Wide {'
	types=(string int32 int64 bool double bytes "optional int32" "optional string" "repeated string" Sub "repeated Sub" "map<string, int32>")
	for ((i = 1; i <= fields; i++)); do
		echo "  ${types[$((i % ${#types[@]}))]} f$i = $i;"
	done
	echo '}'
} >"$tmp/in/wide/wide.proto"
{
	echo 'syntax = "proto3";'
	echo 'package scale.opt;'
	echo 'option go_package = "example.com/scale/opt";'
	echo 'message Opt {'
	for ((i = 1; i <= optionals; i++)); do
		echo "  optional int32 o$i = $i;"
	done
	echo '}'
} >"$tmp/in/opt/opt.proto"
echo 'version: v2' >"$tmp/in/buf.yaml"
cat >"$tmp/buf.gen.yaml" <<YAML
version: v2
plugins:
  - local: protoc-gen-go
    out: out
    opt: module=example.com
  - local: $tmp/bin/protoc-gen-go-edgekit
    out: out
    opt: module=example.com
YAML
mkdir -p "$tmp/out"
printf 'module example.com\n\ngo 1.26\n\nrequire (\n\tgithub.com/edgekit/edgekit v0.0.0\n\tgoogle.golang.org/protobuf v1.36.12\n)\n\nreplace github.com/edgekit/edgekit => %s\n' "$root" >"$tmp/out/go.mod"
cp "$root/go.sum" "$tmp/out/go.sum"
# CPU seconds (user+sys), wall seconds and peak resident memory of each
# step (of its largest process): on a shared machine the CPU time is the
# figure to compare.
measure() { /usr/bin/time -f '%U+%S s CPU, %e s wall, %M KB peak RSS' "$@"; }
(cd "$tmp/out" && GOFLAGS=-mod=mod GOPROXY=off go build github.com/edgekit/edgekit/fieldmap google.golang.org/protobuf/proto)
for c in $cases; do
	echo "$c: generate:"
	(cd "$tmp" && measure buf generate in --template buf.gen.yaml --path "in/$c")
	echo "$c: $(cat "$tmp/out/scale/$c"/*_edgekit.pb.go | wc -l) lines, $(cat "$tmp/out/scale/$c"/*_edgekit.pb.go | wc -c) bytes of edgekit code; go build:"
	# A file unique to this run, so that the build cache cannot answer.
	echo "package $c // $(date +%s%N)" >"$tmp/out/scale/$c/nonce.go"
	(cd "$tmp/out" && GOFLAGS=-mod=mod GOPROXY=off measure go build "./scale/$c")
done
