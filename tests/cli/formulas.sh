#!/usr/bin/env bash
# formulas.sh MESHRT — the communication formulas of docs/tutorial.md
# against meshrt's plans under --planner meshtf (Mesh-TensorFlow's
# lowering), exactly, in the model only (no MPI).
#
# The quantity checked is the wire bytes per rank: what the ring
# formulas give (an all-reduce of n bytes over p ranks puts
# 2(p-1)/p * n on the wire), plus the bytes handed to MPI (n) of each
# collective.  For a mesh of r rows and c cols, n = r*c, and float32 (4
# bytes) for the MLP:
#   data_parallel   backward 2(n-1)/n * (i*h + h*o) words over all axes,
#                   forward  2(n-1)/n * 1 word (the loss)
#   model_parallel  forward  2(n-1)/n * b*o (y), backward 2(n-1)/n * b*i
#                   (dL/dx: the spec asks for grads: [x])
#   mixed           forward  2(c-1)/c * b/r*o over cols, 2(r-1)/r * 1 word
#                   over rows; backward 2(c-1)/c * b/r*i over cols and
#                   2(r-1)/r * (i*h/c + h*o/c) over rows
# and for the Transformer layer's `combined` partitioning (float64): in
# the forward pass two all-reduces of b/r*l*d_model words over cols (the
# attention output projection and the FFN output) and three of b/r*l
# (the softmax cross-entropy's max, sum and picked logit over the split
# vocab) plus the loss over rows; backward two of b/r*l*d_model over cols
# (dL/dr2, dL/drn) and every weight gradient over rows.
#
# Each case is checked three ways: the multiset of collectives (phase,
# axes, bytes to MPI, wire bytes) of `plan --json`, the wire bytes per
# phase of `compare --json` (meshrt's own forward/backward/update split),
# and the plan's total.  The MLP at two sizes and the Transformer at two
# sizes, each on the meshes 2x2, 4x1 and 1x4 (where an axis of size 1
# carries nothing, and the formulas with r or c = 1 say the same).  A
# self-test first feeds deliberately wrong formulas and fails unless the
# checker rejects them.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
examples="$here/../examples"
use_temp_dir

cat >"$dir/check.py" <<'PY'
"""Formulas for the MLP and the Transformer layer against meshrt's plans."""
import json, re, sys
from collections import Counter
from fractions import Fraction

def allreduce(p, n):
    """(bytes to MPI, wire bytes) of a ring all-reduce of n bytes over p."""
    return (n, Fraction(2 * (p - 1), p) * n)

def axes_of(sizes, names):
    """The axes of the group: those of size > 1, in the rule's order."""
    return ",".join(a for a in names if sizes[a] > 1)

def expect(coll, phase, sizes, names, nbytes, ring=True):
    """Adds one all-reduce over `names` to the expected list, if it moves."""
    p = 1
    for a in names:
        p *= sizes[a]
    if p == 1:
        return
    n, wire = allreduce(p, nbytes)
    if not ring:            # a wrong formula, for the self-test
        wire = Fraction(nbytes)
    coll.append((phase, axes_of(sizes, names), n, wire))

def mlp_expected(layout, d, sizes, bad=None):
    b, i, h, o = d["batch"], d["d_in"], d["hidden"], d["d_out"]
    r, c, e = sizes["rows"], sizes["cols"], 4
    ring = bad != "ring"
    coll = []
    both = ["rows", "cols"]
    if layout == "data_parallel":
        if bad != "loss":
            expect(coll, "forward", sizes, both, 1 * e, ring)
        expect(coll, "backward", sizes, both, i * h * e, ring)   # dL/dw1
        expect(coll, "backward", sizes, both, h * o * e, ring)   # dL/dw2
    elif layout == "model_parallel":
        expect(coll, "forward", sizes, both, b * o * e, ring)    # y
        if bad != "grad_x":
            expect(coll, "backward", sizes, both, b * i * e, ring)  # dL/dx
    elif layout == "mixed":
        expect(coll, "forward", sizes, ["cols"], b // r * o * e, ring)
        if bad != "loss":
            expect(coll, "forward", sizes, ["rows"], 1 * e, ring)
        if bad != "grad_x":
            expect(coll, "backward", sizes, ["cols"], b // r * i * e, ring)
        expect(coll, "backward", sizes, ["rows"], i * h // c * e, ring)
        expect(coll, "backward", sizes, ["rows"], h * o // c * e, ring)
    else:
        raise SystemExit("unknown layout " + layout)
    return coll

def tf_expected(d, sizes, bad=None):
    b, l, dm = d["batch"], d["length"], d["d_model"]
    H, dk, dff, V = d["heads"], d["d_k"], d["d_ff"], d["vocab"]
    r, c, e = sizes["rows"], sizes["cols"], 8
    act = b // r * l * dm * e           # one activation, b/r*l*d_model words
    small = b // r * l * e              # one value per position
    if bad == "act":
        act = b * l * dm * e            # forgetting that batch is split
    coll = []
    for _ in ("a", "f2"):
        expect(coll, "forward", sizes, ["cols"], act)
    for _ in ("loss:max", "loss:sum", "loss:picked"):
        expect(coll, "forward", sizes, ["cols"], small)
    expect(coll, "forward", sizes, ["rows"], 1 * e)
    for _ in ("grad:r2", "grad:rn"):
        expect(coll, "backward", sizes, ["cols"], act)
    for w in (dm * H * dk, dm * H * dk, dm * H * dk, H * dk * dm,
              dm * dff, dff * dm, dm * V):
        expect(coll, "backward", sizes, ["rows"], w // c * e)
    return coll, act, small

def phase_of(out):
    if out.startswith("grad:"):
        return "backward"
    if out.endswith(":next"):
        return "update"
    return "forward"

def actual(plan):
    coll, names = [], []
    for op in plan["ops"]:
        for s in op["collectives"]:
            w = Fraction(str(s["wire_bytes"]))
            coll.append((phase_of(op["out"]), ",".join(s["axes"]), s["bytes"], w))
            names.append((phase_of(op["out"]), s["kind"], s["tensor"],
                          ",".join(s["axes"]), s["bytes"], w))
    return coll, names

def fmt(c):
    return "%s over %s: %d bytes to MPI, %s on the wire" % (
        c[0], c[1] or "-", c[2], c[3])

def sums(coll, key):
    out = Counter()
    for c in coll:
        out[key(c)] += c[3]
    return out

def compare(what, exp, plan, phases):
    """Returns a list of mismatch messages (empty if all agree)."""
    got, named = actual(plan)
    errs = []
    if Counter(exp) != Counter(got):
        errs.append("%s: collectives differ" % what)
        for c in sorted((Counter(exp) - Counter(got)).elements()):
            errs.append("  expected, not in the plan: " + fmt(c))
        for c in sorted((Counter(got) - Counter(exp)).elements()):
            errs.append("  in the plan, not expected: " + fmt(c))
        errs.append("  the plan's collectives:")
        for n in named:
            errs.append("    %s %s %s over %s: %d bytes, wire %s" % n)
    for key, label in ((lambda c: c[0], "phase"), (lambda c: c[1], "axis set")):
        e, g = sums(exp, key), sums(got, key)
        for k in sorted(set(e) | set(g)):
            if e[k] != g[k]:
                errs.append("%s: wire bytes in %s %s: formula %s, plan %s"
                            % (what, label, k, e[k], g[k]))
    total = sum((c[3] for c in exp), Fraction(0))
    if Fraction(str(plan["totals"]["wire_bytes"])) != total:
        errs.append("%s: total wire bytes: formula %s, plan %s"
                    % (what, total, plan["totals"]["wire_bytes"]))
    if phases is not None:
        e = sums(exp, lambda c: c[0])
        for ph in ("forward", "backward", "update"):
            w = Fraction(str(phases[ph]["wire_bytes"]))
            if w != e[ph]:
                errs.append("%s: compare's %s wire bytes: formula %s, meshrt %s"
                            % (what, ph, e[ph], w))
    return errs

def load(path):
    with open(path) as f:
        return json.load(f)

def layout_row(cmp, name):
    for row in cmp["layouts"]:
        if row["name"] == name:
            if not row["ok"]:
                raise SystemExit("compare: layout %s failed: %s" % (name, row["error"]))
            return row["phases"]
    raise SystemExit("compare: no layout " + name)

def parse(args):
    """dims=k:v,... mesh=r,c then FILE arguments."""
    d = dict((k, int(v)) for k, v in
             (kv.split(":") for kv in args[0].split("=", 1)[1].split(",")))
    r, c = (int(x) for x in args[1].split("=", 1)[1].split(","))
    return d, {"rows": r, "cols": c}

def report(label, errs, detail):
    if errs:
        print("FAIL: " + label)
        for m in errs:
            print("  " + m)
        return 1
    print("ok: %s: %s" % (label, detail))
    return 0

def cmd_mlp(args):
    d, sizes = parse(args)
    cmp = load(args[2])
    fail = 0
    for layout, path in zip(("data_parallel", "model_parallel", "mixed"), args[3:6]):
        plan = load(path)
        if plan["mesh"] != sizes or plan["dtype"] != "float32":
            raise SystemExit("plan is for %s %s" % (plan["mesh"], plan["dtype"]))
        exp = mlp_expected(layout, d, sizes)
        label = "mlp %s %dx%d %s" % (args[0], sizes["rows"], sizes["cols"], layout)
        byph = sums(exp, lambda c: c[0])
        fail |= report(label, compare(label, exp, plan, layout_row(cmp, layout)),
                       "wire forward %s, backward %s, update %s" % (
                           byph["forward"], byph["backward"], byph["update"]))
    return fail

def cmd_tf(args):
    d, sizes = parse(args)
    plan = load(args[2])
    cmp = load(args[3])
    if plan["mesh"] != sizes or plan["dtype"] != "float64":
        raise SystemExit("plan is for %s %s" % (plan["mesh"], plan["dtype"]))
    exp, act, small = tf_expected(d, sizes)
    label = "transformer %s %dx%d combined" % (args[0], sizes["rows"], sizes["cols"])
    errs = []
    # The forward activation all-reduces, on their own: two of
    # b/r*l*d_model words over cols, three of b/r*l.
    got, named = actual(plan)
    fwd_cols = [c for c in got if c[0] == "forward" and c[1] == "cols"]
    want_n = 2 if sizes["cols"] > 1 else 0
    big = [c for c in fwd_cols if c[2] == act]
    lil = [c for c in fwd_cols if c[2] == small]
    wire_act = allreduce(sizes["cols"], act)[1]
    wire_small = allreduce(sizes["cols"], small)[1]
    if len(big) != want_n or any(c[3] != wire_act for c in big):
        errs.append("forward activation all-reduces over cols: expected %d of %d "
                    "bytes (wire %s each), plan has %s"
                    % (want_n, act, wire_act, [fmt(c) for c in fwd_cols]))
    if len(lil) != (3 if sizes["cols"] > 1 else 0) or any(c[3] != wire_small for c in lil):
        errs.append("forward loss all-reduces over cols: expected %d of %d bytes "
                    "(wire %s each), plan has %s"
                    % (3 if sizes["cols"] > 1 else 0, small, wire_small,
                       [fmt(c) for c in fwd_cols]))
    if len(fwd_cols) != len(big) + len(lil):
        errs.append("other forward collectives over cols: %s" % [fmt(c) for c in fwd_cols])
    errs += compare(label, exp, plan, layout_row(cmp, "combined"))
    byph = sums(exp, lambda c: c[0])
    return report(label, errs, "%d+%d forward all-reduces of %d and %d bytes over "
                  "cols; wire forward %s, backward %s"
                  % (len(big), len(lil), act, small, byph["forward"], byph["backward"]))

def cmd_selftest(args):
    """Wrong formulas must be rejected (args as for mlp, and tf's files)."""
    d, sizes = parse(args)
    cmp = load(args[2])
    plans = dict(zip(("data_parallel", "model_parallel", "mixed"),
                     (load(p) for p in args[3:6])))
    fail = 0
    for bad in ("ring", "loss", "grad_x"):
        caught = sum(bool(compare("x", mlp_expected(l, d, sizes, bad), p,
                                  layout_row(cmp, l)))
                     for l, p in plans.items())
        if caught == 0:
            print("FAIL: self-test: the wrong MLP formula '%s' passes" % bad)
            fail = 1
        else:
            print("ok: self-test: the wrong MLP formula '%s' is rejected "
                  "in %d of 3 layouts" % (bad, caught))
    td, tsizes = parse(args[6:8])
    tplan, tcmp = load(args[8]), load(args[9])
    exp, _, _ = tf_expected(td, tsizes, "act")
    if not compare("x", exp, tplan, layout_row(tcmp, "combined")):
        print("FAIL: self-test: the wrong Transformer formula passes")
        fail = 1
    else:
        print("ok: self-test: the wrong Transformer formula is rejected")
    return fail

# One case a line of the file argv[1]: a command and its arguments.
fail = 0
with open(sys.argv[1]) as f:
    for line in f:
        cmd, *args = line.split()
        fail |= {"mlp": cmd_mlp, "tf": cmd_tf, "selftest": cmd_selftest}[cmd](args)
sys.exit(fail)
PY

# resize SPEC OUT KEY:VAL,...: a copy of SPEC with other dims:, checked.
resize() {
    python3 - "$@" <<'PY'
import re, sys
src, out, dims = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(src).read()
new = "dims: {" + ", ".join(kv.replace(":", ": ") for kv in dims.split(",")) + "}"
text, n = re.subn(r"^dims: \{[^}]*\}", new, text, flags=re.M | re.S)
if n != 1:
    sys.exit("resize: %s: expected one dims: block, found %d" % (src, n))
open(out, "w").write(text)
PY
}

# plan_json OUT SPEC ARGS...: meshrt plan --json, or fail loudly.
plan_json() {
    local out=$1; shift
    if ! "$meshrt" plan "$@" --planner meshtf --json >"$out" 2>"$dir/err"; then
        echo "FAIL: meshrt plan $* --planner meshtf"; cat "$dir/err"; fail=1; return 1
    fi
}
compare_json() {
    local out=$1; shift
    if ! "$meshrt" compare "$@" --planner meshtf --json "$out" >/dev/null 2>"$dir/err"; then
        echo "FAIL: meshrt compare $* --planner meshtf"; cat "$dir/err"; fail=1; return 1
    fi
}

meshes="2,2 4,1 1,4"
mlp_sizes="batch:64,d_in:128,hidden:256,d_out:64 batch:32,d_in:64,hidden:128,d_out:32"
tf_sizes="batch:8,length:16,klen:16,d_model:32,heads:4,d_k:8,d_ff:128,vocab:64
batch:4,length:8,klen:8,d_model:16,heads:4,d_k:4,d_ff:64,vocab:32"

k=0
for dims in $mlp_sizes; do
    k=$((k + 1))
    spec="$dir/mlp$k.yaml"
    resize "$examples/mlp.yaml" "$spec" "$dims" || { fail=1; continue; }
    for m in $meshes; do
        mesh="rows=${m%,*},cols=${m#*,}"
        tag="mlp$k-${m/,/x}"
        ok=1
        compare_json "$dir/$tag-cmp.json" "$spec" --mesh "$mesh" || ok=0
        for l in data_parallel model_parallel mixed; do
            plan_json "$dir/$tag-$l.json" "$spec" --mesh "$mesh" --layout "$l" || ok=0
        done
        [ $ok = 1 ] || continue
        echo mlp "dims=$dims" "mesh=$m" "$dir/$tag-cmp.json" "$dir/$tag-data_parallel.json" \
            "$dir/$tag-model_parallel.json" "$dir/$tag-mixed.json" >>"$dir/cases"
    done
done

k=0
for dims in $tf_sizes; do
    k=$((k + 1))
    spec="$dir/tf$k.yaml"
    resize "$examples/transformer_layer.yaml" "$spec" "$dims" || { fail=1; continue; }
    for m in $meshes; do
        mesh="rows=${m%,*},cols=${m#*,}"
        tag="tf$k-${m/,/x}"
        compare_json "$dir/$tag-cmp.json" "$spec" --mesh "$mesh" || continue
        plan_json "$dir/$tag.json" "$spec" --mesh "$mesh" --layout combined || continue
        echo tf "dims=$dims" "mesh=$m" "$dir/$tag.json" "$dir/$tag-cmp.json" >>"$dir/cases"
    done
done

# The checker must be able to fail: wrong formulas against real plans
# (the first size of each, on the 2x2 mesh).
mdims=${mlp_sizes%% *}
tdims=${tf_sizes%%$'\n'*}
echo selftest "dims=$mdims" "mesh=2,2" "$dir/mlp1-2x2-cmp.json" \
    "$dir/mlp1-2x2-data_parallel.json" "$dir/mlp1-2x2-model_parallel.json" \
    "$dir/mlp1-2x2-mixed.json" "dims=$tdims" "mesh=2,2" "$dir/tf1-2x2.json" \
    "$dir/tf1-2x2-cmp.json" >>"$dir/cases"

python3 "$dir/check.py" "$dir/cases" || fail=1

[ $fail = 0 ] && echo "formulas: all checks pass"
exit $fail
