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

# Every case ("NP SPEC ARGS..."): the examples with --planner rules and
# zero.yaml's pinned alternatives, at 1-4 ranks.
cases=()
for np in 1 2 3 4; do
    for spec in "$here"/../examples/*.yaml; do
        cases+=("$np $spec --planner rules")
    done
    for l in ddp zero2 megatron; do
        cases+=("$np $here/../examples/zero.yaml --layout $l")
    done
done
# Each case's mesh: the spec's axes, NP ranks on its second axis (2x2 at
# 4); one python3 for all of them (one each was a tenth of the test).
mapfile -t meshes < <(python3 - "${cases[@]}" <<'PY'
import sys, yaml
for case in sys.argv[1:]:
    np, spec = int(case.split()[0]), case.split()[1]
    axes = list(yaml.safe_load(open(spec))["mesh"])
    size = [1] * len(axes)
    if np == 4 and len(axes) > 1:
        size[0] = size[1] = 2
    else:
        size[min(1, len(axes) - 1)] = np
    print(",".join("%s=%d" % (a, n) for a, n in zip(axes, size)))
PY
)
[ ${#meshes[@]} = ${#cases[@]} ] || { bad "meshes of the cases: ${#meshes[@]} for ${#cases[@]}"; exit 1; }
# Every case planned first (plan_I.json, plan_I.rc): a spec too large to
# run here (gpt2.yaml: GiBs a rank) is planned pinned only, said so, not
# counted as run.  big[I] is 1 when case I's plan failed or holds 1 GiB
# or more a rank (one python3 reads every plan).
for i in "${!cases[@]}"; do
    read -r np spec args <<<"${cases[$i]}"
    # shellcheck disable=SC2086
    "$meshrt" plan "$spec" --mesh "${meshes[$i]}" $args --json \
        >"$dir/plan_$i.json" 2>/dev/null
    echo $? >"$dir/plan_$i.rc"
done
mapfile -t big < <(python3 - "$dir" ${#cases[@]} <<'PY'
import json, sys
for i in range(int(sys.argv[2])):
    base = "%s/plan_%d" % (sys.argv[1], i)
    if open(base + ".rc").read().strip() != "0":
        print(1)
        continue
    try:
        print(int(json.load(open(base + ".json"))["totals"]["peak_memory"] >= 2**30))
    except (ValueError, KeyError, TypeError):
        print(0)
PY
)
[ ${#big[@]} = ${#cases[@]} ] || { bad "plans read: ${#big[@]} for ${#cases[@]}"; exit 1; }
# Each case: verified, bytes as planned, planned pinned.
for i in "${!cases[@]}"; do
    read -r np spec args <<<"${cases[$i]}"
    m=${meshes[$i]} name="$(basename "$spec") $args"
    if [ "${big[$i]}" = 1 ]; then
        grep -q '"planner": "rules"' "$dir/plan_$i.json" ||
            bad "$name is not planned pinned"
        echo "not run (over 1 GiB a rank): $name on $m"
        continue
    fi
    # shellcheck disable=SC2086
    if out=$("$here/mpirun.sh" "$np" "$meshrt" run "$spec" --mesh "$m" --verify $args 2>&1) &&
       grep -q "bytes match the plan" <<<"$out" &&
       ! grep -q "verify .*: FAIL" <<<"$out"; then
        echo "ok: $name on $m ($np ranks)"
    else
        bad "$name on $m ($np ranks)"; echo "$out"
    fi
    # shellcheck disable=SC2086
    out=$("$meshrt" plan "$spec" --mesh "$m" $args 2>&1)
    grep -q "^planner rules;" <<<"$out" ||
        bad "$name is not planned pinned"
done
exit $fail
