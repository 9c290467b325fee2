#!/usr/bin/env bash
# install.sh BUILD_DIR SOURCE_DIR — meshrt as an installed library:
# `meson install` into a temporary DESTDIR, then examples/c/megatron_mlp.c
# (the builder, the runner and the plan's steps, through meshrt.h)
# compiled in a folder outside the tree with nothing but
# `pkg-config --cflags --libs meshrt` (PKG_CONFIG_PATH at the installed
# meshrt.pc, whose prefix= line is rewritten to the DESTDIR's, as when an
# installed tree is moved), and run on 4 ranks (a 2x2
# mesh): it must print its "ok" line and exit 0, linked with the shared
# library (through its soname) and with the static one; plan_mlp.c too
# (one process: planning needs no MPI run).
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
. "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d "$build/install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install.sh: FAIL: $*" >&2; exit 1; }

meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/root" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log" >&2; fail "meson install"; }
pc=$(find "$tmp/root" -name meshrt.pc -print -quit)
[ -n "$pc" ] || fail "no meshrt.pc installed"
export PKG_CONFIG_PATH=$(dirname "$pc")
prefix=$tmp/root$(pkg-config --variable=prefix meshrt)
sed -i "s|^prefix=.*|prefix=$prefix|" "$pc"
pc_flags() { pkg-config "$@" meshrt; }
libdir=$(pc_flags --variable=libdir)
inc=$(pc_flags --variable=includedir)
[ -f "$inc/meshrt.h" ] || fail "meshrt.h not installed in $inc"
[ -f "$libdir/libmeshrt.a" ] || fail "no static libmeshrt.a in $libdir"
[ "$(readlink "$libdir/libmeshrt.so")" = libmeshrt.so.0 ] ||
    fail "libmeshrt.so does not lead to libmeshrt.so.0"
# (the output of each tool is read whole first: with pipefail, grep -q
# ending a pipe early would fail it by SIGPIPE)
dyn=$(readelf -d "$libdir/libmeshrt.so.0")
grep -q 'SONAME.*\[libmeshrt\.so\.0\]' <<<"$dyn" ||
    fail "the soname is not libmeshrt.so.0"
# Exported: meshrt.h's functions only.
syms=$(nm -D --defined-only "$libdir/libmeshrt.so.0")
if awk '$2 == "T" {print $3}' <<<"$syms" | grep -v '^mrt_'; then
    fail "libmeshrt.so exports names outside mrt_"
fi
# The version macros are the package's version.
ver=$(pc_flags --modversion)
grep -q "#define MESHRT_VERSION \"$ver\"" "$inc/meshrt.h" ||
    fail "MESHRT_VERSION in meshrt.h is not $ver"

# Outside the tree: a copy of the example, pkg-config's flags only.
mkdir "$tmp/user"
cp "$src/examples/c/megatron_mlp.c" "$src/examples/c/plan_mlp.c" "$tmp/user/"
cd "$tmp/user"
read -r -a flags <<<"$(pc_flags --cflags --libs)"
# A sanitizer build (meson -Db_sanitize=...) installs instrumented
# objects: a program linking them needs the sanitizers' runtimes first,
# as it would in any project built so.
undefined=$(nm "$libdir/libmeshrt.a" 2>/dev/null || true)
! grep -q " U __asan_" <<<"$undefined" || flags+=(-fsanitize=address)
! grep -q " U __ubsan_" <<<"$undefined" || flags+=(-fsanitize=undefined)
cc -std=c11 -O2 -Wall -Werror megatron_mlp.c "${flags[@]}" -lm -o mlp_shared ||
    fail "cc with pkg-config --cflags --libs meshrt"
read -r -a sflags <<<"$(pc_flags --static --cflags --libs)"
sflags+=("${flags[@]}")
# the archive itself in place of pkg-config's -lmeshrt, so nothing can
# pick the shared library instead
static=()
for f in "${sflags[@]}"; do [ "$f" = -lmeshrt ] || static+=("$f"); done
cc -std=c11 -O2 megatron_mlp.c "$libdir/libmeshrt.a" "${static[@]}" \
    -lm -o mlp_static || fail "cc with pkg-config --static against libmeshrt.a"
deps=$(ldd mlp_static)
! grep -q libmeshrt <<<"$deps" || fail "mlp_static needs libmeshrt.so"

# Planning needs no MPI run: one process, no mpirun.
cc -std=c11 -O2 -Wall -Werror plan_mlp.c "${flags[@]}" -o plan_mlp ||
    fail "cc plan_mlp.c with pkg-config --cflags --libs meshrt"
out=$(LD_LIBRARY_PATH=$libdir ./plan_mlp) || { echo "$out" >&2; fail "plan_mlp failed"; }
grep -q "^plan_mlp: ok$" <<<"$out" || { echo "$out" >&2; fail "plan_mlp's checks"; }

for exe in mlp_shared mlp_static; do
    rc=0
    out=$(LD_LIBRARY_PATH=$libdir "$here/mpirun.sh" 4 -x LD_LIBRARY_PATH ./$exe 2>&1) || rc=$?
    [ "$rc" = 0 ] || { echo "$out" >&2; fail "$exe exited with status $rc"; }
    echo "$exe: $out"
    grep -q "^megatron_mlp: meshrt $ver, 4 ranks .*: ok$" <<<"$out" ||
        fail "$exe did not print its ok line"
    # the built-in profile (tests/meson.build): Megatron's one all-reduce
    grep -q ", one all-reduce: ok$" <<<"$out" ||
        fail "$exe's plan is not one all-reduce over model"
    [ "$(echo "$out" | wc -l)" = 1 ] || fail "$exe printed more than its line (not quiet)"
done
deps=$(LD_LIBRARY_PATH=$libdir ldd mlp_shared)
grep -q "libmeshrt.so.0 => $libdir/" <<<"$deps" ||
    fail "mlp_shared does not load the installed libmeshrt.so.0"
echo "install.sh: ok"
