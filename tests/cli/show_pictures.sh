#!/usr/bin/env bash
# show_pictures.sh MESHRT PNG_CHECK [--update] — `meshrt show`'s
# pictures, as reviewed: for each case below, the text picture (Unicode
# box drawing) is tests/golden/show/NAME.txt and the --ascii one
# NAME.ascii, byte for byte; the cases cover 1-D to 4-D tensors on 1- to
# 3-axis meshes, uneven splits (an empty block too), replicas, pending
# sums (--steps), moves (--from, --to) and pipeline schedules
# (--schedule: gpipe, 1f1b, interleaved, zero_bubble).  Every case's --svg is
# rendered to PNG by rsvg-convert (which refuses SVG that is not well
# formed) and the PNG must not be blank (PNG_CHECK, tests/png_check.c).
# No golden file is left of a case that is gone.  Bad input (an unknown
# tensor, a bad --from or --to layout, --from without --to) is one
# error line.
#
# To accept a change on purpose: `./dev golden` (this script with
# --update) rewrites the golden files; review `git diff tests/golden`.
set -uo pipefail
meshrt=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
png_check=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
update=${3:-}
. "$(dirname "$0")/../lib.sh"
use_temp_dir
golden=tests/golden/show
cd "$here/.." || exit 2
export MESHRT_PROFILE=$dir/no-such-profile.yaml
command -v rsvg-convert >/dev/null ||
    { echo "FAIL: rsvg-convert is missing (./dev test installs librsvg2-bin)"; exit 1; }

# case NAME SPEC ARGS...: the pictures of `meshrt show SPEC ARGS...`.
case_() {
    local name=$1 spec=$golden/$2; shift 2
    if ! "$meshrt" show "$spec" "$@" --svg "$dir/$name.svg" \
        >"$dir/new/$name.txt" 2>"$dir/err" ||
        ! "$meshrt" show "$spec" "$@" --ascii >"$dir/new/$name.ascii" \
        2>>"$dir/err"; then
        bad "meshrt show $spec $*:"
        cat "$dir/err"
        return
    fi
    [ -s "$dir/err" ] && { bad "meshrt show $spec $* wrote on stderr:"; cat "$dir/err"; }
    if ! rsvg-convert "$dir/$name.svg" -o "$dir/$name.png" 2>"$dir/err"; then
        bad "rsvg-convert refuses the SVG of $name:"
        cat "$dir/err"
    elif ! "$png_check" "$dir/$name.png" >"$dir/png" 2>&1; then
        bad "the SVG of $name renders blank: $(cat "$dir/png")"
    fi
    grep -q '[┌┼┘]' "$dir/new/$name.txt" || bad "$name.txt draws no box"
    LC_ALL=C grep -q '[^ -~]' "$dir/new/$name.ascii" &&
        bad "$name.ascii is not plain ASCII"
}

mkdir "$dir/new"
case_ vector vector.yaml
case_ vector_sum vector.yaml s --steps
case_ matrix matrix.yaml
case_ matrix_partial matrix.yaml h --steps
case_ matrix_alt matrix.yaml x h --layout rows_only
case_ matrix_wide matrix.yaml x w --mesh data=6,model=2
case_ matrix_move matrix.yaml x --from '{batch: data}' --to '{batch: model, d: data}'
case_ matrix_move_alt matrix.yaml x --from rows_only --to '{d: [model, data]}'
case_ cube cube.yaml
case_ cube_sum cube.yaml s --steps
case_ heads heads.yaml
case_ heads_3axes heads.yaml q --mesh p=2,q=3,z=2
case_ heads_1axis heads1.yaml
# A pipeline's schedule (show_schedule.c), one alternative per schedule.
case_ schedule_gpipe pipeline.yaml --schedule --layout gpipe
case_ schedule_1f1b pipeline.yaml --schedule --layout one_f_one_b
case_ schedule_interleaved pipeline.yaml --schedule --layout inter
case_ schedule_zero_bubble pipeline.yaml --schedule --layout zb

# Bad input: one line "WHERE: error: ..." and exit status 2.
m=$golden/matrix.yaml
expect 2 1 "^$m: error: no tensor 'nosuch' in the program" \
    "$meshrt" show "$m" x nosuch
expect 2 1 "^--from:1:9: error: unknown mesh axis 'datz' \(the mesh has: data, model\)" \
    "$meshrt" show "$m" x --from '{batch: datz}' --to '{}'
expect 2 1 "^--to:1:2: error: .*'nosuch'" \
    "$meshrt" show "$m" x --from '{}' --to '{nosuch: data}'
expect 2 1 "^meshrt: error: --from needs --to too" "$meshrt" show "$m" x --from '{}'
expect 2 1 "^$m: error: the plan has no pipeline to show" "$meshrt" show "$m" --schedule
expect 2 1 "^examples/mlp.yaml: error: 'loss' is a scalar: it has one layout, nothing moves" \
    "$meshrt" show examples/mlp.yaml loss --from '{}' --to '{}'
expect 2 1 "^meshrt: error: --from and --to move one tensor: name one TENSOR, not 2" \
    "$meshrt" show "$m" x h --from '{}' --to '{}'
expect 2 1 "^meshrt: error: option --ascii is only valid for 'show'" \
    "$meshrt" plan "$m" --ascii
expect 2 1 "error: cannot write the pictures" \
    "$meshrt" show "$m" --svg "$dir/no/such/folder/p.svg"

if [ "$update" = --update ]; then
    rm -f "$golden"/*.txt "$golden"/*.ascii
    cp "$dir/new"/* "$golden"/
    echo "show_pictures: wrote $(ls "$dir/new" | wc -l) files to $golden"
    exit $fail
fi
[ -z "$update" ] || { echo "usage: show_pictures.sh MESHRT PNG_CHECK [--update]" >&2; exit 2; }
for f in "$dir/new"/*; do
    g=$golden/$(basename "$f")
    if [ ! -f "$g" ]; then
        bad "$g is missing (./dev golden writes it)"
    elif ! diff -u "$g" "$f" >"$dir/diff"; then
        bad "the picture differs from $g (./dev golden accepts it):"
        head -n 40 "$dir/diff"
    fi
done
for g in "$golden"/*.txt "$golden"/*.ascii; do
    [ -f "$dir/new/$(basename "$g")" ] || bad "$g is of no case: remove it"
done
[ $fail = 0 ] && echo "show_pictures: $(ls "$dir/new" | wc -l) pictures as golden, every SVG renders"
exit $fail
