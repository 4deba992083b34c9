#!/usr/bin/env bash
# Compares the compile cost of edgeproto and fluidos between checkouts of
# this repository (say the commit before a generator change and the
# change): each checkout's packages, protoc-gen-go's files and the
# *_edgekit.pb.go files as committed there, are built in a throwaway module
# that uses that checkout's fieldmap, and each package's compile step is
# timed through -toolexec (CPU seconds, user + system) as buildcost.sh
# does; the first checkout's protoc-gen-go files alone are the "none" row.
# The checkouts are built in turn in every round, in reverse order every
# other round, and the median of the rounds is printed with its ratio to
# "none" and the median of the per-round ratios to the first checkout.
#   internal/testpb/scale/comparecost.sh [rounds] label=dir [label=dir ...]
# e.g. git worktree add ../before HEAD~1
#      internal/testpb/scale/comparecost.sh 5 before=../before after=.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
rounds=${1:-5}
shift || true
[[ $# -ge 1 ]] || { echo "comparecost.sh: name at least one checkout: label=dir" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/cost"
labels=() mods=()
for v in "$@"; do
	label=${v%%=*} dir=${v#*=}
	[[ $label =~ ^[a-z0-9_]+$ && $label != none ]] || { echo "comparecost.sh: $v: name it label=dir, the label in lower case letters, digits and _, not none" >&2; exit 2; }
	dir=$(cd "$dir" && pwd)
	[[ -f $dir/fieldmap/fieldmap.go ]] || { echo "comparecost.sh: $dir is not a checkout of this repository" >&2; exit 2; }
	m=$tmp/mod-$label
	mkdir -p "$m/cost"
	printf 'module example.com\n\ngo 1.26\n\nrequire (\n\tgithub.com/edgekit/edgekit v0.0.0\n\tgoogle.golang.org/protobuf v1.36.12\n)\n\nreplace github.com/edgekit/edgekit => %s\n' "$dir" >"$m/go.mod"
	cp "$dir/go.sum" "$m/go.sum"
	for p in edgeproto fluidos; do
		mkdir -p "$m/cost/$p-$label"
		cp "$dir/$p"/*.pb.go "$m/cost/$p-$label/"
		if [[ ${#labels[@]} -eq 0 ]]; then
			mkdir -p "$m/cost/$p-none"
			for f in "$dir/$p"/*.pb.go; do
				[[ $f == *_edgekit.pb.go ]] || cp "$f" "$m/cost/$p-none/"
			done
		fi
	done
	labels+=("$label") mods+=("$m")
	# Build the dependencies once, untimed.
	(cd "$m" && GOFLAGS=-mod=mod GOPROXY=off go build ./cost/...)
done
export COST_DIR="$tmp/cost"
for r in $(seq "$rounds"); do
	order=("${mods[@]}")
	if ((r % 2 == 0)); then
		order=()
		for ((i = ${#mods[@]} - 1; i >= 0; i--)); do order+=("${mods[i]}"); done
	fi
	for m in "${order[@]}"; do
		# A file unique to the round in each package, so that the build
		# cache cannot answer.
		for d in "$m/cost"/*/; do
			pkg=$(sed -n 's/^package \([a-z0-9_]*\).*/\1/p' "$d"/*.pb.go | head -1)
			echo "package $pkg // $(date +%s%N)" >"$d/nonce.go"
		done
		(cd "$m" && GOFLAGS=-mod=mod GOPROXY=off go build -p 1 -toolexec "$root/internal/testpb/scale/compiletimer.sh" ./cost/...)
	done
	for p in edgeproto fluidos; do
		for l in none "${labels[@]}"; do
			read -r u s <"$tmp/cost/$p-$l.time"
			echo "$r $p $l $(echo "$u + $s" | bc) $(cat "$tmp/cost/$p-$l.size")"
		done
	done >>"$tmp/results"
done
printf '%-10s %-10s %12s %8s %14s %12s  %s\n' package variant "compile CPU" "vs none" "vs ${labels[0]}" archive "runs, sorted"
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
for p in edgeproto fluidos; do
	base=""
	for l in none "${labels[@]}"; do
		times=$(awk -v p="$p" -v l="$l" '$2 == p && $3 == l { print $4 }' "$tmp/results")
		med=$(echo "$times" | median)
		size=$(awk -v p="$p" -v l="$l" '$2 == p && $3 == l { s = $5 } END { print s }' "$tmp/results")
		[[ $l == none ]] && base=$med
		paired=$(awk -v p="$p" -v l="$l" -v f="${labels[0]}" '$2 == p && $3 == l { t[$1] = $4 } $2 == p && $3 == f { b[$1] = $4 } END { for (r in t) print t[r] / b[r] }' "$tmp/results" | median)
		printf '%-10s %-10s %11.2fs %7.2fx %13.3fx %12s  %s\n' "$p" "$l" "$med" "$(echo "$med / $base" | bc -l)" "$paired" "$size" "$(echo "$times" | sort -n | tr '\n' ' ')"
	done
done
