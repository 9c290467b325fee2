#!/usr/bin/env bash
# cli_compare.sh MESHRT — `meshrt compare` and `meshrt search` through the
# command line: compare's CSV, JSON and SVG files (one CSV row per layout,
# JSON that parses, well-formed SVG, written atomically: a failed write
# leaves nothing behind), rows with errors and the exit status, and that
# search's winning layout: block, pasted into a copy of the spec, plans
# (to the time search reported).
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
spec="$here/../examples/transformer_einsums.yaml"
use_temp_dir

# --- compare: the three files, and nothing else, in the folder ---------
mkdir "$dir/out"
"$meshrt" compare "$spec" --csv "$dir/out/t.csv" --json "$dir/out/t.json" \
    --svg "$dir/out/t.svg" >"$dir/compare.txt" 2>"$dir/err"
check "compare exits 0" [ $? = 0 ]
check "compare prints nothing on stderr" [ ! -s "$dir/err" ]
check "compare marks the fastest" grep -q '^\* fastest (modeled): ' "$dir/compare.txt"
for name in spec data_parallel model_parallel combined; do
    check "compare shows row $name" grep -Eq "^[* ] $name +data=2,model=2,pipe=2 " "$dir/compare.txt"
done
check "only the three files are written" [ "$(ls "$dir/out" | tr '\n' ' ')" = "t.csv t.json t.svg " ]
check "the JSON parses" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = [l["name"] for l in d["layouts"]]
assert names == ["spec", "data_parallel", "model_parallel", "combined"], names
assert all(l["ok"] for l in d["layouts"])
assert sum(l["fastest"] for l in d["layouts"]) == 1
for l in d["layouts"]:
    assert abs(l["time_s"] - l["comm_time_s"] - l["compute_time_s"]) <= 1e-9 * l["time_s"]
    assert sum(l["comm_bytes_by_axis"].values()) == l["comm_bytes"]
' "$dir/out/t.json"
check "the SVG is well-formed XML" python3 -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])' "$dir/out/t.svg"
check "the SVG has no script" bash -c "! grep -qi '<script' '$dir/out/t.svg'"
check "the CSV has one row per layout" python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert len(rows) == 5, rows
assert [r[0] for r in rows[1:]] == ["spec", "data_parallel", "model_parallel", "combined"]
assert all(len(r) == len(rows[0]) for r in rows), "ragged rows"
' "$dir/out/t.csv"

# --- a failed write leaves nothing behind, and exits 2 ------------------
mkdir "$dir/fail" "$dir/fail/taken"
"$meshrt" compare "$spec" --svg "$dir/fail/taken" --csv "$dir/fail/ok.csv" >/dev/null 2>"$dir/err"
check "a failed write exits 2" [ $? = 2 ]
check "a failed write says which file" grep -q "taken: error: cannot write the comparison" "$dir/err"
check "a failed write leaves no temporary file" [ "$(ls "$dir/fail" | tr '\n' ' ')" = "ok.csv taken " ]
"$meshrt" compare "$spec" --json /nonexistent/dir/t.json >/dev/null 2>&1
check "an unwritable folder exits 2" [ $? = 2 ]

# --- rows that do not fit: their error instead of figures ---------------
cat >"$dir/alts.yaml" <<'EOF'
mesh: {data: 2, model: 2}
dims: {batch: 8, d_model: 8, d_ff: 16}
layout: {batch: data}
tensors:
  x:  {shape: [batch, d_model]}
  w1: {shape: [d_model, d_ff], layout: {d_ff: model}}
ops:
  - {op: einsum, in: [x, w1], out: h, shape: [batch, d_ff]}
layouts:
  both: {d_model: model, d_ff: model}
  dp: {batch: [data, model]}
EOF
# Mesh-TF knows no per-tensor layouts: under `both`, w1 splits model twice.
"$meshrt" compare "$dir/alts.yaml" --planner meshtf --csv "$dir/alts.csv" \
    --json "$dir/alts.json" --svg "$dir/alts.svg" >"$dir/alts.txt" 2>&1
check "compare with one bad row exits 0" [ $? = 0 ]
check "the bad row shows its error" grep -Eq "^  both .*error: --planner meshtf: .*twice in tensor 'w1'" "$dir/alts.txt"
check "the bad row is in every file" python3 -c '
import csv, json, sys, xml.dom.minidom
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert [r["layout"] for r in rows] == ["spec", "both", "dp"]
assert rows[1]["error"] and not rows[1]["time_s"] and not rows[0]["error"]
d = json.load(open(sys.argv[2]))
assert d["layouts"][1]["ok"] is False and "twice" in d["layouts"][1]["error"]
xml.dom.minidom.parse(sys.argv[3])
' "$dir/alts.csv" "$dir/alts.json" "$dir/alts.svg"
sed 's/^layout: {batch: data}/layout: {d_model: model, d_ff: model}/; /^  dp:/d' \
    "$dir/alts.yaml" >"$dir/none.yaml"
"$meshrt" compare "$dir/none.yaml" --planner meshtf >/dev/null 2>&1
check "compare with no valid row exits 2" [ $? = 2 ]
"$meshrt" compare "$dir/none.yaml" >/dev/null 2>&1
check "the same rows plan with the auto planner" [ $? = 0 ]
"$meshrt" compare "$here/../examples/mlp.yaml" --mesh rows=4,cols=1 >"$dir/mesh.txt"
check "compare --mesh replaces the mesh" grep -q "^[* ] spec  *rows=4,cols=1 " "$dir/mesh.txt"

# --- search: its winner, pasted into the spec, plans --------------------
start=$(date +%s.%N)
"$meshrt" search "$spec" --json "$dir/search.json" >"$dir/search.txt" 2>"$dir/err"
check "search exits 0" [ $? = 0 ]
end=$(date +%s.%N)
check "search prints nothing on stderr" [ ! -s "$dir/err" ]
echo "search of $spec took $(awk "BEGIN { printf \"%.2f\", $end - $start }") s: $(grep -m1 candidates "$dir/search.txt")"
sed -n '/^layout:/,$p' "$dir/search.txt" >"$dir/block.yaml"
check "search prints a layout: block last" grep -q '^layout:' "$dir/block.yaml"
# Replace the spec's layout: block (up to the next top-level key).
awk -v block="$dir/block.yaml" '
    /^layout:/ { while ((getline line < block) > 0) print line; skip = 1; next }
    skip && /^[^ #]/ { skip = 0 }
    !skip { print }' "$spec" >"$dir/pasted.yaml"
check "the pasted spec differs from the original" bash -c "! cmp -s '$spec' '$dir/pasted.yaml'"
"$meshrt" plan "$dir/pasted.yaml" --json >"$dir/pasted.json" 2>"$dir/err"
check "meshrt plan accepts the pasted layout" [ $? = 0 ]
check "the pasted layout plans to the time search reported" python3 -c '
import json, sys
plan = json.load(open(sys.argv[1]))
search = json.load(open(sys.argv[2]))
got, want = plan["totals"]["time_s"], search["top"][0]["time_s"]
assert abs(got - want) <= 1e-6 * want, (got, want)
c = search["candidates"]
assert c["enumerated"] == (c["pruned_by_time_bound"] + c["pruned_by_memory_bound"]
                          + c["left_out_by_screen"] + c["planned"])
assert not c["screened"]  # 2899 candidates on 3 axes: planned exactly
assert c["invalid"] == 0 and search["top"] and search["pareto"]
times = [t["time_s"] for t in search["top"]]
assert times == sorted(times)
for t in search["top"]:
    assert t["bound_s"] <= t["time_s"]
' "$dir/pasted.json" "$dir/search.json"
"$meshrt" search "$spec" --screen >"$dir/screened.txt" 2>&1
check "search --screen exits 0" [ $? = 0 ]
check "search --screen says it screened" grep -q "^screened (--screen): all 2899 candidates" "$dir/screened.txt"
check "search --screen prints a layout: block" grep -q "^layout:" "$dir/screened.txt"
"$meshrt" search "$spec" --max-memory 1K >"$dir/capped.txt" 2>&1
check "search with an impossible memory cap exits 1" [ $? = 1 ]
check "and says so" grep -q "no candidate fits the memory cap" "$dir/capped.txt"

# --- usage ---------------------------------------------------------------
"$meshrt" compare "$spec" --top 3 >/dev/null 2>"$dir/err"
check "--top is for search only" [ $? = 2 ] && check "its message" grep -q "only valid for 'search'" "$dir/err"
"$meshrt" search "$spec" --svg x.svg >/dev/null 2>"$dir/err"
check "--svg is for compare only" [ $? = 2 ]
"$meshrt" search "$spec" --max-memory lots >/dev/null 2>"$dir/err"
check "--max-memory needs bytes" [ $? = 2 ]
"$meshrt" compare --help >/dev/null && "$meshrt" search --help >/dev/null
check "compare and search have --help" [ $? = 0 ]

[ $fail = 0 ] && echo "compare and search: all ok"
exit $fail
