#!/usr/bin/env bash
# pipeline_bubble.sh MESHRT — the bubble of issue 20's "Done when", on
# examples/pipeline.yaml (a uniform stack, no embedding) under the
# built-in profile, for p in {2, 4} stages, m in {1, 4, 8} microbatches
# and every schedule (interleaved with v = 2 where m is a multiple of
# p), no MPI.  From `plan --json`'s pipeline block, in a replay of its
# own (check.py: each stage's order written out from the papers, each
# slot's start found by a recursion over its dependencies, not
# ops/schedule_replay.c's walk), this test checks:
#   - bubble_fraction is the replay's idle over busy time of the busiest
#     stage with the p2p time hidden, makespan_s the replay with it, and
#     the plan's modeled time makespan_s + outside_s;
#   - the textbook figure: (p-1)/m for gpipe and 1f1b, (p-1)/(m v)
#     interleaved, exactly when the replay is fed uniform stages, and
#     within 10% on the example itself (its last stage also computes the
#     loss, its first no input gradient: the busiest stage is the last,
#     and the others fill and drain a little faster);
#   - the activations in flight: gpipe m, 1f1b min(p - k, m) on stage k,
#     zero_bubble min(p, m), interleaved's first stage its warm-up + 1.
# A self-test feeds the checker a wrong bubble first and fails unless it
# is rejected.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
spec="$here/../examples/pipeline.yaml"
use_temp_dir
export MESHRT_PROFILE=$dir/no-such-profile.yaml

cat >"$dir/check.py" <<'PY'
import json, sys
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

def close(a, b, rel=1e-6):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-30)

fail = 0
def bad(msg):
    global fail
    print("FAIL:", msg); fail = 1

plan = json.load(open(sys.argv[1]))
p, m, kind = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
want_bubble = float(sys.argv[5]) if len(sys.argv) > 5 else None
pp = plan["pipeline"]
v = pp["virtual_stages"]
case = f"{kind} p={p} m={m} v={v}"
if (pp["stages"], pp["microbatches"], pp["schedule"]) != (p, m, kind):
    bad(f"{case}: the pipeline block says {pp['stages']} stages, {pp['microbatches']} microbatches, {pp['schedule']}")
chunks = pp["chunks"]
span, bubble = replay(kind, p, v, m, chunks, False)
span_p2p, _ = replay(kind, p, v, m, chunks, True)
got = want_bubble if want_bubble is not None else pp["bubble_fraction"]
if not close(bubble, got):
    bad(f"{case}: bubble_fraction {got}, the replay here says {bubble}")
if not close(span_p2p, pp["makespan_s"]):
    bad(f"{case}: makespan_s {pp['makespan_s']}, the replay here says {span_p2p}")
if not close(plan["totals"]["time_s"], pp["makespan_s"] + pp["outside_s"], 1e-5):
    bad(f"{case}: modeled time {plan['totals']['time_s']} is not makespan + outside")
if kind != "zero_bubble":
    formula = (p - 1) / (m * v)
    uni = [{"f_s": 1.0 / v, "b_s": 2.0 / v, "w_s": 0, "p2p_s": 0}] * (p * v)
    _, ub = replay(kind, p, v, m, uni, False)
    if not close(ub, formula, 1e-9):
        bad(f"{case}: the replay of uniform stages gives {ub}, not (p-1)/(m v) = {formula}")
    if abs(pp["bubble_fraction"] - formula) > 0.1 * formula:
        bad(f"{case}: bubble_fraction {pp['bubble_fraction']} is not within 10% of (p-1)/(m v) = {formula}")
fl = pp["in_flight"]
want = {"gpipe": [m] * p, "1f1b": [min(p - k, m) for k in range(p)],
        "zero_bubble": [min(p, m)] * p}.get(kind)
if kind == "interleaved":
    warm = m * v if m == p else min(2 * (p - 1) + (v - 1) * p, m * v)
    want = [min(warm + 1, m * v)] + fl[1:]
if fl != want:
    bad(f"{case}: activations in flight {fl}, expected {want}")
print(f"{case}: bubble {pp['bubble_fraction']:.4f} (textbook {(p - 1) / (m * v):.4f}), makespan {pp['makespan_s']:.4g} s")
sys.exit(fail)
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
    python3 "$dir/check.py" "$dir/plan.json" 4 4 1f1b 0.75 >/dev/null &&
    bad "the checker takes a bubble of exactly (p-1)/m for the example"
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
# interleaved with m not a multiple of p: one error line at train:.
sed "s/microbatches: 4}/microbatches: 2, schedule: interleaved, virtual_stages: 2}/" \
    "$spec" >"$dir/two.yaml"
expect 2 1 "two.yaml:[0-9]+:[0-9]+: error: schedule interleaved needs the microbatches \(2\) to be a multiple of the stages \(4\)" \
    "$meshrt" plan "$dir/two.yaml"
echo "pipeline_bubble: $n cases"
exit $fail
