#!/usr/bin/env bash
# cli_errors.sh MESHRT — bad input through the command line: every bad
# spec gives exactly one line on stderr, the spec's FILE:LINE:COL, and
# exit status 2, from `check`, `plan` and from `run` at 1, 2 and 3 ranks
# (no hang, no crash, one line however many ranks); a wrong rank count
# and bad usage likewise.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
use_temp_dir
# expect STATUS LINES REGEX CMD... (lib.sh): exit status, stderr line
# count, text; no hang: a minute at most.
expect_timeout=60

for spec in "$here"/specs/bad/*.yaml; do
    case $spec in *mesh_override*) continue ;; esac   # need --mesh, below
    name=$(basename "$spec" | sed 's/[.]/[.]/g')
    expect 2 1 "^[^ ]*$name:[0-9]+:[0-9]+: error: " "$meshrt" check "$spec"
    expect 2 1 ": error: " "$meshrt" plan "$spec"
done
for spec in "$here"/specs/bad/layout_unknown_axis.yaml "$here"/specs/bad/empty.yaml \
            "$here"/specs/bad/init_npy_missing.yaml "$here"/specs/bad/layout_axis_twice_in_tensor.yaml; do
    for np in 1 2 3; do
        expect 2 1 "^[^ ]+\.yaml:[0-9]+:[0-9]+: error: " "$here/mpirun.sh" "$np" "$meshrt" run "$spec"
    done
done
expect 2 1 "no such file|No such file" "$meshrt" check /nonexistent/spec.yaml
expect 2 1 "cannot open|No such file" "$here/mpirun.sh" 2 "$meshrt" run /nonexistent/spec.yaml
expect 2 1 "mlp.yaml:[0-9]+:[0-9]+: error: the mesh .* has 4 ranks but mpirun started 3" \
    "$here/mpirun.sh" 3 "$meshrt" run "$here/../examples/mlp.yaml"
expect 2 1 "invalid --mesh" "$meshrt" plan "$here/../examples/mlp.yaml" --mesh rows=0
# uneven splits plan (examples/mlp.yaml: a batch of 64 over 3)
expect 0 0 "" "$meshrt" plan "$here/../examples/mlp.yaml" --mesh rows=3,cols=1
expect 2 1 "unknown or incomplete option" "$meshrt" plan "$here/../examples/mlp.yaml" --bogus
expect 2 1 "missing SPEC" "$meshrt" run
expect 2 1 "only valid for 'run'" "$meshrt" plan "$here/../examples/mlp.yaml" --verify
# an option refused with its argument is named, not its argument
expect 2 1 "^meshrt: error: option --save is only valid for 'run'" "$meshrt" plan "$here/../examples/mlp.yaml" --save DIR
expect 2 1 "^meshrt: error: option --repeat is only valid for 'run' and 'validate'" "$meshrt" check "$here/../examples/mlp.yaml" --repeat=2
expect 2 1 "^meshrt: error: option --csv is only valid for 'compare'" "$meshrt" search "$here/../examples/mlp.yaml" --csv out.csv
expect 2 1 "--repeat needs" "$meshrt" run "$here/../examples/mlp.yaml" --repeat 0
expect 2 1 "unknown command" "$meshrt" frobnicate x.yaml
expect 0 0 "" "$meshrt" plan --help
# An init file that is a FIFO is refused at once (it used to wait for a
# writer forever): the loader opens inputs without blocking.
fifo_dir=$(mktemp -d)
mkfifo "$fifo_dir/w.npy"
cat >"$fifo_dir/fifo.yaml" <<'YAML'
mesh: {x: 1}
dtype: float64
dims: {i: 2}
tensors:
  w: {shape: [i], init: {file: w.npy}}
ops:
  - {op: relu, in: [w], out: y}
outputs: [y]
YAML
expect 2 1 "fifo.yaml:5:25: error: cannot read 'w.npy': .*not a regular file" \
    "$meshrt" check "$fifo_dir/fifo.yaml"
rm -rf "$fifo_dir"
[ $fail = 0 ] && echo "cli errors: all ok"
exit $fail
