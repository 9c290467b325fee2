#!/usr/bin/env bash
# out_of_memory.sh MESHRT — a plan too large for memory.  `check` and
# `plan` warn (one line, exit status 0); `run` fails with one line,
# "SPEC: error: out of memory: the plan needs N bytes per rank (...)",
# N the plan's peak_memory, exit status 1 on every rank and no MPI error:
# when every rank fails (1, 2, 3 ranks) and when only the last one does
# (2, 3 ranks; the others allocated and must not go on alone).
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
huge=$here/specs/large/too_big.yaml  # 204.8 GB per rank
big=$here/specs/large/output_2g.yaml # 2.1 GB per rank
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# Whether malloc refuses 200 GB depends on the kernel's overcommit policy;
# a limit on the address space makes it refuse everywhere.  Under ASan
# (whose shadow memory takes terabytes of address space) the sanitizer's
# own limit does that instead, and its malloc returns NULL as libc's does.
asan=0
case "$(ldd "$meshrt" 2>/dev/null)" in *libasan*) asan=1 ;; esac
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1"
if [ $asan = 1 ]; then
    export ASAN_OPTIONS="$ASAN_OPTIONS:max_allocation_size_mb=16384"
    cap_one="export ASAN_OPTIONS=$ASAN_OPTIONS:max_allocation_size_mb=1024"
else
    ulimit -v 16000000
    cap_one="ulimit -v 1500000"
fi

peak() { "$meshrt" plan "$@" --json 2>/dev/null |
         sed -n 's/.*"peak_memory": \([0-9]*\).*/\1/p'; }

# expect WHAT RC WANT_RC LINE: stderr is exactly LINE.
expect() {
    local what=$1 rc=$2 want=$3 line=$4
    # (ASan says so when it refuses an allocation: not ours to print)
    sed -i '/^==[0-9]*==WARNING: AddressSanitizer failed to allocate/d' "$err"
    if [ "$rc" != "$want" ] || [ "$(cat "$err")" != "$line" ] ||
       grep -q MPI_ERR "$err" "$out"; then
        echo "FAIL: $what: exit $rc (want $want), stderr:"
        cat "$err"
        echo "(want: $line)"
        fail=1
    else
        echo "ok: $what"
    fi
}

# check and plan: a warning, exit status 0.
n=$(peak "$huge")
mem=$(( $(getconf _PHYS_PAGES) * $(getconf PAGE_SIZE) ))
warning="$huge: warning: the plan needs $n bytes per rank at its peak, more than the $mem bytes of this machine's memory: a run would fail with out of memory"
"$meshrt" check "$huge" >"$out" 2>"$err"
expect "check warns" $? 0 "$warning"
"$meshrt" plan "$huge" >"$out" 2>"$err"
expect "plan warns" $? 0 "$warning"
"$meshrt" check "$big" --memory 1G >"$out" 2>"$err"
expect "check --memory 1G warns" $? 0 "$big: warning: the plan needs $(peak "$big") bytes per rank at its peak, more than the 1073741824 bytes of a rank's memory (--memory): a run would fail with out of memory"
"$meshrt" check "$big" >"$out" 2>"$err"
expect "check of a plan that fits: no warning" $? 0 ""

# run: every rank fails to allocate.
for np in 1 2 3; do
    n=$(peak "$huge" --mesh data=$np)
    "$here/mpirun.sh" $np "$meshrt" run "$huge" --mesh data=$np >"$out" 2>"$err"
    expect "run, $np ranks, all out of memory" $? 1 \
        "$huge: error: out of memory: the plan needs $n bytes per rank (rank 0 could not allocate them)"
done

# run: only the last rank fails; the others allocated and agree.
for np in 2 3; do
    n=$(peak "$big" --mesh data=$np)
    "$here/mpirun.sh" $((np - 1)) "$meshrt" run "$big" --mesh data=$np : \
        -n 1 bash -c "$cap_one; exec \"\$0\" \"\$@\"" "$meshrt" run "$big" \
        --mesh data=$np >"$out" 2>"$err"
    expect "run, $np ranks, rank $((np - 1)) out of memory" $? 1 \
        "$big: error: out of memory: the plan needs $n bytes per rank (rank $((np - 1)) could not allocate them)"
done
exit $fail
