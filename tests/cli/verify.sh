#!/usr/bin/env bash
# verify.sh MESHRT NP — `meshrt run --verify` through the command line on
# specs whose results are NaN or infinite where the unsharded reference's
# are too (tests/specs/verify/), on NP ranks (meson runs it for NP = 1, 2,
# 3 and 4; the mesh is {data: NP} or, for 4, {data: 2, model: 2}):
#   - nonfinite.yaml: exit 0, every output "ok", and the report counts
#     the elements that are NaN or infinite in both;
#   - inf_loss.yaml, a training spec whose loss is inf at step 1 and NaN
#     at step 2: the loss of each step and the loss output say ok alike
#     (before, the step losses said FAILED and the output ok), and the
#     finite differences say they could not be taken;
#   - zero_gradient.yaml, whose bias gradient grad:c is zero in exact
#     arithmetic: its finite differences and its output verify, against
#     the magnitude summed into it (the gradient's own size is rounding
#     noise: before, both checks said FAILED);
#   - zero_gradient_adam_bf16.yaml, that bias trained by Adam in
#     bfloat16: its second moment c:v:next, the square of the gradient's
#     noise, verifies against the square of its magnitude (before, on
#     the first-order 2 |g| m(g) at the reference's |g|, it said FAILED),
#     and the moment of the real gradient w:v:next keeps a magnitude
#     below 1 (its terms are squares of gradients below 1);
#   - with --json (inf_loss.yaml, at 2 ranks only), the output is strict
#     JSON (a non-finite number is a string) and every check is "ok":
#     true.
# The wrong results that --verify must catch are in mpi_verify.c.
set -uo pipefail
meshrt=$1
np=$2
. "$(dirname "$0")/../lib.sh"
specs=$here/specs/verify
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# run NP MESH SPEC ARGS...: a verified run that must exit 0; its report
# in $out.
run() {
    local np=$1 mesh=$2 spec=$3; shift 3
    if ! timeout 120 "$here/mpirun.sh" "$np" "$meshrt" run "$specs/$spec" \
         --mesh "$mesh" --verify "$@" >"$out" 2>&1; then
        echo "FAIL: $spec on {$mesh} $*: exit status not 0"; cat "$out"
        fail=1; return 1
    fi
}

# has SPEC MESH REGEX: some line of the report matches.
has() {
    if ! grep -Eq -e "$3" "$out"; then
        echo "FAIL: $1 on {$2}: no line matches: $3"; cat "$out"; fail=1
    fi
}

mesh=data=$np,model=1
[ "$np" = 4 ] && mesh=data=2,model=2
if run "$np" "$mesh" nonfinite.yaml; then
    for t in y z q ys; do
        has nonfinite.yaml "$mesh" "^verify $t: max relative error 0 at .*, [0-9]+ NaN or infinite in both: ok$"
    done
    has nonfinite.yaml "$mesh" "^verify ym: .*: ok$"
    ! grep -q FAILED "$out" || { echo "FAIL: nonfinite.yaml on {$mesh}"; cat "$out"; fail=1; }
fi
if run "$np" "$mesh" inf_loss.yaml; then
    has inf_loss.yaml "$mesh" "^verify loss of step 1: inf, unsharded inf \(relative error 0, tolerance 1e-09\): ok$"
    has inf_loss.yaml "$mesh" "^verify loss of step 2: nan, unsharded nan \(relative error 0, tolerance 1e-09\): ok$"
    has inf_loss.yaml "$mesh" "^verify loss: max relative error 0 at loss: nan, unsharded nan .*: ok$"
    has inf_loss.yaml "$mesh" "^finite differences grad:w: not checked: the loss is not finite"
    ! grep -q FAILED "$out" || { echo "FAIL: inf_loss.yaml on {$mesh}"; cat "$out"; fail=1; }
fi
if run "$np" "$mesh" zero_gradient.yaml; then
    has zero_gradient.yaml "$mesh" "^finite differences grad:c: .*\(tolerance 1e-05 of [0-9.e+-]+, the magnitude summed into it\); 6 elements: ok$"
    has zero_gradient.yaml "$mesh" "^verify grad:c: .*, the magnitude summed into it\); 12 elements: ok$"
    ! grep -q FAILED "$out" || { echo "FAIL: zero_gradient.yaml on {$mesh}"; cat "$out"; fail=1; }
fi
if run "$np" "$mesh" zero_gradient_adam_bf16.yaml; then
    has zero_gradient_adam_bf16.yaml "$mesh" "^verify c:v:next: .*, the magnitude summed into it\); 12 elements: ok$"
    has zero_gradient_adam_bf16.yaml "$mesh" "^verify w:v:next: .*\(tolerance [0-9.e+-]+ of 0\.[0-9]+(e-[0-9]+)?, the magnitude summed into it\); 32 elements: ok$"
    ! grep -q FAILED "$out" || { echo "FAIL: zero_gradient_adam_bf16.yaml on {$mesh}"; cat "$out"; fail=1; }
fi

# Strict JSON: Python's json accepts bare NaN and Infinity unless told not
# to; meshrt must write neither (nor C's inf and nan).
for spec in inf_loss.yaml; do
    [ "$np" = 2 ] || break
    run 2 data=2,model=1 "$spec" --json || continue
    if ! python3 -c '
import json, sys
def bare(c):
    raise ValueError("bare " + c)
r = json.load(open(sys.argv[1]), parse_constant=bare)
checks = r["verify"] + r.get("verify_losses", []) + r.get("finite_differences", [])
assert checks and all(c["ok"] is True for c in checks), "a check is not ok"
if "losses" in r:
    assert r["losses"] == [None, None], r["losses"]
    assert r["verify_losses"][0]["reference"] is None
y = [c for c in r["verify"] if c["tensor"] in ("y", "loss")][0]
assert y["nonfinite"] >= 1 and y["worst"]["at"] is not None
' "$out"; then
        echo "FAIL: $spec --json"; cat "$out"; fail=1
    fi
done

[ $fail = 0 ] && echo "verify.sh: ok ($np ranks, {$mesh})"
exit $fail
