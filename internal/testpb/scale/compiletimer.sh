#!/usr/bin/env bash
# A -toolexec wrapper for buildcost.sh and featurecost.sh: times the compile
# of packages under example.com/cost/ (user and system CPU seconds into
# $COST_DIR/<pkg>.time) and records the size of their archive
# ($COST_DIR/<pkg>.size); every other tool runs as it is.
tool=$1; shift
pkg=""; out=""
prev=""
for a in "$@"; do
	[[ $prev == -p ]] && pkg=$a
	[[ $prev == -o ]] && out=$a
	prev=$a
done
if [[ $(basename "$tool") == compile && $pkg == example.com/cost/* ]]; then
	TIMEFORMAT="%U %S"
	{ time "$tool" "$@" ; } 2>"$COST_DIR/$(basename "$pkg").time"
	stat -c %s "$out" >"$COST_DIR/$(basename "$pkg").size"
else
	exec "$tool" "$@"
fi
