#!/usr/bin/env bash
# Checks that users consume the generator's options (proto/edgekit/options, a buf
# module of its own) without copying them by hand, in the two ways the
# README shows: from a local path (the Go module cache's copy of this
# module; here this checkout's proto directory stands in for it) and from a
# git reference with buf export (here this repository's own git directory
# at the commit checked out). Each time a user workspace whose proto imports
# the options is generated with buf, and the output must match gentest's
# golden file for the same proto. Needs the tools of make tools in ./bin.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/bin/protoc-gen-go-edgekit" ./cmd/protoc-gen-go-edgekit
export PATH="$tmp/bin:$root/bin:$PATH"
echo "buf $(buf --version)"

# workspace DIR OPTIONS_PATH [INCLUDES]: a user workspace in DIR with the
# shop proto and the options module at OPTIONS_PATH, generated with buf.
workspace() {
	local ws=$1 opts=$2 includes=${3:-}
	mkdir -p "$ws/proto/shop/v1"
	cp gentest/testdata/proto/shop/v1/shop.proto "$ws/proto/shop/v1/"
	{
		echo "version: v2"
		echo "modules:"
		echo "  - path: proto"
		echo "  - path: $opts"
		if [ -n "$includes" ]; then
			echo "    includes:"
			echo "      - $includes"
		fi
	} >"$ws/buf.yaml"
	cat >"$ws/buf.gen.yaml" <<-YAML
		version: v2
		plugins:
		  - local: protoc-gen-go
		    out: gen
		    opt: paths=source_relative
		  - local: protoc-gen-go-edgekit
		    out: gen
		    opt: paths=source_relative
		inputs:
		  - directory: proto
	YAML
	(cd "$ws" && buf generate)
	local got
	got=$(cd "$ws/gen" && find . -type f | sort | tr '\n' ' ')
	if [ "$got" != "./shop/v1/shop.pb.go ./shop/v1/shop_edgekit.pb.go " ]; then
		echo "$ws: generated $got; want the shop files only" >&2
		exit 1
	fi
	if ! diff -u -I '^// 	protoc  ' gentest/testdata/golden/shop/v1/shop_edgekit.pb.go "$ws/gen/shop/v1/shop_edgekit.pb.go"; then
		echo "$ws: output differs from gentest's golden file" >&2
		exit 1
	fi
}

# A local path: a link to the module's proto directory, narrowed to the
# options with includes.
mkdir -p "$tmp/local/third_party"
ln -s "$root/proto" "$tmp/local/third_party/edgekit"
workspace "$tmp/local" third_party/edgekit third_party/edgekit/edgekit/options
echo "ok   options from a local path"

# A git reference: buf export of proto/edgekit/options at a commit.
git_dir=$(git rev-parse --path-format=absolute --git-common-dir)
buf export "file://$git_dir#ref=$(git rev-parse HEAD)" --path proto/edgekit/options --output "$tmp/git/third_party/edgekit"
workspace "$tmp/git" third_party/edgekit
echo "ok   options from a git reference"
