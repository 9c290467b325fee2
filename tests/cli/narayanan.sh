#!/usr/bin/env bash
# narayanan.sh MESHRT — the terms of Narayanan et al. (2021), "Efficient
# Large-Scale Language Model Training on GPU Clusters Using Megatron-LM",
# for examples/gpt3.yaml's `tp_pp_dp` plan (t = 8 inside a node, p = 8
# stages across nodes, d = 8; 8 microbatches of b = 1536/(d m) = 24
# sequences; bfloat16 activations, float32 gradients, Adam, ZeRO-1 over
# data, full recomputation), computed here from the dims alone and
# compared with `plan --json`, term by term.  Where meshrt moves other
# bytes than the paper's formula, both are computed and the difference
# is stated (never meshrt adjusted to the formula):
#  1. point-to-point: per stage boundary and microbatch one send forward
#     and one backward of b s h elements (2 bytes) — the activation whole,
#     as every rank of the model group holds it (meshrt does not use the
#     paper's scatter/gather optimisation, which sends b s h / t and
#     all-gathers it on the next stage); plus the tied wte: its bfloat16
#     shard sent once from the first stage to the last, and the head's
#     piece of its gradient sent back once per microbatch (float32);
#  2. tensor parallelism, per layer and microbatch: 2 all-reduces of
#     b s h forward and 2 backward (the paper's), 2(t-1)/t of 2 b s h
#     bytes on the wire each, plus the re-run's 2 (full recomputation
#     repeats the forward ones in the backward pass); the embedding's 1
#     and the tied head's 1 per microbatch, the cross-entropy's 3 of b s;
#  3. data parallelism, per stage: the gradients all-reduced over d,
#     2(d-1)/d of 4 Psi_stage bytes, then ZeRO-1's all-gather of the
#     updated bfloat16 parameters, (d-1)/d of 2 Psi_stage (the paper's
#     distributed optimizer reduce-scatters instead: (d-1)/d of 4
#     Psi_stage); meshrt reduces the gradients of the vectors (layer
#     norms, biases) and of wpe once per microbatch, m times, where the
#     matrices' are reduced once per step: stated and computed;
#  4. the bubble: (p-1)/m for 1F1B, exactly;
#  and, on examples/pipeline.yaml with Adam, the point-to-point bytes are
#  SGD's: the optimizer's update runs on its parameter's stage, nothing of
#  it is sent (it used to run on the last stage).
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
spec="$here/../examples/gpt3.yaml"
use_temp_dir

"$meshrt" plan "$spec" --layout tp_pp_dp --machine dgx-a100 --ranks-per-node 8 \
    --json >"$dir/3d.json" 2>"$dir/3d.err"
rc=$?
[ $rc = 0 ] || { [ $rc = 1 ] && grep -q "it does not fit" "$dir/3d.err"; } ||
    { bad "plan --layout tp_pp_dp failed (exit $rc)"; cat "$dir/3d.err"; }

check "Narayanan et al.'s terms" python3 - "$dir/3d.json" <<'PY'
import json, sys
from fractions import Fraction as F
d = json.load(open(sys.argv[1]))
L, h, V, S, f, a = 96, 12288, 51200, 2048, 49152, 96
B, t, p, dd, m = 1536, 8, 8, 8, 8
b = B // (dd * m)                       # sequences per microbatch
bad, rows = [], []
def row(term, formula, meshrt, note=""):
    rows.append((term, formula, meshrt, note))
steps = [(op["phase"], st) for op in d["ops"] for st in op["steps"]]
def sel(kind, axis, phase=None):
    return [st for ph, st in steps if st["kind"] == kind and st["axes"] == [axis]
            and (phase is None or ph == phase)]

# 1. point to point
act = 2 * b * S * h
p2p = sel("sendrecv", "pipe")
acts = [st for st in p2p if "wte" not in st["tensor"]]
want = 2 * (p - 1) * m
if sorted(st["bytes"] for st in acts) != [act] * want:
    bad.append("p2p activations: %d sends %s, want %d of b s h * 2 = %d"
               % (len(acts), sorted({st["bytes"] for st in acts}), want, act))
wte = [st for st in p2p if "wte" in st["tensor"]]
want_wte = [2 * V // t * h] + [4 * V // t * h] * m
if sorted(st["bytes"] for st in wte) != sorted(want_wte):
    bad.append("p2p of the tied wte: %s, want %s" % (sorted(st["bytes"] for st in wte), want_wte))
fw = sorted(st["tensor"].split("@")[0] for ph, st in steps
            if st["kind"] == "sendrecv" and ph == "forward" and "wte" not in st["tensor"])
if fw != sorted(["h%d.out" % (L // p * k - 1) for k in range(1, p)] * m):
    bad.append("forward sends: %s, want each stage's last layer's out" % fw[:4])
if d["pipeline"]["p2p_bytes"] != sum(st["bytes"] for st in p2p):
    bad.append("pipeline.p2p_bytes %d, the sends' sum %d" % (d["pipeline"]["p2p_bytes"],
               sum(st["bytes"] for st in p2p)))
row("p2p per boundary and microbatch (each way)", "b s h * 2 = %d (scatter/gather: / t = %d)"
    % (act, act // t), act, "the activation whole")
row("p2p per step, all boundaries", "2 (p-1) m b s h * 2 = %d" % (want * act),
    sum(st["bytes"] for st in acts), "+ wte %d" % sum(want_wte))

# 2. tensor parallelism over model
fwd = sorted(st["bytes"] for st in sel("allreduce", "model", "forward"))
bwd = sorted(st["bytes"] for st in sel("allreduce", "model", "backward"))
want_f = sorted([act] * (2 * L + 1) * m + [2 * b * S] * 3 * m)
want_b = sorted([act] * (2 * L + 2 * L + 1) * m)
if fwd != want_f:
    bad.append("TP forward all-reduces: %d, want %d" % (len(fwd), len(want_f)))
if bwd != want_b:
    bad.append("TP backward all-reduces: %d, want %d (2 + 2 re-run per layer)"
               % (len(bwd), len(want_b)))
wire = F(2 * (t - 1), t) * act
got_w = {st["wire_bytes"] for st in sel("allreduce", "model") if st["bytes"] == act}
if got_w != {wire}:
    bad.append("TP all-reduce wire bytes %s, 2(t-1)/t * 2bsh = %s" % (got_w, wire))
row("TP all-reduces per layer per microbatch", "2 forward + 2 backward", "2 + 2 + 2",
    "the re-run's 2 (recompute)")
row("TP all-reduce, wire bytes", "2(t-1)/t * 2 b s h = %s" % wire, min(got_w) if got_w else None)

# 3. data parallelism, per stage (stage k holds layers 12k .. 12k+11)
mats = [h*h // t] * 4 + [h*f // t] * 2                  # q k v o, w1 w2
vecs = [h // t] * 3 + [f // t] + [h] * 6                # bq bk bv b1, ln, bo b2
lay = L // p
for k in (0, p - 1):
    psi_m = lay * sum(mats) + (V * h // t if k == 0 else 0)
    psi_v = lay * sum(vecs) + (S * h if k == 0 else 0) + (2 * h if k == p - 1 else 0)
    ar = [st for st in sel("allreduce", "data", "backward") if st.get("stage") == k]
    got = sum(st["wire_bytes"] for st in ar)
    formula = F(2 * (dd - 1), dd) * 4 * (psi_m + psi_v)
    extra = F(2 * (dd - 1), dd) * 4 * (m - 1) * psi_v
    if got != formula + extra:
        bad.append("stage %d gradient all-reduces: %s on the wire, formula %s + the "
                   "vectors' and wpe's per-microbatch %s" % (k, got, formula, extra))
    ag = [st for ph, st in steps if ph == "update" and st["kind"] == "allgather"
          and st.get("stage") == k]
    got_ag = sum(st["wire_bytes"] for st in ag)
    want_ag = F(dd - 1, dd) * 2 * (psi_m + psi_v)
    if got_ag != want_ag:
        bad.append("stage %d ZeRO-1 all-gathers %s, (d-1)/d * 2 Psi = %s" % (k, got_ag, want_ag))
    row("stage %d: DP gradient all-reduce (wire)" % k, "2(d-1)/d * 4 Psi_stage = %s" % formula,
        got, "+ %s: vectors and wpe reduced per microbatch" % extra)
    row("stage %d: ZeRO-1 parameter all-gather (wire)" % k, "(d-1)/d * 2 Psi_stage = %s" % want_ag,
        got_ag, "the distributed optimizer's reduce-scatter: %s" % (F(dd - 1, dd) * 4 * (psi_m + psi_v)))

# 4. the bubble
bub = d["pipeline"]["bubble_fraction"]
if abs(bub - (p - 1) / m) > 1e-9:
    bad.append("bubble %s, (p-1)/m = %s" % (bub, (p - 1) / m))
row("bubble", "(p-1)/m = %s" % ((p - 1) / m), bub)
for r in rows:
    print("  %-44s %-52s %-16s %s" % tuple(str(x) for x in r))
print("\n".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PY

# Adam's update on its parameter's stage: the same point-to-point bytes
# as SGD's (examples/pipeline.yaml)
pipe="$here/../examples/pipeline.yaml"
sed 's/^train: {\(.*\)}$/train: {\1, optimizer: adam}/' "$pipe" >"$dir/adam.yaml"
grep -q 'optimizer: adam}' "$dir/adam.yaml" || bad "no adam in the copy of pipeline.yaml"
sgd=$("$meshrt" plan "$pipe" --layout pp --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pipeline"]["p2p_bytes"])')
adam=$("$meshrt" plan "$dir/adam.yaml" --layout pp --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pipeline"]["p2p_bytes"])')
[ -n "$sgd" ] && [ "$sgd" = "$adam" ] ||
    bad "pipeline.yaml: $adam bytes point to point with Adam, $sgd with SGD (Adam's update sent between stages?)"
exit $fail
