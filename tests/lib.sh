# shellcheck shell=bash
# lib.sh — what the shell tests share.  A test sources it first:
#
#     . "$(dirname "$0")/../lib.sh"
#
# and gets:
#   here     tests/, absolute (specs/ and mpirun.sh are there; the
#            checkout's examples/ is "$here/../examples")
#   fail     0; bad and the checks below set it to 1: end with exit $fail
#   bad MSG                      prints "FAIL: MSG" and fails the test
#   check WHAT CMD...            fails the test ("FAIL: WHAT") unless CMD
#                                succeeds
#   use_temp_dir                 makes $dir, a temporary folder removed
#                                when the test exits
#   expect STATUS LINES REGEX CMD...
#                                runs CMD (bounded by $expect_timeout
#                                seconds, 120 unless set) with its stdout
#                                in $dir/stdout and its stderr in
#                                $dir/stderr, and fails the test unless it
#                                exits STATUS with LINES lines on stderr,
#                                one of them matching REGEX (when LINES
#                                > 0); needs use_temp_dir
#   mpirun_command               sets the array mpirun_cmd to the mpirun
#                                meshrt's tests use (tests/mpirun.sh runs
#                                it: "$here/mpirun.sh" NP PROGRAM ARGS...)

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail=0

bad() { echo "FAIL: $*"; fail=1; }

check() { # WHAT COMMAND...: fails the test unless COMMAND succeeds
    local what=$1; shift
    "$@" || bad "$what"
}

use_temp_dir() {
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
}

expect() { # STATUS LINES REGEX CMD...: exit status, stderr lines, their text
    local status=$1 lines=$2 regex=$3; shift 3
    timeout "${expect_timeout:-120}" "$@" >"$dir/stdout" 2>"$dir/stderr"
    local got=$? n
    n=$(wc -l <"$dir/stderr")
    if [ "$got" != "$status" ] || [ "$n" != "$lines" ] ||
       { [ "$lines" != 0 ] && ! grep -Eq -e "$regex" "$dir/stderr"; }; then
        bad "$* -> status $got (want $status), $n stderr lines (want $lines):"
        cat "$dir/stderr"
    fi
}

# $MESHRT_MPIRUN (set by ./dev test) or, when meson test is called
# directly, the settings ./dev uses; the sanitizer settings and the
# pinned profile reach every rank.  When a rank exits with a status
# other than 0, mpirun signals the others and waits
# odls_base_sigkill_timeout seconds (1 by default) before it ends: the
# tests, many of whose runs fail on purpose, do not wait, except where
# they set MESHRT_TEST_SIGKILL_TIMEOUT (cli_outputs' SIGTERM, whose
# ranks need the time to catch the signal).
mpirun_command() {
    if [ -n "${MESHRT_MPIRUN:-}" ]; then
        read -r -a mpirun_cmd <<<"$MESHRT_MPIRUN"
    else
        mpirun_cmd=(mpirun --quiet --oversubscribe
                    --mca btl_vader_single_copy_mechanism none)
        [ "$(id -u)" = 0 ] && mpirun_cmd+=(--allow-run-as-root)
    fi
    mpirun_cmd+=(--mca odls_base_sigkill_timeout
                 "${MESHRT_TEST_SIGKILL_TIMEOUT:-0}")
    local v
    for v in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS MESHRT_PROFILE \
             MESHRT_MPI_MAX_COUNT; do
        [ -n "${!v:-}" ] && mpirun_cmd+=(-x "$v")
    done
    return 0
}
