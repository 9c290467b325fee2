#!/usr/bin/env bash
# cli_outputs.sh MESHRT — how meshrt writes the files it is asked for
# (io/output.h): (a) temporary files have unpredictable names and
# never follow a link planted in the folder; (b) an output path that is a
# link, a pipe or a device is written through and stays what it was, and
# "-" is the standard output; (c) a write the system refuses (disk full,
# read-only, permission denied) is one line and exit status 1; (d) an
# empty --save names the problem (exit 2); (e) SIGTERM to mpirun at 1-4
# ranks prints one "interrupted" line and leaves no temporary file.
#
# Never aims old or broken code at the system's own /dev/stdout or
# /dev/full: a device node and links of its own come first, and
# /dev/stdout is tried only once they came through unharmed.  A mechanism
# this machine lacks (mknod, mount, setpriv) is reported as NOT CHECKED.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
spec="$here/../examples/mlp.yaml"
small="$here/specs/cli/outputs.yaml"
use_temp_dir
chmod 755 "$dir"
not_checked() { echo "NOT CHECKED: $*"; }
# JSON files to parse, all at the end in one python3 (it starts slowly):
# "text FILE" holds the text report and then the JSON, "json FILE" only it.
json_checks=()
json_later() { # WHAT KIND FILE: copies FILE now, parses it at the end
    local copy="$dir/json.${#json_checks[@]}"
    cp "$3" "$copy" 2>/dev/null || : >"$copy"
    json_checks+=("$1" "$2" "$copy")
}
is_npy() { # FILE: a .npy of 120 x 128 float64 (the header is 128 bytes)
    [ "$(head -c 6 "$1" | od -An -c | tr -d ' ')" = '223NUMPY' ] &&
        [ "$(stat -c %s "$1")" = $((128 + 120 * 128 * 8)) ]
}
no_temp_in() { ! find "$1" -name '*.tmp.*' | grep -q .; }

# --- (a) planted links at the temporary names --------------------------
# The old .npy writer used NAME.tmp.PID: a link there made the save write
# through it.  Plant one for each of the next 5000 pids (one of them is
# rank 0's), all aimed at a file that must stay as it is.
mkdir "$dir/save" && echo precious >"$dir/victim"
python3 - "$dir/save" "$dir/victim" <<'PY'
import os, sys
d, victim = sys.argv[1], sys.argv[2]
last = int(open("/proc/sys/kernel/ns_last_pid").read())
top = int(open("/proc/sys/kernel/pid_max").read())
for k in range(1, 5001):
    os.symlink(victim, f"{d}/y.npy.tmp.{(last + k) % top}")
PY
expect 0 0 "" "$here/mpirun.sh" 2 "$meshrt" run "$small" --mesh data=2 --save "$dir/save"
check "the planted links' target is untouched" [ "$(cat "$dir/victim")" = precious ]
check "the saved output is a new regular file" [ -f "$dir/save/y.npy" ] && [ ! -L "$dir/save/y.npy" ]
check "the saved output is the array" is_npy "$dir/save/y.npy"
check "the planted links are still there, and nothing else" \
    [ "$(find "$dir/save" -type l | wc -l) $(ls "$dir/save" | wc -l)" = "5000 5001" ]
rm -rf "$dir/save"

# --- (b) links, pipes and devices are written through -----------------
ln -s /proc/self/fd/1 "$dir/stdout-link"
expect 0 0 "" "$meshrt" compare "$spec" --json "$dir/stdout-link"
check "a link to the standard output stays a link" [ -L "$dir/stdout-link" ]
json_later "the JSON goes to the standard output, after the table" text "$dir/stdout"
if [ -L "$dir/stdout-link" ]; then
    expect 0 0 "" "$meshrt" compare "$spec" --json /dev/stdout
    check "/dev/stdout stays a link" [ -L /dev/stdout ]
    json_later "--json /dev/stdout prints the JSON" text "$dir/stdout"
else
    bad "not trying /dev/stdout: a link like it was replaced, it would be too"
fi
expect 0 0 "" "$meshrt" compare "$spec" --json -
json_later "--json - prints the JSON" text "$dir/stdout"
rows=$("$meshrt" compare "$spec" --csv - | grep -c '^mixed,')
check "--csv - into a pipe: one CSV row per layout" [ "$rows" = 1 ]
mkfifo "$dir/fifo"
timeout 60 cat "$dir/fifo" >"$dir/from-fifo" & reader=$!
expect 0 0 "" "$meshrt" compare "$spec" --json "$dir/fifo"
wait $reader
check "a named pipe stays a pipe" [ -p "$dir/fifo" ]
json_later "the JSON went through the pipe" json "$dir/from-fifo"
echo old >"$dir/real.json" && ln -s real.json "$dir/link.json"
expect 0 0 "" "$meshrt" compare "$spec" --json "$dir/link.json"
check "a link to a file stays a link" [ "$(readlink "$dir/link.json")" = real.json ]
json_later "the file it leads to is the JSON" json "$dir/real.json"
ln -s no-such-file "$dir/dangling"
expect 2 1 "dangling: error: cannot write the comparison: it is a symbolic link to a missing file" \
    "$meshrt" compare "$spec" --json "$dir/dangling"
check "nothing is left next to the links" no_temp_in "$dir"

# --- (c) writes the system refuses: one line, exit 1 -------------------
if mknod -m 666 "$dir/full" c 1 7 2>/dev/null; then # what /dev/full is
    expect 1 1 "full: error: cannot write the comparison: No space left" \
        "$meshrt" compare "$spec" --json "$dir/full"
    check "the device stays a device" [ -c "$dir/full" ]
    expect 1 1 "cannot write the standard output: No space left" \
        bash -c '"$1" compare "$2" >"$3"' - "$meshrt" "$spec" "$dir/full"
    expect 1 1 "cannot write the comparison to the standard output: No space left" \
        bash -c '"$1" compare "$2" --csv - >"$3"' - "$meshrt" "$spec" "$dir/full"
else
    not_checked "a full device (mknod is not allowed here)"
fi
mpirun_line="$here/mpirun.sh"
if unshare -m true 2>/dev/null; then
    # A 64 KiB tmpfs in a mount namespace of its own (gone when it ends):
    # the 120 KiB output does not fit.
    mkdir "$dir/tiny" "$dir/ro"
    expect 1 1 "tiny/out/y.npy: error: cannot write the array: No space left on device" \
        unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$1" &&
            "$2" 2 "$3" run "$4" --mesh data=2 --save "$1/out" &&
            ! find "$1" -name "*.tmp.*" | grep . >&2' - "$dir/tiny" "$mpirun_line" "$meshrt" "$small"
    expect 1 1 "ro/t.csv: error: cannot write the comparison: Read-only file system" \
        unshare -m sh -c 'mount -t tmpfs -o ro,size=64k tmpfs "$1" &&
            "$2" compare "$3" --csv "$1/t.csv"' - "$dir/ro" "$meshrt" "$spec"
    expect 1 1 "ro/out: error: cannot create the folder: Read-only file system" \
        unshare -m sh -c 'mount -t tmpfs -o ro,size=64k tmpfs "$1" &&
            "$2" 1 "$3" run "$4" --save "$1/out"' - "$dir/ro" "$mpirun_line" "$meshrt" "$small"
else
    not_checked "disk full and read-only (unshare -m is not allowed here)"
fi
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    # nobody runs copies of meshrt and the spec: the checkout's folder
    # may be one it cannot enter (a clone into a mode-700 folder).
    mkdir -m 755 "$dir/locked" "$dir/nobody"
    cp "$meshrt" "$spec" "$dir/nobody/"
    chmod a+rx "$dir/nobody/meshrt" && chmod a+r "$dir/nobody/mlp.yaml"
    expect 1 1 "locked/t.json: error: cannot write the comparison: Permission denied" \
        setpriv --reuid=65534 --regid=65534 --clear-groups "$dir/nobody/meshrt" \
        compare "$dir/nobody/mlp.yaml" --json "$dir/locked/t.json"
else
    not_checked "permission denied (needs root and setpriv to become nobody)"
fi
# What the user named cannot be a file: bad input, exit 2.
expect 2 1 "cannot write the comparison: No such file" \
    "$meshrt" compare "$spec" --json "$dir/no/such/folder/t.json"

# --- (d) empty names ---------------------------------------------------
expect 2 1 "^meshrt: error: --save needs a folder name, not an empty string" \
    "$meshrt" run "$small" --save ""
expect 2 1 "^meshrt: error: --json needs a file name" "$meshrt" compare "$spec" --json ""

# --- (e) SIGTERM to mpirun ---------------------------------------------
catching_ranks() { # MPIRUN_PID: how many of its meshrt ranks catch SIGTERM
    local n=0 p mask
    for p in $(pgrep -P "$1" -x meshrt); do
        mask=$(sed -n 's/^SigCgt:\t*//p' "/proc/$p/status" 2>/dev/null)
        [ -n "$mask" ] && (( 0x$mask & 0x4000 )) && n=$((n + 1))
    done
    echo $n
}
# Open MPI's mpirun sends SIGCONT, waits a second, then SIGTERM and
# SIGKILL a few milliseconds apart: a rank that other load on the machine
# keeps off the CPU for those milliseconds dies before its handler runs.
# As root the job runs at a raised priority, so that load does not decide.
prio=()
[ "$(id -u)" = 0 ] && prio=(nice -n -10)
# sigterm NP: runs a long job at NP ranks, sends mpirun SIGTERM once
# every rank catches it, and checks the one "interrupted" line (0: ok).
sigterm() {
    local np=$1 status n
    MESHRT_TEST_SIGKILL_TIMEOUT=1 "${prio[@]}" "$here/mpirun.sh" $np "$meshrt" run "$small" --mesh data=$np --repeat 1000000 \
        --save "$dir/sig$np" >"$dir/sig.out" 2>"$dir/sig.err" & job=$!
    for _ in $(seq 200); do # until every rank catches SIGTERM (at most 20 s)
        [ "$(catching_ranks $job)" = $np ] && break
        sleep 0.1
    done
    sleep 0.3 # and mpirun is done launching
    kill -TERM $job
    wait $job
    status=$?
    n=$(wc -l <"$dir/sig.err")
    [ $status != 0 ] && [ "$n" = 1 ] &&
        grep -q "^meshrt: error: interrupted by signal 15 (SIGTERM): 'meshrt run' did not finish$" "$dir/sig.err" &&
        return 0
    echo "SIGTERM at $np ranks: status $status, $n stderr lines:"; cat "$dir/sig.err"
    return 1
}
# Even so, on a loaded machine the line is sometimes lost between the
# rank and mpirun's output forwarding (seen under the sanitizers and
# parallel builds, with a binary that passes when run alone): each rank
# count gets three tries, and fails only if all three do.  A handler that
# does not print, or prints twice, fails all three.  Every try must leave
# no temporary file.
for np in 1 2 3 4; do
    ok=0
    for try in 1 2 3; do
        if sigterm $np; then ok=1; fi
        check "SIGTERM at $np ranks (try $try) leaves no temporary file" no_temp_in "$dir"
        [ $ok = 1 ] && break
        echo "(try $try of 3 at $np ranks lost the line; trying again)"
    done
    [ $ok = 1 ] || bad "SIGTERM at $np ranks: no try printed the one line"
done

python3 - "${json_checks[@]}" <<'PY' || fail=1
import json, sys
a = sys.argv[1:]
for what, kind, path in zip(a[0::3], a[1::3], a[2::3]):
    t = open(path).read()
    try:
        json.loads(t[t.index("\n{") + 1:] if kind == "text" else t)
    except Exception as e:
        print(f"FAIL: {what}: {e}")
        sys.exit(1)
PY
[ $fail = 0 ] && echo "cli outputs: all ok"
exit $fail
