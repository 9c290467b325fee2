#!/usr/bin/env bash
# validate_examples.sh [--profile FILE] [--repeat N] [--swapped]
#                      [--dtype float32|native] [--only EX,...] [MESHRT]
#
# The cost model against this machine, as issue 21 item 4 asks: at one
# rank per core (2 ranks), `meshrt calibrate`, then `meshrt validate` of
# each example at the sizes of docs/calibration.md (compute over 10 ms
# per rank; validate times each product shape its plans run first and
# prices it at that rate), one line per example: the range over its
# partitionings of
# measured / modeled end to end, Kendall's tau between the modeled and
# measured orders, how much slower than the measured fastest the model's
# pick ran (partitionings that lower to one plan run and rank as one),
# and the partitionings' CPU shares (near 1: each rank had a
# core; well below, other processes took it and the ratios say little
# about the model).  Beside the ratios as measured, the same at the
# machine's speed during the runs: validate times one of the profile's
# GEMM rows again after every run (validate_probe.c), and a shared host's
# cores run tens of percent slower or faster from one minute to the
# next, which is not the model's error.  The target: every ratio within
# 0.8-1.25 and the pick within 5% of the fastest.  The last line says
# in how many cases it was met, as measured and at the machine's speed.
#
#   --profile FILE  use FILE instead of calibrating (one is written to a
#                   temporary folder otherwise)
#   --repeat N      validate's --repeat (default 10)
#   --swapped       also each example on the other orientation of its
#                   mesh (rows=2,cols=1; data=1,model=2)
#   --dtype T       float32 (the default): every example converted to
#                   float32, the type training runs in; native: each in
#                   its own dtype (float64 for zero, transformer_layer,
#                   blocks, pipeline), which prices float64's maps by the
#                   profile's float64 rows (docs/calibration.md)
#   --only EX,...   only these examples (by name: mlp, zero, ...)
#   --keep DIR      keep the profile and each validate --json in DIR
#   MESHRT          the binary (default: build/meshrt of this checkout)
#
# Run it on an idle machine: it takes about a minute (two with
# --swapped).  Exit status 0 when the target is met as measured, 1 when
# not, 2 on a failure to run.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
profile= repeat=10 swapped=0 dtype=float32 only= keep= meshrt=$root/build/meshrt
while [ $# -gt 0 ]; do
    case $1 in
    --profile) profile=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --swapped) swapped=1; shift ;;
    --dtype) dtype=$2; shift 2 ;;
    --only) only=,$2,; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h | --help) sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "validate_examples.sh: unknown option $1" >&2; exit 2 ;;
    *) meshrt=$1; shift ;;
    esac
done
case $dtype in
float32 | native) ;;
*) echo "validate_examples.sh: --dtype must be float32 or native, got '$dtype'" >&2; exit 2 ;;
esac
[ -x "$meshrt" ] || { echo "validate_examples.sh: no meshrt at $meshrt (build first)" >&2; exit 2; }
mpirun=${MESHRT_MPIRUN:-$("$root/dev" mpirun)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

if [ -z "$profile" ]; then
    profile=$tmp/profile.yaml
    $mpirun -n 2 "$meshrt" calibrate --out "$profile" </dev/null >"$tmp/calibrate.txt" 2>&1 ||
        { cat "$tmp/calibrate.txt"; echo "validate_examples.sh: calibrate failed" >&2; exit 2; }
    grep -E "^  GEMM float32 +[0-9]|^  copy +[0-9.]+ GB/s" "$tmp/calibrate.txt" | sed "s/^ */calibrate: /"
fi
echo "profile: $profile; load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

# example, mesh, swapped mesh, dims
examples="mlp rows=1,cols=2 rows=2,cols=1 batch=512,d_in=512,hidden=1024,d_out=512
zero data=2,model=1 data=1,model=2 batch=1024,d_model=256,d_ff=1024
transformer_layer rows=1,cols=2 rows=2,cols=1 batch=4,length=64,klen=64,d_model=256,heads=8,d_k=32,d_ff=1024,vocab=512
transformer_einsums data=2,model=1,pipe=1 data=1,model=2,pipe=1 batch=8,seq=128,k_len=128,d_model=512,d_ff=2048
gpt2 data=2,model=1,pipe=1 data=1,model=2,pipe=1 batch=4,length=128,klen=128,d_model=256,heads=4,d_k=64,d_ff=1024,vocab=4096,layers=2
blocks data=2,model=1 data=1,model=2 layers=3,batch=8,length=64,klen=64,d_model=256,heads=4,d_k=64,d_ff=1024,vocab=2048
pipeline data=1,pipe=2 data=2,pipe=1 layers=8,batch=256,d_model=512,d_ff=2048"

met=1
while read -r ex mesh other dims; do
    [ -n "$only" ] && [ "${only#*,$ex,}" = "$only" ] && continue
    meshes=$mesh
    [ $swapped = 1 ] && meshes="$mesh $other"
    for m in $meshes; do
        out=$tmp/$ex.$m.json
        # in float32, the type training runs in, unless --dtype native
        # (none of these examples reads an init file, so the copy may
        # live outside examples/)
        if [ $dtype = float32 ]; then
            sed 's/^dtype: float64/dtype: float32/' "$root/examples/$ex.yaml" >"$tmp/$ex.yaml"
        else
            cp "$root/examples/$ex.yaml" "$tmp/$ex.yaml"
        fi
        if ! $mpirun -n 2 "$meshrt" validate "$tmp/$ex.yaml" --mesh "$m" \
                --dim "$dims" --machine "$profile" --repeat "$repeat" --json </dev/null \
                >"$out" 2>"$tmp/err"; then
            echo "$ex ($m): validate failed: $(head -1 "$tmp/err")"
            met=0
            continue
        fi
        python3 - "$out" "$ex" "$m" "$tmp/tally" <<'PY' || met=0
import json, math, sys
d = json.load(open(sys.argv[1]))
ran = [a for a in d["alternatives"] if a.get("ok")]
r = [a["ratio"] for a in ran]
at = [a["speed"]["ratio"] for a in ran]
speed = [a["speed"]["of_profile"] for a in ran]
share = [a["cpu_share"] for a in ran]
tau = d["kendall_tau"]
slower = d["pick_slower"]
picked = slower is not None and slower <= 0.05
ok = all(0.8 <= x <= 1.25 for x in r) and picked
ok_at = all(x is not None and 0.8 <= x <= 1.25 for x in at) and picked
worst = max(ran, key=lambda a: abs(math.log(a["ratio"])))
plans = d["ratio"]["plans"]
span = lambda v: "-" if None in v else "%.2f-%.2f" % (min(v), max(v))
print("%s (%s, %d of %d partitionings, %d plans): measured/modeled %.2f-%.2f "
      "(worst %s), at the machine's speed %s (machine at %s of the profile's), "
      "tau %s, pick %s +%.1f%% (fastest %s; runs spread up to %.1f%%), "
      "CPU share %.2f-%.2f: %s" % (
          sys.argv[2], sys.argv[3], len(ran), len(d["alternatives"]), plans,
          min(r), max(r), worst["name"], span(at), span(speed),
          "-" if tau is None else "%.2f" % tau, d["model_pick"],
          100 * (slower or 0), d["measured_fastest"],
          100 * (d["run_spread"] or 0), min(share), max(share),
          "met" if ok else "met at the machine's speed" if ok_at else
          "NOT met"))
with open(sys.argv[4], "a") as t:
    t.write("%d %d\n" % (ok, ok_at))
sys.exit(0 if ok else 1)
PY
    done
done <<<"$examples"
if [ -n "$keep" ]; then
    mkdir -p "$keep" && cp "$tmp"/*.json "$profile" "$keep"/ 2>/dev/null
fi
cases=$(wc -l <"$tmp/tally" 2>/dev/null || echo 0)
raw=$(awk '$1 == 1' "$tmp/tally" 2>/dev/null | wc -l)
fast=$(awk '$2 == 1' "$tmp/tally" 2>/dev/null | wc -l)
echo "target (every ratio 0.8-1.25, pick within 5%): $([ $met = 1 ] && echo met || echo 'NOT met'): $raw of $cases cases as measured, $fast of $cases at the machine's speed; $(($(date +%s) - start)) s"
[ $met = 1 ]
