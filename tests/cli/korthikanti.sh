#!/usr/bin/env bash
# korthikanti.sh MESHRT — activation memory per Transformer layer
# (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
# Transformer Models", Table 2) against meshrt's figure of activations
# saved for the backward pass (plan --json: blocks[].activations), to the
# byte, for t = 1, 2, 4, 8 (no MPI).
#
# The spec is examples/gpt2.yaml in bfloat16 (the paper's 16 bits) and
# in float32 (pre-LN layers with dropout after the
# attention probabilities and on both residual branches, as the paper's
# layer) at small dims on a mesh {data: 1, model: t}: `tp` is Megatron's
# tensor parallelism, `tp_sp` adds sequence parallelism, and a copy with
# `recompute: true` on the block is full recomputation.  The test
# computes the paper's formulas from the dims, in the paper's units (A
# bytes per activation, M per dropout-mask element: the paper's 2 and 1;
# meshrt stores both in the spec's dtype), then adds the differences
# docs/memory.md explains term by term, and compares:
#   no parallelism   sbh(34) + 5as^2b    -> A(16sbh + 2as^2b) + M(2sbh + as^2b)
#   tensor parallel  sbh(10 + 24/t + 5as/(ht))
#   + sequence par.  sbh/t (34 + 5as/h)
#   full recompute   2sbh (2sbh/t with sequence parallelism)
# A self-test first feeds a formula off by one element and fails unless
# the checker rejects it.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
examples="$here/../examples"
use_temp_dir

s=16 b=2 h=64 a=8 dk=8 ff=256
dims="layers=2,vocab=64,length=$s,klen=$s,d_model=$h,heads=$a,d_k=$dk,d_ff=$ff,batch=$b"
for dt in bfloat16 float32; do
    sed "s/^dtype: float32/dtype: $dt/" "$examples/gpt2.yaml" >"$dir/gpt2_kept_$dt.yaml"
    sed 's/^    name: h  .*/&\n    recompute: true/' "$dir/gpt2_kept_$dt.yaml" >"$dir/gpt2_rc_$dt.yaml"
    grep -q '^    recompute: true' "$dir/gpt2_rc_$dt.yaml" || bad "no recompute: in the copy"
done

cat >"$dir/check.py" <<'PY'
"""Korthikanti et al.'s Table 2 plus meshrt's documented differences."""
import json, sys

s, b, h, a = (int(x) for x in sys.argv[1:5])
off = int(sys.argv[5])          # self-test: elements added to the formula
files = sys.argv[6:]
sbh, as2b = s * b * h, a * s * s * b
SIZE = {"float32": 4, "float64": 8, "bfloat16": 2, "float16": 2}


def paper(t, sp, rc, A, M):
    """Table 2 in bytes, with A bytes per activation and M per mask
    element (the paper: A = 2, M = 1)."""
    if rc:
        return A * sbh // (t if sp else 1)
    if sp:
        return (A * (16 * sbh + 2 * as2b) + M * (2 * sbh + as2b)) // t
    # replicated: the layer norms' inputs (2), the QKV and the MLP's first
    # inputs (1 + 1), the residual dropouts' masks; the rest is over t
    return (A * (4 * sbh + (12 * sbh + 2 * as2b) // t)
            + M * (2 * sbh + as2b // t))


def meshrt_extra(t, sp, rc, A, M):
    """docs/memory.md, term by term (bytes)."""
    sb, asb = s * b, a * s * b
    if rc:  # the dropout masks are inputs: kept, not regenerated
        return M * (2 * sbh // (t if sp else 1) + as2b // t)
    q = t if sp else 1
    ln = 2 * A * sb // q                # each layer norm: 1/std
    soft = 0                            # softmax: its output alone
    gathered = 2 * A * (sbh - sbh // t) if sp else 0  # xn, rn kept whole
    return ln + soft + gathered


bad = 0
# the model's terms above against Table 2 as printed (16-bit, bytes)
for t in (1, 2, 4, 8):
    table = {(False, False): sbh * 34 + 5 * as2b if t == 1 else
             sbh * (10 + 24 / t + 5 * a * s / (h * t)),
             (True, False): sbh / t * (34 + 5 * a * s / h),
             (False, True): 2 * sbh, (True, True): 2 * sbh / t}
    for (sp, rc), v in table.items():
        if paper(t, sp, rc, 2, 1) != v:
            print(f"t={t} sp={sp} rc={rc}: terms {paper(t, sp, rc, 2, 1)}"
                  f" against Table 2's {v}: WRONG")
            bad += 1
for f in files:
    t, alt, rc, _ = f.split("/")[-1][:-5].split("-")
    t, sp, rc = int(t), alt == "tp_sp", rc == "rc"
    d = json.load(open(f))
    A = SIZE[d["dtype"]]
    M = 1  # the dropout masks are uint8
    got = d["blocks"][0]["activations"]["saved_per_layer"]
    want = paper(t, sp, rc, A, M) + meshrt_extra(t, sp, rc, A, M) + off * A
    print(f"t={t} {alt}{' recompute' if rc else ''}: paper "
          f"{paper(t, sp, rc, 2, 1)} B at 16 bits "
          f"({paper(t, sp, rc, A, M)} at {d['dtype']}), meshrt {got}, "
          f"expected {want}: {'ok' if got == want else 'WRONG'}")
    bad += got != want
    if rc:
        kept = d["blocks"][0]["activations"]["without_recompute_per_layer"]
        full = paper(t, sp, False, A, M) + meshrt_extra(t, sp, False, A, M)
        if kept != full:
            print(f"  without recompute {kept}, expected {full}: WRONG")
            bad += 1
sys.exit(1 if bad else 0)
PY

for dt in bfloat16 float32; do
    for t in 1 2 4 8; do
        for alt in tp tp_sp; do
            for rc in kept rc; do
                "$meshrt" plan "$dir/gpt2_${rc}_$dt.yaml" --dim "$dims" \
                    --mesh "data=1,model=$t" --layout "$alt" --json \
                    >"$dir/$t-$alt-$rc-$dt.json" || bad "plan t=$t $alt $rc $dt"
            done
        done
    done
done
if python3 "$dir/check.py" $s $b $h $a 1 "$dir"/*.json >/dev/null; then
    bad "self-test: a formula one element off passed"
fi
python3 "$dir/check.py" $s $b $h $a 0 "$dir"/*.json || bad "activation memory"
[ $fail = 0 ] && echo "korthikanti: all checks pass"
exit $fail
