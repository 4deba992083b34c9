#!/usr/bin/env bash
# Builds the binaries of package k8senv's test environment into DIR (the
# first argument): kube-apiserver, kube-controller-manager and kube-scheduler
# of the k8s.io/kubernetes version this module requires, kwok, and kwok's
# stage definitions (kwok-stages.yaml). What is already in DIR is kept, so a
# second run does nothing. Everything comes from the Go module proxy.
set -euo pipefail

dir=${1:?usage: build.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
kwok_version=v0.8.0

export GOWORK=off GOFLAGS=-buildvcs=false CGO_ENABLED=0
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# Each binary is written under a temporary name of this run and renamed when
# complete, so an interrupted build never leaves a truncated binary that
# looks built, and two builds at once do not write the same file.
trap 'rm -f "$dir"/.*.$$.tmp' EXIT
for bin in kube-apiserver kube-controller-manager kube-scheduler; do
	if [[ -x $dir/$bin ]]; then
		echo "k8s-testenv: $bin is built"
		continue
	fi
	echo "k8s-testenv: building $bin (several CPU-minutes the first time)"
	(cd "$here" && go build -trimpath -ldflags='-s -w' -o "$dir/.$bin.$$.tmp" "./$bin")
	mv "$dir/.$bin.$$.tmp" "$dir/$bin"
done

if [[ -x $dir/kwok ]]; then
	echo "k8s-testenv: kwok is built"
else
	echo "k8s-testenv: building kwok $kwok_version"
	tmp=$(mktemp -d "$dir/.kwok.XXXXXX")
	GOBIN=$tmp go install -trimpath -ldflags='-s -w' "sigs.k8s.io/kwok/cmd/kwok@$kwok_version"
	mv "$tmp/kwok" "$dir/kwok"
	rmdir "$tmp"
fi

if [[ -s $dir/kwok-stages.yaml ]]; then
	echo "k8s-testenv: kwok-stages.yaml is there"
else
	# kwok exits with "no stages found" without them; they ship in its module.
	src=$(go mod download -json "sigs.k8s.io/kwok@$kwok_version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[[ -d $src ]] || { echo "k8s-testenv: no module directory for sigs.k8s.io/kwok@$kwok_version" >&2; exit 1; }
	{
		for f in node/fast/node-initialize.yaml node/heartbeat/node-heartbeat.yaml \
			pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
			echo "---"
			cat "$src/kustomize/stage/$f"
			echo
		done
	} >"$dir/.kwok-stages.yaml.$$.tmp"
	mv "$dir/.kwok-stages.yaml.$$.tmp" "$dir/kwok-stages.yaml"
fi
echo "k8s-testenv: ready in $dir"
