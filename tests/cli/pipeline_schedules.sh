#!/usr/bin/env bash
# pipeline_schedules.sh MESHRT — every schedule runs (issue 20's "Done
# when": verified runs on 2-4 ranks, pipe alone and pipe x data, for
# each schedule with m in {1, 2, 4}): examples/pipeline.yaml under 1f1b,
# interleaved (v = 2, where m is a multiple of the stages) and
# zero_bubble trains with `run --verify` (float64, against the unsharded
# reference) on {data: 1, pipe: P} at P = 2, 3, 4 ranks and on
# {data: 2, pipe: 2}, and hands MPI the bytes its plan says.  The steps
# come in each schedule's order (ops/pipeline_order.c), so this is what
# shows that the blocking sends and receives of every order meet.
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
echo "pipeline_schedules: $n runs"
exit $fail
