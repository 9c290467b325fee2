#!/usr/bin/env bash
# cli_streams.sh MESHRT — what meshrt reads and the standard output it
# writes: (a) a spec that is not a regular file (a FIFO, a folder, a
# device) is refused at once, one line and exit 2, from check, plan and
# run at 1-4 ranks (a FIFO used to block forever); (b) a path with a
# newline stays on the error's one line (escaped); (c) two writers of
# the standard output (a JSON report and a file named "-", or two files)
# are a usage error, one line and exit 2, with nothing printed; (d) a
# standard output that refuses the report (a full device) is exit 1
# naming the cause, ENOSPC (it used to blame ENOENT, left by
# MPI_Finalize), and run --report FILE writes the report to a file at
# 1-4 ranks, a refused one being exit 1 and one line.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
use_temp_dir
spec="$here/../examples/mlp.yaml"
err="$dir/stderr"  # expect (lib.sh) puts the command's streams there,
out="$dir/stdout"  # within expect_timeout seconds: a block is a failure
expect_timeout=20

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
# a machine profile that is a FIFO: the same reader, the same refusal
expect 2 1 "cannot read profile: it is a FIFO, not a regular file" \
    "$meshrt" plan "$spec" --machine "$dir/spec.fifo"

# ---- (b) a newline in a path: escaped, one line -------------------------
nl_dir="$dir/a
b"
mkdir "$nl_dir" && cp "$here/specs/bad/layout_unknown_axis.yaml" "$nl_dir/s.yaml"
expect 2 1 'a\\nb/s[.]yaml:[0-9]+:[0-9]+: error: unknown mesh axis' "$meshrt" check "$nl_dir/s.yaml"
expect 2 1 "^meshrt: error: unknown command 'x\\\\ny'" "$meshrt" "x
y" "$spec"

# ---- (c) one writer of the standard output --------------------------------
two="would both write the standard output: name a file for one of them"
expect 2 1 "^meshrt: error: --json and --trace - $two" "$meshrt" run "$spec" --json --trace -
[ -s "$out" ] && bad "run --json --trace - printed something: $(head -c 200 "$out")"
for np in 1 2 3 4; do
    expect 2 1 "^meshrt: error: --json and --trace - $two" \
        "$here/mpirun.sh" "$np" "$meshrt" run "$spec" --json --trace -
done
expect 2 1 "^meshrt: error: --json and --trace /dev/stdout $two" \
    "$meshrt" run "$spec" --json --trace /dev/stdout
expect 2 1 "^meshrt: error: --json - and --csv - $two" "$meshrt" compare "$spec" --csv - --json -
expect 2 1 "^meshrt: error: --csv - and --svg /proc/self/fd/1 $two" \
    "$meshrt" compare "$spec" --csv - --svg /proc/self/fd/1
# the file the standard output is, by its own name
: >"$dir/o.json"
timeout 20 "$meshrt" compare "$spec" --json "$dir/o.json" --csv - >"$dir/o.json" 2>"$err"
[ $? = 2 ] && grep -q "$two" "$err" || bad "--json FILE and --csv - into FILE: $(cat "$err")"
# one writer (or a text report and one file after it) is fine
expect 0 0 "" "$meshrt" compare "$spec" --csv -
expect 0 0 "" "$meshrt" compare "$spec" --csv "$dir/t.csv" --json -
expect 0 0 "" "$here/mpirun.sh" 4 "$meshrt" run "$spec" --json --trace "$dir/trace.json"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$out" ||
    bad "run --json with --trace FILE: the standard output is not one JSON document"
expect 0 0 "" "$here/mpirun.sh" 4 "$meshrt" run "$spec" --trace -
expect 2 1 "^meshrt: error: --report - and --trace - $two" \
    "$meshrt" run "$spec" --report - --json --trace -

# ---- (d) a refused report ------------------------------------------------
# a full device of our own (the system's /dev/full if mknod is refused)
full=/dev/full
mknod "$dir/full" c 1 7 2>/dev/null && full="$dir/full"
[ -c "$full" ] || bad "no full device to write to ($full)"
nospace="cannot write the standard output: No space left on device"
for cmd in check plan compare; do
    timeout 60 "$meshrt" $cmd "$spec" >"$full" 2>"$err"
    got=$?
    [ "$got" = 1 ] && [ "$(wc -l <"$err")" = 1 ] && grep -q "^meshrt: error: $nospace" "$err" ||
        bad "$cmd > full device: status $got, want 1 and one line '$nospace': $(cat "$err")"
done
for opt in "" --json --verify; do
    timeout 60 "$meshrt" run "$spec" --mesh rows=1,cols=1 $opt >"$full" 2>"$err"
    got=$?
    [ "$got" = 1 ] && [ "$(wc -l <"$err")" = 1 ] && grep -q "^meshrt: error: $nospace" "$err" ||
        bad "run $opt > full device: status $got, want 1 and '$nospace': $(cat "$err")"
done
for np in 1 2 3 4; do
    rm -f "$dir/report.json"
    expect 0 0 "" "$here/mpirun.sh" "$np" "$meshrt" run "$spec" --mesh rows=$np,cols=1 \
        --verify --json --report "$dir/report.json" --trace -
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d, d' \
        "$dir/report.json" || bad "$np ranks: --report FILE --json is not one JSON document"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["traceEvents"]' \
        "$out" || bad "$np ranks: with --report FILE, --trace - is not alone on the standard output"
    expect 1 1 "^$full: error: cannot write the report: No space left on device" \
        "$here/mpirun.sh" "$np" "$meshrt" run "$spec" --mesh rows=$np,cols=1 --report "$full"
done
expect 0 0 "" "$meshrt" run "$spec" --mesh rows=1,cols=1 --report "$dir/report.txt"
grep -q "bytes match the plan" "$dir/report.txt" || bad "--report FILE: not the text report"
[ -s "$out" ] && bad "--report FILE printed on the standard output: $(head -c 200 "$out")"

exit $fail
