#!/usr/bin/env bash
# many_params.sh MESHRT — a model's count of parameters through the
# command line (issue 18, item 2: `train:` held at most 64).  A spec of
# 200 weights (GPT-2 small has 148), generated here: a residual chain
# h = h + 0.1 tanh(h * w_i), every weight trained, float64.
#   - `meshrt plan` plans it: one gradient reduction per weight;
#   - `meshrt run --verify` at 1, 2, 3 and 4 ranks: every output, every
#     gradient and its finite differences ok, exit 0;
#   - `meshrt search` (global rules) finds a winner over its 200 weights,
#     and `search --per-tensor` refuses it in one line naming the cap of
#     combinations (4096), exit 2.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
use_temp_dir
spec=$dir/p200.yaml
python3 - 200 >"$spec" <<'PY'
import sys
n = int(sys.argv[1])
print("mesh: {data: 2}\ndtype: float64\ndims: {batch: 4, d: 6}\n"
      "layout: {batch: data}\ntensors:\n  x: {shape: [batch, d]}\n"
      "  t: {shape: [batch, d], init: {random: 3}}")
for i in range(n):
    print("  w%d: {shape: [d], init: {random: %d}}" % (i, i + 10))
print("ops:")
prev = "x"
for i in range(n):
    print("  - {op: mul, in: [%s, w%d], out: m%d}" % (prev, i, i))
    print("  - {op: tanh, in: [m%d], out: a%d}" % (i, i))
    print("  - {op: scale, in: [a%d], by: 0.1, out: s%d}" % (i, i))
    print("  - {op: add, in: [%s, s%d], out: h%d}" % (prev, i, i))
    prev = "h%d" % i
print("  - {op: mse, in: [%s, t], out: loss}" % prev)
print("train: {loss: loss, lr: 0.01, params: [%s]}"
      % ", ".join("w%d" % i for i in range(n)))
PY

if "$meshrt" plan "$spec" --json >"$dir/plan.json" 2>"$dir/err"; then
    python3 - "$dir/plan.json" <<'PY' || bad "plan: not one reduction per weight"
import json, sys
plan = json.load(open(sys.argv[1]))
cs = [c for op in plan["ops"] for c in op["collectives"]
      if c["tensor"].startswith("grad:w")]
names = sorted(set(c["tensor"] for c in cs))
print("plan: %d collectives for the gradients of %d weights" % (len(cs), len(names)))
sys.exit(0 if len(cs) == 200 and len(names) == 200 else 1)
PY
else
    bad "plan of 200 weights: exit status not 0"; cat "$dir/err"
fi

for np in 1 2 3 4; do
    if ! timeout 300 "$here/mpirun.sh" "$np" "$meshrt" run "$spec" \
         --mesh data="$np" --verify >"$dir/run" 2>&1; then
        bad "run --verify of 200 weights at $np ranks: exit status not 0"
        grep -v ': ok$' "$dir/run" | head -20
        continue
    fi
    fd=$(grep -c '^finite differences grad:w[0-9]*: .*: ok$' "$dir/run")
    grads=$(grep -c '^verify grad:w[0-9]*: .*: ok$' "$dir/run")
    next=$(grep -c '^verify w[0-9]*:next: .*: ok$' "$dir/run")
    if [ "$fd" != 200 ] || [ "$grads" != 200 ] || [ "$next" != 200 ]; then
        bad "run --verify at $np ranks: $fd finite differences, $grads gradients, $next updates ok (want 200 each)"
    else
        echo "ok: run --verify at $np ranks: 200 gradients, their finite differences and updates"
    fi
done

if "$meshrt" search "$spec" >"$dir/search" 2>"$dir/err" &&
   grep -q '^winner: ' "$dir/search"; then
    echo "ok: search over the rules of 200 weights: $(grep '^winner' "$dir/search")"
else
    bad "search of 200 weights: no winner"; cat "$dir/err"
fi
expect 2 1 'more than 4096 combinations of per-tensor layouts for 200 tensors' \
    "$meshrt" search "$spec" --per-tensor
exit $fail
