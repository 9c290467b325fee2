#!/usr/bin/env bash
# validate.sh MESHRT — `meshrt validate` at 1, 2, 3 and 4 ranks: it runs
# the spec's own rules and every alternative of its layouts:, and its
# report is well formed whatever the machine's speed (the JSON parses,
# lists every partitioning in file order, each ran with positive modeled
# and measured times; Kendall's tau is in [-1, 1]; the model's pick and
# the measured fastest are partitionings, the pick no faster than the
# fastest).  Partitionings that lower to one plan run once and rank as
# one: on one rank every partitioning of zero.yaml is the spec's plan;
# on data=2,model=1 megatron (d_ff over the size-1 model axis) is ddp's,
# and zero3 (which shards what ddp keeps whole) is its own.  Each
# partitioning carries the machine's speed during its runs against the
# profile, and its ratio at that speed follows from its breakdown.  The
# text report names every partitioning.  Bad input is one
# line and exit status 2.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
use_temp_dir
spec="$here/../examples/zero.yaml"
# spec first, then the alternatives in file order, as compare lists them
"$meshrt" compare "$spec" --json "$dir/compare.json" >/dev/null ||
    bad "compare --json failed"
names=$(python3 -c 'import json, sys
print(" ".join(r["name"] for r in json.load(open(sys.argv[1]))["layouts"]))' "$dir/compare.json")
[ "$(echo $names | wc -w)" -ge 3 ] || bad "compare lists no alternatives: '$names'"

for np in 1 2 3 4; do
    case $np in
    1) mesh=data=1,model=1 ;; 2) mesh=data=2,model=1 ;;
    3) mesh=data=3,model=1 ;; 4) mesh=data=2,model=2 ;;
    esac
    if ! "$here/mpirun.sh" $np "$meshrt" validate "$spec" --mesh $mesh \
            --repeat 2 --json >"$dir/json$np" 2>"$dir/err$np"; then
        bad "validate --json at $np ranks failed"; cat "$dir/err$np"
    fi
    python3 - "$dir/json$np" $np $names <<'PY' || { bad "validate --json at $np ranks"; cat "$dir/json$np"; }
import json, sys
d = json.load(open(sys.argv[1]))
np, names = int(sys.argv[2]), sys.argv[3:]
assert d["ranks"] == np and d["repeat"] == 2, d
assert d["products_timed"] >= 2, d["products_timed"]  # h, y, their grads
# and timed again after each of the 2 rounds of runs (validate_products.c)
assert d["product_rounds"] == 2, d["product_rounds"]
assert d["products_retimed"] >= 2, d["products_retimed"]
alts = d["alternatives"]
assert [a["name"] for a in alts] == names, ([a["name"] for a in alts], names)
by = {a["name"]: a for a in alts}
same = {a["name"]: a["same_as"] for a in alts if "same_as" in a}
for a, b in same.items():  # an earlier one's plan, and its figures
    assert names.index(b) < names.index(a) and b not in same, (a, b)
    for k in ("model_ms", "measured_ms", "ratio", "speed", "run_spread",
              "classes", "ops"):
        assert by[a][k] == by[b][k], (a, b, k)
if np == 1:
    assert set(same) == set(names[1:]) and set(same.values()) == {"spec"}, same
if np == 2:
    assert same.get("megatron") == "ddp" and "zero3" not in same, same
for a in alts:
    assert a["ok"] is True, a
    assert a["model_ms"] > 0 and a["measured_ms"] > 0, a
    assert a["cpu_share"] > 0, a
    assert abs(a["ratio"] - a["measured_ms"] / a["model_ms"]) < 2e-3 * a["ratio"], a
    assert a["ops"] and all(o["measured_ms"] >= 0 for o in a["ops"]), a
    kinds = {c["kind"] for c in a["classes"]}
    assert "einsum" in kinds, kinds
    assert (np == 1) == (not any(c["kind"] in ("allreduce", "allgather",
        "reduce_scatter", "alltoall") for c in a["classes"])), a["classes"]
    steps = sum(c["steps"] for c in a["classes"])
    assert steps >= len(a["ops"]), (steps, len(a["ops"]))
    # the machine's speed during its runs, and the model at that speed:
    # its local steps at that speed (validate_probe.c)
    sp = a["speed"]
    assert sp["of_profile"] > 0 and sp["probe_gflops"] > 0, sp
    part = lambda kind: sum(c["model_ms"] for c in a["classes"] if c["kind"] == kind)
    at = a["model_ms"] + (part("einsum") + part("local")) * (1 / sp["of_profile"] - 1)
    assert abs(sp["ratio"] - a["measured_ms"] / at) < 0.02 * sp["ratio"], (sp, at)
    assert a["run_spread"] >= 0, a  # the median run is no faster than the fastest
tau = d["kendall_tau"]  # undefined for one plan
assert (tau is None) if d["ratio"]["plans"] < 2 else -1 <= tau <= 1, tau
assert d["ratio"]["plans"] == len(names) - len(same), d["ratio"]
worst_at = max((a["speed"]["ratio"] for a in alts), key=lambda r: abs(__import__("math").log(r)))
assert abs(d["ratio"]["at_speed_worst"] - worst_at) < 1e-3 * worst_at, d["ratio"]
assert d["model_pick"] in names and d["measured_fastest"] in names, d
assert d["model_pick"] not in same and d["measured_fastest"] not in same, d
fast = by[d["measured_fastest"]]["measured_ms"]
assert all(a["measured_ms"] >= fast for a in alts), d
assert d["pick_slower"] >= 0, d
assert d["run_spread"] == max(a["run_spread"] for a in alts), d
assert abs(by[d["model_pick"]]["model_ms"] - min(a["model_ms"] for a in alts)) < 1e-9, d
PY
done

# Per step: an execution of a training spec is its `steps` SGD steps,
# and validate's figures are per step, as the plan models one.  The same
# spec at 2 steps and at 12 takes about the same CPU time per step (the
# measured time times the CPU share: a loaded machine preempts a long
# execution more often than a short one, which wall times would show):
# 6x before the fix; the geometric mean over the partitionings of the
# ratio is below sqrt(6), at 1 rank (no rank waits for another).
sed 's/steps: 3}/steps: 2}/' "$spec" >"$dir/two.yaml"
sed 's/steps: 3}/steps: 12}/' "$spec" >"$dir/twelve.yaml"
grep -q 'steps: 12}' "$dir/twelve.yaml" || bad "zero.yaml's train: steps not found"
for s in two twelve; do
    "$here/mpirun.sh" 1 "$meshrt" validate "$dir/$s.yaml" --mesh data=1,model=1 \
        --dim batch=64,d_model=64,d_ff=256 --repeat 5 --json >"$dir/$s.json" 2>"$dir/err" ||
        { bad "validate $s.yaml failed"; cat "$dir/err"; }
done
python3 - "$dir/two.json" "$dir/twelve.json" <<'PY' || bad "validate is not per step"
import json, math, sys
two, twelve = (json.load(open(f)) for f in sys.argv[1:])
cpu = lambda a: a["measured_ms"] * a["cpu_share"]
r = [cpu(b) / cpu(a)
     for a, b in zip(two["alternatives"], twelve["alternatives"])]
g = math.exp(sum(map(math.log, r)) / len(r))
assert g < math.sqrt(6), (g, r)
assert two["steps_per_run"] == 2 and twelve["steps_per_run"] == 12, twelve
for b in twelve["alternatives"]:  # one rank's steps fit in its run
    steps = sum(c["measured_ms"] for c in b["classes"])
    assert steps <= 1.01 * b["measured_ms"], (b["name"], steps, b["measured_ms"])
PY

# The text report at 2 ranks: a line per partitioning, and the summary.
"$here/mpirun.sh" 2 "$meshrt" validate "$spec" --mesh data=2,model=1 \
    --repeat 1 >"$dir/text" 2>"$dir/err" || bad "validate (text) failed"
grep -qE "^products priced at their own shapes' rates: [1-9][0-9]* shapes timed on these ranks before planning" "$dir/text" ||
    bad "the text report does not say how many products it timed"
# --gemm-rows: no product timed, every one priced by the gemm rows, as
# plan prices it: the modeled times are plan's
"$here/mpirun.sh" 2 "$meshrt" validate "$spec" --mesh data=2,model=1 \
    --repeat 1 --gemm-rows --json >"$dir/rows.json" 2>"$dir/err" ||
    { bad "validate --gemm-rows failed"; cat "$dir/err"; }
"$meshrt" plan "$spec" --mesh data=2,model=1 --json >"$dir/plan.json" ||
    bad "plan --json failed"
python3 - "$dir/rows.json" "$dir/plan.json" <<'PY' || bad "validate --gemm-rows"
import json, sys
d, p = (json.load(open(f)) for f in sys.argv[1:])
assert d["products_timed"] == -1, d["products_timed"]
assert d["product_rounds"] == 0 and d["products_retimed"] == 0, d
spec = d["alternatives"][0]
assert spec["name"] == "spec", spec
total = p["totals"]["time_s"] * 1e3
assert abs(spec["model_ms"] - total) < 1e-3 * total, (spec["model_ms"], total)
PY
for n in $names; do
    grep -qE "^$n: (end to end model [0-9.]+ ms, measured [0-9.]+ ms, ratio [0-9.]+; CPU share [0-9.]+;|the same plan as [a-z0-9_]+, run once as that one$)" "$dir/text" ||
        bad "no line for $n in the text report"
done
grep -qE "^megatron: the same plan as ddp, run once as that one$" "$dir/text" ||
    bad "megatron is not listed as ddp's plan on data=2,model=1"
grep -qE "^Kendall's tau \(modeled against measured order\): -?[01]\.[0-9]+$" "$dir/text" ||
    bad "no Kendall's tau line"
grep -qE "^the model picks [a-z0-9_]+( \(one plan with [a-z0-9_, ]+\))?; measured fastest [a-z0-9_]+( \(one plan with [a-z0-9_, ]+\))?; the pick is [0-9.]+% slower \(a partitioning's own runs spread up to [0-9.]+%, median over fastest\)$" "$dir/text" ||
    bad "no pick line"
[ "$fail" = 0 ] || cat "$dir/text"

# The profile's collective rows timed again before planning (runtime/
# calibrate_collectives.c): a profile whose 2-rank all-reduce rows say a
# second prices ddp's gradient all-reduces (16 KiB and less: the rows
# scaled down) at hundreds of milliseconds as plan and --gemm-rows have
# it; validate times the two rows again (and not the
# 3-rank one, which data=2 has no group for) and models the step in far
# less.
cat >"$dir/slow.yaml" <<'Y'
kernel: {gflops_float32: 20, gflops_float64: 10}
reduce_gflops: 1
copy_GBps: 5
default: {latency_us: 2, bandwidth_GBps: 5}
collectives:
  - {kind: allreduce, group: 2, bytes: 65536, time_us: 1000000}
  - {kind: allreduce, group: 2, bytes: 1048576, time_us: 1000000}
  - {kind: allreduce, group: 3, bytes: 65536, time_us: 1000000}
Y
for how in timed rows; do
    flag="--repeat 3"; [ $how = rows ] && flag="--repeat 1 --gemm-rows"
    "$here/mpirun.sh" 2 "$meshrt" validate "$spec" --mesh data=2,model=1 \
        --machine "$dir/slow.yaml" $flag --json \
        >"$dir/slow_$how.json" 2>"$dir/err" ||
        { bad "validate --machine slow.yaml $flag failed"; cat "$dir/err"; }
done
python3 - "$dir/slow_timed.json" "$dir/slow_rows.json" <<'PY' || bad "validate's collective rows timed again"
import json, sys
timed, rows = (json.load(open(f)) for f in sys.argv[1:])
assert timed["collectives_timed"] == 2, timed["collectives_timed"]
# and again after each of the 3 rounds of runs, priced at their medians
# over those (validate_retime.c)
assert timed["collective_rounds"] == 3, timed["collective_rounds"]
assert timed["collectives_retimed"] == 2, timed["collectives_retimed"]
assert rows["collective_rounds"] == 0, rows["collective_rounds"]
assert rows["collectives_timed"] == -1, rows["collectives_timed"]
def allreduce_ms(d):
    ddp = [a for a in d["alternatives"] if a["name"] == "ddp"][0]
    return sum(c["model_ms"] for c in ddp["classes"] if c["kind"] == "allreduce")
assert allreduce_ms(rows) >= 100, allreduce_ms(rows)  # the planted rows
assert allreduce_ms(timed) < 10, allreduce_ms(timed)  # this machine's
PY
grep -qE "^collectives priced by the profile's rows timed again on these ranks before planning: [0-9]+ rows; [0-9]+ priced at their median over [0-9]+ rounds of runs$" "$dir/text" ||
    bad "the text report does not say how many collective rows it timed"

# Bad input: one line, exit 2 (at 2 ranks: from rank 0 only).
printf 'mesh: {x: 2}\ndims: {a: 4}\n' >"$dir/bad.yaml"
expect 2 1 'bad.yaml:[0-9]+:[0-9]+: error: ' \
    "$here/mpirun.sh" 2 "$meshrt" validate "$dir/bad.yaml"
expect 2 1 'error: .*--repeat' "$here/mpirun.sh" 2 "$meshrt" validate "$spec" --repeat 0
expect 2 1 'missing SPEC' "$here/mpirun.sh" 1 "$meshrt" validate
expect 2 1 'not valid|only valid|validate' "$here/mpirun.sh" 1 "$meshrt" validate "$spec" --verify
expect 2 1 'zero.yaml:[0-9]+:[0-9]+: error: .*4 ranks but mpirun started 2' \
    "$here/mpirun.sh" 2 "$meshrt" validate "$spec"
exit $fail
