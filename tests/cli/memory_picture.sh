#!/usr/bin/env bash
# memory_picture.sh MESHRT PNG_CHECK [--update] — `meshrt plan
# --timeline`'s picture of a rank's memory by kind over the ops, as
# reviewed: for each case below the text is tests/golden/memory/NAME.txt
# byte for byte (a bar per op, a letter per kind in proportion to its
# bytes; a long plan a bar per group of ops), and its --svg renders to a
# PNG that is not blank (rsvg-convert refuses SVG that is not well
# formed).  Each bar's letters are checked against plan --json's
# timeline: their count per kind is the kind's bytes over the scale,
# rounded as the picture rounds running sums.
#
# To accept a change on purpose: this script with --update (./dev
# golden runs it) rewrites the golden files; review `git diff tests/golden`.
set -uo pipefail
meshrt=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
png_check=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
update=${3:-}
. "$(dirname "$0")/../lib.sh"
use_temp_dir
golden=tests/golden/memory
cd "$here/.." || exit 2
export MESHRT_PROFILE=$dir/no-such-profile.yaml
command -v rsvg-convert >/dev/null ||
    { echo "FAIL: rsvg-convert is missing (./dev test installs librsvg2-bin)"; exit 1; }
mkdir -p "$dir/new"

case_() {
    local name=$1; shift
    if ! "$meshrt" plan "$@" --timeline --svg "$dir/$name.svg" >"$dir/new/$name.txt" 2>"$dir/err"; then
        bad "meshrt plan $* --timeline:"; cat "$dir/err"; return
    fi
    [ -s "$dir/err" ] && { bad "meshrt plan $* --timeline wrote on stderr:"; cat "$dir/err"; }
    if ! rsvg-convert "$dir/$name.svg" -o "$dir/$name.png" 2>"$dir/err"; then
        bad "rsvg-convert refuses the SVG of $name:"; cat "$dir/err"
    elif ! "$png_check" "$dir/$name.png" >"$dir/png" 2>&1; then
        bad "the SVG of $name renders blank: $(cat "$dir/png")"
    fi
    "$meshrt" plan "$@" --json >"$dir/$name.json" 2>/dev/null
    python3 - "$dir/$name.json" "$dir/new/$name.txt" <<'PY' || bad "$name: the bars against plan --json"
import json, re, sys
d = json.load(open(sys.argv[1])); m = d["memory"]
txt = open(sys.argv[2]).read().splitlines()
rows = {r[0]: r[1:] for r in m["timeline"]["rows"]}
full, last = [], None
for i in range(len(d["ops"])):  # an op with no row has the row before it
    last = rows.get(i, last)
    full.append(last)
per = 1 if len(full) <= 48 else -(-len(full) // 48)
groups = [full[i:i + per] for i in range(0, len(full), per)]
tops = [max(g, key=sum) for g in groups]
scale = max(sum(t) for t in tops) / 60
bars = [l for l in txt if re.match(r"^ +\d+(-\d+)? (fwd|bwd|upd) ", l)]
ok = len(bars) == len(groups)
if not ok:
    print("FAIL:", len(bars), "bars for", len(groups), "groups of ops")
for row, line in zip(tops, bars):
    want, cum, drawn = "", 0, 0
    for k, b in enumerate(row):
        cum += b
        upto = int(cum / scale + 0.5)
        want += "PGOACTW"[k] * (upto - drawn)
        drawn = upto
    got = line.split()[-1] if line.split()[-1][0] in "PGOACTW" else ""
    if got != want:
        print("FAIL: bar", line, "want", want); ok = False
sys.exit(0 if ok else 1)
PY
}

case_ mlp examples/mlp.yaml
case_ mlp.model_parallel examples/mlp.yaml --layout model_parallel
case_ zero.zero3 examples/zero.yaml --layout zero3
case_ gpt2.zero3 examples/gpt2.yaml --layout zero3
expect 2 1 "^meshrt: error: option --timeline is only valid for 'plan'" "$meshrt" compare examples/mlp.yaml --timeline

if [ "$update" = --update ]; then
    rm -f "$golden"/*.txt
    cp "$dir"/new/*.txt "$golden"/
    echo "memory_picture: wrote $(ls "$dir"/new | wc -l) files to $golden"
    exit $fail
fi
for f in "$dir"/new/*.txt; do
    g=$golden/$(basename "$f")
    if [ ! -f "$g" ]; then bad "no golden file $g (this script with --update writes it)"
    elif ! cmp -s "$f" "$g"; then bad "the picture differs from $g:"; diff "$g" "$f" | head -20
    fi
done
for g in "$golden"/*.txt; do
    [ -f "$dir/new/$(basename "$g")" ] || bad "stale golden file $g"
done
exit $fail
