#!/usr/bin/env bash
# pinned_run.sh MESHRT — pinned plans run: every example under examples/
# with `--planner rules`, and the pinned ddp, zero2 and megatron of
# examples/zero.yaml (pin: true, the default planner), run at 1, 2, 3 and
# 4 ranks with --verify: the results equal the unsharded reference and
# the bytes handed to MPI equal the plan's.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
use_temp_dir

# mesh NP SPEC: the spec's axes, NP ranks on its second axis (2x2 at 4).
mesh() {
    python3 - "$1" "$2" <<'PY'
import sys, yaml
np, axes = int(sys.argv[1]), list(yaml.safe_load(open(sys.argv[2]))["mesh"])
size = [1] * len(axes)
if np == 4 and len(axes) > 1:
    size[0] = size[1] = 2
else:
    size[min(1, len(axes) - 1)] = np
print(",".join("%s=%d" % (a, n) for a, n in zip(axes, size)))
PY
}
# run NP SPEC ARGS...: verified, bytes as planned, planned pinned.
run() {
    local np=$1 spec=$2 m out
    shift 2
    m=$(mesh "$np" "$spec")
    # a spec too large to run here (gpt2.yaml: GiBs a rank) is planned
    # pinned only: said so, not counted as run
    if ! "$meshrt" plan "$spec" --mesh "$m" "$@" --json >"$dir/p.json" 2>/dev/null ||
       python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["totals"]["peak_memory"] < 2**30)' "$dir/p.json"; then
        grep -q '"planner": "rules"' "$dir/p.json" ||
            bad "$(basename "$spec") $* is not planned pinned"
        echo "not run (over 1 GiB a rank): $(basename "$spec") $* on $m"
        return
    fi
    if out=$("$here/mpirun.sh" "$np" "$meshrt" run "$spec" --mesh "$m" --verify "$@" 2>&1) &&
       grep -q "bytes match the plan" <<<"$out" &&
       ! grep -q "verify .*: FAIL" <<<"$out"; then
        echo "ok: $(basename "$spec") $* on $m ($np ranks)"
    else
        bad "$(basename "$spec") $* on $m ($np ranks)"; echo "$out"
    fi
    out=$("$meshrt" plan "$spec" --mesh "$m" "$@" 2>&1)
    grep -q "^planner rules;" <<<"$out" ||
        bad "$(basename "$spec") $* is not planned pinned"
}
for np in 1 2 3 4; do
    for spec in "$here"/../examples/*.yaml; do
        run "$np" "$spec" --planner rules
    done
    for l in ddp zero2 megatron; do
        run "$np" "$here/../examples/zero.yaml" --layout "$l"
    done
done
exit $fail
