#!/usr/bin/env bash
# alts.sh MESHRT — `layouts:` alternatives that carry a mesh, per-tensor,
# per-op and gradient layouts (issue 10, item 3).
#
# 1. examples/zero.yaml (DDP, ZeRO-3 with and without
#    reshard_after_forward, ZeRO-2, Megatron), with `compare --json` on
#    the meshes 2x2, 4x1 and 1x4: the wire bytes of each phase equal the
#    formulas of docs/tutorial.md, section 3.7, exactly (the cost model's
#    wire bytes are exact formulas of the group sizes: an all-reduce
#    2(p-1)/p, a reduce-scatter (p-1)/p of the whole buffer, an
#    all-gather (p-1) shards), so DDP : ZeRO-3 per step (2 : 3) is
#    checked exactly; the weight gradients of ZeRO-3 are reduce-scattered
#    (no all-reduce), those of DDP all-reduced; ZeRO-3 all-gathers both
#    weights again in the backward pass and zero3_keep does not, and
#    zero3's peak memory is below zero3_keep's.
# 2. tests/specs/alts/flat.yaml: on an alternative's own one-axis
#    mesh, ZeRO-3 reduce-scatters each gradient in ONE collective handed
#    the whole gradient, with half the wire bytes of DDP's all-reduce.
#    tests/specs/alts/entries.yaml: per-tensor, per-op and gradient layouts.
# 3. Runs verified against the unsharded reference (float64, --verify,
#    bytes handed to MPI equal to the plan's) at 1, 2, 3 and 4 ranks.
set -euo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
zero=$here/../examples/zero.yaml
entries=$here/specs/alts/entries.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for mesh in data=2,model=2 data=4,model=1 data=1,model=4; do
    "$meshrt" compare "$zero" --mesh "$mesh" --json "$tmp/compare@$mesh.json" >/dev/null
    for l in ddp zero3 zero3_keep megatron; do
        "$meshrt" plan "$zero" --mesh "$mesh" --layout "$l" --json >"$tmp/$l@$mesh.json"
    done
done
"$meshrt" plan "$here/specs/alts/flat.yaml" --layout flat --json >"$tmp/flat.json"
python3 - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
b, d, f = 96, 24, 48          # examples/zero.yaml's dims
P, w = 2 * d * f, 8           # parameter words; float64
fail = 0
def check(what, got, want):
    global fail
    ok = got == want
    fail |= not ok
    print("%s: %s %s, formula %s" % ("ok" if ok else "FAIL", what, got, want))
for mesh, (r, c) in [("data=2,model=2", (2, 2)), ("data=4,model=1", (4, 1)),
                     ("data=1,model=4", (1, 4))]:
    n = r * c
    ar = lambda p, words: 2 * (p - 1) * words * w // p   # all-reduce
    rs = lambda p, words: (p - 1) * words * w // p       # reduce-scatter
    ag = rs                                              # all-gather, same total
    want = {  # phase -> wire bytes per rank
        "ddp":        (ar(n, 1), ar(n, P), 0),
        "zero3":      (ag(n, P) + ar(n, 1), rs(n, P) + ag(n, P), 0),
        "zero3_keep": (ag(n, P) + ar(n, 1), rs(n, P), 0),
        "zero2":      (ar(n, 1), rs(n, P), ag(n, P)),
        "megatron":   (ar(c, b // r * d) + ar(r, 1),
                       ar(r, P // c) + ar(c, b // r * d), 0),  # y, dL/dx
    }
    got = {l["name"]: l for l in json.load(open("%s/compare@%s.json" % (tmp, mesh)))["layouts"]}
    for name, phases in want.items():
        g = tuple(got[name]["phases"][ph]["wire_bytes"] for ph in ("forward", "backward", "update"))
        check("%s on %s: wire bytes (forward, backward, update)" % (name, mesh), g, phases)
    check("DDP : ZeRO-3 : ZeRO-3 keep wire bytes per step on %s" % mesh,
          tuple(got[l]["wire_bytes"] for l in ("ddp", "zero3", "zero3_keep")),
          (2 * (n - 1) * (P + 1) * w // n, (n - 1) * (3 * P + 2) * w // n,
           2 * (n - 1) * (P + 1) * w // n))
    mem = {l: got[l]["peak_memory"] for l in ("zero3", "zero3_keep")}
    check("zero3 peak memory below zero3_keep's on %s" % mesh,
          mem["zero3"] < mem["zero3_keep"], n > 1)
    for name, again in [("zero3", ["w1", "w2"]), ("zero3_keep", [])]:
        plan = json.load(open("%s/%s@%s.json" % (tmp, name, mesh)))
        gathered = sorted(set(c["tensor"] for op in plan["ops"]
                              if op["phase"] == "backward"
                              for c in op["collectives"]
                              if c["kind"] == "allgather"))
        check("%s on %s: weights all-gathered in the backward pass" % (name, mesh),
              gathered, again if n > 1 else [])
    for name, kind in [("ddp", "allreduce"), ("zero3", "reduce_scatter")]:
        plan = json.load(open("%s/%s@%s.json" % (tmp, name, mesh)))
        kinds = sorted(set(c["kind"] for op in plan["ops"] for c in op["collectives"]
                           if c["tensor"] in ("grad:w1", "grad:w2")))
        check("%s on %s: collectives of the weight gradients" % (name, mesh),
              kinds, [kind] if n > 1 else [])
# flat.yaml, `flat` (mesh {all: 4}): one reduce-scatter per gradient,
# handed the whole gradient, wire (n-1)/n of it: half an all-reduce's.
plan = json.load(open("%s/flat.json" % tmp))
for g, words in [("grad:w1", 12 * 24), ("grad:w2", 24 * 12)]:
    cs = [(c["kind"], c["group"], c["bytes"], c["wire_bytes"])
          for op in plan["ops"] for c in op["collectives"] if c["tensor"] == g]
    check("flat: collectives of %s" % g, cs,
          [("reduce_scatter", 4, words * w, 3 * words * w // 4)])
sys.exit(fail)
PY

# run SPEC NP MESH LAYOUT: verified, bytes as planned.
run() {
    local out
    if out=$("$here/mpirun.sh" "$2" "$meshrt" run "$1" --mesh "$3" --layout "$4" --verify 2>&1) &&
       grep -q "bytes match the plan" <<<"$out"; then
        echo "ok: $(basename "$1") --layout $4 on $3 ($2 ranks) verifies"
    else
        echo "FAIL: $(basename "$1") --layout $4 on $3 ($2 ranks)"; echo "$out"; fail=1
    fi
}
for np_mesh in "1 data=1,model=1" "2 data=1,model=2" "3 data=1,model=3" "4 data=2,model=2"; do
    read -r np mesh <<<"$np_mesh"
    run "$zero" "$np" "$mesh" zero3
    run "$zero" "$np" "$mesh" zero3_keep
    run "$entries" "$np" "$mesh" per_op
    run "$entries" "$np" "$mesh" grad_only
done
# flat has a mesh of its own, of 4 ranks
out=$("$here/mpirun.sh" 4 "$meshrt" run "$here/specs/alts/flat.yaml" --layout flat --verify 2>&1) &&
    grep -q "bytes match the plan" <<<"$out" && echo "ok: flat (4 ranks) verifies" ||
    { echo "FAIL: flat (4 ranks)"; echo "$out"; fail=1; }
exit $fail
