#!/usr/bin/env bash
# layering.sh BUILD_DIR SOURCE_DIR — meson's layering, shown failing on
# deliberate bad includes.  For a layer (the library libmrt_LAYER of the
# `layers` table in meson.build), the compile command of one of its
# sources is taken from BUILD_DIR/compile_commands.json (the very flags
# and include path ninja uses) and run on a tiny file instead:
#  - <yaml.h> and <mpi.h> from ir/, ops/ and layout/ must fail with the
#    #error of base/forbid/yaml/yaml.h and base/forbid/mpi/mpi.h, and
#    <mpi.h> from kernels/ and runtime_local (runtime/'s part without
#    MPI);
#  - a header of a layer above must not be found: yaml/'s spec_load.h
#    from ir/ and ops/, ops/'s plan.h from layout/, runtime/'s
#    runtime.h from ops/;
#  - and each of these includes compiles where it is allowed (yaml.h in
#    io/, mpi.h in runtime/, each header in its own layer): the control,
#    which also shows that the header exists, so a failure above is the
#    layering's and not a missing file's.
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
. "$(dirname "$0")/../lib.sh"
use_temp_dir

# compile LAYER INCLUDE: compiles "#include INCLUDE" with the command of
# a source of LAYER/; stderr in $dir/err, the compiler's status returned.
compile() {
    local layer=$1 include=$2
    printf '#include %s\nint layering_probe;\n' "$include" >"$dir/probe.c"
    python3 - "$build/compile_commands.json" "$layer" "$dir/probe.c" \
        >"$dir/cmd" <<'PY' || { echo "no source of libmrt_$layer in compile_commands.json"; return 99; }
import json, os, shlex, sys
db, layer, probe = sys.argv[1:]
for e in json.load(open(db)):
    f = os.path.normpath(os.path.join(e["directory"], e["file"]))
    args = e.get("arguments") or shlex.split(e["command"])
    obj = e.get("output") or args[args.index("-o") + 1]
    if obj.startswith("libmrt_" + layer + ".a.p/") and f.endswith(".c"):
        out, skip = [], 0
        for a in args:   # drop the object, the dependency file, the source
            if skip:
                skip -= 1
            elif a in ("-o", "-MQ", "-MF", "-MT"):
                skip = 1
            elif a in ("-c", "-MD", "-MMD") or a == e["file"] or \
                    os.path.normpath(os.path.join(e["directory"], a)) == f:
                pass
            else:
                out.append(a)
        out += ["-fdiagnostics-color=never", "-fsyntax-only", probe]
        print(e["directory"])
        print("\0".join(out), end="")
        sys.exit(0)
sys.exit(1)
PY
    local cwd
    cwd=$(head -n 1 "$dir/cmd")
    mapfile -d '' -t cmd < <(tail -n +2 "$dir/cmd")
    (cd "$cwd" && "${cmd[@]}") >/dev/null 2>"$dir/err"
}

# forbidden LAYER INCLUDE REGEX: must fail, stderr matching REGEX.
forbidden() {
    compile "$1" "$2"
    local st=$?
    if [ $st = 0 ] || ! grep -Eq -e "$3" "$dir/err"; then
        bad "#include $2 in $1/: status $st, want a failure matching '$3':"
        cat "$dir/err"
    else
        echo "ok: #include $2 in $1/ fails: $(grep -m1 -E -e "$3" "$dir/err")"
    fi
}

# allowed LAYER INCLUDE: must compile.
allowed() {
    if compile "$1" "$2"; then
        echo "ok: #include $2 in $1/ compiles"
    else
        bad "#include $2 in $1/ does not compile:"; cat "$dir/err"
    fi
}

# The #error text of a forbid header, as a regex.
forbid_message() {
    sed -n 's/^#error "\(.*\)"$/\1/p' "$src/base/forbid/$1/$1.h" |
        sed 's/[][().*+?{}|^$\\]/\\&/g'
}
yaml_msg=$(forbid_message yaml)
mpi_msg=$(forbid_message mpi)
[ -n "$yaml_msg" ] && [ -n "$mpi_msg" ] || bad "no #error in base/forbid"

for layer in ir ops layout; do
    forbidden "$layer" "<yaml.h>" "error: #error \"$yaml_msg\""
    forbidden "$layer" "<mpi.h>" "error: #error \"$mpi_msg\""
done
# the BLIS kernels and runtime/'s local part are built without MPI too
for layer in kernels runtime_local; do
    forbidden "$layer" "<mpi.h>" "error: #error \"$mpi_msg\""
done
allowed io "<yaml.h>"
allowed runtime "<mpi.h>"

missing="fatal error: [^ ]+: No such file or directory"
forbidden ir '"spec_load.h"' "$missing"
forbidden ops '"spec_load.h"' "$missing"
allowed yaml '"spec_load.h"'
forbidden layout '"plan.h"' "$missing"
allowed ops '"plan.h"'
forbidden ops '"runtime.h"' "$missing"
allowed runtime '"runtime.h"'

[ $fail = 0 ] && echo "layering: all ok"
exit $fail
