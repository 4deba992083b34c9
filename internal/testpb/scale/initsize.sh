#!/usr/bin/env bash
# Measures what the edgekit files cost a program that calls none of them:
# the size of a binary that imports edgeproto and fluidos and only marshals
# one message of each, built from protoc-gen-go's files alone and with the
# edgekit files added, and the init of both packages in each
# (GODEBUG=inittrace=1). The same pair again without the gRPC files: gRPC
# links text/template (through golang.org/x/net/trace), whose reflective
# method calls make the linker keep every exported method of every type a
# program converts to an interface, generated message methods included.
# And the pair with the gRPC files built with -tags grpcnotrace, gRPC's
# documented way to leave golang.org/x/net/trace out of a binary.
#   internal/testpb/scale/initsize.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'module example.com\n\ngo 1.26\n\nrequire (\n\tgithub.com/edgekit/edgekit v0.0.0\n\tgoogle.golang.org/protobuf v1.36.12\n)\n\nreplace github.com/edgekit/edgekit => %s\n' "$root" >"$tmp/go.mod"
cp "$root/go.sum" "$tmp/go.sum"
for v in go edgekit go-nogrpc edgekit-nogrpc; do
	for p in edgeproto fluidos; do
		mkdir -p "$tmp/$v/$p"
		for f in "$root/$p"/*.pb.go; do
			case $f in
			*_edgekit.pb.go) [[ $v == edgekit* ]] && cp "$f" "$tmp/$v/$p/" ;;
			*_grpc.pb.go) [[ $v != *-nogrpc ]] && cp "$f" "$tmp/$v/$p/" ;;
			*) cp "$f" "$tmp/$v/$p/" ;;
			esac
		done
	done
	mkdir -p "$tmp/$v/main"
	cat >"$tmp/$v/main/main.go" <<GO
package main

import (
	"google.golang.org/protobuf/proto"

	"example.com/$v/edgeproto"
	"example.com/$v/fluidos"
)

func main() {
	for _, m := range []proto.Message{&edgeproto.Flavor{RamMb: 1024}, &fluidos.Contract{}} {
		if _, err := proto.Marshal(m); err != nil {
			panic(err)
		}
	}
}
GO
	(cd "$tmp" && GOFLAGS=-mod=mod GOPROXY=off go build -o "$tmp/$v.bin" "./$v/main")
	if [[ $v != *-nogrpc ]]; then
		(cd "$tmp" && GOFLAGS=-mod=mod GOPROXY=off go build -tags grpcnotrace -o "$tmp/$v-grpcnotrace.bin" "./$v/main")
	fi
done
for s in "" -nogrpc -grpcnotrace; do
	go=$(stat -c %s "$tmp/go$s.bin")
	ek=$(stat -c %s "$tmp/edgekit$s.bin")
	printf 'binary%s: protoc-gen-go alone %d B, with edgekit files %d B (%+.1f%%)\n' "$s" "$go" "$ek" "$(echo "($ek - $go) * 100 / $go" | bc -l)"
done
for v in go edgekit; do
	GODEBUG=inittrace=1 "$tmp/$v.bin" 2>&1 | grep -E '^init example.com/[a-z]+/(edgeproto|fluidos) '
done
