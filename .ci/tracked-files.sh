#!/usr/bin/env bash
# Fails when a tracked file is a built executable or larger than the limit:
# binaries are built by `go build`, never committed.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=$((3 * 1024 * 1024))
bad=0
while IFS= read -r -d '' f; do
	[ -f "$f" ] || continue
	size=$(stat -c %s "$f")
	if [ "$size" -gt "$limit" ]; then
		echo "tracked file $f is $size bytes (limit $limit): keep large files out of the repository" >&2
		bad=1
	fi
	magic=$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')
	case "$magic" in
	7f454c46 | cffaedfe | cefaedfe | feedfacf | feedface | 4d5a*)
		echo "tracked file $f is an executable binary: build it with go build, do not commit it" >&2
		bad=1
		;;
	esac
done < <(git ls-files -z)
exit "$bad"
