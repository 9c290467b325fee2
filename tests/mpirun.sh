#!/usr/bin/env bash
# mpirun.sh NP PROGRAM ARGS... — runs PROGRAM on NP MPI ranks the way the
# test suite does (lib.sh's mpirun_command).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
np=$1; shift
mpirun_command
exec "${mpirun_cmd[@]}" -n "$np" "$@"
