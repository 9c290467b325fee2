#!/usr/bin/env bash
# memory.sh MESHRT — memory by kind, the timeline and the device memory,
# in the model only (no MPI).
#
#  - every example (and alternative): plan --json's memory adds up: the
#    kinds at the peak sum to live_peak, live_peak + fragmentation is the
#    peak, which is totals.peak_memory; the timeline's largest row is the
#    live peak; plan's text prints the same figures;
#  - the MLP (mixed layout, 2x2): the parameters' bytes at the end of the
#    forward pass are computed here from the dims (w1 [d_in, hidden/cols],
#    w2 [hidden/cols, d_out], float32); no gradient is live then; the
#    parameters' home values are "params", their gradients "grads";
#  - --device-memory: plan exits 1 with one line when the peak is over
#    it, 0 when within; a bad size is one line and exit 2; compare marks
#    the rows that do not fit; search keeps only layouts that fit and
#    exits 1 saying so when none does; a machine profile's
#    device_memory: does the same, and a bad one is file:line:col, exit 2.
meshrt=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/../lib.sh"
use_temp_dir
cd "$here/.." || exit 2
export MESHRT_PROFILE=$dir/no-such-profile.yaml

for spec in examples/*.yaml; do
    tdims=$(sed -n 's/^# test-dims: *//p' "$spec" | head -n 1)
    args=("$spec")
    [ -n "$tdims" ] && args+=(--dim "$tdims")
    alts=$(python3 -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
print(" ".join((d.get("layouts") or {}).keys()))' "$spec" 2>/dev/null)
    for alt in "" $alts; do
        a=("${args[@]}")
        [ -n "$alt" ] && a+=(--layout "$alt")
        "$meshrt" plan "${a[@]}" --json >"$dir/p.json" 2>/dev/null || continue
        "$meshrt" plan "${a[@]}" >"$dir/p.txt" 2>/dev/null
        python3 - "$dir/p.json" "$dir/p.txt" "${a[*]}" <<'PY' || bad "memory sums: ${a[*]}"
import json, sys
d = json.load(open(sys.argv[1])); m = d["memory"]; txt = open(sys.argv[2]).read()
ok = True
def want(c, what):
    global ok
    if not c:
        print("FAIL:", sys.argv[3], what); ok = False
kinds = ["params", "grads", "optimizer", "activations", "comm", "other", "workspace"]
want(sum(m["by_kind"][k] for k in kinds) == m["live_peak"], "kinds sum to live_peak")
want(m["live_peak"] + m["fragmentation"] == m["peak"], "live + fragmentation = peak")
want(m["peak"] == d["totals"]["peak_memory"], "peak = totals.peak_memory")
want(m["timeline"]["columns"] == ["op"] + kinds, "timeline columns")
rows = m["timeline"]["rows"]
want(len(rows) == 0 or max(sum(r[1:]) for r in rows) == m["live_peak"], "timeline max = live peak")
want(f'= {m["live_peak"]} live + {m["fragmentation"]} fragmentation = peak {m["peak"]}' in txt, "text figures")
sys.exit(0 if ok else 1)
PY
    done
done

# The MLP's parameters, from its dims (mixed: batch/rows, hidden/cols).
"$meshrt" plan examples/mlp.yaml --json >"$dir/mlp.json" || bad "plan mlp"
python3 - "$dir/mlp.json" <<'PY' || bad "mlp kinds"
import json, sys
d = json.load(open(sys.argv[1])); m = d["memory"]
b, i, h, o, r, c = 64, 128, 256, 64, 2, 2
params = (i * (h // c) + (h // c) * o) * 4
rows = m["timeline"]["rows"]
# the row of the first op: only the forward pass has begun
first = rows[0]
ok = first[1] == params and first[2] == 0 and first[3] == 0
if not ok:
    print("FAIL: first op's row", first, "want params", params, "and no grads")
# the peak (the update: w and w:next both live) holds both copies of w1
if m["by_kind"]["params"] < params:
    print("FAIL: params at peak", m["by_kind"]["params"], "<", params); ok = False
sys.exit(0 if ok else 1)
PY

# --device-memory
peak=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["memory"]["peak"])' "$dir/mlp.json")
expect 1 1 "^examples/mlp.yaml: error: the plan's peak memory, $peak bytes per rank, is over the device memory of $((peak - 1)) bytes \(1 over\): it does not fit$" \
    "$meshrt" plan examples/mlp.yaml --device-memory $((peak - 1))
grep -q "does not fit (1 bytes over)" "$dir/stdout" || bad "plan's text: does not fit"
expect 0 0 "" "$meshrt" plan examples/mlp.yaml --device-memory "$peak"
grep -q "device memory $peak bytes/rank: fits (0 bytes to spare)" "$dir/stdout" || bad "plan's text: fits"
expect 0 0 "" "$meshrt" plan examples/mlp.yaml --device-memory 1GiB --json
python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["memory"]; sys.exit(not (m["device_memory"] == 1<<30 and m["fits"] is True))' "$dir/stdout" ||
    bad "plan --json: device_memory, fits"
expect 0 0 "" "$meshrt" plan examples/mlp.yaml --device-memory 1GB
grep -q "device memory 1000000000 bytes/rank" "$dir/stdout" || bad "GB is 1e9"
for b in 80XB -1 0 GB 1.5.5G ""; do
    expect 2 1 "^meshrt: error: --device-memory needs a size in bytes \(e.g. 80GB, 80GiB or 85899345920\), not '$b' \(see meshrt plan --help\)$" \
        "$meshrt" plan examples/mlp.yaml --device-memory "$b"
done

# compare: the rows over it marked; model_parallel is the smallest
expect 0 0 "" "$meshrt" compare examples/mlp.yaml --device-memory 350KiB --by-kind
grep -q "device memory 350 KiB per rank: 3 layouts do not fit: spec, data_parallel, mixed" "$dir/stdout" ||
    bad "compare: the rows that do not fit"
[ "$(grep -c '(does not fit)' "$dir/stdout")" = 3 ] || bad "compare: 3 cells marked"
grep -Eq '^model_parallel( +[0-9]+){9}  op [0-9]+ \(backward\)$' "$dir/stdout" || bad "compare --by-kind: a row that fits"
grep -Eq '^data_parallel .*does not fit$' "$dir/stdout" || bad "compare --by-kind: a row that does not fit"

"$meshrt" compare examples/mlp.yaml --device-memory 400KiB --json "$dir/c.json" >/dev/null ||
    bad "compare --json"
python3 - "$dir/c.json" <<'PY' || bad "compare --json: each row's memory"
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["name"]: r for r in d["layouts"]}
kinds = ["params", "grads", "optimizer", "activations", "comm", "other", "workspace"]
ok = True
for name, r in rows.items():
    m = r["memory"]
    ok &= sum(m[k] for k in kinds) + m["fragmentation"] == m["peak"] == r["peak_memory"]
    ok &= m["fits"] == (m["peak"] <= 400 * 1024) and m["device_memory"] == 400 * 1024
ok &= rows["model_parallel"]["memory"]["fits"] and not rows["data_parallel"]["memory"]["fits"]
sys.exit(0 if ok else 1)
PY

# search: only what fits
expect 0 0 "" "$meshrt" search examples/mlp.yaml --device-memory 300KiB --json "$dir/s.json"
grep -q "memory cap 300 KiB per rank (the device memory)" "$dir/stdout" || bad "search: the cap"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
top = d["top"]
sys.exit(not (top and all(x["peak_memory"] <= 300 * 1024 for x in top) and d["max_memory"] == 300 * 1024))' "$dir/s.json" ||
    bad "search: every result within the device memory"
expect 1 0 "" "$meshrt" search examples/mlp.yaml --device-memory 100KiB
grep -q "no candidate fits the device memory" "$dir/stdout" || bad "search: none fits"

# the profile's device_memory:
sed 's/^device_memory:.*/device_memory: 100KiB/' profiles/dgx-a100.yaml >"$dir/small.yaml"
expect 1 1 "over the device memory of 102400 bytes" "$meshrt" plan examples/mlp.yaml --machine "$dir/small.yaml"
expect 0 0 "" "$meshrt" plan examples/mlp.yaml --machine "$dir/small.yaml" --device-memory 1GiB
expect 1 0 "" "$meshrt" search examples/mlp.yaml --machine "$dir/small.yaml"
expect 0 0 "" "$meshrt" plan examples/mlp.yaml --machine dgx-h100
grep -q "device memory 85899345920 bytes/rank: fits" "$dir/stdout" || bad "dgx-h100: 80 GiB"
line=$(grep -n '^device_memory' "$dir/small.yaml" | cut -d: -f1)
sed 's/^device_memory:.*/device_memory: lots/' profiles/dgx-a100.yaml >"$dir/bad.yaml"
expect 2 1 "^$dir/bad.yaml:$line:16: error: 'device_memory' in the profile must be a size in bytes \(e.g. 80GB, 80GiB or 85899345920\), got 'lots'$" \
    "$meshrt" plan examples/mlp.yaml --machine "$dir/bad.yaml"
exit $fail
