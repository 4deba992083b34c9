#!/usr/bin/env bash
# Runs protoc-gen-go-edgekit under plain protoc (Debian's protobuf-compiler)
# on the golden cases protoc supports, and checks the output matches the
# golden files (the "protoc" version line aside) and that bad input fails
# with the expected diagnostic.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v protoc >/dev/null; then
	apt-get update -qq
	apt-get install -y -qq protobuf-compiler >/dev/null
fi
echo "protoc: $(protoc --version)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/bin/protoc-gen-go-edgekit" ./cmd/protoc-gen-go-edgekit
export PATH="$tmp/bin:$PATH"

# protoc 3.21 has neither editions nor debug_redact: run the cases without them.
for c in scalars nested repeated maps oneofs optional recursion wkt unknownopts skip selectfeatures; do
	dir=gen/testdata/$c
	out=$tmp/out/$c
	mkdir -p "$out"
	param=$(cat "$dir/param.txt" 2>/dev/null || true)
	files=$(cd "$dir" && ls *.proto)
	deps=()
	[ -d "$dir/deps" ] && deps=(-I "$dir/deps")
	protoc -I "$dir" "${deps[@]}" -I proto -I /usr/include \
		--go-edgekit_out="$out" ${param:+--go-edgekit_opt="$param"} $files
	if ! diff -r -I '^// 	protoc  ' "$dir/want" "$out"; then
		echo "protoc output of case $c differs from its golden files" >&2
		exit 1
	fi
	echo "ok   $c"
done

for c in bad_twokeys bad_constclash bad_methodclash bad_skipfeature; do
	dir=gen/testdata/$c
	if protoc -I "$dir" -I proto -I /usr/include --go-edgekit_out="$tmp" $(cd "$dir" && ls *.proto) 2>"$tmp/err"; then
		echo "case $c: protoc succeeded, want a diagnostic" >&2
		exit 1
	fi
	if ! grep -qF "$(head -1 "$dir/want.err")" "$tmp/err"; then
		echo "case $c: diagnostic differs:" >&2
		cat "$tmp/err" >&2
		exit 1
	fi
	echo "ok   $c (diagnostic)"
done

# A bad parameter is the plugin's error, naming it, as protoc prints it.
dir=gen/testdata/nested
if protoc -I "$dir" -I proto -I /usr/include --go-edgekit_out="$tmp" --go-edgekit_opt=features= nested.proto 2>"$tmp/err"; then
	echo "parameter features=: protoc succeeded, want an error" >&2
	exit 1
fi
if ! grep -qF "bad plugin parameter: features is empty" "$tmp/err"; then
	echo "parameter features=: error differs:" >&2
	cat "$tmp/err" >&2
	exit 1
fi
echo "ok   bad parameter (error)"
