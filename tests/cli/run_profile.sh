#!/usr/bin/env bash
# run_profile.sh MESHRT — `run --profile` and `run --trace FILE` at 2 ranks
# (the bytes handed to MPI equal the plan's for every step and op; the
# trace is valid JSON with one event per step per rank), and
# `calibrate --quick` at 2 ranks: the profile it writes loads in `plan`.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
spec="$here/../examples/mlp.yaml"
mesh=rows=1,cols=2 # 2 ranks, with a collective
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- run --profile --trace -------------------------------------------
nsteps=$("$meshrt" plan "$spec" --mesh $mesh --json | python3 -c '
import json, sys
print(sum(len(op["steps"]) for op in json.load(sys.stdin)["ops"]))')
nops=$("$meshrt" plan "$spec" --mesh $mesh --json | python3 -c '
import json, sys
print(len(json.load(sys.stdin)["ops"]))')
if ! "$here/mpirun.sh" 2 "$meshrt" run "$spec" --mesh $mesh --repeat 2 \
        --profile --trace "$tmp/trace.json" >"$tmp/out" 2>"$tmp/err"; then
    bad "run --profile --trace failed"; cat "$tmp/out" "$tmp/err"
fi
# One line per op ending in "equal" (planned bytes = bytes handed to MPI on
# every rank), one line per step with "equal" in its ledger column.
ops_equal=$(grep -cE '^  op [0-9]+ \(.*\): model .* handed to MPI [0-9]+: equal$' "$tmp/out")
steps_equal=$(grep -cE '^ +[0-9]+ +[0-9]+ [a-z_]+ .* (equal) ' "$tmp/out")
if [ "$ops_equal" != "$nops" ] || [ "$steps_equal" != "$nsteps" ] ||
   grep -q DIFFER "$tmp/out" || ! grep -q '^profile: .*BLIS kernel [a-z0-9_]' "$tmp/out"; then
    bad "profile table: $ops_equal of $nops ops and $steps_equal of $nsteps steps show equal bytes"
    cat "$tmp/out"
fi
python3 - "$tmp/trace.json" "$nsteps" 2 <<'EOF' || bad "trace file"
import json, sys
path, nsteps, ranks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = json.load(open(path))
ev = [e for e in d["traceEvents"] if e["ph"] == "X"]
assert len(ev) == nsteps * ranks, (len(ev), nsteps, ranks)
for r in range(ranks):
    mine = sorted((e for e in ev if e["tid"] == r), key=lambda e: e["ts"])
    assert [e["args"]["step"] for e in mine] == list(range(nsteps)), mine
    for e in mine:
        assert e["pid"] == 0 and e["dur"] >= 0 and e["ts"] >= 0, e
        assert e["name"].split()[0] == e["cat"], e
        for key in ("bytes", "axes", "group", "op", "predicted_us"):
            assert key in e["args"], (key, e)
names = [e for e in d["traceEvents"] if e["name"] == "thread_name"]
assert len(names) == ranks, names
EOF
ls "$tmp" | grep -q tmp && bad "a temporary trace file was left behind"

# The same under --json: a "profile" object, bytes equal everywhere.
"$here/mpirun.sh" 2 "$meshrt" run "$spec" --mesh $mesh --profile --json >"$tmp/json" ||
    bad "run --profile --json failed"
python3 - "$tmp/json" "$nsteps" <<'EOF' || { bad "--profile --json"; cat "$tmp/json"; }
import json, sys
d = json.load(open(sys.argv[1]))["profile"]
assert len(d["steps"]) == int(sys.argv[2])
assert all(s["bytes"] == s["planned_bytes"] and s["bytes_equal"] for s in d["steps"])
assert all(o["bytes_equal"] for o in d["ops"])
assert all(s["gflops"] > 0 for s in d["steps"] if s["kind"] == "einsum")
EOF

# A trace that cannot be written: one error line, exit status 2.
"$here/mpirun.sh" 2 "$meshrt" run "$spec" --mesh $mesh \
    --trace "$tmp/no/such/dir/t.json" >/dev/null 2>"$tmp/err"
st=$?
if [ $st != 2 ] || [ "$(wc -l <"$tmp/err")" != 1 ] || ! grep -q "cannot write the trace" "$tmp/err"; then
    bad "unwritable trace: status $st"; cat "$tmp/err"
fi

# ---- calibrate --quick -----------------------------------------------
# (how long it takes is bench's business, not a test's: no test depends
# on the speed of a shared machine or of a sanitizer build)
if ! "$here/mpirun.sh" 2 "$meshrt" calibrate --quick --out "$tmp/cal/profile.yaml" >"$tmp/out" 2>"$tmp/err"; then
    bad "calibrate failed"; cat "$tmp/out" "$tmp/err"
fi
grep -q "wrote the machine profile to $tmp/cal/profile.yaml" "$tmp/out" || bad "calibrate did not say where"
for kind in allreduce allgather reduce_scatter alltoall; do
    grep -q "^  $kind " "$tmp/out" || bad "calibrate measured no $kind"
done
grep -q '^measured:' "$tmp/cal/profile.yaml" || bad "no measured: block"
# the local rates by form and by function (runtime/calibrate_rates.c):
# products in every form in float32 and float64, every elementwise
# function the kernels have
# (those of this list at least), two sizes each
python3 - "$tmp/cal/profile.yaml" <<'PY' || bad "calibrate's gemm: and maps: rows"
import re, sys
text = open(sys.argv[1]).read().split("\nmeasured:")[0]
every = re.findall(r"- \{n: (\d+), (?:form: (\w+), )?(?:dtype: (\w+), )?gflops: ([0-9.e+-]+)\}", text)
thin = re.findall(r"- \{n: (\d+), thin: (\w), other: (\d+), (?:dtype: (\w+), )?gflops: ([0-9.e+-]+)\}", text)
assert len(every) + len(thin) == text.count("- {n: "), text  # (no row the patterns missed)
# thin products (--quick: short side 16 and 64 of 256) on each side, in
# both types, each shorter than the others
assert {(n, s, d) for n, s, o, d, g in thin} == {
    (n, s, d) for n in ("16", "64") for s in "mnk" for d in ("", "float64")}, thin
assert all(int(n) < int(o) and float(g) > 0 for n, s, o, d, g in thin), thin
# in float32 (no dtype) and in float64 (dgemm), the same forms and sizes
# each, and each type's peak as its largest nn row
gemm = {t: [(n, f or "nn", g) for n, f, d, g in every if d == t]
        for t in ("", "float64")}
assert {d for _, _, d, _ in every} == {"", "float64"}, every
for t, g in gemm.items():
    assert {f for _, f, _ in g} == {"nn", "nt", "tn", "tt"}, (t, g)
    assert all(float(r) > 0 for _, _, r in g), g
    sizes = {(n, f) for n, f, _ in g}
    assert len(sizes) == len(g) and all(
        (n, "nn") in sizes for n, f, _ in g if f != "nn"), (t, g)
assert {(n, f) for n, f, _ in gemm[""] if f != "nn"} == \
       {(n, f) for n, f, _ in gemm["float64"] if f != "nn"}, gemm
rows = re.findall(r"- \{fn: (\w+), (?:dtype: (\w+), )?elements: (\d+), ns_per_element: ([0-9.e+-]+)\}", text)
maps = [(f, e, t) for f, d, e, t in rows if not d]
fns = {f for f, _, _ in maps}
want = {"copy", "add", "sub", "mul", "div", "relu", "gelu", "tanh", "exp",
        "log", "neg", "rsqrt", "square", "scale", "shift", "axpy",
        "relu_grad", "gelu_grad", "tanh_grad", "rsqrt_grad", "square_grad",
        "eq", "one_hot", "mask_fill", "sum"}
assert want <= fns, want - fns  # (and any function added since)
assert len(maps) == 2 * len(fns) and all(float(t) > 0 for _, _, t in maps), maps
# and in float64 those whose time its bytes do not predict (libm's
# transcendentals among them), the same two sizes each
f64 = [(f, e, t) for f, d, e, t in rows if d]
assert {d for _, d, _, _ in rows if d} == {"float64"}, rows
assert {"gelu", "tanh", "exp", "log", "gelu_grad"} <= {f for f, _, _ in f64} <= fns, f64
assert len(f64) == 2 * len({f for f, _, _ in f64}) and all(float(t) > 0 for _, _, t in f64), f64
PY
grep -q '^GEMM float32 by form' "$tmp/out" && grep -q '^GEMM float64 by form' "$tmp/out" &&
    grep -q '^  gelu ' "$tmp/out" &&
    grep -q '^maps (ns per float64 element' "$tmp/out" ||
    bad "calibrate does not report the rates by form and function"
if ! "$meshrt" plan "$spec" --machine "$tmp/cal/profile.yaml" >"$tmp/plan" 2>"$tmp/err" ||
   ! grep -q "costs modeled with the $tmp/cal/profile.yaml (calibrated on" "$tmp/plan"; then
    bad "plan does not load the calibrated profile"; head -3 "$tmp/plan"; cat "$tmp/err"
fi
"$here/mpirun.sh" 2 "$meshrt" run "$spec" --mesh $mesh --machine "$tmp/cal/profile.yaml" \
    >/dev/null || bad "run --machine FILE"
# A mesh that does not fit: one line, exit status 2 on every rank.
"$here/mpirun.sh" 2 "$meshrt" calibrate --quick --mesh data=3 --out "$tmp/x.yaml" >/dev/null 2>"$tmp/err"
st=$?
if [ $st != 2 ] || [ "$(wc -l <"$tmp/err")" != 1 ] || [ -e "$tmp/x.yaml" ]; then
    bad "calibrate on a mesh of the wrong size: status $st"; cat "$tmp/err"
fi

# calibrate reads --mesh with the loader's parser (blanks allowed, as
# for plan --mesh): the mesh is read, then found to be the wrong size.
"$here/mpirun.sh" 2 "$meshrt" calibrate --quick --mesh " data = 3" --out "$tmp/x.yaml" >/dev/null 2>"$tmp/err"
st=$?
if [ $st != 2 ] || ! grep -q "^meshrt: error: the mesh  data = 3 has 3 ranks but mpirun started 2 " "$tmp/err"; then
    bad "calibrate --mesh is not read as plan --mesh is: status $st"; cat "$tmp/err"
fi

[ $fail = 0 ] && echo "run --profile, --trace and calibrate: all ok"
exit $fail
