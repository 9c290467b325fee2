#!/usr/bin/env bash
# multihost.sh MESHRT — a run across two hosts over TCP (docs/multihost.md),
# the hosts made as network namespaces on this machine: "h1" and "h2",
# each with a veth into a bridge that lives in a third namespace, "sw",
# on 10.213.47.0/24 (addresses exist only inside the namespaces made here;
# nothing is added to this machine's own network).  mpirun starts inside
# h1 and reaches h2's orted through an rsh agent that enters h2's
# namespace (the filesystem is the same, so orted and meshrt are there).
# (a) the ranks sit two per host; (b) examples/mlp.yaml on 2x2 verifies
# across the hosts, hands to MPI the bytes its plan says, and its traffic
# crosses the bridge; (c) with h2 cut off mid-run (its bridge port set
# down), the job ends within 10 s with Open MPI's "lost communication"
# line (and a note if processes are left behind on either host).
# Then, with the link between the hosts shaped to 200 Mbit/s (tc's token
# bucket on each host's e0; traffic inside a host does not cross it):
# (d) calibrate across the hosts measures both tiers (2 ranks per node,
# the inter-node bandwidth well under the intra-node one) into a profile;
# (e) on that profile a hierarchical all-reduce across the hosts runs
# verified, MPI's nodes are the plan's, and its bytes per tier are those
# counted here from the sizes; (f) compare on that profile prefers the
# layout whose tensor-parallel sums stay inside the hosts (both then run,
# timed; whether the machine agrees is said, not asserted).
#
# $MESHRT_MPIRUN is not used: the hosts need their own transport settings.
# Without root or iproute2 this test FAILS (it cannot check anything).
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
spec="$here/../examples/mlp.yaml"
net=10.213.47
ns="mrt$$"          # namespace prefix: concurrent runs do not collide

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
    echo "FAIL: multihost: cannot make network namespaces:" \
         "needs root and iproute2 (ip)"
    exit 1
fi
dir=$(mktemp -d)
chmod 755 "$dir"
cleanup() {
    local n
    for n in h1 h2 sw; do
        ip netns pids "$ns$n" 2>/dev/null | xargs -r kill -9 2>/dev/null
        ip netns del "$ns$n" 2>/dev/null
    done
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# The two hosts and the switch between them.  Interfaces are made inside
# their namespaces (no name appears, even briefly, on this machine's own
# network): br0 in sw; e0 in each host, its peer pN in sw on br0.
make_hosts() {
    ip netns add "${ns}sw" && ip -n "${ns}sw" link add br0 type bridge &&
        ip -n "${ns}sw" link set br0 up || return 1
    local i
    for i in 1 2; do
        ip netns add "${ns}h$i" &&
            ip link add e0 netns "${ns}h$i" type veth \
                peer name "p$i" netns "${ns}sw" &&
            ip -n "${ns}sw" link set "p$i" master br0 up &&
            ip -n "${ns}h$i" addr add "$net.$i/24" dev e0 &&
            ip -n "${ns}h$i" link set e0 up &&
            ip -n "${ns}h$i" link set lo up || return 1
    done
}
if ! err=$(make_hosts 2>&1); then
    echo "FAIL: multihost: cannot make network namespaces: $err"
    exit 1
fi

# The rsh agent: Open MPI calls it as AGENT HOST COMMAND..., with the
# command as words for a shell, as ssh would take them.
cat >"$dir/agent" <<EOF
#!/bin/sh
host=\$1; shift
case \$host in
    $net.1) exec ip netns exec ${ns}h1 /bin/sh -c "\$*" ;;
    $net.2) exec ip netns exec ${ns}h2 /bin/sh -c "\$*" ;;
esac
echo "agent: unknown host \$host" >&2
exit 1
EOF
chmod 755 "$dir/agent"
printf '%s slots=2\n' "$net.1" "$net.2" >"$dir/hosts"

# mpirun on h1 with the settings docs/multihost.md explains.
cmd=(ip netns exec "${ns}h1" mpirun --allow-run-as-root
     --hostfile "$dir/hosts" --mca plm_rsh_agent "$dir/agent"
     --mca rtc ^hwloc --mca btl tcp,self
     --mca oob_tcp_if_include "$net.0/24" --mca btl_tcp_if_include "$net.0/24"
     --mca oob_tcp_keepalive_time 2 --mca oob_tcp_keepalive_intvl 1
     --mca oob_tcp_keepalive_probes 3)
for v in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS MESHRT_PROFILE; do
    [ -n "${!v:-}" ] && cmd+=(-x "$v")
done
port_bytes() { # the bytes through h2's bridge port, both ways
    ip -n "${ns}sw" -s -j link show p2 | python3 -c '
import json, sys
s = json.load(sys.stdin)[0]["stats64"]
print(s["rx"]["bytes"] + s["tx"]["bytes"])'
}

# (a) Where the ranks are: each prints its rank and its host's address.
check_placement() {
    local where want
    # (stdout only: Open MPI's launcher may warn on stderr, e.g. of a
    # setpgid that lost a race with the child it started)
    where=$(timeout -s KILL 30 "${cmd[@]}" -n 4 sh -c 'echo \
        "$OMPI_COMM_WORLD_RANK $(ip -4 -o addr show e0 | awk "{print \$4}")"' \
        2>"$dir/where.err" | sort)
    want=$(printf '%s\n' "0 $net.1/24" "1 $net.1/24" \
                         "2 $net.2/24" "3 $net.2/24")
    if [ "$where" = "$want" ]; then
        echo "ok: ranks 0 and 1 on h1, 2 and 3 on h2"
    else
        bad "ranks are not two per host: got:"$'\n'"$where"
        cat "$dir/where.err"
    fi
}

# verified RUN_JSON PLANNED: every check ok, bytes as planned.
verified() {
    python3 -c '
import json, sys
r = json.load(sys.stdin)
ok = (r["ranks"] == 4 and r["totals"]["bytes_match"]
      and r["totals"]["bytes"] == int(sys.argv[1]) and r["verify"]
      and all(v["ok"] for v in r["verify"] + r["verify_losses"]))
sys.exit(0 if ok else 1)' "$2" <<<"$1"
}

# (b) A verified run across the hosts, bytes as planned, and at least a
# rank's worth of them over h2's bridge port.
check_run() {
    local planned before out crossed
    planned=$("$meshrt" plan "$spec" --json |
              sed -n 's/.*"totals": {"comm_bytes": \([0-9]*\).*/\1/p')
    before=$(port_bytes)
    if ! out=$(timeout -s KILL 60 "${cmd[@]}" -n 4 \
               "$meshrt" run "$spec" --verify --json 2>"$dir/run.err"); then
        bad "the run across two hosts failed (exit $?)"
        echo "$out"; cat "$dir/run.err"
        return
    fi
    crossed=$(( $(port_bytes) - before ))
    if ! verified "$out" "$planned"; then
        bad "the run across two hosts did not verify, or its bytes" \
            "are not the plan's $planned"
        echo "$out"; cat "$dir/run.err"
    elif [ "$crossed" -lt "$planned" ]; then
        bad "only $crossed bytes crossed the bridge (the plan: $planned" \
            "bytes per rank)"
    else
        echo "ok: $spec verified across two hosts ($planned bytes/rank," \
             "$crossed bytes over the bridge)"
    fi
}

running_on_h2() { # how many meshrt processes h2 runs
    ip netns pids "${ns}h2" | xargs -r ps -o comm= -p | grep -c '^meshrt$'
}

# (c) h2 cut off mid-run: a long run (some 15 s uncut) in the
# background; once h2 runs its two ranks, its bridge port goes down.
check_cut() {
    local job cut rc took left
    local lost='ORTE has lost communication with a remote daemon'
    timeout -s KILL 30 "${cmd[@]}" -n 4 "$meshrt" run "$spec" --repeat 300 \
        >"$dir/cut.out" 2>&1 &
    job=$!
    for _ in $(seq 100); do
        [ "$(running_on_h2)" = 2 ] && break
        sleep 0.2
    done
    sleep 1
    if ! kill -0 "$job" 2>/dev/null; then
        bad "the long run ended before the cut"; cat "$dir/cut.out"
        return
    fi
    ip -n "${ns}sw" link set p2 down
    cut=$(date +%s.%N)
    wait "$job"; rc=$?
    took=$(awk -v a="$cut" -v b="$(date +%s.%N)" \
               'BEGIN { printf "%.1f", b - a }')
    if [ "$rc" = 0 ] || [ "$rc" = 137 ]; then
        bad "with h2 cut off, mpirun exited $rc after $took s" \
            "(0: not cut; 137: killed at 30 s)"
    elif awk -v t="$took" 'BEGIN { exit !(t >= 10) }'; then
        bad "with h2 cut off, the job took $took s to end (over 10 s)"
    elif ! grep -q "$lost" "$dir/cut.out"; then
        bad "with h2 cut off, the job ended without saying why:"
        cat "$dir/cut.out"
    else
        echo "ok: h2 cut off, the job ended $took s later (exit $rc): $lost"
    fi
    # The cut-off host's orted (keepalives too) usually ends its ranks
    # within seconds; not always (in an ASan build with slow unwinding
    # they were seen asleep past 30 s), and it is Open MPI's teardown,
    # not what this test is about: said, not failed.  cleanup kills
    # what is left.
    for _ in $(seq 40); do
        left=$(ip netns pids "${ns}h1"; ip netns pids "${ns}h2")
        [ -z "$left" ] && return
        sleep 0.2
    done
    echo "note: processes left on the hosts 8 s after the job ended:" \
         "$(echo "$left" | xargs ps -o comm= -p | tr '\n' ' ')"
}

# The link between the hosts at 200 Mbit/s each way (25 MB/s), a token
# bucket on each host's e0 (tc from iproute2).
shape_link() {
    local i
    for i in 1 2; do
        tc -n "${ns}h$i" qdisc add dev e0 root tbf rate 200mbit \
            burst 64kb latency 100ms || return 1
    done
}

# json FILE EXPR: a Python expression over the JSON object d of FILE.
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# Ranks that wait yield the core: the 4 ranks and 2 daemons share this
# machine's cores (with busy waiting, a ping-pong inside a host measured
# 30 ms and 0.02 GB/s here; yielding, 14 us and 0.45 GB/s).
yield=(--mca mpi_yield_when_idle 1)

# (d) calibrate across the hosts: both tiers, into $dir/profile.yaml.
check_calibrate() {
    if ! timeout -s KILL 120 "${cmd[@]}" -n 4 "${yield[@]}" "$meshrt" calibrate --quick \
            --out "$dir/profile.yaml" >"$dir/cal.out" 2>&1; then
        bad "calibrate across the hosts failed"; cat "$dir/cal.out"
        return 1
    fi
    python3 - "$dir/profile.yaml" >"$dir/tiers" <<'PY' || {
import re, sys
t = open(sys.argv[1]).read()  # the lines profile_io.c writes under nodes:
r = re.search(r"\nnodes:\n  ranks_per_node: (\d+)\n"
              r"  intra: \{latency_us: \S+, bandwidth_GBps: ([^}]+)\}\n"
              r"  inter: \{latency_us: \S+, bandwidth_GBps: ([^}]+)\}", t)
if not r:
    print("no nodes: block"); sys.exit(1)
n, a, e = int(r[1]), float(r[2]), float(r[3])
print(n, a, e)
sys.exit(0 if n == 2 and e < 0.05 and e < a / 4 else 1)
PY
        bad "calibrate: not 2 ranks per node with a slow inter-node tier" \
            "(ranks_per_node, intra and inter GB/s: $(cat "$dir/tiers"))"
        cat "$dir/cal.out"; return 1
    }
    echo "ok: calibrate measured both tiers across the hosts" \
         "(ranks per node, intra and inter GB/s: $(cat "$dir/tiers"))"
}

# (e) hier.yaml's all-reduce of y (64 x 10 float32 = 2560 bytes per rank)
# over both axes, on the calibrated profile: hierarchical; counted here,
# the reduce-scatter inside each host hands 2560 bytes, the all-reduce
# across hosts and the all-gather 1280 each.
check_hier() {
    local h="$here/specs/nodes/hier.yaml" n=$((64 * 10 * 4))
    local half=$((n / 2)) m=(--machine "$dir/profile.yaml" --planner meshtf)
    "$meshrt" plan "$h" "${m[@]}" --json >"$dir/hp.json"
    if [ "$(json "$dir/hp.json" 'd["ops"][0]["collectives"][0]["hierarchical"]')" != True ]; then
        bad "on the calibrated profile the all-reduce is not hierarchical"
        "$meshrt" plan "$h" "${m[@]}"; return
    fi
    if ! timeout -s KILL 60 "${cmd[@]}" -n 4 "$meshrt" run "$h" "${m[@]}" \
            --verify --json >"$dir/hr.json" 2>"$dir/hr.err"; then
        bad "the hierarchical all-reduce across the hosts failed"
        cat "$dir/hr.json" "$dir/hr.err"; return
    fi
    local got
    got=$(json "$dir/hr.json" '" ".join(str(x) for x in (d["totals"]["bytes_match"], all(v["ok"] for v in d["verify"]), d["totals"]["placement_differs"], d["totals"]["bytes_intra"], d["totals"]["bytes_inter"]))')
    if [ "$got" != "True True False $((n + half)) $half" ]; then
        bad "hierarchical all-reduce across the hosts: bytes match, verified," \
            "placement differs, intra, inter = $got (want True True" \
            "False $((n + half)) $half)"
        cat "$dir/hr.json"
    else
        echo "ok: a hierarchical all-reduce across the hosts verified," \
             "$((n + half)) bytes/rank inside hosts and $half across, as counted"
    fi
}

# (f) compare on the calibrated profile: tp_inner (the tensor-parallel
# split inside the hosts) is the fastest; both layouts run, timed.
check_compare() {
    local t="$here/specs/nodes/tp_place.yaml" l ms=""
    "$meshrt" compare "$t" --machine "$dir/profile.yaml" \
        --json "$dir/c.json" >"$dir/c.out" ||
        { bad "compare on the calibrated profile failed"; return; }
    if [ "$(json "$dir/c.json" 'd["fastest"]')" != tp_inner ]; then
        bad "compare on the calibrated profile: the fastest is not tp_inner"
        cat "$dir/c.out"; return
    fi
    for l in spec tp_inner; do
        local arg=(); [ $l = spec ] || arg=(--layout $l)
        timeout -s KILL 60 "${cmd[@]}" -n 4 "${yield[@]}" "$meshrt" run "$t" "${arg[@]}" \
            --machine "$dir/profile.yaml" --repeat 5 --json >"$dir/$l.json" \
            2>/dev/null || { bad "run $l across the hosts failed"; return; }
        ms="$ms $l $(json "$dir/$l.json" '"%.2f ms" % (1e3 * d["totals"]["time_s"])')"
    done
    echo "ok: compare on the calibrated profile picks tp_inner (measured" \
         "per run:$ms)"
    # the machine's order is said, not asserted: this machine is shared
    python3 -c 'import json,sys; t=[json.load(open(f))["totals"]["time_s"] for f in sys.argv[1:]]; sys.exit(t[0] >= t[1])' \
        "$dir/tp_inner.json" "$dir/spec.json" ||
        echo "note: measured, tp_inner was not the faster here"
}

check_placement
check_run
if ! err=$(shape_link 2>&1); then
    bad "cannot shape the link between the hosts with tc: $err"
elif check_calibrate; then
    check_hier
    check_compare
fi
check_cut
exit $fail
