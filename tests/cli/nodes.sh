#!/usr/bin/env bash
# nodes.sh MESHRT — ranks on nodes (docs/cost-model.md, "Nodes"): the
# shipped profiles by name; each mesh axis's tier from --ranks-per-node;
# the hierarchical all-reduce's bytes per tier against a count made here
# from the sizes, in the plan and in runs at 1-4 ranks (verified, every
# rank's ledger equal to the plan per tier); check's warning about a
# tensor-parallel axis across nodes; compare preferring the layout that
# keeps the tensor-parallel sums inside the nodes.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
specs=$here/specs/nodes
tiers=$specs/tiers.yaml
use_temp_dir

# json FILE EXPR: a Python expression over the JSON object d of FILE.
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
# is WHAT GOT WANT
is() { [ "$2" = "$3" ] || bad "$1: got '$2', want '$3'"; }

# (a) The profiles of profiles/ by name; a name that is none of them is
# one error line listing them, exit 2; a path is a file as before.
for m in dgx-a100 dgx-h100 cpu-100gbe; do
    expect 0 0 "" "$meshrt" plan "$here/../examples/mlp.yaml" --machine "$m" --json
    grep -q "profiles/$m.yaml" "$dir/stdout" || bad "--machine $m: not profiles/$m.yaml"
    grep -q '"ranks_per_node": 8\|"ranks_per_node": 64' "$dir/stdout" || bad "$m: no nodes"
done
expect 2 1 "^dgx-b300: error: no such machine profile .*: cpu-100gbe, dgx-a100, dgx-h100\)$" \
    "$meshrt" plan "$here/../examples/mlp.yaml" --machine dgx-b300
expect 2 1 "^nowhere/dgx-h100: error: cannot open profile" \
    "$meshrt" plan "$here/../examples/mlp.yaml" --machine nowhere/dgx-h100
expect 0 0 "" "$meshrt" plan "$here/../examples/mlp.yaml" --machine "$tiers"
# $MESHRT_PROFILES_DIR comes first; a name it lacks is still found.
mkdir "$dir/mine" && cp "$tiers" "$dir/mine/slow.yaml"
MESHRT_PROFILES_DIR=$dir/mine expect 0 0 "" "$meshrt" plan "$here/../examples/mlp.yaml" --machine slow
grep -q "mine/slow.yaml (test: two tiers)" "$dir/stdout" || bad "--machine slow: not \$MESHRT_PROFILES_DIR's"
MESHRT_PROFILES_DIR=$dir/mine expect 0 0 "" "$meshrt" plan "$here/../examples/mlp.yaml" --machine dgx-h100
MESHRT_PROFILES_DIR=$dir/mine expect 2 1 "^nope: error: no such machine profile .* of $dir/mine: slow\)$" \
    "$meshrt" plan "$here/../examples/mlp.yaml" --machine nope
expect 2 1 "--ranks-per-node needs a count" \
    "$meshrt" plan "$here/../examples/mlp.yaml" --ranks-per-node 0

# (b) Tiers from the rank order (the last axis innermost): 4 ranks per
# node on {a: 2, b: 4}: b inside, a across; 8 per node: both inside;
# 2 per node: b mixed (2 of its 4 on each node).
tier() { # MESH RPN: the axis tiers as "a=T b=T"
    "$meshrt" plan "$specs/hier.yaml" --mesh "$1" --ranks-per-node "$2" --json >"$dir/t.json" &&
        json "$dir/t.json" '" ".join(k+"="+v for k,v in d["totals"]["axis_tiers"].items())'
}
is "4 per node" "$(tier data=2,model=4 4)" "data=inter model=intra"
is "8 per node" "$(tier data=2,model=4 8)" "data=intra model=intra"
is "2 per node" "$(tier data=2,model=4 2)" "data=inter model=mixed"
is "3 per node" "$(tier data=1,model=3 1)" "data=intra model=inter"

# (c) The hierarchical all-reduce: hier.yaml's y is batch x n = 64 x 10
# float32 per rank, 2560 bytes; 2 ranks of each group per node: the
# reduce-scatter hands 2560, the all-reduce across nodes and the
# all-gather the node's half, 1280 each.  Counted here:
n=$((64 * 10 * 4)); q=2; half=$((n / q))
"$meshrt" plan "$specs/hier.yaml" --machine "$tiers" --json >"$dir/p.json" || bad "plan hier"
is "hierarchical" "$(json "$dir/p.json" 'd["ops"][0]["collectives"][0]["hierarchical"]')" True
is "bytes" "$(json "$dir/p.json" 'd["totals"]["comm_bytes"]')" $((n + 2 * half))
is "inter" "$(json "$dir/p.json" 'd["totals"]["comm_bytes_inter"]')" $half
is "intra" "$(json "$dir/p.json" 'd["totals"]["comm_bytes_intra"]')" $((n + half))
is "all ranks" "$(json "$dir/p.json" 'd["totals"]["comm_bytes_total"]')" $((4 * (n + 2 * half)))
# With both tiers alike (--ranks-per-node on the default profile) the
# hierarchy only adds messages: flat, but its bytes all cross nodes.
"$meshrt" plan "$specs/hier.yaml" --ranks-per-node 2 --json >"$dir/a.json" || bad "plan alike"
is "alike: flat" "$(json "$dir/a.json" 'd["ops"][0]["collectives"][0]["hierarchical"]')" False
is "alike: tier" "$(json "$dir/a.json" 'd["ops"][0]["collectives"][0]["tier"]')" mixed
is "alike: inter" "$(json "$dir/a.json" 'd["totals"]["comm_bytes_inter"]')" $n
# On the default profile (one node) the same all-reduce is flat.
"$meshrt" plan "$specs/hier.yaml" --json >"$dir/f.json" || bad "plan flat"
is "flat bytes" "$(json "$dir/f.json" 'd["totals"]["comm_bytes"]')" $n
# An uneven all-reduce: n = 7 makes 64 x 7 = 448 elements, halves of 224.
"$meshrt" plan "$specs/hier.yaml" --machine "$tiers" --dim n=7 --json >"$dir/u.json"
is "uneven bytes" "$(json "$dir/u.json" 'd["totals"]["comm_bytes"]')" $(((448 + 2 * 224) * 4))

# Runs, verified: at 4 ranks hierarchical, the ledger's bytes per tier
# equal to the count above (rank 0's in the report; every rank's against
# the plan, or the run fails); at 1-3 ranks the meshes that fit, flat.
run_json() { # NP ARGS...: run --json into $dir/r.json
    local np=$1; shift
    "$here/mpirun.sh" "$np" "$meshrt" run "$specs/hier.yaml" --machine "$tiers" \
        --verify --json "$@" >"$dir/r.json" || bad "run at $np ranks $*"
}
for nn in 10 7; do
    run_json 4 --dim n=$nn
    nb=$((64 * nn * 4)); hb=$(((64 * nn + 1) / 2 * 4))
    is "run n=$nn match" "$(json "$dir/r.json" 'd["totals"]["bytes_match"]')" True
    is "run n=$nn inter" "$(json "$dir/r.json" 'd["totals"]["bytes_inter"]')" $hb
    is "run n=$nn intra" "$(json "$dir/r.json" 'd["totals"]["bytes_intra"]')" $((nb + hb))
    is "run n=$nn verify" "$(json "$dir/r.json" 'all(c["ok"] for c in d["verify"])')" True
done
for m in 1:data=1,model=1 2:data=2,model=1 2:data=1,model=2 3:data=3,model=1 3:data=1,model=3; do
    run_json "${m%%:*}" --mesh "${m#*:}"
    is "run $m match" "$(json "$dir/r.json" 'd["totals"]["bytes_match"]')" True
    is "run $m verify" "$(json "$dir/r.json" 'all(c["ok"] for c in d["verify"])')" True
done
# data=1,model=3 on nodes of 2: its model groups are mixed but not
# aligned, so flat, and all its bytes cross nodes.
is "3 ranks inter" "$(json "$dir/r.json" 'd["totals"]["bytes_inter"]')" "$(json "$dir/r.json" 'd["totals"]["bytes"]')"

# (d) check warns about a tensor-parallel axis across nodes, at the op
# that sums over it; not when that axis is inside the nodes.
tp="^[^ ]*tp_place[.]yaml:18:5: warning: mesh axis 'outer' is tensor-parallel \(op 3, y = einsum, sums over it every forward step\) and its groups cross nodes of 2 ranks"
expect 0 1 "$tp" "$meshrt" check "$specs/tp_place.yaml" --machine "$tiers" --memory 1G
expect 0 1 "$tp" "$meshrt" check "$specs/tp_place.yaml" --ranks-per-node 2 --memory 1G
expect 0 0 "" "$meshrt" check "$specs/tp_place.yaml" --machine "$tiers" --memory 1G --layout tp_inner
expect 0 0 "" "$meshrt" check "$specs/tp_place.yaml" --memory 1G

# (e) compare on the two-tier machine: tp_inner, whose tensor-parallel
# sums stay inside the nodes, is the fastest, and moves no byte across.
"$meshrt" compare "$specs/tp_place.yaml" --machine "$tiers" --json "$dir/c.json" >/dev/null ||
    bad "compare"
is "fastest" "$(json "$dir/c.json" 'd["fastest"]')" tp_inner
for l in spec tp_inner; do
    arg=(); [ "$l" = spec ] || arg=(--layout "$l")
    "$meshrt" plan "$specs/tp_place.yaml" --machine "$tiers" --json "${arg[@]}" >"$dir/$l.json"
done
is "spec across" "$(json "$dir/spec.json" 'd["totals"]["comm_bytes_inter"] > 0')" True
is "tp_inner across" "$(json "$dir/tp_inner.json" 'd["totals"]["comm_bytes_inter"]')" 0
exit $fail
