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
# The README's path form of installing the plugin, from a clone.
GOBIN="$tmp/bin" go install ./cmd/protoc-gen-go-edgekit
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
# options with includes. The user's Go module requires this one by the
# README's path form (a replace to this checkout), and the link is made by
# the README's go list -m command.
mkdir -p "$tmp/local"
(
	cd "$tmp/local"
	go mod init example.com/shop 2>/dev/null
	go mod edit -require=github.com/edgekit/edgekit@v0.0.0 -replace=github.com/edgekit/edgekit="$root"
	mkdir -p third_party
	ln -sfn "$(go list -m -f '{{.Dir}}' github.com/edgekit/edgekit)/proto" third_party/edgekit
)
if [ "$(readlink "$tmp/local/third_party/edgekit")" != "$root/proto" ]; then
	echo "go list -m did not find the required module's directory: $(readlink "$tmp/local/third_party/edgekit")" >&2
	exit 1
fi
workspace "$tmp/local" third_party/edgekit third_party/edgekit/edgekit/options
echo "ok   options from a local path"

# A git reference: buf export of proto/edgekit/options at a commit.
git_dir=$(git rev-parse --path-format=absolute --git-common-dir)
buf export "file://$git_dir#ref=$(git rev-parse HEAD)" --path proto/edgekit/options --output "$tmp/git/third_party/edgekit"
workspace "$tmp/git" third_party/edgekit
echo "ok   options from a git reference"
