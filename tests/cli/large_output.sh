#!/usr/bin/env bash
# large_output.sh MESHRT — an output of more than 2 GiB (2^31 + 64 KiB
# bytes, tests/specs/large/output_2g.yaml) gathered to rank 0: at 1 rank
# verified against the unsharded reference and saved; at 2 ranks (the
# output replicated, so rank 1 sends all of its shard) saved, and the
# file must be the same as the 1-rank one, byte for byte.  A byte count
# of the shard cast to int made MPI refuse it (MPI_ERR_COUNT, exit 3).
# About 6.5 GB of memory at the peak, and 2 files of 2 GiB on disk.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
spec=$here/specs/large/output_2g.yaml
data=$((16384 * 32769 * 4)) # bytes of y
use_temp_dir

# saved FILE: the .npy holds all of y after its header.
saved() {
    local size
    size=$(stat -c %s "$1" 2>/dev/null || echo 0)
    [ "$size" -ge "$data" ] && [ $((size - data)) -le 4096 ]
}

out=$("$here/mpirun.sh" 1 "$meshrt" run "$spec" --verify --save "$dir/1" 2>&1)
rc=$?
if [ $rc != 0 ] || ! echo "$out" | grep -q "^verify y: .*: ok$" ||
   ! saved "$dir/1/y.npy"; then
    echo "FAIL: 1 rank, --verify --save: exit $rc"; echo "$out"; fail=1
else
    echo "ok: 1 rank, --verify --save ($data bytes verified and saved)"
fi

out=$("$here/mpirun.sh" 2 "$meshrt" run "$spec" --mesh data=2 --save "$dir/2" 2>&1)
rc=$?
if [ $rc != 0 ] || ! saved "$dir/2/y.npy" ||
   ! cmp -s "$dir/1/y.npy" "$dir/2/y.npy"; then
    echo "FAIL: 2 ranks, --save: exit $rc, or the file differs from 1 rank's"
    echo "$out"; fail=1
else
    echo "ok: 2 ranks, --save (the same file as 1 rank's)"
fi
exit $fail
