#!/usr/bin/env bash
# examples.sh MESHRT — every example under examples/ verified against the
# unsharded reference at 1, 2 and 4 ranks (several meshes each), with the
# bytes handed to MPI checked against `meshrt plan --json` on each run.
set -euo pipefail
meshrt=$1
here=$(dirname "$0")
fail=0
for spec in "$here"/../examples/*.yaml "$here"/specs/good/mlp.yaml; do
    axes=$(sed -n 's/^mesh: *{\(.*\)}.*/\1/p' "$spec" | tr -d ' ' | tr ',' '\n' | cut -d: -f1)
    a1=$(echo "$axes" | sed -n 1p); a2=$(echo "$axes" | sed -n 2p)
    for mesh in "$a1=1,$a2=1" "$a1=2,$a2=1" "$a1=1,$a2=2" "$a1=2,$a2=2" "$a1=4,$a2=1" "$a1=1,$a2=4"; do
        n1=$(echo "$mesh" | sed 's/^[^=]*=\([0-9]*\),.*/\1/')
        n2=$(echo "$mesh" | sed 's/.*=\([0-9]*\)$/\1/')
        np=$((n1 * n2))
        # Meshes that do not divide the example's dims are skipped only if
        # `meshrt check` says so with exit status 2 and its one-line error.
        if ! "$meshrt" check "$spec" --mesh "$mesh" >/dev/null 2>/tmp/mrt_check.$$; then
            if grep -q "not divisible" /tmp/mrt_check.$$; then continue; fi
            cat /tmp/mrt_check.$$; fail=1; continue
        fi
        planned=$("$meshrt" plan "$spec" --mesh "$mesh" --json | sed -n 's/.*"totals": {"comm_bytes": \([0-9]*\).*/\1/p')
        out=$("$here/mpirun.sh" "$np" "$meshrt" run "$spec" --mesh "$mesh" --verify --repeat 2 --json) || {
            echo "FAIL: $spec --mesh $mesh"; echo "$out"; fail=1; continue; }
        measured=$(echo "$out" | sed -n 's/.*"totals": {[^}]*"bytes": \([0-9]*\).*/\1/p')
        if [ "$measured" != "$planned" ] || ! echo "$out" | grep -q '"bytes_match": true' ||
           echo "$out" | grep -q '"ok": false'; then
            echo "FAIL: $spec --mesh $mesh: planned $planned bytes, measured $measured"
            echo "$out"; fail=1; continue
        fi
        echo "ok: $spec --mesh $mesh ($np ranks, $measured bytes/rank)"
    done
done
rm -f /tmp/mrt_check.$$

# --save writes each output whole, as a .npy file, on any rank count.
save=$(mktemp -d)
# A run that cannot start (3 does not divide heads) saves nothing.
"$here/mpirun.sh" 3 "$meshrt" run "$here/../examples/attention.yaml" \
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
