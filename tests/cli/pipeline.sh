#!/usr/bin/env bash
# pipeline.sh MESHRT — pipeline parallelism (issue 20 items 1, 2, 4):
#  1. examples/pipeline.yaml (a uniform stack of 8 residual MLP blocks,
#     `layers: pipe`) trains verified in float64 at 1, 2, 3 and 4 ranks,
#     pipe alone ({data: 1, pipe: P}) and pipe x data ({data: 2,
#     pipe: 2}), with 1, 2 and 4 microbatches; its saved loss, gradients
#     and updates equal those of the full batch planned without a
#     pipeline (one rank, microbatches: 1) to 1e-12 (the input's
#     gradient, `grads: [input]`: microbatch j's grad:input@j holds rows
#     j b/m .. (j+1) b/m - 1 of the full batch's grad:input);
#  2. the reduced GPT-2 (examples/gpt2.yaml's test dims, 3 layers; its
#     tied wte lives on the first stage and is sent to the last for the
#     head, its gradient's piece comes back) likewise at 2, 3 and 4 ranks;
#  3. the point-to-point bytes of `plan --json` (its sendrecv steps)
#     equal the formula computed here from the dims: per stage boundary
#     and microbatch one activation forward and its gradient backward,
#     each the shard b/m/D x d_model x 8 bytes, so 2 (P-1) m b/(m D) h 8
#     in all, and every rank's run hands MPI what the plan says (run's
#     bytes-match check, which counts the sendrecv steps);
#  4. `meshrt check` says which layers each stage holds, and warns of no
#     op duplicated over the pipe axis;
#  5. a pipeline's bad keys: the load errors are tests/specs/bad's
#     (pipeline_*); the planner's, of rules that make no pipeline, are
#     tests/specs/pipeline's, checked here.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
use_temp_dir
mpirun_command
stack="$here/../examples/pipeline.yaml"
gpt2="$here/../examples/gpt2.yaml"
gdims=layers=3,vocab=61,length=8,klen=8,d_model=16,heads=2,d_k=8,d_ff=32,batch=4

# The saved arrays of two runs agree to 1e-12 of each array's largest
# element, absolutely below 1 (the key bias's gradient is 0 up to
# rounding: softmax ignores a shift of every key; the .npy files are
# float64, read here without numpy).
cat >"$dir/agree.py" <<'PY'
import ast, os, struct, sys
def load(path):
    b = open(path, "rb").read()
    n = struct.unpack("<H", b[8:10])[0]
    h = ast.literal_eval(b[10:10 + n].decode())
    assert h["descr"] == "<f8", (path, h)
    return struct.unpack("<%dd" % ((len(b) - 10 - n) // 8), b[10 + n:])
def pieces(stem, names):
    """X.npy and its microbatches' X@1.npy, X@2.npy ... in order."""
    at = [g for g in names if g.startswith(stem + "@") and g[len(stem) + 1:-4].isdigit()]
    return [stem + ".npy"] + sorted(at, key=lambda g: int(g[len(stem) + 1:-4]))
a, b = sys.argv[1], sys.argv[2]
names, other = sorted(os.listdir(a)), sorted(os.listdir(b))
got = sorted(g for f in names for g in pieces(f[:-4], other))
if got != other:
    sys.exit("different outputs: %s / %s" % (names, other))
for f in names:
    # a `grads:` input's gradient with microbatches: grad:x@j holds
    # microbatch j's rows, so the pieces in order are the full one
    x = load(os.path.join(a, f))
    y = sum((load(os.path.join(b, g)) for g in pieces(f[:-4], other)), ())
    top = max(max(abs(v) for v in x), 1.0)
    err = max(abs(p - q) for p, q in zip(x, y)) / top
    if len(x) != len(y) or err > 1e-12:
        sys.exit("%s: relative error %g" % (f, err))
PY

# spec with microbatches m (1: none), into $dir/NAME.yaml.
with_micro() { # SPEC M NAME
    sed -e "s/, microbatches: [0-9]*}/}/" -e "s/steps: 1}/steps: 1, microbatches: $2}/" \
        "$1" >"$dir/$3.yaml"
}

# 1. The uniform stack.
with_micro "$stack" 1 stack1
expect 0 0 "" "$meshrt" run --mesh data=1,pipe=1 --save "$dir/ref" "$dir/stack1.yaml"
for cfg in 1:1:1 2:1:2 3:1:3 4:1:4 4:2:2; do
    IFS=: read -r np data pipe <<<"$cfg"
    for m in 1 2 4; do
        with_micro "$stack" "$m" "stack$m"
        out="$dir/s.$np.$data.$pipe.$m"
        expect 0 0 "" "$here/mpirun.sh" "$np" "$meshrt" run --verify \
            --mesh "data=$data,pipe=$pipe" --save "$out" "$dir/stack$m.yaml"
        check "stack on $np ranks {data: $data, pipe: $pipe}, m=$m: verified" \
            grep -q "bytes match the plan" "$dir/stdout"
        check "stack on $np ranks {data: $data, pipe: $pipe}, m=$m: = the full batch" \
            python3 "$dir/agree.py" "$dir/ref" "$out"
    done
done

# 2. The reduced GPT-2, its tied wte across stages.
sed -e 's/^mesh: {data: 2, model: 2}/mesh: {data: 2, pipe: 2}/' \
    -e 's/^dtype: float32/dtype: float64/' \
    -e 's/^layout: {batch: \[data, model\]}/layout: {batch: data, layers: pipe}/' \
    -e '/^layouts:/,$d' "$gpt2" >"$dir/gpt2.yaml"
with_micro "$dir/gpt2.yaml" 1 gpt1
with_micro "$dir/gpt2.yaml" 2 gpt2m
expect 0 0 "" "$meshrt" run --dim "$gdims" --mesh data=1,pipe=1 \
    --save "$dir/gref" "$dir/gpt1.yaml"
for cfg in 2:1:2:2 3:1:3:1 4:2:2:2 4:1:4:1; do
    IFS=: read -r np data pipe m <<<"$cfg"
    spec="$dir/gpt1.yaml"
    [ "$m" = 2 ] && spec="$dir/gpt2m.yaml"
    out="$dir/g.$np.$data.$pipe.$m"
    expect 0 0 "" "$here/mpirun.sh" "$np" "$meshrt" run --verify --dim "$gdims" \
        --mesh "data=$data,pipe=$pipe" --save "$out" "$spec"
    "$meshrt" plan --dim "$gdims" --mesh "data=$data,pipe=$pipe" "$spec" \
        >"$dir/plan" 2>&1
    check "gpt2 {data: $data, pipe: $pipe}, m=$m: the wte goes to the last stage" \
        grep -q "sendrecv  *wte  *over pipe stage 0 -> $((pipe - 1))" "$dir/plan"
    check "gpt2 {data: $data, pipe: $pipe}, m=$m: its gradient's piece comes back" \
        grep -q "sendrecv  *grad:wte[:a-z0-9]* over pipe stage $((pipe - 1)) -> 0" "$dir/plan"
    check "gpt2 on $np ranks {data: $data, pipe: $pipe}, m=$m: = the full batch" \
        python3 "$dir/agree.py" "$dir/gref" "$out"
done

# 3. The point-to-point bytes against the formula.
# (p2p.py PLAN D P M ...: every case's plan in one python3, each case
# that differs from the formula named on its own line)
cat >"$dir/p2p.py" <<'PY'
import json, sys
b, h, L = 16, 32, 8                      # examples/pipeline.yaml's dims
args = sys.argv[1:]
assert args and len(args) % 4 == 0, args
bad = 0
def wrong(D, P, m, msg):
    global bad
    print("p2p bytes of {data: %d, pipe: %d}, m=%d: %s" % (D, P, m, msg))
    bad = 1
for i in range(0, len(args), 4):
    d = json.load(open(args[i]))
    D, P, m = (int(v) for v in args[i + 1:i + 4])
    steps = [s for op in d["ops"] for s in op["steps"] if s["kind"] == "sendrecv"]
    got = sum(s["bytes"] for s in steps)
    want = 2 * (P - 1) * m * (b // (m * D)) * h * 8
    if got != want or len(steps) != 2 * (P - 1) * m:
        wrong(D, P, m, "%d bytes in %d steps, want %d in %d" %
              (got, len(steps), want, 2 * (P - 1) * m))
        continue
    for s in steps:                      # neighbours, forward or back
        if abs(s["stage"] - s["from_stage"]) != 1:
            wrong(D, P, m, "a transfer from stage %d to %d" % (s["from_stage"], s["stage"]))
            break
sys.exit(bad)
PY
p2p=()
for cfg in 1:2 1:4 2:2 1:3 4:2; do
    IFS=: read -r data pipe <<<"$cfg"
    for m in 1 2 4; do
        with_micro "$stack" "$m" "stack$m"
        expect 0 0 "" "$meshrt" plan --json --mesh "data=$data,pipe=$pipe" \
            "$dir/stack$m.yaml"
        mv "$dir/stdout" "$dir/p2p_${data}_${pipe}_$m.json"
        p2p+=("$dir/p2p_${data}_${pipe}_$m.json" "$data" "$pipe" "$m")
    done
done
check "p2p bytes of every {data, pipe} and m = the formula" \
    python3 "$dir/p2p.py" "${p2p[@]}"

# 4. check says which layers each stage holds (the block rule: 8 over 3
# is 3, 3, 2), and no longer that an op is duplicated over the pipe axis.
expect 0 0 "" "$meshrt" check --mesh data=1,pipe=3 "$stack"
check "check lists the stages' layers" grep -qx "pipeline over 'pipe': 3 stages, 4 microbatches (gpipe): stage 0 holds h layers 0-2; stage 1 holds h layers 3-5; stage 2 holds h layers 6-7" "$dir/stdout"

# 5. Rules that make no pipeline: one line with the rule's position.
expect 2 1 "pipeline_two_axes.yaml:4:18: error: a pipeline splits the repeat dim 'layers' over one mesh axis" \
    "$meshrt" plan "$here/specs/pipeline/pipeline_two_axes.yaml"
expect 2 1 "pipeline_axis_splits_dim.yaml:4:27: error: mesh axis 'pipe' is the pipeline's: tensor 'h0.w' may not split its dim 'd' over it" \
    "$meshrt" check "$here/specs/pipeline/pipeline_axis_splits_dim.yaml"

[ "$fail" = 0 ] && echo "pipeline: all checks passed"
exit $fail
