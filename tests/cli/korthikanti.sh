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
# computes the paper's formulas from the dims (A bytes per activation,
# the dtype's; 1 byte per dropout-mask element, meshrt's uint8 masks as
# the paper's), term by term: each term is one tensor meshrt keeps, and
# the list of tensors layer 0 keeps (plan --json:
# blocks[0].saved_per_layer_values) must be exactly the terms', each to
# the byte, their sum the printed figure, and that figure the formula
# plus only the differences docs/memory.md names:
#   - each layer norm's 1/std (A*s*b per layer norm, over t with SP),
#   - with SP, the gathered QKV and MLP inputs (xn, rn) kept whole,
#   - under full recompute, the dropout masks (inputs, not regenerated).
#   no parallelism   sbh(34) + 5as^2b    -> A(16sbh + 2as^2b) + (2sbh + as^2b)
#   tensor parallel  sbh(10 + 24/t + 5as/(ht))
#   + sequence par.  sbh/t (34 + 5as/h)
#   full recompute   2sbh (2sbh/t with sequence parallelism)
# A copy with `regather: true` on the block gathers xn and rn again in
# the backward pass (the paper's choice): there only the 1/std remain,
# and the plan hands MPI more all-gather bytes than without it.
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
    sed 's/^    name: h  .*/&\n    regather: true/' "$dir/gpt2_kept_$dt.yaml" >"$dir/gpt2_rg_$dt.yaml"
    grep -q '^    regather: true' "$dir/gpt2_rg_$dt.yaml" || bad "no regather: in the copy"
done

cat >"$dir/check.py" <<'PY'
"""Korthikanti et al.'s Table 2, term by term, against meshrt's saved
tensors (plan --json: blocks[0].saved_per_layer_values)."""
import json, sys

s, b, h, a = (int(x) for x in sys.argv[1:5])
off = int(sys.argv[5])          # self-test: elements added to the formula
files = sys.argv[6:]
sbh, as2b, sb = s * b * h, a * s * s * b, s * b
SIZE = {"float32": 4, "float64": 8, "bfloat16": 2, "float16": 2}


def table2(t, sp, rc, A, M):
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


def terms(t, sp, rc, A, rg=False):
    """{meshrt's tensor: (the paper's bytes for its term, meshrt's
    bytes, the named difference or '')} per layer; masks 1 byte."""
    q = t if sp else 1                  # what runs on sequence shards
    mask = {"attn.p:mask": as2b // t, "attn.a:mask": sbh // q,
            "mlp.y:mask": sbh // q}
    if rc:  # the carry, and the masks: inputs, kept (docs/memory.md, 5)
        kept = {"out": (A * sbh // q, A * sbh // q, "")}
        for k, v in mask.items():
            kept[k] = (0, v, "full recompute: the masks are inputs")
        return kept
    gathered = "SP: the gathered copy kept (docs/memory.md, 4)"
    rows = {
        "ln1.n:centered": (A * sbh // q, A * sbh // q, ""),
        "ln1.n:rstd": (0, A * sb // q, "1/std per row (docs/memory.md, 2)"),
        "xn": (A * sbh // q, A * sbh // (q if rg else 1),
               gathered if sp and t > 1 and not rg else ""),
        "attn.q": (A * sbh // t, A * sbh // t, ""),
        "attn.k": (A * sbh // t, A * sbh // t, ""),
        "attn.p0": (A * as2b // t, A * as2b // t, ""),
        "attn.p": (A * as2b // t, A * as2b // t, ""),
        "attn.v": (A * sbh // t, A * sbh // t, ""),
        "attn.o": (A * sbh // t, A * sbh // t, ""),
        "ln2.n:centered": (A * sbh // q, A * sbh // q, ""),
        "ln2.n:rstd": (0, A * sb // q, "1/std per row (docs/memory.md, 2)"),
        "rn": (A * sbh // q, A * sbh // (q if rg else 1),
               gathered if sp and t > 1 and not rg else ""),
        "mlp.f": (4 * A * sbh // t, 4 * A * sbh // t, ""),
        "mlp.g": (4 * A * sbh // t, 4 * A * sbh // t, ""),
    }
    for k, v in mask.items():
        rows[k] = (v, v, "")
    return rows


bad = 0
# the terms against Table 2 as printed (16-bit, bytes), and summed
for t in (1, 2, 4, 8):
    table = {(False, False): sbh * 34 + 5 * as2b if t == 1 else
             sbh * (10 + 24 / t + 5 * a * s / (h * t)),
             (True, False): sbh / t * (34 + 5 * a * s / h),
             (False, True): 2 * sbh, (True, True): 2 * sbh / t}
    for (sp, rc), v in table.items():
        paper = sum(x[0] for x in terms(t, sp, rc, 2).values())
        if table2(t, sp, rc, 2, 1) != v or paper != v:
            print(f"t={t} sp={sp} rc={rc}: formula {table2(t, sp, rc, 2, 1)}"
                  f", terms {paper}, Table 2 {v}: WRONG")
            bad += 1
for f in files:
    t, alt, rc, _ = f.split("/")[-1][:-5].split("-")
    t, sp, rg, rc = int(t), alt == "tp_sp", rc == "rg", rc == "rc"
    d = json.load(open(f))
    A = SIZE[d["dtype"]]
    blk = d["blocks"][0]
    got = {v["tensor"][3:]: v["bytes"] for v in blk["saved_per_layer_values"]
           if v["tensor"].startswith("h0.")}
    rows = terms(t, sp, rc, A, rg)
    paper = table2(t, sp, rc, A, 1) + off * A
    want = {k: v[1] for k, v in rows.items()}
    extra = {k: v[1] - v[0] for k, v in rows.items() if v[2]}
    total = blk["activations"]["saved_per_layer"]
    ok = (got == want and total == sum(got.values())
          and total == paper + sum(extra.values()))
    print(f"t={t} {alt}{' recompute' if rc else ''}"
          f"{' regather' if rg else ''} {d['dtype']}: paper "
          f"{paper} B (A = {A}, 1-byte masks), meshrt {total} = paper + "
          + " + ".join(f"{v} ({k})" for k, v in extra.items() if v)
          + f": {'ok' if ok else 'WRONG'}")
    if got != want:
        for k in sorted(set(got) | set(want)):
            if got.get(k) != want.get(k):
                print(f"  {k}: meshrt {got.get(k)}, expected {want.get(k)}")
    bad += not ok
    if rc:
        kept = blk["activations"]["without_recompute_per_layer"]
        full = sum(v[1] for v in terms(t, sp, False, A).values())
        if kept != full:
            print(f"  without recompute {kept}, expected {full}: WRONG")
            bad += 1
sys.exit(1 if bad else 0)
PY

for dt in bfloat16 float32; do
    for t in 1 2 4 8; do
        for alt in tp tp_sp; do
            for rc in kept rc rg; do
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
for t in 2 4 8; do
    python3 - "$dir/$t-tp_sp-kept-bfloat16.json" "$dir/$t-tp_sp-rg-bfloat16.json" <<'PY' ||
import json, sys
def gathered(f):
    return sum(o.get("bytes", 0) for op in json.load(open(f))["ops"]
               for o in op.get("steps", []) if o.get("kind") == "allgather")
kept, again = (gathered(f) for f in sys.argv[1:])
print(f"all-gather bytes/rank: kept {kept}, regather {again}")
sys.exit(0 if again > kept else 1)
PY
        bad "t=$t: regather: true moves no more than without it"
done
[ $fail = 0 ] && echo "korthikanti: all checks pass"
exit $fail
