#!/usr/bin/env bash
# examples.sh MESHRT MPI_EXAMPLES — every example under examples/ (and
# the spec with a .npy input, and the strided one) verified against the
# unsharded reference at 1, 2 and 4 ranks on several meshes, and every
# `layouts:` alternative on its own mesh, the bytes handed to MPI checked
# against the plan's op by op and in total, a training spec's loss going
# down: mpi_examples (tests/mpi/mpi_examples.c, which says how) runs them
# all in one mpirun at 4 ranks, and a second at 8 for the alternatives
# of 8 ranks; this checks what they recorded.  Then `run --save` through
# the command line.
set -euo pipefail
meshrt=$1
driver=$2
. "$(dirname "$0")/../lib.sh"
use_temp_dir
# (an example with a "# test-dims:" line is too large to run at its own
# sizes: tests/cli/gpt2.sh runs it at those)
specs=()
for s in "$here"/../examples/*.yaml; do
    grep -q '^# test-dims:' "$s" || specs+=("$s")
done
specs+=("$here"/specs/good/mlp.yaml "$here"/specs/good/strided.yaml)

mkdir "$dir/runs"
"$here/mpirun.sh" 4 "$driver" "$dir/runs" "${specs[@]}" || fail=1
"$here/mpirun.sh" 8 "$driver" --over 4 "$dir/runs" "${specs[@]}" || fail=1
python3 - "$dir/runs" <<'PY' || fail=1
import glob, json, sys
d = sys.argv[1]
def lines(pattern):
    return [json.loads(l) for f in sorted(glob.glob(d + "/" + pattern))
            for l in open(f)]
key = lambda r: (r["spec"], r["mesh"], r["layout"], r["ranks"])
jobs = lines("jobs.4.jsonl")
records = lines("records.*.jsonl")
fail = 0
def bad(job, why):
    global fail
    fail = 1
    print("FAIL: %s --mesh '%s' --layout '%s' (%d ranks): %s"
          % (job + (why,)))
done = {}
for r in records:
    done.setdefault(key(r), []).append(r)
for j in map(key, jobs):
    if len(done.get(j, [])) != 1:
        bad(j, "ran %d times" % len(done.get(j, [])))
        continue
    r = done[j][0]
    rep = r["report"]
    if r["status"] != "ok" or rep is None:
        bad(j, "%s: %s" % (r["status"], r["error"]))
        continue
    ops = [o["out"] for o in rep["ops"] if o["bytes"] != o["planned_bytes"]]
    checks = [
        (rep["ops"], "no ops in the report"),
        (not ops, "ops whose bytes differ from the plan: %s" % ops),
        (rep["totals"]["bytes"] == r["plan_comm_bytes"],
         "planned %d bytes, measured %d" % (r["plan_comm_bytes"], rep["totals"]["bytes"])),
        (rep["totals"]["bytes_match"] is True, "bytes_match is not true"),
        (rep["ranks"] == r["ranks"], "ran on %d ranks" % rep["ranks"]),
        (all(v["ok"] for v in rep.get("verify", [])), "verify: %s"
         % [v["tensor"] for v in rep.get("verify", []) if not v["ok"]]),
        ("losses" not in rep or rep["losses"][-1] < rep["losses"][0],
         "the loss did not go down: %s" % rep.get("losses")),
    ]
    for ok, why in checks:
        if not ok:
            bad(j, why)
    if all(ok for ok, _ in checks):
        print("ok: %s --mesh '%s' --layout '%s' (%d ranks, %d bytes/rank)"
              % (j + (rep["totals"]["bytes"],)))
extra = set(done) - set(map(key, jobs))
if extra:
    fail = 1
    print("FAIL: records of jobs not listed: %s" % sorted(extra))
print("%d jobs, %d records" % (len(jobs), len(records)))
sys.exit(fail)
PY

# --save writes each output whole, as a .npy file, on any rank count.
save=$dir/save
mkdir "$save"
# A run that cannot start (a mesh of 3 ranks on 2) saves nothing.
"$here/mpirun.sh" 2 "$meshrt" run "$here/../examples/attention.yaml" \
    --mesh data=1,model=3 --save "$save/bad" >/dev/null 2>&1 &&
    { echo "FAIL: a run on an impossible mesh succeeded"; fail=1; }
[ -e "$save/bad" ] && { echo "FAIL: a failed run created $save/bad"; fail=1; }
"$here/mpirun.sh" 2 "$meshrt" run "$here/../examples/attention.yaml" --mesh data=2,model=1 \
    --save "$save/out" >/dev/null || fail=1
for t in s o; do
    f="$save/out/$t.npy"
    if [ ! -s "$f" ] || [ "$(head -c 6 "$f" | tail -c 5)" != "NUMPY" ]; then
        echo "FAIL: --save did not write $f"; fail=1
    fi
done
# float64 [4,4,16,16] and [16,4,4,8]: 8192 and 4096 bytes of data after the header
[ "$(stat -c %s "$save/out/s.npy")" -gt 8192 ] && [ "$(stat -c %s "$save/out/o.npy")" -gt 4096 ] || {
    echo "FAIL: saved files are too short"; fail=1; }
ls "$save/out" | grep -q tmp && { echo "FAIL: temporary files left behind"; fail=1; }
exit $fail
