#!/usr/bin/env bash
# cli_streams.sh MESHRT — what meshrt reads and the standard output it
# writes: (a) a spec that is not a regular file (a FIFO, a folder, a
# device) is refused at once, one line and exit 2, from check, plan and
# run at 1-4 ranks (a FIFO used to block forever); (b) a path with a
# newline stays on the error's one line (escaped);
set -uo pipefail
meshrt=$1
here=$(dirname "$0")
spec="$here/../examples/mlp.yaml"
fail=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
err="$dir/err"
out="$dir/out"
bad() { echo "FAIL: $*"; fail=1; }

# expect STATUS LINES REGEX CMD...: exit status, stderr lines, their text;
# within 20 seconds (a block is a failure, not a hang of the suite).
expect() {
    local status=$1 lines=$2 regex=$3; shift 3
    timeout 20 "$@" >"$out" 2>"$err"
    local got=$? n
    n=$(wc -l <"$err")
    if [ "$got" != "$status" ] || [ "$n" != "$lines" ] ||
       { [ "$lines" != 0 ] && ! grep -Eq -e "$regex" "$err"; }; then
        bad "$* -> status $got (want $status), $n stderr lines (want $lines):"
        cat "$err"
    fi
}

# ---- (a) a spec that is not a regular file ------------------------------
mkfifo "$dir/spec.fifo"
start=$(date +%s%N)
expect 2 1 "spec[.]fifo: error: cannot read spec: it is a FIFO, not a regular file" \
    "$meshrt" check "$dir/spec.fifo"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$ms" -lt 1000 ] || bad "check of a FIFO took $ms ms (want < 1 s)"
expect 2 1 "it is a FIFO" "$meshrt" plan "$dir/spec.fifo"
for np in 1 2 3 4; do
    expect 2 1 "it is a FIFO" "$here/mpirun.sh" "$np" "$meshrt" run "$dir/spec.fifo"
done
expect 2 1 "it is a folder, not a regular file" "$meshrt" check "$dir"
expect 2 1 "it is a character device, not a regular file" "$meshrt" check /dev/null
ln -s spec.fifo "$dir/link.yaml"
expect 2 1 "it is a FIFO" "$meshrt" check "$dir/link.yaml"

# ---- (b) a newline in a path: escaped, one line -------------------------
nl_dir="$dir/a
b"
mkdir "$nl_dir" && cp "$here/specs/bad/layout_unknown_axis.yaml" "$nl_dir/s.yaml"
expect 2 1 'a\\nb/s[.]yaml:[0-9]+:[0-9]+: error: unknown mesh axis' "$meshrt" check "$nl_dir/s.yaml"
expect 2 1 "^meshrt: error: unknown command 'x\\\\ny'" "$meshrt" "x
y" "$spec"

exit $fail
