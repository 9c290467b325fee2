#!/usr/bin/env bash
# cli_warnings.sh MESHRT — what the command line says about specs that
# load: `check` warnings (an op duplicated along an unused mesh axis, a
# large replicated tensor) go to stderr at the spec's LINE:COL with exit
# status 0; `expect:` budgets make `plan` and `run` exit 1 with one error
# line per exceeded budget (from rank 0 only); `--layout NAME` picks a
# `layouts:` alternative.  Specs are in tests/specs/cli/.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
specs=$here/specs/cli
use_temp_dir
# expect STATUS LINES REGEX CMD... (lib.sh): exit status, stderr line
# count, and (when LINES > 0) a regex that some stderr line matches.

# (a) an op computed whole on every rank of an axis: at the op, exit 0.
idle="^[^ ]*idle_axis[.]yaml:10:5: warning: op 1 \(y = einsum\) computes the same result on the 2 ranks of each 'model' group: none of its dims is split over 'model'$"
expect 0 1 "$idle" "$meshrt" check "$specs/idle_axis.yaml" --memory 1G
expect 0 1 "$idle" "$meshrt" check "$specs/idle_axis.yaml" --memory 1G --planner meshtf
# A clean spec: nothing on stderr; and the same under its alternatives.
expect 0 0 "" "$meshrt" check "$specs/clean.yaml" --memory 1G
expect 0 0 "" "$meshrt" check "$specs/clean.yaml" --memory 1G --layout dp
expect 0 1 "clean[.]yaml:10:5: warning: op 1 .* 'model' group" \
    "$meshrt" check "$specs/clean.yaml" --memory 1G --layout idle
# A mesh axis of size 1 duplicates nothing.
expect 0 0 "" "$meshrt" check "$specs/idle_axis.yaml" --memory 1G --mesh data=4,model=1

# (b) a replicated tensor over a share of memory: w's shard is 256 bytes,
# kept whole on both 'data' ranks; over 25% of 512 bytes, not of 1024.
repl="^[^ ]*clean[.]yaml:8:3: warning: tensor 'w' is replicated over 'data' \(2 copies of each shard\) and its shard of 256 bytes is over 25% of a rank's memory \(512 bytes\): split one of its dims over 'data'$"
expect 0 1 "$repl" "$meshrt" check "$specs/clean.yaml" --memory 512
expect 0 0 "" "$meshrt" check "$specs/clean.yaml" --memory 1K
expect 0 0 "" "$meshrt" check "$specs/clean.yaml" --memory 512 --replicated-share 0.5
expect 0 1 "over 10% of a rank's memory \(2048 bytes\)" \
    "$meshrt" check "$specs/clean.yaml" --memory 2K --replicated-share 0.1
# Bad values, and the options outside check.
expect 2 1 "--memory needs a positive number" "$meshrt" check "$specs/clean.yaml" --memory 0
expect 2 1 "--memory needs a positive number" "$meshrt" check "$specs/clean.yaml" --memory 4X
expect 2 1 "--replicated-share needs" "$meshrt" check "$specs/clean.yaml" --replicated-share 1.5
expect 2 1 "only valid for 'check'" "$meshrt" plan "$specs/clean.yaml" --memory 1G

# Budgets that hold: plan and run succeed, quietly.
expect 0 0 "" "$meshrt" plan "$specs/budget.yaml"
expect 0 0 "" "$meshrt" plan "$specs/budget.yaml" --planner meshtf
expect 0 0 "" "$here/mpirun.sh" 2 "$meshrt" run "$specs/budget.yaml" --verify
# Budgets that do not: one error each, at its expect:, exit 1.
over="budget_over[.]yaml:11:9: error: the plan hands 256 bytes per rank to MPI, over the budget of 0 \(expect: comm_bytes_max\)$"
peak="budget_over[.]yaml:11:9: error: the plan needs [0-9]+ bytes per rank at its peak, over the budget of 10 \(expect: peak_memory_max\)$"
op="budget_over[.]yaml:10:65: error: op 1 \(y = einsum\) hands 256 bytes per rank to MPI, over the budget of 128 \(expect: comm_bytes_max\)$"
for re in "$over" "$peak" "$op"; do
    expect 1 3 "$re" "$meshrt" plan "$specs/budget_over.yaml"
    expect 1 3 "$re" "$meshrt" plan "$specs/budget_over.yaml" --json
done
for re in "$over" "$peak" "$op"; do
    expect 1 3 "$re" "$here/mpirun.sh" 2 "$meshrt" run "$specs/budget_over.yaml"
done
# On one rank nothing is handed to MPI: only the memory budget fails.
expect 1 1 "$peak" "$here/mpirun.sh" 1 "$meshrt" run "$specs/budget_over.yaml" --mesh data=1

# --layout: an unknown name is a usage error listing the names.
expect 2 1 "^error: unknown layout 'nope' \(the spec's layouts: dp, idle\)$" \
    "$meshrt" plan "$specs/clean.yaml" --layout nope
expect 2 1 "unknown layout 'dp' \(the spec has no layouts: block\)" \
    "$meshrt" check "$specs/budget.yaml" --layout dp
for np in 1 3; do
    expect 2 1 "^error: unknown layout 'nope'" \
        "$here/mpirun.sh" "$np" "$meshrt" run "$specs/clean.yaml" --layout nope
done
expect 0 0 "" "$here/mpirun.sh" 4 "$meshrt" run "$specs/clean.yaml" --layout dp --verify
if ! "$meshrt" plan "$specs/clean.yaml" --layout dp | grep -q "batch/data+model"; then
    echo "FAIL: plan --layout dp does not split batch over data+model"; fail=1
fi

[ $fail = 0 ] && echo "cli warnings: all ok"
exit $fail
