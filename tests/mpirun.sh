#!/usr/bin/env bash
# mpirun.sh NP PROGRAM ARGS... — runs PROGRAM on NP MPI ranks the way the
# test suite does: with $MESHRT_MPIRUN (set by ./dev test) or, when meson
# test is called directly, the same settings ./dev uses.
set -euo pipefail
np=$1; shift
if [ -n "${MESHRT_MPIRUN:-}" ]; then
    read -r -a cmd <<<"$MESHRT_MPIRUN"
else
    cmd=(mpirun --quiet --oversubscribe --mca btl_vader_single_copy_mechanism none)
    [ "$(id -u)" = 0 ] && cmd+=(--allow-run-as-root)
fi
# Sanitizer settings and the pinned profile reach every rank.
for v in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS MESHRT_PROFILE MESHRT_MPI_MAX_COUNT; do
    [ -n "${!v:-}" ] && cmd+=(-x "$v")
done
exec "${cmd[@]}" -n "$np" "$@"
