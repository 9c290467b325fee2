#!/usr/bin/env bash
# gpt2.sh MESHRT — examples/gpt2.yaml (GPT-2 small, issue 18):
#  1. its parameter count, computed here from its dims, is what
#     `meshrt check` prints (124,439,808 at full size);
#  2. at full size, `plan --layout dp --mesh data=8,model=1` puts on the
#     wire exactly 2(n-1)/n * 4 * PSI bytes in the backward pass (the
#     gradients, one all-reduce each: the tied wte's once), and only
#     scalars (the loss) in the forward pass;
#  3. at full size, `--layout tp --mesh data=1,model=4` plans Megatron's
#     terms exactly: 2 all-reduces of b*s*h per layer forward and 2
#     backward, the vocab-parallel embedding's one forward, the tied
#     head's one backward, and the cross-entropy's 3 of b*s; `tp_sp`
#     the same volume as all-gathers and reduce-scatters, plus the
#     all-reduces of the layer norms' and shared biases' gradients;
#  4. at full size, `--layout zero3` moves ZeRO-3's bytes, per parameter
#     and in total: (n-1)/n * 4 * PSI gathered forward, as much gathered
#     again and reduce-scattered backward (every parameter gathered again,
#     as FSDP does, the biases too), plus the loss's scalar all-reduce,
#     as the ranks' average (the vocabulary and, over 8, the heads are
#     split unevenly), under the default, an H100 node's and a slow
#     network's profile, on data=8,model=1, data=1,model=4, data=2,model=2;
#  5. the reduced model (its "# test-dims:" line; the vocabulary 61 is
#     split unevenly over 2, 3 and 4 ranks) trains verified in float64 —
#     values against the unsharded run, gradients against finite
#     differences — under every alternative at 1, 2, 3 and 4 ranks;
#  6. `pp` and `tp_pp_dp` (pipelines) with 2 microbatches train verified
#     the same way at 1 to 4 ranks, the pipe axis alone (pipe=2; pipe=3
#     with 3 layers) and with model or data (data=1,model=2,pipe=2;
#     data=2,model=1,pipe=2), the plan's stages and point-to-point bytes
#     what `run` hands MPI (its bytes-match check); and `compare` on
#     data=2,model=2,pipe=2 (8 ranks, a dry run) plans all six
#     alternatives, the two pipelines with 2 stages.
# The formulas are computed here, not read from meshrt.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
spec="$here/../examples/gpt2.yaml"
use_temp_dir

cat >"$dir/terms.py" <<'PY'
import json, sys
from fractions import Fraction
what, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
L, V, S, h, f = 12, 50257, 1024, 768, 3072
b = 8
psi = L * (2*h + 3*h*h + 3*h + h*h + h + 2*h + h*f + f + f*h + h) \
      + V*h + S*h + 2*h
assert psi == 124439808, psi
colls = [(op["phase"], st) for op in d["ops"] for st in op["steps"]
         if st["kind"] in ("allreduce", "allgather", "reduce_scatter",
                           "alltoall")]
def wire(phase):
    return sum(st["wire_bytes"] for p, st in colls if p == phase)
bad = []
if what == "dp":
    n = 8
    want = Fraction(2 * (n - 1), n) * 4 * psi
    if wire("backward") != want:
        bad.append("dp backward wire %d, formula 2(n-1)/n*4*PSI = %s"
                   % (wire("backward"), want))
    # the cross-entropy picks the label's logit with a gather, its
    # gradient a scatter-add: no one-hot [b, s, vocab] is made, and the
    # forward tensors of that size are the logits, z and exp z only
    big = sorted(op["out"] for op in d["ops"] if op["phase"] == "forward"
                 and op["shard"] == [b // n, S, V])
    if big != ["logits", "loss:exp", "loss:shifted"]:
        bad.append("dp: forward tensors of [b, s, vocab]: %s" % big)
    pick = [(op["op"], op["flops"]) for op in d["ops"] if op["out"] == "loss:picked"]
    if pick != [("embedding", 0)]:
        bad.append("dp: loss:picked is %s, not a gather (no flops)" % pick)
    fwd = [st for p, st in colls if p == "forward"]
    if any(st["bytes"] != 4 for st in fwd) or not fwd:
        bad.append("dp forward: %s (expected only scalars)"
                   % [(st["kind"], st["bytes"]) for st in fwd])
elif what == "tp":
    t = 4
    fwd = sorted((st["kind"], st["bytes"]) for p, st in colls
                 if p == "forward")
    want = sorted([("allreduce", b*S*h*4)] * (2*L + 1)
                  + [("allreduce", b*S*4)] * 3)
    if fwd != want:
        bad.append("tp forward %s, Megatron %s" % (fwd, want))
    bwd = sorted((st["kind"], st["bytes"]) for p, st in colls
                 if p == "backward")
    want = [("allreduce", b*S*h*4)] * (2*L + 1)
    if bwd != want:
        bad.append("tp backward %s, Megatron %s" % (bwd, want))
    total = Fraction(2*(t-1), t) * 4 * ((4*L + 2) * b*S*h + 3 * b*S)
    if d["totals"]["wire_bytes"] != total:
        bad.append("tp wire %d, Megatron %s" % (d["totals"]["wire_bytes"], total))
elif what == "tp_sp":
    t = 4
    unit = Fraction(t - 1, t) * 4 * b*S*h    # an all-gather or reduce-scatter
    big = [st for p, st in colls if st["kind"] != "allreduce"]
    kinds = sorted((st["kind"], st["wire_bytes"]) for st in big)
    # per layer 2 all-gathers and 2 reduce-scatters forward, as many
    # backward; the embedding's reduce-scatter and its gradient's
    # all-gather; the head's all-gather and its gradient's reduce-scatter
    want = sorted([("allgather", unit)] * (4*L + 2)
                  + [("reduce_scatter", unit)] * (4*L + 2))
    if kinds != want:
        bad.append("tp_sp gathers and scatters %s, Megatron-SP %s"
                   % (kinds[:4], want[:4]))
    small = sorted(st["bytes"] for p, st in colls if st["kind"] == "allreduce")
    # the cross-entropy's 3 of b*s; the gradients of the parameters the
    # sequence shards share (layer norms' g and b: 2L+1 of them; the
    # biases added on sequence shards, attn.bo and mlp.b2)
    want = sorted([b*S*4] * 3 + [h*4] * (2*(2*L + 1) + 2*L))
    if small != want:
        bad.append("tp_sp all-reduces %s, expected %s" % (small[:6], want[:6]))
elif what == "zero3":
    # ZeRO-3 / FSDP: each parameter all-gathered once forward and once
    # backward, each gradient reduce-scattered: (n-1)/n of its bytes on
    # the wire each time.  Blocks split unevenly (the vocabulary over 4
    # or 8, the heads over 8) differ from rank to rank, and the figures
    # printed are the largest rank's: the formula is the ranks' average,
    # the largest rank's wire bytes scaled by the average rank's share
    # (bytes_total / n) of what it hands to MPI.
    n = d["ranks"]
    blk = {"ln1.g": h, "ln1.b": h, "attn.wq": h*h, "attn.bq": h,
           "attn.wk": h*h, "attn.bk": h, "attn.wv": h*h, "attn.bv": h,
           "attn.wo": h*h, "attn.bo": h, "ln2.g": h, "ln2.b": h,
           "mlp.w1": h*f, "mlp.b1": f, "mlp.w2": f*h, "mlp.b2": h}
    size = {"wte": V*h, "wpe": S*h, "lnf.g": h, "lnf.b": h}
    for i in range(L):
        size.update({"h%d.%s" % (i, k): v for k, v in blk.items()})
    assert sum(size.values()) == psi
    def avg(st):
        return Fraction(st["wire_bytes"]) * st["bytes_total"] / (n * st["bytes"])
    def param(t):       # grad:h3.mlp.b1:d -> h3.mlp.b1
        return t[5:].split(":")[0] if t.startswith("grad:") else t
    got = {}
    loss = []
    for op in d["ops"]:
        for st in op["steps"]:
            if st["kind"] not in ("allreduce", "allgather", "reduce_scatter",
                                  "alltoall"):
                continue
            if st["kind"] == "allreduce" and st["bytes"] == 4 and \
               st["tensor"].startswith("loss") and op["phase"] == "forward":
                loss.append(st["wire_bytes"])
                continue
            k = (op["phase"], st["kind"], param(st["tensor"]))
            got[k] = got.get(k, 0) + avg(st)
    share = Fraction(n - 1, n)
    want = {}
    for t, e in size.items():
        for k in [("forward", "allgather"), ("backward", "allgather"),
                  ("backward", "reduce_scatter")]:
            want[k + (t,)] = share * 4 * e
    for k in sorted(set(got) | set(want)):
        if got.get(k) != want.get(k):
            bad.append("zero3 %s %s of %s: %s bytes on the wire (the ranks' "
                       "average), ZeRO-3 %s" % (k + (got.get(k), want.get(k))))
    if loss != [Fraction(2 * (n - 1), n) * 4]:
        bad.append("zero3 forward: the loss's scalar all-reduce %s, want one "
                   "of 2(n-1)/n*4 = %s" % (loss, Fraction(2 * (n - 1), n) * 4))
    for ph, w in [("forward", share * 4 * psi), ("backward", 2 * share * 4 * psi)]:
        t = sum(v for k, v in got.items() if k[0] == ph)
        if t != w:
            bad.append("zero3 %s: %s, ZeRO-3 %s" % (ph, t, w))
    print("zero3 n=%d: forward %s + the loss %s, backward %s (ZeRO-3: "
          "(n-1)/n*4*PSI = %s and twice that)" % (n,
          sum(v for k, v in got.items() if k[0] == "forward"), loss,
          sum(v for k, v in got.items() if k[0] == "backward"), share * 4 * psi))
print("\n".join(bad[:12]) if bad else "ok")
sys.exit(1 if bad else 0)
PY

cat >"$dir/agree.py" <<'PY'
"""agree.py OUT PREFIX A B REL ABS [PREFIX A B REL ABS]...: for each
group, every line of OUT that starts with PREFIX and reports 'A x, B y'
has |x - y| <= REL |y| + ABS (and at least 30 such lines).  (One
python3 for all the groups of a run: one each was a tenth of the test.)"""
import re, sys
out, groups = sys.argv[1], sys.argv[2:]
assert groups and len(groups) % 5 == 0, groups
lines = open(out).readlines()
failed = 0
for g in range(0, len(groups), 5):
    prefix, a, b, rel, tol = groups[g:g + 5]
    n = bad = 0
    pat = re.compile(r"^%s (\S+): .*%s ?([-0-9.e+]+), %s ([-0-9.e+]+)"
                     % (re.escape(prefix), a, b))
    for l in lines:
        m = pat.search(l)
        if m:
            n += 1
            x, y = float(m.group(2)), float(m.group(3))
            if abs(x - y) > float(rel) * abs(y) + float(tol):
                bad += 1
                print(prefix, m.group(1), x, y)
    if bad or n < 30:
        print("%s: %d of %d lines disagree (at least 30 wanted)" % (prefix, bad, n))
        failed = 1
sys.exit(failed)
PY

# 1. the parameter count
count=$("$meshrt" check "$spec" | sed -n 's/^parameters: \([0-9,]*\) trained.*/\1/p')
[ "$count" = "124,439,808" ] || bad "check prints '$count' parameters, GPT-2 small has 124,439,808"

# 2 and 3. the formulas at full size
"$meshrt" plan "$spec" --layout dp --mesh data=8,model=1 --json >"$dir/dp.json" ||
    bad "plan --layout dp failed"
check "dp: the gradients' bytes are DDP's" python3 "$dir/terms.py" dp "$dir/dp.json"
"$meshrt" plan "$spec" --layout tp --mesh data=1,model=4 --json >"$dir/tp.json" ||
    bad "plan --layout tp failed"
check "tp: Megatron's all-reduces" python3 "$dir/terms.py" tp "$dir/tp.json"
"$meshrt" plan "$spec" --layout tp_sp --mesh data=1,model=4 --json >"$dir/tp_sp.json" ||
    bad "plan --layout tp_sp failed"
check "tp_sp: Megatron's sequence parallelism" python3 "$dir/terms.py" tp_sp "$dir/tp_sp.json"

# ZeRO-3's bytes, 3(n-1)/n * 4 * PSI, under the default profile, an
# H100 node's and a slow network's, at 8 ranks and at 4 (on two meshes)
cat >"$dir/slow.yaml" <<'Y'
# a slow network: 1 GB/s and 50 us a message on every axis
default: {latency_us: 50, bandwidth_GBps: 1}
Y
for prof in default "$here/../profiles/dgx-h100.yaml" "$dir/slow.yaml"; do
    machine=()
    [ "$prof" != default ] && machine=(--machine "$prof")
    for mesh in data=8,model=1 data=1,model=4 data=2,model=2; do
        tag=$(basename "$prof" .yaml)@$mesh
        "$meshrt" plan "$spec" --layout zero3 --mesh "$mesh" "${machine[@]}" \
            --json >"$dir/zero3@$tag.json" || bad "plan --layout zero3 $tag failed"
        check "zero3 $tag: ZeRO-3's bytes" python3 "$dir/terms.py" zero3 "$dir/zero3@$tag.json"
    done
done

# a second --dim adds to the first (it used to replace it)
a=$("$meshrt" plan "$spec" --dim layers=2 --dim vocab=61 --json | grep -c '"op"')
b=$("$meshrt" plan "$spec" --dim layers=2,vocab=61 --json | grep -c '"op"')
c=$("$meshrt" plan "$spec" --dim vocab=61 --json | grep -c '"op"')
[ "$a" = "$b" ] && [ "$a" != "$c" ] ||
    bad "--dim layers=2 --dim vocab=61 plans $a ops, --dim layers=2,vocab=61 $b, --dim vocab=61 $c"

# 4. the reduced model, trained and verified in float64
dims=$(sed -n 's/^# test-dims: *//p' "$spec")
sed 's/^dtype: float32/dtype: float64/' "$spec" >"$dir/gpt2_f64.yaml"
for alt in dp tp tp_sp zero3; do
    for np in 1 2 3 4; do
        case $np in
        1) mesh=data=1,model=1 ;; 2) mesh=data=1,model=2 ;;
        3) mesh=data=1,model=3 ;; 4) mesh=data=2,model=2 ;;
        esac
        out="$dir/run_${alt}_$np.txt"
        "$here/mpirun.sh" "$np" "$meshrt" run "$dir/gpt2_f64.yaml" --layout "$alt" \
            --mesh "$mesh" --dim "$dims" --verify >"$out" 2>&1 ||
            { bad "$alt at $np ranks ($mesh) did not verify:"; grep -i "failed\|error" "$out" | head -5; continue; }
        grep -q '^finite differences grad:wte: .*ok$' "$out" ||
            bad "$alt at $np ranks: no finite-difference check of the tied wte"
        # and in absolute terms, not scaled by the reference's magnitudes
        # (which grow with depth): each reported central difference within
        # 1e-5 of its gradient, plus 1e-8 (a gradient that is 0 in exact
        # arithmetic, as the key bias's, is rounding noise); each compared
        # tensor's reported element within 1e-8 of the unsharded run's,
        # plus 1e-12
        check "$alt at $np ranks: finite differences and values agree" \
            python3 "$dir/agree.py" "$out" "finite differences" difference gradient 1e-5 1e-8 \
            verify "\\): " unsharded 1e-8 1e-12
    done
done

# 6. the pipelines: 2 microbatches (a copy of the spec)
sed 's/^train: {\(.*\)}$/train: {\1, microbatches: 2}/' "$dir/gpt2_f64.yaml" >"$dir/gpt2_pp.yaml"
grep -q 'microbatches: 2}' "$dir/gpt2_pp.yaml" || bad "no microbatches in the copy of the spec"
for run in pp:1:data=1,model=1,pipe=1 pp:2:data=1,model=1,pipe=2 \
           pp:3:data=1,model=1,pipe=3 pp:4:data=2,model=1,pipe=2 \
           tp_pp_dp:2:data=1,model=1,pipe=2 tp_pp_dp:3:data=1,model=1,pipe=3 \
           tp_pp_dp:4:data=1,model=2,pipe=2 tp_pp_dp:4:data=2,model=1,pipe=2; do
    IFS=: read -r alt np mesh <<<"$run"
    pdims=$dims # 2 layers; 3 over 3 stages
    [ "${mesh##*pipe=}" = 3 ] && pdims=${dims/layers=2/layers=3}
    out="$dir/run_${alt}_${np}_$mesh.txt"
    "$here/mpirun.sh" "$np" "$meshrt" run "$dir/gpt2_pp.yaml" --layout "$alt" \
        --mesh "$mesh" --dim "$pdims" --verify >"$out" 2>&1 ||
        { bad "$alt at $np ranks ($mesh) did not verify:"; grep -i "failed\|error" "$out" | head -5; continue; }
    grep -q 'bytes match the plan' "$out" || bad "$alt at $np ranks ($mesh): bytes do not match the plan"
    check "$alt at $np ranks ($mesh): finite differences and values agree" \
        python3 "$dir/agree.py" "$out" "finite differences" difference gradient 1e-5 1e-8 \
        verify "\\): " unsharded 1e-8 1e-12
    stages=${mesh##*pipe=}
    if [ "$stages" -gt 1 ]; then
        "$meshrt" plan "$dir/gpt2_pp.yaml" --layout "$alt" --mesh "$mesh" --dim "$pdims" \
            --json >"$dir/plan_${alt}_$mesh.json" || bad "plan $alt $mesh failed"
        check "$alt $mesh: $stages stages, 2 microbatches, point-to-point bytes" python3 - \
            "$dir/plan_${alt}_$mesh.json" "$stages" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); p = int(sys.argv[2])
pl = d["pipeline"]
sends = sum(st["bytes"] for op in d["ops"] for st in op["steps"] if st["kind"] == "sendrecv")
ok = pl["stages"] == p and pl["microbatches"] == 2 and pl["p2p_bytes"] > 0 and \
     pl["schedule"] == "1f1b"
print(pl["stages"], pl["microbatches"], pl["schedule"], pl["p2p_bytes"], sends)
sys.exit(0 if ok else 1)
PY
    fi
done
"$meshrt" compare "$spec" --mesh data=2,model=2,pipe=2 --csv "$dir/compare.csv" >/dev/null 2>"$dir/compare.err" ||
    { bad "compare on data=2,model=2,pipe=2 failed"; cat "$dir/compare.err"; }
for alt in dp tp tp_sp zero3 pp tp_pp_dp; do
    grep -q "^$alt," "$dir/compare.csv" || bad "compare on 8 ranks: no row for $alt"
done
check "compare on 8 ranks: no row has an error" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = [(r["layout"], r["error"]) for r in rows if r["error"]]
print(bad or "%d rows" % len(rows)); sys.exit(1 if bad or len(rows) < 7 else 0)' "$dir/compare.csv"
"$meshrt" plan "$spec" --layout tp_pp_dp --mesh data=2,model=2,pipe=2 >"$dir/plan8.txt" ||
    bad "plan --layout tp_pp_dp on 8 ranks failed"
grep -q "^pipeline: 2 stages over 'pipe'" "$dir/plan8.txt" ||
    bad "tp_pp_dp on data=2,model=2,pipe=2: $(grep '^pipeline' "$dir/plan8.txt")"
exit $fail
