#!/usr/bin/env bash
# precision.sh MESHRT — 16-bit types in the plan's figures, in the model
# only (no MPI): examples/mlp.yaml's data-parallel step (--planner
# meshtf: the weight gradients all-reduced where they are made) with
# `precision: {params: float32, compute: bfloat16, grads: G}` for G =
# float32 and bfloat16.  The weight gradients' all-reduces (over all 4
# ranks) hand MPI the whole gradient, i*h + h*o elements, of 4 and 2
# bytes: computed here from the dims, and the two runs differ by a
# factor of exactly 2 on them (they are the gradients of the cast copies,
# "grad:w1:cast", reduced in grads' type before the cast back); the
# forward pass reads bfloat16 copies of the weights (one "cast" map per
# weight); every collective of `plan --json` carries
# the type it moves (grads on the gradients, compute on the others); and
# `dtype: bfloat16` halves every float32 figure of the plain spec
# (bytes handed to MPI, per collective and in total); and `compare`'s
# data-parallel row shows the backward pass moving half the bytes.
. "$(dirname "$0")/../lib.sh"
meshrt=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=examples/mlp.yaml
for g in float32 bfloat16; do
    sed "s/^dtype: float32/dtype: float32\nprecision: {params: float32, compute: bfloat16, grads: $g}/" \
        "$src" >"$tmp/mlp_$g.yaml"
    "$meshrt" plan --json --planner meshtf --layout data_parallel "$tmp/mlp_$g.yaml" >"$tmp/$g.json" ||
        bad "plan --json with grads: $g failed"
    "$meshrt" compare "$tmp/mlp_$g.yaml" --planner meshtf --json "$tmp/cmp_$g.json" \
        >/dev/null || bad "compare with grads: $g failed"
done
sed "s/^dtype: float32/dtype: bfloat16/" "$src" >"$tmp/mlp_bf16.yaml"
for f in "$src" "$tmp/mlp_bf16.yaml"; do
    "$meshrt" plan --json --planner meshtf --layout data_parallel "$f" >"$tmp/$(basename "$f").json" ||
        bad "plan --json $f failed"
done
python3 - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
def load(name):
    with open(f"{tmp}/{name}") as f:
        return json.load(f)
def colls(d):
    return [c for o in d["ops"] for c in o["collectives"]]
b, i, h, o = 64, 128, 256, 64  # examples/mlp.yaml's dims
bad = 0
def check(ok, what):
    global bad
    if not ok:
        print("FAIL:", what)
        bad = 1
grads = {}
for g, size in (("float32", 4), ("bfloat16", 2)):
    cs = colls(load(f"{g}.json"))
    gw = [c for c in cs if c["tensor"].startswith(("grad:w1", "grad:w2"))]
    check(len(gw) == 2, f"grads {g}: two weight-gradient all-reduces, got {len(gw)}")
    check(all(c["dtype"] == g for c in gw), f"grads {g}: their dtype is {g}")
    got = sum(c["bytes"] for c in gw)
    check(got == (i * h + h * o) * size,
          f"grads {g}: {got} bytes, formula {(i * h + h * o) * size}")
    rest = [c for c in cs if c not in gw]
    check(rest and all(c["dtype"] == "bfloat16" for c in rest),
          f"grads {g}: the other collectives move compute's bfloat16")
    grads[g] = got
    casts = [s for o in load(f"{g}.json")["ops"] for s in o["steps"]
             if s.get("fn") == "cast"]
    check(len(casts) == 2, f"grads {g}: a cast per weight, got {len(casts)}")
check(grads["float32"] == 2 * grads["bfloat16"],
      f"float32 gradients move twice bfloat16's: {grads}")
# compare's data_parallel row: its backward pass (the two gradient
# all-reduces) hands MPI twice the bytes with float32 gradients
bwd = {}
for g in ("float32", "bfloat16"):
    rows = {r["name"]: r for r in load(f"cmp_{g}.json")["layouts"]}
    bwd[g] = rows["data_parallel"]["phases"]["backward"]["comm_bytes"]
check(bwd["float32"] == 2 * bwd["bfloat16"] == grads["float32"],
      f"compare's backward bytes: {bwd}")
f32, b16 = load("mlp.yaml.json"), load("mlp_bf16.yaml.json")
c32, c16 = colls(f32), colls(b16)
check(len(c32) == len(c16), "dtype: bfloat16 plans the same collectives")
for x, y in zip(c32, c16):
    check(x["dtype"] == "float32" and y["dtype"] == "bfloat16", "types named")
    check(x["bytes"] == 2 * y["bytes"], f"{x['tensor']}: {x['bytes']} = 2 x {y['bytes']}")
check(f32["totals"]["comm_bytes"] == 2 * b16["totals"]["comm_bytes"],
      "the totals halve")
sys.exit(bad)
PY
exit $fail
