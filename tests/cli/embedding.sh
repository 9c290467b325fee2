#!/usr/bin/env bash
# embedding.sh MESHRT — the vocab-parallel embedding's bytes, planned and
# run (issue 18, item 3).  tests/specs/embedding/: a table of 1001 rows
# (uneven over 2, 3 and 4) split over model; on 1-4 ranks the lookup is
# one all-reduce of the output's shard (b·s·d·4 bytes) over model, or, with
# the output split over the sequence on model, one reduce-scatter of the
# same bytes; no other collective.  Each runs verified, and `run` reports
# the bytes handed to MPI equal to the plan's (the ledger).
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
specs=$here/specs/embedding
shard=$((2 * 8 * 16 * 4)) # e: [b, s, d] float32, whole on every rank
for np in 1 2 3 4; do
    for spec in vocab_parallel sequence_parallel; do
        want="gather allreduce"
        [ "$spec" = sequence_parallel ] && want="gather reduce_scatter"
        [ "$np" = 1 ] && want="gather"
        plan=$("$meshrt" plan "$specs/$spec.yaml" --mesh data=1,model=$np --json) ||
            { bad "$spec at $np: plan failed"; continue; }
        got=$(python3 -c '
import json, sys
p = json.load(sys.stdin)
op = p["ops"][0]
kinds = " ".join(s["kind"] for s in op["steps"])
print(kinds, sum(c["bytes"] for c in op["collectives"]))' <<<"$plan")
        bytes=$shard
        [ "$np" = 1 ] && bytes=0
        [ "$got" = "$want $bytes" ] || bad "$spec at $np ranks: op 0 is '$got', want '$want $bytes'"
        out=$("$here/mpirun.sh" "$np" "$meshrt" run "$specs/$spec.yaml" --mesh data=1,model=$np --verify 2>&1)
        status=$?
        { [ $status = 0 ] && grep -q "bytes match the plan" <<<"$out" &&
              grep -q "^verify e: .*: ok$" <<<"$out"; } ||
            { bad "$spec at $np ranks: run (status $status)"; echo "$out"; }
        row=$(grep -E "^ +1 +forward +e " <<<"$out" | awk '{print $5, $6}')
        [ "$row" = "$bytes $bytes" ] || bad "$spec at $np ranks: run's bytes of e '$row', want '$bytes $bytes'"
    done
done
# int32 ids moved between layouts in a float64 program: every collective
# of the ids hands MPI 4 bytes an element, and the run's bytes are the
# plan's (tests/specs/ops/embedding_ids.yaml: ids [b/model, s] to the
# output's [b, s/model]).
ids=$here/specs/ops/embedding_ids.yaml
for np in 2 3 4; do
    plan=$("$meshrt" plan "$ids" --mesh data=1,model=$np --json) ||
        { bad "ids at $np: plan failed"; continue; }
    got=$(python3 -c '
import json, sys
p = json.load(sys.stdin)
cs = [c for op in p["ops"] for c in op["collectives"] if c["tensor"] == "ids"]
# ids: [b: 4, s: 6] int32; every rank hands its whole shard, the ranks
# together the whole tensor (4 * 6 elements) once
print(len(cs), all(c["bytes_total"] == 4 * 6 * 4 for c in cs))' <<<"$plan")
    [ "$got" = "1 True" ] || bad "ids at $np ranks: collectives of the ids '$got', want one of 96 bytes in all"
    out=$("$here/mpirun.sh" "$np" "$meshrt" run "$ids" --mesh data=1,model=$np --verify 2>&1)
    { [ $? = 0 ] && grep -q "bytes match the plan" <<<"$out"; } ||
        { bad "ids at $np ranks: run"; echo "$out"; }
done
[ $fail = 0 ] && echo "ok: vocab- and sequence-parallel embeddings, int32 ids moved, at 1-4 ranks"
exit $fail
