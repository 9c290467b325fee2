#!/usr/bin/env bash
# pipeline_schedules.sh MESHRT — every schedule runs (issue 20's "Done
# when": verified runs on 2-4 ranks, pipe alone and pipe x data, for
# each schedule with m in {1, 2, 4}): examples/pipeline.yaml under 1f1b,
# interleaved (v = 2, where m is a multiple of the stages) and
# zero_bubble trains with `run --verify` (float64, against the unsharded
# reference) on {data: 1, pipe: P} at P = 2, 3, 4 ranks and on
# {data: 2, pipe: 2}, and hands MPI the bytes its plan says.  The steps
# come in each schedule's order (ops/pipeline_order.c), so this is what
# shows that the blocking sends and receives of every order meet.  Then
# run --trace's slots in 1f1b's order, and run --profile's measured
# bubble.
# (gpipe, the default, is tests/cli/pipeline.sh's.)
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
use_temp_dir
stack="$here/../examples/pipeline.yaml"
n=0
for kind in 1f1b interleaved zero_bubble; do
    for cfg in 2:1:2 3:1:3 4:1:4 4:2:2; do
        IFS=: read -r np data pipe <<<"$cfg"
        for m in 1 2 4; do
            v=1
            if [ "$kind" = interleaved ]; then
                [ $((m % pipe)) = 0 ] || continue
                v=2
            fi
            sed "s/microbatches: 4}/microbatches: $m, schedule: $kind, virtual_stages: $v}/" \
                "$stack" >"$dir/s.yaml"
            expect 0 0 "" "$here/mpirun.sh" "$np" "$meshrt" run --verify \
                --mesh "data=$data,pipe=$pipe" "$dir/s.yaml"
            grep -q "bytes match the plan" "$dir/stdout" ||
                bad "$kind on $np ranks {data: $data, pipe: $pipe}, m=$m: no 'bytes match the plan'"
            n=$((n + 1))
        done
    done
done
# run --trace shows the schedule as it ran: on each rank, the slot
# events ("F3": microbatch 3's forward) in the textbook 1f1b order of
# its stage (p = 4, m = 4); run --profile reports the measured bubble
# beside the modeled one.
sed "s/microbatches: 4}/microbatches: 4, schedule: 1f1b}/" "$stack" >"$dir/t.yaml"
expect 0 0 "" "$here/mpirun.sh" 4 "$meshrt" run "$dir/t.yaml" --trace "$dir/trace.json"
python3 - "$dir/trace.json" <<'PY' || bad "run --trace: the slots are not 1f1b's order"
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("cat") == "slot"]
want = ["F0 F1 F2 F3 B0 B1 B2 B3", "F0 F1 F2 B0 F3 B1 B2 B3",
        "F0 F1 B0 F2 B1 F3 B2 B3", "F0 B0 F1 B1 F2 B2 F3 B3"]
for r in range(4):
    got = " ".join(e["name"] for e in sorted((e for e in ev if e["tid"] == r),
                                             key=lambda e: e["ts"]))
    if got != want[r]:
        print(f"rank {r}: {got}, want {want[r]}")
        sys.exit(1)
PY
expect 0 0 "" "$here/mpirun.sh" 4 "$meshrt" run "$dir/t.yaml" --profile
grep -q "^pipeline: bubble measured [0-9.]*% .*, modeled [0-9.]*% with the p2p time hidden" \
    "$dir/stdout" || bad "run --profile: no measured bubble beside the modeled one"
expect 0 0 "" "$here/mpirun.sh" 4 "$meshrt" run "$dir/t.yaml" --profile --json
"$meshrt" plan "$dir/t.yaml" --json >"$dir/plan.json"
python3 - "$dir/stdout" "$dir/plan.json" <<'PY' || bad "run --profile --json: its pipeline block"
import json, sys
run, plan = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
pr = run["pipeline"]
assert pr["busy_s"] > 0 and pr["span_s"] >= pr["busy_s"], pr
assert abs(pr["bubble_fraction"] - plan["pipeline"]["bubble_fraction"]) < 1e-6, pr
PY
echo "pipeline_schedules: $n runs"
exit $fail
