#!/usr/bin/env bash
# Measures what each feature of protoc-gen-go-edgekit costs the compile of
# edgeproto and fluidos: the edgekit files are generated again with a
# subset of the features (features=<a+b>), next to protoc-gen-go's files,
# and each package's compile step is timed through -toolexec (CPU seconds,
# user + system), as buildcost.sh does. The variants are built in turn in
# every round (go build -p 1, so that they do not compete with each other)
# and the median of the rounds is printed, with its ratio to protoc-gen-go's
# files alone.
#   internal/testpb/scale/featurecost.sh [rounds] [label=features ...]
# A label names a variant; features is "all", "none" (protoc-gen-go's files
# alone) or a features= value, e.g. fields+diff, optionally followed by
# @plugin, a protoc-gen-go-edgekit binary to generate the variant with
# instead of this tree's (to compare generators in the same rounds:
# before=all@/tmp/old-plugin after=all). Without variants it measures
# protoc-gen-go alone, every feature alone beside fields, and all.
# With FUNCS=1 it also prints, per package and variant, the functions the
# compiler emits for the package (-gcflags=-S: generic instantiations and
# wrappers included) and the sum of their sizes.
# With RESULTS=file it writes every round's figures there (package,
# variant, CPU seconds, archive bytes; a line each, rounds in order), so
# that variants can be compared round by round.
# Needs buf (make tools).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
rounds=${1:-3}
shift || true
variants=("$@")
if [[ ${#variants[@]} -eq 0 ]]; then
	variants=(none=none fields=fields)
	for f in clone equal copyin diff validate redact keys; do variants+=("$f=fields+$f"); done
	variants+=(all=all)
fi
buf=$root/bin/buf
[[ -x $buf ]] || buf=$(command -v buf) || { echo "featurecost.sh: no buf: run make tools" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/protoc-gen-go-edgekit" ./cmd/protoc-gen-go-edgekit)
mkdir -p "$tmp/mod/cost" "$tmp/cost"
printf 'module example.com\n\ngo 1.26\n\nrequire (\n\tgithub.com/edgekit/edgekit v0.0.0\n\tgoogle.golang.org/protobuf v1.36.12\n)\n\nreplace github.com/edgekit/edgekit => %s\n' "$root" >"$tmp/mod/go.mod"
cp "$root/go.sum" "$tmp/mod/go.sum"
labels=()
for v in "${variants[@]}"; do
	label=${v%%=*} features=${v#*=} plugin=$tmp/protoc-gen-go-edgekit
	if [[ $features == *@* ]]; then
		plugin=${features#*@} features=${features%%@*}
		[[ -x $plugin ]] || { echo "featurecost.sh: variant $v: $plugin is not an executable plugin" >&2; exit 2; }
	fi
	[[ $label =~ ^[a-z0-9_]+$ ]] || { echo "featurecost.sh: variant $v: name it label=features, the label in lower case letters, digits and _" >&2; exit 2; }
	labels+=("$label")
	out=$tmp/gen/$label
	mkdir -p "$out"
	if [[ $features != none ]]; then
		opt=module=github.com/edgekit/edgekit
		[[ $features == all ]] || opt+=",features=$features"
		(cd "$root" && "$buf" generate --path proto/edgeproto --path proto/fluidos \
			--template "{\"version\":\"v2\",\"plugins\":[{\"local\":\"$plugin\",\"out\":\"$out\",\"opt\":\"$opt\"}]}")
	fi
	for p in edgeproto fluidos; do
		d=$tmp/mod/cost/$p-$label
		mkdir -p "$d"
		for f in "$root/$p"/*.pb.go; do
			[[ $f == *_edgekit.pb.go ]] || cp "$f" "$d/"
		done
		if [[ $features != none ]]; then cp "$out/$p"/*_edgekit.pb.go "$d/"; fi
	done
done
# Build the dependencies once, untimed.
(cd "$tmp/mod" && GOFLAGS=-mod=mod GOPROXY=off go build ./cost/...)
export COST_DIR="$tmp/cost"
for r in $(seq "$rounds"); do
	# A file unique to the round in each package, so that the build cache
	# cannot answer.
	for d in "$tmp/mod/cost"/*/; do
		pkg=$(sed -n 's/^package \([a-z0-9_]*\).*/\1/p' "$d"/*.pb.go | head -1)
		echo "package $pkg // $(date +%s%N)" >"$d/nonce.go"
	done
	(cd "$tmp/mod" && GOFLAGS=-mod=mod GOPROXY=off go build -p 1 -toolexec "$root/internal/testpb/scale/compiletimer.sh" ./cost/...)
	for p in edgeproto fluidos; do
		for l in "${labels[@]}"; do
			read -r u s <"$tmp/cost/$p-$l.time"
			echo "$p $l $(echo "$u + $s" | bc) $(cat "$tmp/cost/$p-$l.size")"
		done
	done >>"$tmp/results"
done
if [[ -n ${RESULTS:-} ]]; then cp "$tmp/results" "$RESULTS"; fi
printf '%-10s %-10s %12s %8s %12s  %s\n' package variant "compile CPU" "vs none" archive "runs, sorted"
for p in edgeproto fluidos; do
	base=""
	for l in "${labels[@]}"; do
		times=$(awk -v p="$p" -v l="$l" '$1 == p && $2 == l { print $3 }' "$tmp/results" | sort -n)
		median=$(echo "$times" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
		size=$(awk -v p="$p" -v l="$l" '$1 == p && $2 == l { s = $4 } END { print s }' "$tmp/results")
		[[ $l == none ]] && base=$median
		ratio=""
		[[ -n $base ]] && ratio=$(echo "scale=2; $median / $base" | bc)x
		printf '%-10s %-10s %11.2fs %8s %10d B  %s\n' "$p" "$l" "$median" "$ratio" "$size" "$(echo $times | tr '\n' ' ')"
	done
done
if [[ ${FUNCS:-0} == 1 ]]; then
	printf '%-10s %-10s %10s %12s\n' package variant functions text
	for p in edgeproto fluidos; do
		for l in "${labels[@]}"; do
			(cd "$tmp/mod" && GOFLAGS=-mod=mod GOPROXY=off go build -gcflags="example.com/cost/$p-$l=-S" "./cost/$p-$l" 2>"$tmp/asm")
			awk -v p="$p" -v l="$l" '/^[^ \t].* STEXT / { n++; for (i = 3; i <= NF; i++) if ($i ~ /^size=/) { sub("size=", "", $i); t += $i } }
				END { printf "%-10s %-10s %10d %10d B\n", p, l, n, t }' "$tmp/asm"
		done
	done
fi
