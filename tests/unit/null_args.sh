#!/usr/bin/env bash
# null_args.sh NULL_ARGS INCLUDE_DIR — every public function called with
# each pointer argument NULL, one process per call (null_args.c): a case
# fails when its process crashes, hangs or exits non-zero.  First, the
# table of cases must name every MRT_API function of meshrt.h and
# meshrt_mpi.h (and nothing else), so a new function without its NULL
# cases fails here.
. "$(dirname "$0")/../lib.sh"
drv=$1
inc=$2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
declared=$(cat "$inc/meshrt.h" "$inc/meshrt_mpi.h" | tr '\n' ' ' |
    grep -o 'MRT_API [^;(]*(' | grep -o 'mrt_[a-z0-9_]*($' | tr -d '(' | sort -u)
list=$("$drv" list) || { echo "FAIL: null_args list"; exit 1; }
tabled=$(awk '{print $1}' <<<"$list" | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$tabled"))
extra=$(comm -13 <(echo "$declared") <(echo "$tabled"))
[ -z "$missing" ] || bad "no NULL case for: $(echo $missing)"
[ -z "$extra" ] || bad "NULL cases for functions the headers lack: $(echo $extra)"
[ "$(wc -l <<<"$declared")" -gt 60 ] || bad "only $(wc -l <<<"$declared") MRT_API functions found"
n=0
while read -r fn a; do
    n=$((n + 1))
    rc=0
    out=$(timeout 60 "$drv" "$fn" "$a" 2>&1 </dev/null) || rc=$?
    [ "$rc" = 0 ] || bad "$fn with '$a' NULL: exit $rc${out:+: $out}"
done <<<"$list"
echo "null_args: $n cases"
exit $fail
