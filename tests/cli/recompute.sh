#!/usr/bin/env bash
# recompute.sh MESHRT — `recompute: true` on a block (activation
# recomputation, ir/recompute.c) on the reduced GPT-2 of
# examples/gpt2.yaml:
#   1. the plan: each instance's forward ops re-run in the backward pass
#      (ops named <tensor>:re), the activations kept fall, and so does
#      the peak memory, for every alternative (at a size where the
#      activations set the peak); the re-run's flops are the
#      block's forward flops (plan --json's ops, without recomputation);
#      an alternative's `recompute: [h]` plans as the block's key does;
#   2. runs in float64 at 1-4 ranks verify (--verify), and the saved
#      gradients equal the ones of the run without recomputation (to
#      1e-12 relative: the same ops in the same order, so in practice
#      bit for bit).
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
use_temp_dir
spec="$here/../examples/gpt2.yaml"
dims=$(sed -n 's/^# test-dims: *//p' "$spec")
sed 's/^    name: h  .*/&\n    recompute: true/' "$spec" >"$dir/rc.yaml"
sed 's/^  tp: {\(.*\)}$/&\n  tp_rc: {\1, recompute: [h]}/' "$spec" >"$dir/alt.yaml"
grep -q 'tp_rc:' "$dir/alt.yaml" || bad "no tp_rc in the copy"

# 1. the plans
cat >"$dir/plans.py" <<'PY'
import json, sys
kept, rc = (json.load(open(f)) for f in sys.argv[1:3])
bad = 0
def fail(msg):
    global bad
    print("FAIL:", msg)
    bad = 1
k, r = kept["blocks"][0], rc["blocks"][0]
if k["recompute"] or not r["recompute"]:
    fail("recompute flags")
ka, ra = k["activations"], r["activations"]
if not ra["saved"] < ka["saved"]:
    fail(f"activations kept {ra['saved']} not below {ka['saved']}")
if ra["without_recompute"] != ka["saved"]:
    fail(f"without_recompute {ra['without_recompute']} != {ka['saved']}")
if not rc["totals"]["peak_memory"] < kept["totals"]["peak_memory"]:
    fail(f"peak {rc['totals']['peak_memory']} not below "
         f"{kept['totals']['peak_memory']}")
# the re-run's flops: the block's forward ops' in the plan without it
fwd = sum(o["flops"] for o in kept["ops"]
          if o["out"].startswith("h") and o["out"][1].isdigit()
          and not o["out"].startswith("grad:") and o.get("phase", "forward") == "forward")
if abs(r["rerun_flops"] - fwd) > 1e-9 * max(fwd, 1):
    fail(f"re-run flops {r['rerun_flops']} != forward flops {fwd}")
names = [o["out"] for o in rc["ops"]]
if not any(n.endswith(":re") for n in names):
    fail("no :re op")
sys.exit(bad)
PY
# (the plans at sizes where the activations, not the parameters, set the
# peak: at the test dims the parameters gathered again for ZeRO-3's
# re-run can cost more than the activations saved)
big=layers=4,vocab=61,length=32,klen=32,d_model=16,heads=2,d_k=8,d_ff=32,batch=8
for alt in dp tp tp_sp zero3; do
    "$meshrt" plan "$spec" --dim "$big" --layout $alt --json >"$dir/k.json" &&
        "$meshrt" plan "$dir/rc.yaml" --dim "$big" --layout $alt --json >"$dir/r.json" ||
        { bad "$alt: plan"; continue; }
    check "$alt: recomputation's plan" python3 "$dir/plans.py" "$dir/k.json" "$dir/r.json"
done
"$meshrt" plan "$dir/rc.yaml" --dim "$dims" --layout tp >"$dir/a.plan" &&
    "$meshrt" plan "$dir/alt.yaml" --dim "$dims" --layout tp_rc |
    sed "s|$dir/alt.yaml|$dir/rc.yaml|" >"$dir/b.plan" ||
    bad "tp_rc: plan"
check "recompute: [h] in an alternative plans as recompute: true" \
    cmp "$dir/a.plan" "$dir/b.plan"
grep -q '^block h recomputed: ' "$dir/a.plan" || bad "no recompute line in plan"

# 2. runs
sed 's/^dtype: float32/dtype: float64/' "$spec" >"$dir/k64.yaml"
sed 's/^dtype: float32/dtype: float64/' "$dir/rc.yaml" >"$dir/r64.yaml"
cat >"$dir/same.py" <<'PY'
import sys, glob, os, struct
def load(path):  # a float64 .npy (meshrt's --save): header, then data
    raw = open(path, "rb").read()
    n = struct.unpack("<H", raw[8:10])[0]
    head = raw[10:10 + n].decode()
    assert "<f8" in head, head
    data = raw[10 + n:]
    return head, struct.unpack(f"<{len(data) // 8}d", data)
a, b = sys.argv[1:3]
names = sorted(os.path.basename(f) for f in glob.glob(a + "/grad:*.npy"))
bad = 0 if names else 1
for n in names:
    (hx, x), (hy, y) = load(os.path.join(a, n)), load(os.path.join(b, n))
    err = max((abs(p - q) / max(abs(p), 1e-300) for p, q in zip(x, y)),
              default=0)
    if hx != hy or len(x) != len(y) or err > 1e-12:
        print(f"FAIL: {n}: relative difference {err}")
        bad = 1
print(f"{len(names)} gradients compared")
sys.exit(bad)
PY
for np in 1 2 3 4; do
    case $np in
    1) mesh=data=1,model=1 ;; 2) mesh=data=1,model=2 ;;
    3) mesh=data=1,model=3 ;; 4) mesh=data=2,model=2 ;;
    esac
    for alt in tp tp_sp; do
        for v in k r; do
            mkdir -p "$dir/$v$np$alt"
            "$here/mpirun.sh" "$np" "$meshrt" run "$dir/${v}64.yaml" --layout $alt \
                --mesh "$mesh" --dim "$dims" --verify --save "$dir/$v$np$alt" \
                >"$dir/run_$v$np$alt.txt" 2>&1 ||
                { bad "$v $alt at $np ranks did not verify"; tail -3 "$dir/run_$v$np$alt.txt"; }
        done
        check "$alt at $np ranks: recomputed gradients equal the kept run's" \
            python3 "$dir/same.py" "$dir/k$np$alt" "$dir/r$np$alt"
    done
done
[ $fail = 0 ] && echo "recompute: all checks pass"
exit $fail
