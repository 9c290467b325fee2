#!/usr/bin/env bash
# grad_sum.sh MESHRT — the plan must not depend on how the same math is
# written (issue 10, item 6).  Pairs of specs in tests/specs/grad_sum/
# compute the same thing, written differently (x renamed before or after
# the K/V projections of an attention block; a tanh of x written between
# or before two projections of x).  dL/dx arrives by several paths, its
# contributions pending over `model`: on every mesh of 1-4 ranks both
# plans of a pair have the same collectives for dL/dx, one all-reduce
# when `model` splits something (none on one rank).  The same specs are
# run and verified at 1-4 ranks by mpi_ops (tests grad_sum_np1..4).
set -euo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
specs=$here/specs/grad_sum

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
meshes="data=1,model=1 data=1,model=2 data=1,model=3 data=2,model=2"
for f in "$specs"/*.yaml; do
    for mesh in $meshes; do
        "$meshrt" plan "$f" --mesh "$mesh" --json >"$tmp/$(basename "$f" .yaml)@$mesh.json"
    done
done
# For each pair and mesh: the collectives of dL/dx's pieces (tensors
# grad:x, grad:x:..., and grad:xk... of the renamed x), as (count,
# bytes, kinds), equal in both, and one all-reduce where model > 1.
python3 - "$tmp" $meshes <<'PY'
import json, re, sys
tmp, meshes = sys.argv[1], sys.argv[2:]
def grad_x(spec, mesh):
    with open("%s/%s@%s.json" % (tmp, spec, mesh)) as f:
        plan = json.load(f)
    cs = [c for op in plan["ops"] for c in op["collectives"]
          if re.match(r"grad:xk?(:|$)", c["tensor"])]
    return (len(cs), sum(c["bytes"] for c in cs),
            ",".join(sorted(set(c["kind"] for c in cs))) or "-")
fail = 0
for a, b in [("rename_after", "rename_before"), ("order_split", "order_first")]:
    for mesh in meshes:
        ga, gb = grad_x(a, mesh), grad_x(b, mesh)
        want = (0, "-") if mesh.endswith("model=1") else (1, "allreduce")
        if ga != gb or (ga[0], ga[2]) != want:
            print("FAIL: dL/dx on %s: %s has %s, %s has %s (collectives, "
                  "bytes, kinds; want %d)" % (mesh, a, ga, b, gb, want[0]))
            fail = 1
        else:
            print("ok: dL/dx on %s: %s in both %s and %s" % (mesh, ga, a, b))
sys.exit(fail)
PY
