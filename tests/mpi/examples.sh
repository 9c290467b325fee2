#!/usr/bin/env bash
# examples.sh MESHRT — every example under examples/ (and the spec with a
# .npy input) verified against the unsharded reference at 1, 2 and 4 ranks
# on several meshes, and every `layouts:` alternative on its own mesh, with
# the bytes handed to MPI checked against `meshrt plan --json` each time.
set -euo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# run SPEC NP ARGS...: verified run; bytes must equal the plan's.
run() {
    local spec=$1 np=$2; shift 2
    local planned measured out
    planned=$("$meshrt" plan "$spec" "$@" --json |
              sed -n 's/.*"totals": {"comm_bytes": \([0-9]*\).*/\1/p')
    if ! out=$("$here/mpirun.sh" "$np" "$meshrt" run "$spec" "$@" --verify --repeat 2 --json); then
        echo "FAIL: $spec $* ($np ranks)"; echo "$out"; fail=1; return
    fi
    measured=$(echo "$out" | sed -n 's/.*"totals": {[^}]*"bytes": \([0-9]*\).*/\1/p')
    # Op by op, too: what each op handed to MPI is what the plan said.
    if ! echo "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)
bad = [o["out"] for o in r["ops"] if o["bytes"] != o["planned_bytes"]]
# a training spec: the loss goes down over the steps
down = "losses" not in r or r["losses"][-1] < r["losses"][0]
sys.exit(1 if bad or not r["ops"] or not down else 0)'; then
        echo "FAIL: $spec $*: an op's bytes differ from the plan, or the loss did not go down"; echo "$out"; fail=1; return
    fi
    if [ "$measured" != "$planned" ] || ! echo "$out" | grep -q '"bytes_match": true' ||
       echo "$out" | grep -q '"ok": false'; then
        echo "FAIL: $spec $*: planned $planned bytes, measured $measured"
        echo "$out"; fail=1; return
    fi
    echo "ok: $spec $* ($np ranks, $measured bytes/rank)"
}

for spec in "$here"/../examples/*.yaml "$here"/specs/good/mlp.yaml "$here"/specs/good/strided.yaml; do
    mapfile -t axes < <(sed -n 's/^mesh: *{\(.*\)}.*/\1/p' "$spec" | tr -d ' ' |
                        tr ',' '\n' | cut -d: -f1)
    rest=""
    for a in "${axes[@]:2}"; do rest="$rest,$a=1"; done
    a1=${axes[0]}; a2=${axes[1]}
    for sizes in "1 1" "2 1" "1 2" "2 2" "4 1" "1 4"; do
        read -r n1 n2 <<<"$sizes"
        mesh="$a1=$n1,$a2=$n2$rest"
        # Every mesh must load: one that does not divide a dim splits it
        # unevenly.
        if ! "$meshrt" check "$spec" --mesh "$mesh" >/dev/null 2>"$log"; then
            cat "$log"; fail=1; continue
        fi
        run "$spec" $((n1 * n2)) --mesh "$mesh"
    done
    # Every alternative of `layouts:`, on the spec's own mesh.
    names=$("$meshrt" check "$spec" 2>/dev/null | sed -n 's/^layouts: \([^(]*\)(.*/\1/p' | tr -d ',')
    ranks=$("$meshrt" check "$spec" 2>/dev/null | sed -n 's/.*} = \([0-9]*\) ranks.*/\1/p')
    for name in $names; do
        run "$spec" "$ranks" --layout "$name"
    done
done

# --save writes each output whole, as a .npy file, on any rank count.
save=$(mktemp -d)
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
rm -rf "$save"
exit $fail
