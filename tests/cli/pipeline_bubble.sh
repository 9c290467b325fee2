#!/usr/bin/env bash
# pipeline_bubble.sh MESHRT — the bubble of issue 20's "Done when", on
# examples/pipeline.yaml (a uniform stack of identical blocks, no
# embedding; `grads: [input]` so the first stage's backward is the
# others') under the built-in profile, for p in {2, 4} stages, m in
# {1, 4, 8} microbatches and every schedule (interleaved with v = 2
# where m is a multiple of p), no MPI.  From `plan --json`'s pipeline
# block this test checks:
#   - the stages are identical: every chunk's f_s, b_s and w_s the same
#     (the loss, outside the block, is priced apart in outside_s);
#   - the textbook figure, to 1e-9: bubble_fraction = (p-1)/m for gpipe
#     and 1f1b, (p-1)/(m v) interleaved, computed here from p, m, v;
#     zero_bubble (ZB-H1 as ops/schedule.c orders it: W(j) after
#     B(j + k)) its own: (max(p - m, 0) F + (p - 1) B) / (m (F + B + W))
#     with F, B, W a chunk's times — the first stage idles only while
#     the first input gradient comes back (and while the forward fills
#     when m < p), provided W >= B when m > 1, so that it never waits
#     for the next one (checked);
#   - bubble_fraction and makespan_s against a replay of its own
#     (check.py: each stage's order written out from the papers, each
#     slot's start found by a recursion over its dependencies, not
#     ops/schedule_replay.c's walk), bubble_fraction_p2p with the p2p
#     time, and the plan's modeled time = makespan_s + outside_s;
#   - the loss priced apart: makespan_s + m (its F + B) against a replay
#     with the loss in the last stage's slots (p2p time in): equal for
#     gpipe and interleaved, at most 1% high for 1f1b, 2.5% zero_bubble;
#   - the activations in flight: gpipe m, 1f1b min(p - k, m) on stage k,
#     zero_bubble min(p, m), interleaved's first stage its warm-up + 1;
#     and on tests/specs/cli/pipeline_activations.yaml (activations
#     dominate) each stage's activations_peak to the byte (memory.py).
# A self-test feeds the checker a wrong bubble (main's 0.7113 for p = 4,
# m = 4, 1f1b, before the example was made uniform) and fails unless it
# is rejected.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
spec="$here/../examples/pipeline.yaml"
use_temp_dir
export MESHRT_PROFILE=$dir/no-such-profile.yaml

# sched.py: each stage's order and a replay of it, for check.py (the
# bubble) and memory.py (the activations in flight).
cat >"$dir/sched.py" <<'PY'
import sys
from functools import lru_cache

def orders(kind, p, v, m):
    """Each stage's slots (chunk, micro, phase) in the order it runs them."""
    out = []
    for k in range(p):
        seq = []
        if kind == "gpipe":
            seq = [(k, j, "F") for j in range(m)] + [(k, j, "B") for j in range(m)]
        elif kind in ("1f1b", "interleaved"):
            total = m * v
            def vm(i, fwd):
                local = (i % (p * v)) // p
                if not fwd:
                    local = v - 1 - local
                micro = i if v == 1 else (i // (p * v)) * p + i % p
                return local * p + k, micro
            if kind == "1f1b":
                warm = min(p - k - 1, total)
            else:
                warm = total if m == p else min(2 * (p - k - 1) + (v - 1) * p, total)
            for i in range(warm):
                seq.append(vm(i, True) + ("F",))
            for i in range(total - warm):
                seq.append(vm(warm + i, True) + ("F",))
                seq.append(vm(i, False) + ("B",))
            for i in range(total - warm, total):
                seq.append(vm(i, False) + ("B",))
        else:  # zero_bubble, ZB-H1: W(j) after B(j + k), the rest at the end
            warm, w = min(p - k - 1, m), 0
            seq = [(k, j, "F") for j in range(warm)]
            for i in range(m):
                if warm + i < m:
                    seq.append((k, warm + i, "F"))
                seq.append((k, i, "B"))
                if i >= k:
                    seq.append((k, w, "W")); w += 1
            seq += [(k, j, "W") for j in range(w, m)]
        out.append(seq)
    return out

def replay(kind, p, v, m, chunks, with_p2p):
    C = p * v
    seqs = orders(kind, p, v, m)
    where = {s: (k, i) for k, seq in enumerate(seqs) for i, s in enumerate(seq)}
    zb = kind == "zero_bubble"
    def dur(c, ph):
        ch = chunks[c]
        if ph == "F": return ch["f_s"]
        if ph == "B": return ch["b_s"] + (0 if zb else ch["w_s"])
        return ch["w_s"]
    def hop(c):  # between chunk c and c + 1
        return chunks[c]["p2p_s"] if with_p2p and c % p != (c + 1) % p else 0
    sys.setrecursionlimit(100000)
    @lru_cache(maxsize=None)
    def end(s):
        c, j, ph = s
        k, i = where[s]
        t = end(seqs[k][i - 1]) if i else 0
        deps = []
        if ph == "F" and c > 0: deps.append(((c - 1, j, "F"), hop(c - 1)))
        if ph == "B":
            deps.append(((c, j, "F"), 0))
            if c + 1 < C: deps.append(((c + 1, j, "B"), hop(c)))
        if ph == "W": deps.append(((c, j, "B"), 0))
        for d, h in deps:
            t = max(t, end(d) + h)
        return t + dur(c, ph)
    makespan = max(end(seq[-1]) for seq in seqs)
    busy = [sum(dur(c, ph) for c, j, ph in seq) for seq in seqs]
    b = max(busy)
    return makespan, (makespan - b) / b
PY

cat >"$dir/check.py" <<'PY'
import json, sys
from sched import orders, replay

def close(a, b, rel=1e-6):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-30)

fail = 0
def bad(msg):
    global fail
    print("FAIL:", msg); fail = 1

plan = json.load(open(sys.argv[1]))
p, m, kind = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
pp = plan["pipeline"]
got = float(sys.argv[5]) if len(sys.argv) > 5 else pp["bubble_fraction"]
v = pp["virtual_stages"]
case = f"{kind} p={p} m={m} v={v}"
if (pp["stages"], pp["microbatches"], pp["schedule"]) != (p, m, kind):
    bad(f"{case}: the pipeline block says {pp['stages']} stages, {pp['microbatches']} microbatches, {pp['schedule']}")
chunks = pp["chunks"]
for c, ch in enumerate(chunks):
    for key in ("f_s", "b_s", "w_s"):
        if not close(ch[key], chunks[0][key], 1e-12):
            bad(f"{case}: chunk {c}'s {key} {ch[key]} is not chunk 0's {chunks[0][key]}: the stages differ")
    if c < len(chunks) - 1 and not close(ch["p2p_s"], chunks[0]["p2p_s"], 1e-12):
        bad(f"{case}: boundary {c}'s p2p_s {ch['p2p_s']} is not boundary 0's")
span, bubble = replay(kind, p, v, m, chunks, False)
span_p2p, bubble_p2p = replay(kind, p, v, m, chunks, True)
if not close(bubble, got):
    bad(f"{case}: bubble_fraction {got}, the replay here says {bubble}")
if not close(bubble_p2p, pp["bubble_fraction_p2p"]):
    bad(f"{case}: bubble_fraction_p2p {pp['bubble_fraction_p2p']}, the replay here says {bubble_p2p}")
if not close(span_p2p, pp["makespan_s"]):
    bad(f"{case}: makespan_s {pp['makespan_s']}, the replay here says {span_p2p}")
if not close(plan["totals"]["time_s"], pp["makespan_s"] + pp["outside_s"], 1e-5):
    bad(f"{case}: modeled time {plan['totals']['time_s']} is not makespan + outside")
# The loss, priced apart: its steps per microbatch (mse's forward and
# backward on the last stage, found by name) inside the last chunk's F
# and B, replayed with the p2p time, against makespan + m (F + B): equal
# under gpipe and interleaved (the last stage never waits once started),
# at most 1% high under 1f1b (a round trip's transfers), 2.5% under
# zero_bubble (its bubbles absorb some of the loss).
import re
lf = sum(o["time_s"] for o in plan["ops"] if o["phase"] == "forward" and
         re.fullmatch(r"loss:(diff|square|mean_sum)(@\d+)?|loss@\d+", o["out"])) / m
lb = sum(o["time_s"] for o in plan["ops"] if
         re.fullmatch(r"grad:loss:(diff|square|mean_sum)(@\d+)?", o["out"])) / m
if not lf > 0 or not lb > 0:
    bad(f"{case}: no loss steps found by name (forward {lf}, backward {lb})")
inside = [dict(ch) for ch in chunks]
inside[-1]["f_s"] += lf
inside[-1]["b_s"] += lb
span_in, _ = replay(kind, p, v, m, inside, True)
apart = pp["makespan_s"] + m * (lf + lb)
high = {"gpipe": 1e-9, "interleaved": 1e-9, "1f1b": 0.01, "zero_bubble": 0.025}[kind]
if not span_in * (1 - 1e-9) <= apart <= span_in * (1 + high):
    bad(f"{case}: makespan + the loss apart {apart}, with the loss in its slots {span_in}: more than {high:.1%} apart")
if kind != "zero_bubble":
    formula, which = (p - 1) / (m * v), "(p-1)/(m v)"
else:
    F, B, W = (chunks[0][k] for k in ("f_s", "b_s", "w_s"))
    if m > 1 and W < B:
        bad(f"{case}: W {W} < B {B}: the ZB-H1 figure below does not hold")
    formula = (max(p - m, 0) * F + (p - 1) * B) / (m * (F + B + W))
    which = "(max(p-m,0) F + (p-1) B)/(m (F+B+W))"
if not close(got, formula, 1e-9):
    bad(f"{case}: bubble_fraction {got} is not {which} = {formula}")
fl = pp["in_flight"]
want = {"gpipe": [m] * p, "1f1b": [min(p - k, m) for k in range(p)],
        "zero_bubble": [min(p, m)] * p}.get(kind)
if kind == "interleaved":
    warm = m * v if m == p else min(2 * (p - 1) + (v - 1) * p, m * v)
    want = [min(warm + 1, m * v)] + fl[1:]
if fl != want:
    bad(f"{case}: activations in flight {fl}, expected {want}")
print(f"{case}: bubble {pp['bubble_fraction']:.6f} = {which} = {formula:.6f}, with p2p {pp['bubble_fraction_p2p']:.4f}, makespan {pp['makespan_s']:.4g} s + outside {pp['outside_s']:.4g} s; the loss apart {max(0.0, 100 * (apart / span_in - 1)):.2f}% above it in its slots")
sys.exit(fail)
PY

# memory.py PLAN P M KIND: the activations in flight of
# tests/specs/cli/pipeline_activations.yaml, walked here over each
# stage's order (sched.py).  What the backward pass reads, per layer and
# microbatch (float64): x (w1's gradient), f0 (gelu's) and f (w2's), so
# a chunk of Lc layers saves Lc (b/m)(d + 2 d_ff) 8 bytes in its F and
# frees them in its B; with zero_bubble B frees f0 and W the rest (the
# weight gradients read x and f).  The first layer's x on the first
# stage is the input, held from the start of the step to its last
# reader; the last stage also saves mse's difference, (b/m) d 8 bytes,
# to its B, and holds the 8-byte seed grad:loss.  The peak is the most
# live after an F (nothing saved is made elsewhere).  For gpipe and
# 1f1b it is also checked in closed form: the count in flight times one
# microbatch's saved bytes of the stage, plus the inputs and the seed.
cat >"$dir/memory.py" <<'PY'
import json, sys
from sched import orders
plan = json.load(open(sys.argv[1]))
p, m, kind = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
b, d, dff, L, e = 256, 8, 32, 8, 8   # the spec's dims, float64
pp = plan["pipeline"]
v = pp["virtual_stages"]
C, Lc, bm = p * v, L // (p * v), b // m
inp, diff = bm * d * e, bm * d * e
def frees(c, ph):
    """Bytes of chunk c's activations (inputs apart) slot ph frees."""
    f0 = Lc * bm * dff * e + (diff if c == C - 1 else 0)
    rest = Lc * bm * (d + dff) * e - (inp if c == 0 else 0)
    if kind != "zero_bubble":
        return f0 + rest if ph == "B" else 0
    return {"B": f0, "W": rest}.get(ph, 0)
want = []
for k, seq in enumerate(orders(kind, p, v, m)):
    last = "W" if kind == "zero_bubble" else "B"
    live = (m * inp if k == 0 else 0) + (8 if k == p - 1 else 0)
    peak = live
    for c, j, ph in seq:
        if ph == "F":
            live += frees(c, "B") + frees(c, "W")
            peak = max(peak, live)
        else:
            live -= frees(c, ph) + (inp if c == 0 and ph == last else 0)
    want.append(peak)
got = pp["activations_peak"]
ok = got == want
# gpipe and 1f1b, closed form: the count in flight (m; min(p - k, m))
# times one microbatch's saved bytes S per stage, the first stage's
# inputs held all m from the start, the last's seed.
if kind in ("gpipe", "1f1b"):
    for k in range(p):
        n = m if kind == "gpipe" else min(p - k, m)
        S = frees(k, "B")
        form = n * S + (m * inp if k == 0 else 0) + (8 if k == p - 1 else 0)
        if got[k] != form:
            print(f"FAIL: {kind} p={p} m={m}: stage {k}'s peak {got[k]} is not {n} in flight x {S} bytes (+ inputs, seed) = {form}")
            ok = False
print(f"{kind} p={p} m={m} v={v}: activations in flight {pp['in_flight']}, peak per stage {got}{'' if ok else ', expected ' + str(want)}")
json.dump({"peak": got, "live_peak": plan["memory"]["live_peak"]}, open(sys.argv[1] + ".mem", "w"))
sys.exit(0 if ok else 1)
PY

# plan_case P M KIND: the example on P stages with M microbatches.
plan_case() {
    local p=$1 m=$2 kind=$3 v=1
    [ "$kind" = interleaved ] && v=2
    sed "s/microbatches: 4}/microbatches: $m, schedule: $kind, virtual_stages: $v}/" \
        "$spec" >"$dir/spec.yaml"
    "$meshrt" plan "$dir/spec.yaml" --mesh "data=1,pipe=$p" --json \
        >"$dir/plan.json" 2>"$dir/err" ||
        { bad "plan $kind p=$p m=$m: $(cat "$dir/err")"; return 1; }
}

# The self-test: a wrong bubble must be rejected.
plan_case 4 4 1f1b &&
    python3 "$dir/check.py" "$dir/plan.json" 4 4 1f1b 0.711298014 >/dev/null &&
    bad "the checker takes a bubble of 0.7113 for p = 4, m = 4, 1f1b"
n=0
for p in 2 4; do
    for m in 1 4 8; do
        for kind in gpipe 1f1b interleaved zero_bubble; do
            [ "$kind" = interleaved ] && [ $((m % p)) != 0 ] && continue
            plan_case "$p" "$m" "$kind" || continue
            python3 "$dir/check.py" "$dir/plan.json" "$p" "$m" "$kind" || fail=1
            n=$((n + 1))
        done
    done
done
# The memory in flight, on a spec whose memory is its activations: each
# stage's peak as walked here, and 1f1b's below gpipe's (on every stage
# where p - k < m, and the rank's live peak).
act="$here/specs/cli/pipeline_activations.yaml"
for p in 2 4; do
    for m in 4 8; do
        for kind in gpipe 1f1b interleaved zero_bubble; do
            v=1
            [ "$kind" = interleaved ] && v=2
            sed "s/microbatches: 8}/microbatches: $m, schedule: $kind, virtual_stages: $v}/" \
                "$act" >"$dir/act.yaml"
            "$meshrt" plan "$dir/act.yaml" --mesh "data=1,pipe=$p" --json \
                >"$dir/act.$kind.json" 2>"$dir/err" ||
                { bad "plan the activations' spec $kind p=$p m=$m: $(cat "$dir/err")"; continue; }
            python3 "$dir/memory.py" "$dir/act.$kind.json" "$p" "$m" "$kind" || fail=1
            n=$((n + 1))
        done
        python3 - "$dir/act.gpipe.json.mem" "$dir/act.1f1b.json.mem" "$p" "$m" <<'PY' || fail=1
import json, sys
g, o = (json.load(open(f)) for f in sys.argv[1:3])
p, m = int(sys.argv[3]), int(sys.argv[4])
lower = [k for k in range(p) if p - k < m and not o["peak"][k] < g["peak"][k]]
if lower or not o["live_peak"] < g["live_peak"]:
    sys.exit(f"FAIL: p={p} m={m}: 1f1b's activations {o['peak']} (live peak {o['live_peak']}) not below gpipe's {g['peak']} ({g['live_peak']})")
PY
    done
done
# interleaved with m not a multiple of p: one error line at train:.
sed "s/microbatches: 4}/microbatches: 2, schedule: interleaved, virtual_stages: 2}/" \
    "$spec" >"$dir/two.yaml"
expect 2 1 "two.yaml:[0-9]+:[0-9]+: error: schedule interleaved needs the microbatches \(2\) to be a multiple of the stages \(4\)" \
    "$meshrt" plan "$dir/two.yaml"
echo "pipeline_bubble: $n cases"
exit $fail
