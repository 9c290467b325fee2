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

check_placement
check_run
check_cut
exit $fail
