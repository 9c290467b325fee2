#!/usr/bin/env bash
# zero.sh MESHRT NP — ZeRO-1/2/3 with AdamW (tests/specs/zero_adam.yaml),
# on NP ranks (meson runs NP = 1-4) over a mesh {data: NP}:
#   - each of the alternatives dp, zero1, zero2 and zero3 trains 3 steps
#     with --verify: every step's loss, the gradients, the updated
#     parameters and the optimizer state (w:m:next, w:v:next) agree with
#     the unsharded reference (which knows no layouts), so the sharded
#     runs agree with each other too;
#   - their plans (at 4 ranks) show what each stage changes: dp keeps the
#     state whole and all-reduces the gradients; zero1 shards the state
#     (a [i, h/data] shard of w1's moments) and rebuilds each parameter by
#     an all-gather in the update; zero2 reduce-scatters the gradients
#     instead of all-reducing them; zero3 also gathers the parameters in
#     the forward pass;
#   - tests/specs/zero_adam_bf16.yaml, the same in mixed precision
#     (bf16 parameters, fp32 master weights, m and v), verified alike
#     (the master weights too), and zero1 gathers each parameter in
#     bfloat16 (w1's 6x3 shard: 36 bytes);
#   - the peak memory per rank falls from dp to zero1 to zero2 (the
#     plan's figure);
#   - tests/specs/optimizer_layout.yaml: an alternative's own
#     optimizer_layout per parameter, verified, and its shards in the
#     plan (the updated parameter back in the parameter's layout).
set -uo pipefail
meshrt=$1
np=$2
. "$(dirname "$0")/../lib.sh"
use_temp_dir
spec=$here/specs/zero_adam.yaml

for l in dp zero1 zero2 zero3; do
    if ! timeout 300 "$here/mpirun.sh" "$np" "$meshrt" run "$spec" \
         --mesh "data=$np" --layout "$l" --verify >"$dir/$l.out" 2>&1; then
        bad "$l at $np ranks: exit status not 0"; cat "$dir/$l.out"; continue
    fi
    for t in loss w1:next w2:next g:next w1:m:next w1:v:next g:v:next; do
        grep -q "^verify $t: .*: ok$" "$dir/$l.out" ||
            bad "$l at $np ranks: no verified $t"
    done
    n=$(grep -c "^verify loss of step [123]: .*: ok$" "$dir/$l.out")
    [ "$n" = 3 ] || bad "$l at $np ranks: $n of 3 step losses verified"
done
# the same in mixed precision (bf16 parameters, fp32 master weights)
for l in dp zero1 zero2 zero3; do
    if ! timeout 300 "$here/mpirun.sh" "$np" "$meshrt" run "$here/specs/zero_adam_bf16.yaml" \
         --mesh "data=$np" --layout "$l" --verify >"$dir/$l.bf16.out" 2>&1; then
        bad "bf16 $l at $np ranks: exit status not 0"; cat "$dir/$l.bf16.out"; continue
    fi
    for t in w1:next w1:master:next w1:m:next g:v:next g:master:next; do
        grep -q "^verify $t: .*: ok$" "$dir/$l.bf16.out" ||
            bad "bf16 $l at $np ranks: no verified $t"
    done
done

# optimizer_layout: of its own per parameter (tests/specs/optimizer_layout.yaml)
case $np in 4) mesh=data=2,model=2 ;; *) mesh=data=$np,model=1 ;; esac
ol=$here/specs/optimizer_layout.yaml
if ! timeout 300 "$here/mpirun.sh" "$np" "$meshrt" run "$ol" --mesh "$mesh" \
     --layout own --verify >"$dir/own.out" 2>&1; then
    bad "optimizer_layout at $np ranks: exit status not 0"; cat "$dir/own.out"
fi
for t in w1:next w2:next w1:m:next w2:v:next; do
    grep -q "^verify $t: .*: ok$" "$dir/own.out" ||
        bad "optimizer_layout at $np ranks: no verified $t"
done

[ "$np" = 4 ] || exit $fail
"$meshrt" plan "$ol" --layout own >"$dir/own.plan" 2>&1 || bad "plan of $ol failed"
grep -qE "^op [0-9]+: w1:m:next = lerp \(update\)  \[i/data\+model, h\]  shard 2x10$" "$dir/own.plan" ||
    bad "optimizer_layout: w1's state is not [i/data+model, h]"
grep -qE "^op [0-9]+: w2:v:next = lerp_sq \(update\)  \[h/model, o/data\]  shard 5x3$" "$dir/own.plan" ||
    bad "optimizer_layout: w2's state is not [h/model, o/data]"
grep -qE "^op [0-9]+: w2:next = sub \(update\)  \[h/model, o\]  shard 5x5$" "$dir/own.plan" ||
    bad "optimizer_layout: w2:next is not in w2's layout"
# the plans at 4 ranks
for l in dp zero1 zero2 zero3; do
    "$meshrt" plan "$spec" --layout "$l" >"$dir/$l.plan" 2>&1 ||
        bad "plan --layout $l failed"
done
has() { grep -qE "$2" "$dir/$1.plan" || bad "$1's plan lacks /$2/"; }
lacks() { ! grep -qE "$2" "$dir/$1.plan" || bad "$1's plan has /$2/"; }
has dp "allreduce +grad:w1 over data"
has dp "^op [0-9]+: w1:m:next = lerp \(update\)  \[i, h\]  shard 6x10$"
lacks dp "allgather"
has zero1 "allreduce +grad:w1 over data"
has zero1 "^op [0-9]+: w1:m:next = lerp \(update\)  \[i, h/data\]  shard 6x3$"
has zero1 "^op [0-9]+: w1:next = sub \(update\)  \[i, h\]  shard 6x10$"
has zero1 "allgather +w1:opt:decay over data"
has zero2 "reduce_scatter +grad:w1 over data"
lacks zero2 "allreduce +grad:w1"
has zero3 "allgather +w1 +over data"
has zero3 "^op [0-9]+: w1:next = sub \(update\)  \[i, h/data\]  shard 6x3$"
"$meshrt" plan "$here/specs/zero_adam_bf16.yaml" --layout zero1 >"$dir/bf16.plan" 2>&1 ||
    bad "plan of zero_adam_bf16.yaml failed"
grep -qE "allgather +w1:opt:cast over data \(group 4\) +36 bytes/rank" "$dir/bf16.plan" ||
    bad "bf16 zero1: w1 is not gathered in bfloat16 (6x3 x 2 bytes) in the update"
peak() { sed -nE 's/.*peak memory ([0-9]+) bytes\/rank.*/\1/p' "$dir/$1.plan" | head -1; }
p0=$(peak dp) p1=$(peak zero1) p2=$(peak zero2)
[ -n "$p0" ] && [ "$p1" -lt "$p0" ] && [ "$p2" -lt "$p1" ] ||
    bad "peak memory does not fall dp $p0 > zero1 $p1 > zero2 $p2"
exit $fail
