#!/usr/bin/env bash
# cli_ranges.sh MESHRT — no silent wrong answer from sizes that overflow
# or figures that are not finite (tests/specs/ranges/), through the
# command line:
#  - a plan whose bytes handed to MPI or memory per rank overflow 64 bits
#    is one error line, exactly the golden plan_*.err, and exit status 2
#    from check, plan and search;
#  - a machine profile with a subnormal bandwidth is one error line at
#    its line:col from plan and search (and each row's error in compare);
#  - with the slowest and the fastest profile the limits allow, plan
#    --json, compare --json and search --json are JSON with no NaN or
#    Infinity (Python's parser is told to refuse them), and compare's SVG
#    has no nan or inf;
#  - run --json of a training step whose loss is nan, at 1, 2, 3 and 4
#    ranks with --verify, --profile and --trace: stdout and the trace are
#    JSON with no NaN or Infinity, and the losses are null.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
dir_specs="$here/specs/ranges"
mlp="$here/../examples/mlp.yaml"
use_temp_dir

# strict_json PYTHON FILE...: every FILE parses as JSON with no NaN,
# Infinity or -Infinity, and PYTHON holds of d, the list of documents.
strict_json() {
    python3 -c '
import json, sys
def refuse(name):
    raise ValueError("bare " + name + " in JSON")
d = [json.load(open(f), parse_constant=refuse) for f in sys.argv[2:]]
exec(sys.argv[1])
' "$@"
}

# expect_error STATUS GOLDEN CMD...: exit status and exactly one stderr
# line, equal to the first line of GOLDEN from the file's ".yaml:" on
# (goldens name files from the repository's root).
expect_error() {
    local status=$1 golden=$2; shift 2
    timeout 120 "$@" >/dev/null 2>"$dir/err"
    local got=$? line want
    line=$(cat "$dir/err")
    want=$(head -n 1 "$golden")
    if [ "$got" != "$status" ] || [ "$(wc -l <"$dir/err")" != 1 ] ||
       [ "${line#*.yaml:}" != "${want#*.yaml:}" ]; then
        echo "FAIL: $* -> status $got (want $status), stderr:"
        cat "$dir/err"
        echo "want: $want"
        fail=1
    fi
}

# --- plans whose figures overflow 64 bits ---------------------------------
for spec in "$dir_specs"/plan_*.yaml; do
    for cmd in check plan search; do
        expect_error 2 "${spec%.yaml}.err" "$meshrt" "$cmd" "$spec"
    done
done

# --- a profile with a subnormal bandwidth ---------------------------------
bad="$dir_specs/profile_subnormal.yaml"
echo "$bad:3:42: error: 'bandwidth_GBps' in 'default' must be a number from 1e-09 to 1e+12 (GB/s), got '1e-310'" >"$dir/profile.err"
expect_error 2 "$dir/profile.err" "$meshrt" plan "$mlp" --machine "$bad" --json
expect_error 2 "$dir/profile.err" "$meshrt" search "$mlp" --machine "$bad"
# (compare shows each layout's error in its row, and exits 2: none plans)
"$meshrt" compare "$mlp" --machine "$bad" --json "$dir/bad.json" >"$dir/out"
check "compare with the subnormal profile exits 2" [ $? = 2 ]
check "compare shows the profile's error in each row" \
    [ "$(grep -cF "$(cat "$dir/profile.err")" "$dir/out")" = 4 ]

# --- JSON of plan, compare and search at the limits of a profile ---------
for profile in "$dir_specs"/profile_slowest.yaml "$dir_specs"/profile_fastest.yaml; do
    name=$(basename "$profile" .yaml)
    "$meshrt" plan "$mlp" --machine "$profile" --json >"$dir/plan.json"
    check "$name: plan --json exits 0" [ $? = 0 ]
    "$meshrt" compare "$mlp" --machine "$profile" --json "$dir/c.json" \
        --svg "$dir/c.svg" >/dev/null
    check "$name: compare exits 0" [ $? = 0 ]
    "$meshrt" search "$mlp" --machine "$profile" --json "$dir/s.json" >/dev/null
    check "$name: search exits 0" [ $? = 0 ]
    check "$name: plan, compare and search --json are strict JSON" strict_json '
plan, cmp, search = d
t = plan["totals"]
assert t["time_s"] > 0 and t["comm_time_s"] >= 0, t
assert all(l["ok"] and l["time_s"] > 0 for l in cmp["layouts"]), cmp
assert search["top"] and all(r["time_s"] > 0 for r in search["top"])
' "$dir/plan.json" "$dir/c.json" "$dir/s.json"
    check "$name: compare's SVG has no nan or inf" \
        bash -c "! grep -Eqi 'nan|inf' '$dir/c.svg'"
done

# --- run --json of a nan loss, at 1 to 4 ranks ---------------------------
for np in 1 2 3 4; do
    rm -f "$dir/trace.json"
    timeout 120 "$here/mpirun.sh" "$np" "$meshrt" run "$dir_specs/nan_loss.yaml" \
        --mesh "data=$np" --json --verify --profile --trace "$dir/trace.json" \
        >"$dir/run.json" 2>"$dir/err"
    status=$?
    # (the unsharded loss is nan too: a NaN matches a NaN, so the run
    # verifies, exit status 0, nothing on stderr)
    check "np $np: run exits 0 (nan matches the unsharded nan)" [ $status = 0 ]
    check "np $np: run prints nothing on stderr" [ ! -s "$dir/err" ]
    check "np $np: run --json and the trace are strict JSON" strict_json '
run, trace = d
assert run["ranks"] == '"$np"', run["ranks"]
assert run["losses"] == [None, None], run["losses"]
assert [v["loss"] for v in run["verify_losses"]] == [None, None]
assert all(v["ok"] is True for v in run["verify_losses"] + run["verify"])
assert run["profile"]["steps"] and run["totals"]["bytes_match"]
assert len({e["tid"] for e in trace["traceEvents"]}) == '"$np"'
' "$dir/run.json" "$dir/trace.json"
done

[ $fail = 0 ] && echo "cli ranges: all ok"
exit $fail
