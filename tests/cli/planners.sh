#!/usr/bin/env bash
# planners.sh MESHRT — on every example whose layouts Mesh-TensorFlow can
# express (no per-tensor layouts for --planner meshtf to replace), the
# cost-aware planner's modeled time is never above meshtf's; on the
# examples made to show why, it is strictly below.
set -euo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
use_temp_dir
strict=0
for spec in "$here"/../examples/*.yaml; do
    # (in files: a plan's JSON may pass the 128 KiB of one argument)
    "$meshrt" plan "$spec" --json >"$dir/auto.json"
    "$meshrt" plan "$spec" --json --planner meshtf >"$dir/mtf.json" || continue
    # (json_top.py: the two keys read, not the 100 MB of gpt3.yaml's plans)
    verdict=$(python3 - "$here" "$dir/auto.json" "$dir/mtf.json" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from json_top import top
a, m = ({"totals": t, "ignored_layouts": i}
        for t, i in (top(open(f).read(), ["totals", "ignored_layouts"])
                     for f in sys.argv[2:4]))
if m["ignored_layouts"]:
    print("skip"); sys.exit()
ta, tm = a["totals"]["time_s"], m["totals"]["time_s"]
print("worse" if ta > tm * (1 + 1e-9) else "cheaper" if ta < tm * (1 - 1e-9) else "equal",
      "%.4g %.4g" % (ta, tm))
PY
)
    echo "$(basename "$spec"): $verdict"
    case $verdict in
        worse*) fail=1 ;;
        cheaper*) strict=$((strict + 1)) ;;
    esac
done
[ "$strict" -ge 2 ] || { echo "FAIL: auto is strictly cheaper on only $strict examples"; fail=1; }
exit $fail
