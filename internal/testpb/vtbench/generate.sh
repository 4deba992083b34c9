#!/usr/bin/env bash
# Regenerates the benchmark-only copies of the benchmark messages with
# protoc-gen-go and vtprotobuf's clone and equal features. The protos are
# copied under the proto package vtbench.* (and file paths vtbench/...), so
# that these types register beside the real ones. Run by go generate (make
# generate), with buf, protoc-gen-go and protoc-gen-go-vtproto on PATH.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/in/vtbench" "$tmp/in/edgekit/options/v1"
cp "$root/proto/edgekit/options/v1/options.proto" "$tmp/in/edgekit/options/v1/"
copy() { # copy SRC_DIR PROTO_PKG GO_PKG_DIR
	mkdir -p "$tmp/in/vtbench/$2"
	for f in "$1"/*.proto; do
		sed -E \
			-e "s#^package ([a-z0-9.]+);#package vtbench.\1;#" \
			-e "s#^import \"(edgeproto|fluidos|testpb)/#import \"vtbench/\1/#" \
			-e "s#option go_package = \"[^\"]*\";#option go_package = \"github.com/edgekit/edgekit/internal/testpb/vtbench/$3\";#" \
			-e "s#([( ])(edgeproto|fluidos|testpb)\.v1\.#\1vtbench.\2.v1.#g" \
			"$f" >"$tmp/in/vtbench/$2/$(basename "$f")"
	done
}
copy "$root/proto/edgeproto/v1" edgeproto/v1 edgeprotovt
copy "$root/proto/fluidos/v1" fluidos/v1 fluidosvt
copy "$root/internal/testpb/proto/testpb/other/v1" testpb/other/v1 othervt
mkdir -p "$tmp/in/vtbench/testpb/v1"
sed -E \
	-e "s#^package ([a-z0-9.]+);#package vtbench.\1;#" \
	-e "s#^import \"testpb/#import \"vtbench/testpb/#" \
	-e "s#option go_package = \"[^\"]*\";#option go_package = \"github.com/edgekit/edgekit/internal/testpb/vtbench/testpbvt\";#" \
	"$root/internal/testpb/proto/testpb/v1/kinds.proto" >"$tmp/in/vtbench/testpb/v1/kinds.proto"
cat >"$tmp/in/buf.yaml" <<'YAML'
version: v2
YAML
cat >"$tmp/buf.gen.yaml" <<'YAML'
version: v2
clean: false
plugins:
  - local: protoc-gen-go
    out: out
    opt: module=github.com/edgekit/edgekit/internal/testpb/vtbench
  - local: protoc-gen-go-vtproto
    out: out
    opt: module=github.com/edgekit/edgekit/internal/testpb/vtbench,features=clone+equal
YAML
(cd "$tmp" && buf generate in --template buf.gen.yaml --path in/vtbench)
for d in edgeprotovt fluidosvt othervt testpbvt; do
	rm -f "$here/$d"/*.pb.go
	mkdir -p "$here/$d"
	cp "$tmp/out/$d"/*.pb.go "$here/$d/"
done
