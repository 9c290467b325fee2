#!/usr/bin/env bash
# profile_rows.sh MESHRT — the measured rows of a machine profile
# (collectives:, gemm:, maps:, ranks:, cores:) as the cost model uses
# them, through `plan --json`: a collective's time is interpolated between
# the rows of its kind and group (and extrapolated along the last two); an
# einsum's rate is the GEMM row of its shape and of the form of its
# operands (in the product's type: float32's or float64's rows); a
# map's, its function's row; local times grow when the
# plan has more ranks than the profile's cores; a profile without the
# rows prices as the formulas do.  Bad rows are one error line, exit 2.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
use_temp_dir
cat >"$dir/mm.yaml" <<'Y'
mesh: {data: 2}
dims: {m: 64, k: 64, n: 64}
layout: {k: data}
tensors:
  a: {shape: [m, k], init: {random: 1}}
  b: {shape: [k, n], init: {random: 2}}
ops:
  - {op: einsum, in: [a, b], out: c, shape: [m, n]}
  - {op: relu, in: [c], out: r}
Y
base='kernel: {gflops_float32: 20, gflops_float64: 10}
reduce_gflops: 1
copy_GBps: 5
default: {latency_us: 2, bandwidth_GBps: 5}'
printf '%s\n' "$base" >"$dir/plain.yaml"
printf '%s\n%s\n' "$base" 'ranks: 1
cores: 1
gemm:
  - {n: 1536, gflops: 20}
  - {n: 16, gflops: 2}
collectives:
  - {kind: allreduce, group: 2, bytes: 65536, time_us: 100}
  - {kind: allreduce, group: 2, bytes: 1024, time_us: 50}
  - {kind: reduce_scatter, group: 2, bytes: 1024, time_us: 1}' >"$dir/rows.yaml"
# the same, but the all-reduce's rows end below its 16 KiB
sed -e 's/bytes: 65536, time_us: 100/bytes: 2048, time_us: 70/' \
    -e 's/bytes: 1024, time_us: 50/bytes: 1024, time_us: 40/' \
    "$dir/rows.yaml" >"$dir/rows2.yaml"
for p in plain rows rows2; do
    "$meshrt" plan "$dir/mm.yaml" --machine "$dir/$p.yaml" --json >"$dir/$p.json" ||
        bad "plan with the $p profile failed"
done
python3 - "$dir/plain.json" "$dir/rows.json" "$dir/rows2.json" <<'PY' || bad "the rows as the model uses them"
import json, math, sys
plain, rows, rows2 = (json.load(open(p)) for p in sys.argv[1:4])
def steps(d):
    return [s for op in d["ops"] for s in op["steps"]]
for s, r in zip(steps(plain), steps(rows)):
    if s["kind"] == "einsum":
        # 64 x 64 x 32 per rank: s = min(cbrt(64*64*32), 2*32) = 50.8,
        # log-interpolated between 16 (2 GF/s) and 1536 (20 GF/s); the
        # plan's 2 ranks on the profile's 1 core: twice the time
        flops = 2 * 64 * 64 * 32
        assert abs(s["time_s"] - flops / 20e9) < 1e-12, s
        size = min((64 * 64 * 32) ** (1 / 3), 64)
        rate = 2e9 + (20e9 - 2e9) * math.log(size / 16) / math.log(1536 / 16)
        assert abs(r["time_s"] - 2 * flops / rate) < 1e-3 * r["time_s"], (r, 2 * flops / rate)
    elif s["kind"] == "allreduce":
        b = s["bytes"]
        assert 2048 < b < 65536, b
        # between (1024, 50us) and (65536, 100us)
        want = 50e-6 + 50e-6 * (b - 1024) / (65536 - 1024)
        assert abs(r["time_s"] - want) < 1e-3 * want, (r, want)
        # beyond (1024, 40us), (2048, 70us): along the last two rows
        r2 = [t for t in steps(rows2) if t["kind"] == "allreduce"][0]
        want = 70e-6 + 30e-6 * (b - 2048) / 1024
        assert abs(r2["time_s"] - want) < 1e-3 * want, (r2, want)
        assert s["time_s"] != r["time_s"], s
    else:  # a local step: twice the plain profile's time
        assert abs(r["time_s"] - 2 * s["time_s"]) < 1e-3 * r["time_s"], (s, r)
PY
# GEMM rows by form and map rows by function: each product at the rate
# of the form BLIS will see its operands in (ops/kernel_plan.c: a
# transposed A, a transposed B that the kernel copies first because BLIS
# runs that pair slowly, both transposed, which has no rows and takes
# nn's), plus the kernel's copy at the `copy` row's rate; a map at its function's rate, a map
# without rows at the copy rate; a one-input einsum at the `sum` row's,
# another local step (reduce_max) at the `copy` row's.  The figures
# computed here from the rows.
cat >"$dir/forms.yaml" <<'Y'
mesh: {data: 1}
dims: {m: 64, k: 48, n: 80}
tensors:
  a: {shape: [m, k], init: {random: 1}}
  at: {shape: [k, m], init: {random: 2}}
  b: {shape: [k, n], init: {random: 3}}
  bt: {shape: [n, k], init: {random: 4}}
ops:
  - {op: einsum, in: [a, b], out: c1, shape: [m, n]}
  - {op: einsum, in: [at, b], out: c2, shape: [m, n]}
  - {op: einsum, in: [a, bt], out: c3, shape: [m, n]}
  - {op: einsum, in: [at, bt], out: c4, shape: [m, n]}
  - {op: relu, in: [c1], out: r}
  - {op: tanh, in: [c2], out: t}
  - {op: einsum, in: [c3], out: s, shape: [n]}
  - {op: reduce_max, in: [c4], out: mx, dims: [m]}
Y
printf '%s\n%s\n' "$base" 'gemm:
  - {n: 16, gflops: 2}
  - {n: 1536, gflops: 20}
  - {n: 16, form: nt, gflops: 1}
  - {n: 1536, form: nt, gflops: 10}
  - {n: 1536, form: tn, gflops: 40}
  - {n: 16, form: tn, gflops: 4}
maps:
  - {fn: relu, elements: 65536, ns_per_element: 3}
  - {fn: relu, elements: 1024, ns_per_element: 1}
  - {fn: sum, elements: 1024, ns_per_element: 0.5}
  - {fn: copy, elements: 16, ns_per_element: 0.25}' >"$dir/forms_p.yaml"
"$meshrt" plan "$dir/forms.yaml" --machine "$dir/forms_p.yaml" --json >"$dir/forms.json" ||
    bad "plan with GEMM rows by form failed"
python3 - "$dir/forms.json" <<'PY' || bad "GEMM rows by form and map rows as the model uses them"
import json, math, sys
d = json.load(open(sys.argv[1]))
ops = d["ops"]
m, k, n = 64, 48, 80
flops = 2 * m * n * k
size = min((m * n * k) ** (1 / 3), 2 * min(m, n, k))
def rate(lo, hi):  # log-interpolated between n = 16 and 1536
    return lo + (hi - lo) * math.log(size / 16) / math.log(1536 / 16)
copy = k * n * 0.25e-9  # B copied: its elements at the copy row's rate
want = [flops / rate(2e9, 20e9),           # c1: nn
        flops / rate(4e9, 40e9),           # c2: A by columns: tn
        flops / rate(2e9, 20e9) + copy,    # c3: B copied, then nn
        flops / rate(2e9, 20e9)]           # c4: tt, no rows: nn's
e = m * n
per = 1e-9 + 2e-9 * math.log(e / 1024) / math.log(65536 / 1024)
want += [e * per,                          # relu: its row
         2 * e * 4 / 5e9,                  # tanh: no row, the copy rate
         e * 0.5e-9,                       # one input: sum's row, per input element
         (n + e) / 2 * 0.25e-9]            # reduce_max: copy's row, n written, e read
got = [op["steps"][-1]["time_s"] for op in ops]
assert len(got) == 8, got
for g, w in zip(got, want):
    assert abs(g - w) < 1e-5 * w, (got, want)  # (6 digits printed)
PY

# Map rows by type: a float64 map at its function's float64 rows
# (`dtype: float64`), a float64 map without them at twice the float32
# rows' time (its bytes), a bfloat16 one (computed in float32) at half
# of it; the one-input einsum at sum's float64 row.  The figures
# computed here from the rows.
cat >"$dir/types.yaml" <<'Y'
mesh: {data: 1}
dims: {m: 64, n: 80}
dtype: float64
tensors:
  a: {shape: [m, n], init: {random: 1}}
ops:
  - {op: tanh, in: [a], out: t}
  - {op: relu, in: [t], out: r}
  - {op: einsum, in: [r], out: s, shape: [n]}
Y
printf '%s\n%s\n' "$base" 'maps:
  - {fn: tanh, elements: 1024, ns_per_element: 1}
  - {fn: tanh, dtype: float64, elements: 1024, ns_per_element: 10}
  - {fn: tanh, dtype: float64, elements: 65536, ns_per_element: 30}
  - {fn: relu, elements: 1024, ns_per_element: 0.25}
  - {fn: relu, dtype: float32, elements: 65536, ns_per_element: 0.5}
  - {fn: sum, elements: 1024, ns_per_element: 0.5}
  - {fn: sum, dtype: float64, elements: 1024, ns_per_element: 0.625}' >"$dir/types_p.yaml"
sed 's/^dtype: float64/dtype: bfloat16/' "$dir/types.yaml" >"$dir/types16.yaml"
for t in types types16; do
    "$meshrt" plan "$dir/$t.yaml" --machine "$dir/types_p.yaml" --json >"$dir/$t.json" ||
        bad "plan of $t.yaml with map rows by type failed"
done
python3 - "$dir/types.json" "$dir/types16.json" <<'PY' || bad "map rows by type as the model uses them"
import json, math, sys
f64, b16 = ([op["steps"][-1]["time_s"] for op in json.load(open(p))["ops"]]
            for p in sys.argv[1:3])
e = 64 * 80
at = math.log(e / 1024) / math.log(65536 / 1024)  # between the rows, in log elements
want64 = [e * (10e-9 + 20e-9 * at),        # tanh: its float64 rows
          2 * e * (0.25e-9 + 0.25e-9 * at),  # relu: float32's, twice the bytes
          e * 0.625e-9]                    # sum: its float64 row
conv = 2 * (2 * e * 2 / 5e9)  # and the input widened, the output narrowed,
                               # each written and read at the copy rate
want16 = [e * 1e-9 / 2 + conv,             # float32's rows, half the bytes
          e * (0.25e-9 + 0.25e-9 * at) / 2 + conv,
          e * 0.5e-9 / 2]                  # (an einsum: no conversions priced apart)
for got, want in ((f64, want64), (b16, want16)):
    assert len(got) == 3, got
    for g, w in zip(got, want):
        assert abs(g - w) < 1e-5 * w, (got, want)  # (6 digits printed)
PY

# GEMM rows by type: a float64 product at float64's rows (`dtype:
# float64`: nn between its two rows, tn at its one tn row), not float32's
# times the peaks' ratio (10/20), which is what it takes without them; a
# bfloat16 product (computed in float32) at float32's rows, tn taking
# nn's.  The figures computed here from the rows.
cat >"$dir/g64.yaml" <<'Y'
mesh: {data: 1}
dims: {m: 64, k: 48, n: 80}
dtype: float64
tensors:
  a: {shape: [m, k], init: {random: 1}}
  at: {shape: [k, m], init: {random: 2}}
  b: {shape: [k, n], init: {random: 3}}
ops:
  - {op: einsum, in: [a, b], out: c1, shape: [m, n]}
  - {op: einsum, in: [at, b], out: c2, shape: [m, n]}
Y
sed 's/^dtype: float64/dtype: bfloat16/' "$dir/g64.yaml" >"$dir/g16.yaml"
printf '%s\n%s\n' "$base" 'gemm:
  - {n: 16, gflops: 2}
  - {n: 1536, gflops: 20}
  - {n: 16, dtype: float64, gflops: 3}
  - {n: 1536, dtype: float64, gflops: 12}
  - {n: 256, form: tn, dtype: float64, gflops: 7}' >"$dir/g64_p.yaml"
grep -v 'dtype: float64' "$dir/g64_p.yaml" >"$dir/g32_p.yaml"
for t in g64:g64_p g16:g64_p g64:g32_p; do
    "$meshrt" plan "$dir/${t%%:*}.yaml" --machine "$dir/${t#*:}.yaml" --json >"$dir/${t/:/.}.json" ||
        bad "plan of ${t%%:*}.yaml with the ${t#*:} rows failed"
done
python3 - "$dir/g64.g64_p.json" "$dir/g16.g64_p.json" "$dir/g64.g32_p.json" <<'PY' || bad "GEMM rows by type as the model uses them"
import json, math, sys
def einsums(p):
    return [s["time_s"] for op in json.load(open(p))["ops"]
            for s in op["steps"] if s["kind"] == "einsum"]
f64, b16, old = (einsums(p) for p in sys.argv[1:4])
m, k, n = 64, 48, 80
flops = 2 * m * n * k
size = min((m * n * k) ** (1 / 3), 2 * min(m, n, k))
at = math.log(size / 16) / math.log(1536 / 16)  # in log n between the rows
r32, r64 = 2e9 + 18e9 * at, 3e9 + 9e9 * at
for got, want in ((f64, [flops / r64, flops / 7e9]),      # float64's rows
                  (b16, [flops / r32, flops / r32]),      # float32's
                  (old, [flops / (r32 * 10 / 20)] * 2)):  # float32's x 10/20
    assert len(got) == 2, got
    for g, w in zip(got, want):
        assert abs(g - w) < 1e-5 * w, (got, want)  # (6 digits printed)
PY

# The default profile prices as before: the rows change nothing else.
"$meshrt" plan "$dir/mm.yaml" >"$dir/default.txt" || bad "plan (default profile)"
"$meshrt" plan "$dir/mm.yaml" --machine "$dir/plain.yaml" >"$dir/plain.txt"
diff <(grep -v 'profile' "$dir/default.txt") <(grep -v 'profile' "$dir/plain.txt") >/dev/null ||
    bad "a profile without rows prices unlike the built-in one"

# Bad rows: the file, line and column of the node, exit 2.
bad_row() { # WHAT YAML REGEX
    printf '%s\n%s\n' "$base" "$2" >"$dir/bad.yaml"
    expect 2 1 "bad.yaml:[0-9]+:[0-9]+: error: $3" "$meshrt" plan "$dir/mm.yaml" --machine "$dir/bad.yaml"
}
bad_row kind 'collectives: [{kind: bcast, group: 2, bytes: 8, time_us: 1}]' "'kind' of a collective must be allreduce"
bad_row missing 'collectives: [{kind: allreduce, group: 2, bytes: 8}]' "a collective needs 'time_us'"
bad_row time 'collectives: [{kind: allreduce, group: 2, bytes: 8, time_us: 0}]' "'time_us' of a collective must be a number above 0"
bad_row key 'gemm: [{n: 8, gflops: 1, m: 2}]' "unknown key 'm'"
bad_row rate 'gemm: [{n: 8, gflops: -1}]' "'gflops' of a gemm row must be a number above 0"
bad_row list 'gemm: {n: 8}' "expected a sequence for 'gemm'"
bad_row cores 'cores: 0' "'cores'"
bad_row form 'gemm: [{n: 8, form: ntt, gflops: 1}]' "'form' of a gemm row must be nn, nt, tn or tt, got 'ntt'"
bad_row fn 'maps: [{fn: "", elements: 8, ns_per_element: 1}]' "'fn' of a map row must be a function's name"
bad_row dtype 'maps: [{fn: gelu, dtype: float16, elements: 8, ns_per_element: 1}]' "'dtype' of a map row must be float32 or float64 \\(the types the kernels compute in\\), got 'float16'"
bad_row gemm_dtype 'gemm: [{n: 8, dtype: f64, gflops: 1}]' "'dtype' of a gemm row must be float32 or float64 \\(the types the kernels compute in\\), got 'f64'"
exit $fail
