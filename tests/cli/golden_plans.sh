#!/usr/bin/env bash
# golden_plans.sh MESHRT [--update] — the plans of the examples, as
# reviewed: for every examples/NAME.yaml and every alternative ALT of its
# `layouts:`, `meshrt plan` (text) and `meshrt plan --json` are
# tests/golden/plans/NAME.plan and NAME.json, NAME.ALT.plan and
# NAME.ALT.json, byte for byte; and no golden file is left of an example
# or alternative that is gone.  A change in the planner's behaviour (its
# choices, its costs, the printer) shows as a diff here and in review.
#
# The plans are made from the checkout's root (the files name the specs
# as examples/NAME.yaml) with the built-in machine profile (the suite
# pins it, and so does this script: MESHRT_PROFILE names no file).
#
# To accept a change on purpose: `./dev golden` (this script with
# --update) rewrites every golden file and removes the stale ones; then
# review `git diff tests/golden` and commit it with the change.
set -uo pipefail
meshrt=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
update=${2:-}
. "$(dirname "$0")/../lib.sh"
use_temp_dir
golden=tests/golden/plans
cd "$here/.." || exit 2
export MESHRT_PROFILE=$dir/no-such-profile.yaml

# plans NAME SPEC ARGS...: both forms of one plan into $dir/new.
plans() {
    local name=$1; shift
    "$meshrt" plan "$@" >"$dir/new/$name.plan" 2>"$dir/err" &&
        "$meshrt" plan "$@" --json >"$dir/new/$name.json" 2>>"$dir/err" ||
        { bad "meshrt plan $*:"; cat "$dir/err"; }
}

mkdir "$dir/new"
for spec in examples/*.yaml; do
    name=$(basename "$spec" .yaml)
    # an example too large to plan into a reviewable file says at which
    # sizes its tests take it: "# test-dims: DIM=N,..."
    tdims=$(sed -n 's/^# test-dims: *//p' "$spec" | head -n 1)
    sized=()
    [ -z "$tdims" ] || sized=(--dim "$tdims")
    plans "$name" "$spec" "${sized[@]}"
    alts=$("$meshrt" check "$spec" "${sized[@]}" 2>/dev/null |
           sed -n 's/^layouts: \([^(]*\)(.*/\1/p' | tr -d ',')
    for alt in $alts; do
        plans "$name.$alt" "$spec" --layout "$alt" "${sized[@]}"
    done
done

if [ "$update" = --update ]; then
    mkdir -p "$golden"
    rm -f "$golden"/*.plan "$golden"/*.json
    cp "$dir/new"/* "$golden"/
    echo "golden_plans: wrote $(ls "$golden" | wc -l) files to $golden"
    exit $fail
fi
[ -z "$update" ] || { echo "usage: golden_plans.sh MESHRT [--update]" >&2; exit 2; }
for f in "$dir/new"/*; do
    g=$golden/$(basename "$f")
    if [ ! -f "$g" ]; then
        bad "$g is missing (./dev golden writes it)"
    elif ! diff -u "$g" "$f" >"$dir/diff"; then
        bad "the plan differs from $g (./dev golden accepts it):"
        head -n 40 "$dir/diff"
    fi
done
for g in "$golden"/*; do
    [ -e "$g" ] || continue
    [ -f "$dir/new/$(basename "$g")" ] ||
        bad "$g: no such example or alternative any more (./dev golden removes it)"
done
[ $fail = 0 ] && echo "golden_plans: $(ls "$dir/new" | wc -l) files as in $golden"
exit $fail
