#!/usr/bin/env bash
# optimizer_bytes.sh MESHRT — bytes per parameter of GPT-2 small
# (examples/gpt2.yaml at full size, Ψ = 124,439,808, computed here from
# its dims) trained with Adam, from the memory breakdown `plan --json`
# prints (its timeline's last row: parameters, gradients and optimizer
# state per rank once the update is done, the same walk as the peak's),
# against the formulas, to the byte, over d = 8 data-parallel ranks
# (--mesh data=8,model=1; 8 divides a dim of every parameter, the one
# zero: shards):
#   Megatron's distributed optimizer (Korthikanti/Narayanan et al.;
#   Megatron-LM's docs), Adam with fp32 master weights, m and v (12):
#     bf16 params, fp32 grads:  18 undistributed, 6 + 12/d with zero1
#     fp16 params and grads:    20 (a fp32 gradient copy, master_grads)
#                               and 4 + 16/d with zero1
#   ZeRO (Rajbhandari et al., 2020), fp16 params and grads, no gradient
#   copy (master_grads: false): 16, then 4 + 12/d (stage 1), 2 + 14/d
#   (stage 2), 16/d (stage 3);
#   and plain float32 (no master weights): 16, 8 + 8/d, 4 + 12/d, 16/d.
# The spec is gpt2.yaml with `optimizer: adam`, `precision:` and three
# alternatives of `zero:` added here (a test-only variant: the example's
# own figures stay SGD's).
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
use_temp_dir

# variant NAME PRECISION MASTER_GRADS: the spec $dir/NAME.yaml
variant() {
    sed -e "s/^train: {loss: loss, params: all, lr: 0.0001, steps: 1}\$/train: {loss: loss, params: all, lr: 0.0001, steps: 1, optimizer: adam, master_grads: $3}/" \
        -e "s/^dtype: float32\$/dtype: float32\\
precision: $2/" \
        -e 's/^  dp: {batch: \[data, model\], pin: true}$/&\
  dp_zero1: {batch: [data, model], pin: true, zero: {stage: 1, axes: [data, model]}}\
  dp_zero2: {batch: [data, model], pin: true, zero: {stage: 2, axes: [data, model]}}\
  dp_zero3: {batch: [data, model], pin: true, zero: {stage: 3, axes: [data, model]}}/' \
        "$here/../examples/gpt2.yaml" >"$dir/$1.yaml"
    grep -q "optimizer: adam" "$dir/$1.yaml" && grep -q "^precision:" "$dir/$1.yaml" &&
        grep -q "dp_zero3:" "$dir/$1.yaml" || bad "could not make variant $1 of gpt2.yaml"
    for l in dp dp_zero1 dp_zero2 dp_zero3; do
        "$meshrt" plan "$dir/$1.yaml" --layout "$l" --mesh data=8,model=1 \
            --json >"$dir/$1.$l.json" 2>"$dir/err" || { bad "$1: plan --layout $l"; cat "$dir/err"; }
    done
}
variant bf16 "{params: bfloat16, compute: bfloat16, grads: float32, optimizer: float32}" true
variant fp16 "{params: float16, compute: float16, grads: float16, optimizer: float32}" true
variant zero "{params: float16, compute: float16, grads: float16, optimizer: float32}" false
variant fp32 "{params: float32, compute: float32, grads: float32, optimizer: float32}" true

python3 - "$dir" <<'PY' || fail=1
import json, sys
from fractions import Fraction as F
d = 8
L, V, S, h, f = 12, 50257, 1024, 768, 3072
psi = L * (2*h + 3*h*h + 3*h + h*h + h + 2*h + h*f + f + f*h + h) + V*h + S*h + 2*h
assert psi == 124439808, psi
want = {  # bytes per parameter: params + grads + optimizer state
    "bf16": {"dp": F(18), "dp_zero1": 6 + F(12, d), "dp_zero3": F(18, d)},
    "fp16": {"dp": F(20), "dp_zero1": 4 + F(16, d), "dp_zero3": F(20, d)},
    "zero": {"dp": F(16), "dp_zero1": 4 + F(12, d), "dp_zero2": 2 + F(14, d),
             "dp_zero3": F(16, d)},
    "fp32": {"dp": F(16), "dp_zero1": 8 + F(8, d), "dp_zero2": 4 + F(12, d),
             "dp_zero3": F(16, d)},
}
ok = True
for v, rows in want.items():
    for l, formula in rows.items():
        m = json.load(open(f"{sys.argv[1]}/{v}.{l}.json"))["memory"]["timeline"]
        col = {c: i for i, c in enumerate(m["columns"])}
        got = sum(m["rows"][-1][col[k]] for k in ("params", "grads", "optimizer"))
        print(f"{v} {l:9} formula {float(formula):6.3f} B/param: {formula * psi} B; meshrt {got} B")
        if got != formula * psi:
            print(f"FAIL: {v} {l}: {got} bytes per rank, the formula "
                  f"{formula} x {psi} = {formula * psi}")
            ok = False
sys.exit(0 if ok else 1)
PY
exit $fail
