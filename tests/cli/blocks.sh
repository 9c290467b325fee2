#!/usr/bin/env bash
# blocks.sh MESHRT NP — repeated blocks (docs/spec.md, "Repeated blocks")
# through the command line, on examples/blocks.yaml (3 Transformer
# layers as one `repeat: layers` block):
#   - `check --dim layers=N` makes N instances: the op count grows by the
#     same number per layer (N = 1, 2, 4, 7);
#   - `plan --dim layers=4` prints layer 0 and one line for layers 1-3
#     ("h1–h3 (3 instances, layers 1–3): as h0"), forward, and the update
#     of layers 2-0 as layer 3's; `plan --json` still has every op of h3;
#   - a `layouts:` entry `h.mlp.w1` (and op `h.f`) is that of every
#     instance: the same plan as the entries of h0, h1 and h2 listed;
#   - `outputs: [h.r2, loss]` outputs h0.r2, h1.r2, h2.r2 and the loss;
#   - `compare --sweep layers=1,2,4` gives every layout a figure per size,
#     growing with the depth; `search --dim layers=2` finds a layout;
#   - `run --verify --dim layers=2` on NP ranks: every output ok (values,
#     gradients and the SGD updates of every layer's parameters), with
#     the mesh {data: NP, model: 1} and, at 4, the spec's {2, 2}.
set -uo pipefail
meshrt=$1
np=$2
. "$(dirname "$0")/../lib.sh"
use_temp_dir
spec=$here/../examples/blocks.yaml

if [ "$np" = 1 ]; then
    prev=0 step=
    for n in 1 2 4 7; do  # (8 would train 65 tensors: at most 64 for now)
        ops=$("$meshrt" check "$spec" --dim layers=$n | sed -n 's/.* \([0-9]*\) ops$/\1/p')
        check "check --dim layers=$n prints an op count" [ -n "$ops" ]
        [ "$n" = 1 ] && one=$ops
        [ "$n" = 2 ] && step=$((ops - one))
        [ -n "$step" ] && check "layers=$n: $ops ops, $((n - 1)) x $step more than layers=1" \
            [ "$ops" = $((one + (n - 1) * step)) ]
    done
    "$meshrt" plan "$spec" --dim layers=4 >"$dir/plan" 2>&1
    check "plan --dim layers=4 summarizes layers 1-3 as layer 0" \
        grep -Eq '^h1–h3 \(3 instances, layers 1–3\): as h0, each [0-9]+ steps, [0-9]+ bytes/rank$' "$dir/plan"
    check "and the updates of layers 2-0 as layer 3's" \
        grep -Eq '^h2–h0 \(3 instances, layers 2–0, update\): as h3,' "$dir/plan"
    check "plan prints no op of h2 in full" bash -c "! grep -q '^op [0-9]*: h2\.' '$dir/plan'"
    "$meshrt" plan "$spec" --dim layers=4 --json >"$dir/json" 2>&1
    check "plan --json lists the ops of h3" grep -q '"h3\.attn\.wq"' "$dir/json"
    check "plan --json lists the update of h2.mlp.w1" grep -q '"h2\.mlp\.w1:next"' "$dir/json"
    "$meshrt" compare "$spec" --sweep layers=1,2,4 --csv "$dir/sweep.csv" >"$dir/sweep" 2>&1
    check "compare --sweep layers=1,2,4 exits 0" [ $? = 0 ]
    check "compare --sweep has a row per layout" grep -Eq '^megatron +[0-9]' "$dir/sweep"
    python3 - "$dir/sweep.csv" <<'PY' || fail=1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = 0
for layout in {r["layout"] for r in rows}:
    t = [float(r["time_s"]) for r in rows if r["layout"] == layout]
    if len(t) != 3 or not t[0] < t[1] < t[2]:
        print("FAIL: compare --sweep layers=1,2,4 of", layout, ":", t); bad = 1
sys.exit(bad)
PY
    # an alternative's entries "h.mlp.w1" and "h.f" are those of every
    # instance: the same plan as the entries h0.mlp.w1, h1.mlp.w1, ...
    python3 - "$spec" "$dir" <<'PY'
import sys
base = open(sys.argv[1]).read().split("layouts:")[0]
def alt(ts, os):
    t = ", ".join("%s: {layout: {d_model: model}, grad_layout: {d_ff: model}}" % n
                  for n in ts)
    o = ", ".join("%s: {layout: {d_ff: model}}" % n for n in os)
    return base + "layouts:\n  own:\n    batch: data\n    tensors: {%s}\n" \
        "    ops: {%s}\n" % (t, o)
open(sys.argv[2] + "/ref.yaml", "w").write(alt(["h.mlp.w1"], ["h.f"]))
open(sys.argv[2] + "/flat.yaml", "w").write(
    alt(["h%d.mlp.w1" % i for i in range(3)], ["h%d.f" % i for i in range(3)]))
PY
    "$meshrt" plan "$dir/ref.yaml" --layout own 2>&1 | sed 1d >"$dir/ref.plan"
    "$meshrt" plan "$dir/flat.yaml" --layout own 2>&1 | sed 1d >"$dir/flat.plan"
    check "layouts: entries h.mlp.w1, h.f plan as h0.mlp.w1 ... h2.f" \
        cmp -s "$dir/ref.plan" "$dir/flat.plan"
    check "and they apply: h1.mlp.w1 is split" \
        grep -q '^  h1.mlp.w1 \[d_model/model, d_ff\]' "$dir/ref.plan"
    # outputs: [h.r2, loss]: the r2 of every instance, and the loss
    sed -e '/^train:/d' -e '/^layouts:/,$d' "$spec" >"$dir/out.yaml"
    echo "outputs: [h.r2, loss]" >>"$dir/out.yaml"
    timeout 300 "$here/mpirun.sh" 1 "$meshrt" run "$dir/out.yaml" --verify --mesh data=1,model=1 \
        >"$dir/out.run" 2>&1
    check "run of outputs: [h.r2, loss] exits 0" [ $? = 0 ]
    check "outputs: [h.r2, loss] are h0.r2, h1.r2, h2.r2 and loss" \
        [ "$(sed -n 's/^verify \([^:]*\): .*: ok$/\1/p;s/^verify \(loss\): .*ok$/\1/p' \
              "$dir/out.run" | sort -u | tr '\n' ' ')" = "h0.r2 h1.r2 h2.r2 loss " ]
    "$meshrt" search "$spec" --dim layers=2 --top 2 >"$dir/search" 2>&1
    check "search --dim layers=2 exits 0" [ $? = 0 ]
fi

# verified runs at NP ranks
meshes=("data=$np,model=1")
[ "$np" = 4 ] && meshes+=("data=2,model=2")
for mesh in "${meshes[@]}"; do
    timeout 300 "$here/mpirun.sh" "$np" "$meshrt" run "$spec" --dim layers=2 \
        --mesh "$mesh" --verify >"$dir/run" 2>&1
    check "run --verify --dim layers=2 on {$mesh} exits 0" [ $? = 0 ]
    check "every check ok on {$mesh}" bash -c "! grep -q FAILED '$dir/run'"
    check "h1's parameters are verified on {$mesh}" \
        grep -Eq '^verify h1\.mlp\.w2:next: .*: ok$' "$dir/run"
done
exit $fail
