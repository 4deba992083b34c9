#!/usr/bin/env bash
# Times generating the repository's domain protos (proto/, the buf module
# of edgeproto and fluidos) with protoc-gen-go alone and with
# protoc-gen-go-edgekit added, both plugins prebuilt, RUNS times each.
# Prints CPU seconds (user+sys of buf and its plugins) and wall seconds of
# each run. Needs buf and protoc-gen-go on PATH (make tools) and GNU time
# at /usr/bin/time.
#   internal/testpb/scale/gentime.sh [RUNS]
set -euo pipefail
runs=${1:-5}
root=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/bin/protoc-gen-go-edgekit" "$root/cmd/protoc-gen-go-edgekit"
for v in go edgekit; do
	{
		echo 'version: v2'
		echo 'plugins:'
		echo '  - local: protoc-gen-go'
		echo "    out: $tmp/out-$v"
		echo '    opt: module=github.com/edgekit/edgekit'
		if [[ $v == edgekit ]]; then
			echo "  - local: $tmp/bin/protoc-gen-go-edgekit"
			echo "    out: $tmp/out-$v"
			echo '    opt: module=github.com/edgekit/edgekit'
		fi
	} >"$tmp/$v.yaml"
done
cd "$root"
for ((i = 1; i <= runs; i++)); do
	for v in go edgekit; do
		rm -rf "$tmp/out-$v"
		printf '%-8s ' "$v"
		/usr/bin/time -f '%U+%S s CPU, %e s wall' buf generate --path proto/edgeproto --path proto/fluidos --template "$tmp/$v.yaml" 2>&1
	done
done
