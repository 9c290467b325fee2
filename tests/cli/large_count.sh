#!/usr/bin/env bash
# large_count.sh MESHRT — every MPI call of the executor with counts past
# the int limit, made small: with MESHRT_MPI_MAX_COUNT=7 each count above
# 7 elements goes the way a count above INT_MAX does (runtime/
# large_count.c: one element of a derived type, blocks of 7 and a
# remainder, user-defined sum and max), so the all-reduces (sum and max,
# blocking and in the background), all-gathers (packed and strided),
# reduce-scatters (packed and strided), all-to-alls, the permute and the
# gather of --verify all run that way on shards of kilobytes.  Every run
# is verified against the unsharded reference, with the bytes handed to
# MPI equal to the plan's, at 1, 2, 3 and 4 ranks.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
export MESHRT_MPI_MAX_COUNT=7

run() {
    local np=$1 spec=$2 mesh=$3 out
    if ! out=$("$here/mpirun.sh" "$np" "$meshrt" run "$spec" --mesh "$mesh" \
               --verify --json 2>&1) ||
       ! echo "$out" | grep -q '"bytes_match": true' ||
       echo "$out" | grep -q '"ok": false'; then
        echo "FAIL: $spec --mesh $mesh ($np ranks)"
        echo "$out"
        fail=1
        return
    fi
    echo "ok: $spec --mesh $mesh ($np ranks)"
}

spec=$here/specs/good/large_count.yaml
run 1 "$spec" data=1,model=1
run 2 "$spec" data=2,model=1
run 3 "$spec" data=1,model=3
run 4 "$spec" data=2,model=2
run 4 "$here/specs/good/strided.yaml" data=2,model=2
# training: gradient all-reduces in the background, float64
run 4 "$here/../examples/transformer_layer_sp.yaml" rows=2,cols=2
run 4 "$here/../examples/mlp.yaml" rows=2,cols=2
exit $fail
