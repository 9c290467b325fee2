#!/usr/bin/env bash
# optimizer_bytes.sh MESHRT — bytes per parameter of GPT-2 small
# (examples/gpt2.yaml at full size) trained with Adam, from the memory
# breakdown `plan --json` prints (its timeline's last row: parameters,
# gradients and optimizer state per rank once the update is done, the
# same walk as the peak's), against ZeRO's formulas (Rajbhandari et al.,
# 2020) computed here from the dims: over d = 8 data-parallel ranks
# (--mesh data=8,model=1; d divides every parameter's sharded dim, so
# the figures hold to the byte), in float32 (parameters, gradients, m
# and v: 4 bytes each, no master weights):
#     dp      16                 (4 + 4 + 4 + 4)
#     zero1    4 + 4 + 8/d        the state sharded
#     zero2    4 + 12/d           and the gradients
#     zero3   16/d                and the parameters
# The spec is gpt2.yaml with `optimizer: adam` and three alternatives of
# `zero:` added here (a test-only variant: the example's own figures
# stay SGD's).  The 16-bit rows (Megatron's 18 and 6 + 12/d, ZeRO's
# 16Ψ with fp16) need the `precision:` key; tests/unit/test_optimizer.c
# checks the bf16 ones from the plan's values.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
use_temp_dir
sed -e 's/^train: {loss: loss, params: all, lr: 0.0001, steps: 1}$/train: {loss: loss, params: all, lr: 0.0001, steps: 1, optimizer: adam}/' \
    -e 's/^  dp: {batch: \[data, model\], pin: true}$/&\
  dp_zero1: {batch: [data, model], pin: true, zero: {stage: 1, axes: [data, model]}}\
  dp_zero2: {batch: [data, model], pin: true, zero: {stage: 2, axes: [data, model]}}\
  dp_zero3: {batch: [data, model], pin: true, zero: {stage: 3, axes: [data, model]}}/' \
    "$here/../examples/gpt2.yaml" >"$dir/gpt2_adam.yaml"
grep -q "optimizer: adam" "$dir/gpt2_adam.yaml" && grep -q "dp_zero3:" "$dir/gpt2_adam.yaml" ||
    { bad "could not make the Adam variant of gpt2.yaml"; exit 1; }

for l in dp dp_zero1 dp_zero2 dp_zero3; do
    "$meshrt" plan "$dir/gpt2_adam.yaml" --layout "$l" --mesh data=8,model=1 \
        --json >"$dir/$l.json" 2>"$dir/$l.err" || { bad "plan --layout $l"; cat "$dir/$l.err"; }
done

python3 - "$dir" <<'PY' || fail=1
import json, sys
from fractions import Fraction as F
d = 8
L, V, S, h, f = 12, 50257, 1024, 768, 3072
psi = L * (2*h + 3*h*h + 3*h + h*h + h + 2*h + h*f + f + f*h + h) + V*h + S*h + 2*h
want = {"dp": F(16), "dp_zero1": 4 + 4 + F(8, d), "dp_zero2": 4 + F(12, d),
        "dp_zero3": F(16, d)}
ok = True
for l, formula in want.items():
    m = json.load(open(f"{sys.argv[1]}/{l}.json"))["memory"]["timeline"]
    col = {c: i for i, c in enumerate(m["columns"])}
    last = m["rows"][-1]
    got = sum(last[col[k]] for k in ("params", "grads", "optimizer"))
    print(f"{l:9} formula {float(formula):6.3f} B/param = {formula * psi} B; meshrt {got} B")
    if got != formula * psi:
        print(f"FAIL: {l}: {got} bytes per rank, the formula {formula} x {psi} = {formula * psi}")
        ok = False
sys.exit(0 if ok else 1)
PY
exit $fail
