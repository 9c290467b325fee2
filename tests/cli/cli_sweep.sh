#!/usr/bin/env bash
# cli_sweep.sh MESHRT — issue 10, items 4 and 5, through the command line:
# (a) a `layouts:` alternative that does not fit a --mesh or --dim gets
#     its own error row in compare (text, CSV, JSON) and does not stop
#     `plan`/`run --layout OTHER` (run at 1, 2, 3 and 4 ranks);
# (b) --dim DIM=N,... resizes dims at load: the plan equals that of a
#     copy of the spec with the new sizes; bad names and sizes are one
#     line and exit 2;
# (c) compare --sweep DIM=N,...: one row per layout, one cell per size
#     (error cells where a layout does not fit), each cell the figures
#     of `compare --dim DIM=N` at that size; CSV and JSON alike.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
alts="$here/specs/cli/alts_override.yaml"
mlp="$here/../examples/mlp.yaml"
use_temp_dir
# one_error STATUS REGEX COMMAND...: exit status STATUS, and stderr is one
# line matching REGEX
one_error() {
    local want=$1 re=$2; shift 2
    "$@" >"$dir/out" 2>"$dir/err"
    local got=$?
    if [ "$got" != "$want" ] || [ "$(wc -l <"$dir/err")" != 1 ] ||
       ! grep -Eq -e "$re" "$dir/err"; then
        echo "FAIL: $* -> status $got (want $want), stderr:"; cat "$dir/err"
        fail=1
    fi
}

# --- (a) one bad alternative blocks nothing -------------------------------
"$meshrt" compare "$alts" --mesh data=4 --csv "$dir/a.csv" --json "$dir/a.json" \
    >"$dir/a.txt" 2>"$dir/err"
check "compare --mesh with two broken alternatives exits 0" [ $? = 0 ]
check "compare --mesh prints nothing on stderr" [ ! -s "$dir/err" ]
for name in dp mp; do
    check "row $name shows its error" grep -Eq "^  $name +data=4 +.*alts_override.yaml:[0-9]+:[0-9]+: error: unknown mesh axis 'model' \(the mesh given by --mesh has: data\)" "$dir/a.txt"
done
for name in spec rows; do
    check "row $name has figures" grep -Eq "^[* ] $name +data=4 +[0-9.]+ " "$dir/a.txt"
done
check "the JSON has the broken rows with their errors" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
rows = {l["name"]: l for l in d["layouts"]}
assert list(rows) == ["spec", "dp", "mp", "rows"], list(rows)
assert rows["spec"]["ok"] and rows["rows"]["ok"]
for n in ("dp", "mp"):
    assert not rows[n]["ok"] and "unknown mesh axis" in rows[n]["error"], rows[n]
' "$dir/a.json"
check "the CSV has the broken rows with their errors" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert [r["layout"] for r in rows] == ["spec", "dp", "mp", "rows"]
assert "unknown mesh axis" in rows[1]["error"] and rows[1]["time_s"] == ""
assert rows[3]["error"] == "" and float(rows[3]["time_s"]) > 0
' "$dir/a.csv"
# --dim breaks none of them: batch 6 splits unevenly over data x model,
# which plans (uneven splits, docs/spec.md).
"$meshrt" compare "$alts" --dim batch=6 >"$dir/a6.txt" 2>"$dir/err"
check "compare --dim batch=6 exits 0" [ $? = 0 ]
check "dp's row plans 6 over 4 ranks" grep -Eq "^[* ] dp +data=2,model=2 +[0-9.]+ " "$dir/a6.txt"
check "mp plans under --dim" grep -Eq "^[* ] mp +data=2,model=2 +[0-9.]+ " "$dir/a6.txt"
"$meshrt" plan "$alts" --mesh data=4 --layout rows >"$dir/out" 2>"$dir/err"
check "plan --layout rows works while dp is broken" [ $? = 0 ] && [ ! -s "$dir/err" ]
check "plan --layout rows shows the plan" grep -q "on mesh {data: 4}" "$dir/out"
one_error 2 "alts_override.yaml:14:[0-9]+: error: unknown mesh axis 'model'" \
    "$meshrt" plan "$alts" --mesh data=4 --layout dp
one_error 2 "alts_override.yaml:15:[0-9]+: error: unknown mesh axis 'model'" \
    "$meshrt" check "$alts" --mesh data=4 --layout mp
# Without an override the file itself is wrong: still an error at load.
sed 's/^  rows: {batch: data}$/  rows: {batch: nope}/' "$alts" >"$dir/typo.yaml"
one_error 2 "typo.yaml:16:[0-9]+: error: unknown mesh axis 'nope'" \
    "$meshrt" plan "$dir/typo.yaml" --layout dp
# run --layout rows at 1-4 ranks, where dp and mp do not fit the mesh
# (batch 12 splits evenly over 1 to 4 ranks).
for np in 1 2 3 4; do
    "$here/mpirun.sh" $np "$meshrt" run "$alts" --mesh data=$np --dim batch=12 \
        --layout rows --verify >"$dir/run.txt" 2>"$dir/err"
    check "run --layout rows at $np ranks exits 0" [ $? = 0 ]
    check "run at $np ranks verifies" grep -Eq "^verify h: .*: ok$" "$dir/run.txt"
done

# --- (b) --dim ------------------------------------------------------------
sed 's/^dims: {batch: 64, d_in: 128, hidden: 256, d_out: 64}$/dims: {batch: 32, d_in: 128, hidden: 512, d_out: 64}/' \
    "$mlp" >"$dir/mlp_copy.yaml"
check "the copy differs in its dims" bash -c "! cmp -s '$mlp' '$dir/mlp_copy.yaml'"
"$meshrt" plan "$mlp" --dim hidden=512,batch=32 --json >"$dir/dim.json" 2>"$dir/err"
check "plan --dim exits 0" [ $? = 0 ]
"$meshrt" plan "$dir/mlp_copy.yaml" --json >"$dir/copy.json" 2>/dev/null
check "plan --dim equals the plan of an edited copy" python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d.pop("spec", None)
assert a["totals"] == b["totals"], (a["totals"], b["totals"])
assert json.dumps(a["ops"], sort_keys=True) == json.dumps(b["ops"], sort_keys=True)
' "$dir/dim.json" "$dir/copy.json"
"$meshrt" plan "$mlp" --json >"$dir/base.json" 2>/dev/null
check "--dim changes the plan" python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["totals"]["flops"] != b["totals"]["flops"]
' "$dir/dim.json" "$dir/base.json"
"$meshrt" check "$mlp" --dim batch=32 >"$dir/out" 2>&1
check "check --dim exits 0" [ $? = 0 ]
"$meshrt" search "$mlp" --dim batch=32 --top 1 >"$dir/out" 2>&1
check "search --dim exits 0" [ $? = 0 ]
check "search names the --dim its layout is for" grep -q "(for --dim batch=32)" "$dir/out"
one_error 2 "^error: --dim: no dim 'foo' in .*mlp.yaml \(dims: batch, d_in, hidden, d_out\)$" \
    "$meshrt" plan "$mlp" --dim batch=32,foo=3
one_error 2 "^error: --dim: the size of dim 'batch' must be a positive integer, got '0'$" \
    "$meshrt" check "$mlp" --dim batch=0
one_error 2 "^error: --dim: dim 'batch' is given twice$" \
    "$meshrt" compare "$mlp" --dim batch=8,batch=16
one_error 2 "^error: --dim: 'batch' is not DIM=SIZE$" \
    "$meshrt" search "$mlp" --dim batch
"$meshrt" plan "$mlp" --dim batch=6 --layout data_parallel >"$dir/out" 2>"$dir/err"
check "plan --dim batch=6 --layout data_parallel plans (6 over 4, uneven)" \
    grep -q "uneven shards" "$dir/out"
one_error 2 "option --dim is not valid for 'calibrate'" \
    "$meshrt" calibrate --dim batch=2

# --- (c) compare --sweep --------------------------------------------------
"$meshrt" compare "$mlp" --sweep batch=64,128,256,6 --csv "$dir/s.csv" \
    --json "$dir/s.json" >"$dir/s.txt" 2>"$dir/err"
check "compare --sweep exits 0" [ $? = 0 ]
check "compare --sweep prints nothing on stderr" [ ! -s "$dir/err" ]
check "the sweep has one column per size" grep -Eq "^layout +batch=64 +batch=128 +batch=256 +batch=6 +growth$" "$dir/s.txt"
check "every cell plans (batch=6 splits unevenly)" bash -c "! grep -q error '$dir/s.txt'"
# Alternatives that do not fit the mesh of --mesh are error cells.
"$meshrt" compare "$alts" --mesh data=4 --sweep batch=12,24,6 >"$dir/se.txt" 2>"$dir/err"
check "a sweep with broken alternatives exits 0" [ $? = 0 ]
check "the sweep lists the error cells" grep -Eq "^dp at batch=6: .*alts_override.yaml:[0-9]+:[0-9]+: error: unknown mesh axis 'model'" "$dir/se.txt"
check "an error cell reads error" grep -Eq "^dp +error +error +error +-$" "$dir/se.txt"
check "rows plans in every cell" grep -Eq "^rows +[0-9.]+ ns / 0 B" "$dir/se.txt"
for b in 64 128 256 6; do
    "$meshrt" compare "$mlp" --dim batch=$b --json "$dir/c$b.json" >/dev/null 2>&1
done
check "each sweep cell is compare --dim at that size" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["sweep"] == {"dim": "batch", "sizes": [64, 128, 256, 6],
                      "points": ["batch=64", "batch=128", "batch=256", "batch=6"]}, d["sweep"]
names = [l["name"] for l in d["layouts"]]
assert names == ["spec", "data_parallel", "model_parallel", "mixed"], names
for i, size in enumerate(d["sweep"]["sizes"]):
    c = json.load(open("%s/c%d.json" % (sys.argv[2], size)))
    rows = {l["name"]: l for l in c["layouts"]}
    for l in d["layouts"]:
        p, r = l["points"][i], rows[l["name"]]
        assert p["size"] == size and p["ok"] == r["ok"], (l["name"], size)
        if p["ok"]:
            for k in ("time_s", "wire_bytes", "comm_bytes", "peak_memory"):
                assert p[k] == r[k], (l["name"], size, k, p[k], r[k])
            assert p["fastest"] == r["fastest"]
        else:
            assert p["error"] == r["error"]
assert all(p["ok"] for l in d["layouts"] for p in l["points"])
# the cost grows with the batch
for l in d["layouts"]:
    t = [p["time_s"] for p in l["points"][:3]]
    assert t[0] < t[1] < t[2], (l["name"], t)
' "$dir/s.json" "$dir"
check "the sweep CSV has one line per cell" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 16, len(rows)
assert all(r["ok"] == "1" and float(r["time_s"]) > 0 for r in rows), rows
' "$dir/s.csv"
# A size at which the spec itself does not load (x's bytes overflow 64
# bits): every row has its error; at no size at all, the command fails.
big=2305843009213693952
"$meshrt" compare "$mlp" --sweep batch=64,$big >"$dir/s3.txt" 2>"$dir/err"
check "a sweep with one size that does not load exits 0" [ $? = 0 ]
check "every layout is an error at batch=2^61" [ "$(grep -c "^[a-z_]* at batch=$big: " "$dir/s3.txt")" = 4 ]
one_error 2 "tensor 'x' \[batch, d_in\] is too large" \
    "$meshrt" compare "$mlp" --sweep batch=$big,4611686018427387904
one_error 2 "^error: --sweep: no dim 'batc' in .*mlp.yaml \(dims: batch, d_in, hidden, d_out\)$" \
    "$meshrt" compare "$mlp" --sweep batc=64,128
one_error 2 "--sweep: the sizes must be positive integers" \
    "$meshrt" compare "$mlp" --sweep batch=64,x
one_error 2 "--sweep needs DIM=SIZE" "$meshrt" compare "$mlp" --sweep batch
one_error 2 "option --sweep is only valid for 'compare'" \
    "$meshrt" plan "$mlp" --sweep batch=64
"$meshrt" compare "$mlp" --sweep batch=64,128 --svg "$dir/x.svg" >/dev/null 2>&1
check "a sweep's --svg writes its chart" grep -q "^<svg " "$dir/x.svg"

[ $fail = 0 ] && echo "cli_sweep: all checks passed"
exit $fail
