#!/usr/bin/env bash
# sweeps.sh MESHRT — the sweeps researchers run (issue 21, item 6):
# zipped dims (`compare --sweep length=..,.. --sweep klen=..,..`: point
# v sets every swept dim to its v-th size) and mesh shapes
# (`--sweep-mesh data=8,model=1 data=4,model=2 ...`, any rank count),
# alone and zipped together.  Every cell of the text, CSV and JSON
# equals `compare --dim ... --mesh ...` at that point; the usage errors
# (counts that differ, a dim swept twice, a bad mesh, --mesh with
# --sweep-mesh) are one line and exit 2.  --svg draws the sweep: a line
# per layout, a dot per point that plans, at its modeled time.  No MPI.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
use_temp_dir
att=$here/../examples/attention.yaml
zero=$here/../examples/zero.yaml

# --- zipped dims ---------------------------------------------------------
"$meshrt" compare "$att" --sweep q_len=16,32,64 --sweep k_len=16,32,64 \
    --csv "$dir/z.csv" --json "$dir/z.json" >"$dir/z.txt" 2>"$dir/err"
check "zipped sweep exits 0" [ $? = 0 ]
check "zipped sweep: nothing on stderr" [ ! -s "$dir/err" ]
check "one column per point" grep -Eq \
    "^layout +q_len=16,k_len=16 +q_len=32,k_len=32 +q_len=64,k_len=64 +growth$" "$dir/z.txt"
check "the header names both dims" grep -q "as dims q_len,k_len grow," "$dir/z.txt"
for p in 16 32 64; do
    "$meshrt" compare "$att" --dim q_len=$p,k_len=$p --json "$dir/z$p.json" >/dev/null
done
# --- mesh shapes, of 4 and of 8 ranks --------------------------------------
meshes=(data=2,model=2 data=4,model=1 data=1,model=4 data=8,model=1)
"$meshrt" compare "$zero" --sweep-mesh "${meshes[@]}" --csv "$dir/m.csv" \
    --json "$dir/m.json" --svg "$dir/m.svg" >"$dir/m.txt" 2>"$dir/err"
check "mesh sweep exits 0" [ $? = 0 ]
check "mesh sweep: nothing on stderr" [ ! -s "$dir/err" ]
check "one column per mesh" grep -Eq \
    "^layout +data=2,model=2 +data=4,model=1 +data=1,model=4 +data=8,model=1 +growth$" "$dir/m.txt"
for m in "${meshes[@]}"; do
    "$meshrt" compare "$zero" --mesh "$m" --json "$dir/m@$m.json" >/dev/null
done
# the option's own form, and --sweep-mesh=MESH given twice, are the same
"$meshrt" compare "$zero" --sweep-mesh=data=2,model=2 --sweep-mesh data=4,model=1 \
    data=1,model=4 --sweep-mesh=data=8,model=1 --json "$dir/m2.json" >/dev/null
check "--sweep-mesh=M and repeated --sweep-mesh give the same sweep" \
    cmp -s "$dir/m.json" "$dir/m2.json"
# --- both, zipped (weak scaling: the batch grows with the mesh) ------------
"$meshrt" compare "$zero" --sweep batch=96,192 --sweep-mesh data=2,model=2 data=4,model=2 \
    --json "$dir/b.json" >"$dir/b.txt" 2>"$dir/err"
check "dims and mesh zipped exit 0" [ $? = 0 ]
check "their points name both" grep -Eq \
    "^layout +batch=96 data=2,model=2 +batch=192 data=4,model=2 +growth$" "$dir/b.txt"
"$meshrt" compare "$zero" --dim batch=96 --mesh data=2,model=2 --json "$dir/b0.json" >/dev/null
"$meshrt" compare "$zero" --dim batch=192 --mesh data=4,model=2 --json "$dir/b1.json" >/dev/null

python3 - "$dir" <<'PY' || fail=1
import csv, json, sys
d = sys.argv[1]
fail = 0
def same(sweep, points, singles, sizes):
    """Every cell of sweep (JSON) and of its CSV equals compare at that point."""
    global fail
    s = json.load(open(d + "/" + sweep + ".json"))
    assert s["sweep"]["points"] == points, s["sweep"]
    assert s["sweep"]["sizes"] == sizes, s["sweep"]
    rows = list(csv.DictReader(open(d + "/" + sweep + ".csv"))) \
        if sweep in ("z", "m") else None
    for v, single in enumerate(singles):
        c = {r["name"]: r for r in json.load(open(d + "/" + single + ".json"))["layouts"]}
        for lay in s["layouts"]:
            cell, want = lay["points"][v], c[lay["name"]]
            ok = cell["point"] == points[v] and cell["ok"] == want["ok"]
            for k in ("time_s", "wire_bytes", "comm_bytes", "peak_memory"):
                ok = ok and (not want["ok"] or cell[k] == want[k])
            if rows is not None:
                r = [x for x in rows if x["layout"] == lay["name"] and
                     x["point"] == points[v]]
                ok = ok and len(r) == 1 and int(r[0]["size"]) == sizes[v] and \
                    (not want["ok"] or float(r[0]["time_s"]) == want["time_s"])
            if not ok:
                fail = 1
                print("FAIL: %s at %s, %s: %s against %s" %
                      (sweep, points[v], lay["name"], cell, want))
same("z", ["q_len=%d,k_len=%d" % (p, p) for p in (16, 32, 64)],
     ["z16", "z32", "z64"], [16, 32, 64])
ms = ["data=2,model=2", "data=4,model=1", "data=1,model=4", "data=8,model=1"]
same("m", ms, ["m@" + m for m in ms], [4, 4, 4, 8])
same("b", ["batch=96 data=2,model=2", "batch=192 data=4,model=2"],
     ["b0", "b1"], [96, 192])
# the 8-rank mesh plans: its ddp all-reduces over 8 ranks, 2(8-1)/8 of
# the parameters (as compare --mesh data=8,model=1 says)
m = json.load(open(d + "/m.json"))
ddp = [l for l in m["layouts"] if l["name"] == "ddp"][0]["points"]
assert ddp[3]["ok"] and ddp[3]["wire_bytes"] > ddp[0]["wire_bytes"], ddp
sys.exit(fail)
PY

# --- the chart -----------------------------------------------------------------
"$meshrt" compare "$zero" --sweep-mesh data=2,model=2 nope=4 data=4,model=1 \
    --json "$dir/e.json" --svg "$dir/e.svg" >/dev/null 2>&1
python3 - "$dir" <<'PY' || fail=1
import json, sys, xml.dom.minidom
d = sys.argv[1]
for name, ncols in (("m", 4), ("e", 3)):
    doc = xml.dom.minidom.parse("%s/%s.svg" % (d, name))   # well-formed
    s = json.load(open("%s/%s.json" % (d, name)))
    lines = doc.getElementsByTagName("polyline")
    dots = doc.getElementsByTagName("circle")
    planned = sum(p["ok"] for l in s["layouts"] for p in l["points"])
    assert len(dots) == planned, (name, len(dots), planned)
    # a line per layout, broken where a point does not plan
    want = sum(1 + sum(1 for a, b in zip(l["points"], l["points"][1:])
                       if not a["ok"] and b["ok"]) - (not l["points"][0]["ok"])
               for l in s["layouts"])
    assert len(lines) == want, (name, len(lines), want)
    titles = [c.getElementsByTagName("title")[0].firstChild.data for c in dots]
    for l in s["layouts"]:
        for p in l["points"]:
            t = "%s at %s: " % (l["name"], p["point"])
            assert (sum(x.startswith(t) for x in titles) == 1) == p["ok"], (t, titles)
    # the fastest at each point is ringed: one ring per point that plans
    rings = [c for c in dots if c.getAttribute("stroke")]
    assert len(rings) == sum(1 for v in range(ncols)
                             if any(l["points"][v]["ok"] for l in s["layouts"])), rings
    assert "<script" not in open("%s/%s.svg" % (d, name)).read().lower()
PY

# --- usage errors: one line, exit 2 -----------------------------------------
expect 2 1 "^meshrt: error: --sweep: q_len=16,32 has 2 sizes but k_len=16 has 1 \(zipped sweeps move together: give each as many\)" \
    "$meshrt" compare "$att" --sweep q_len=16,32 --sweep k_len=16
expect 2 1 "^meshrt: error: --sweep: dim 'q_len' is swept twice" \
    "$meshrt" compare "$att" --sweep q_len=16,32 --sweep q_len=8,4
expect 2 1 "^meshrt: error: --sweep-mesh: 3 meshes but --sweep batch=96,192 has 2 sizes" \
    "$meshrt" compare "$zero" --sweep batch=96,192 --sweep-mesh data=2,model=2 data=4,model=1 data=1,model=4
expect 2 1 "^meshrt: error: --sweep-mesh needs meshes AXIS=N,\.\.\. .*not 'data=two'" \
    "$meshrt" compare "$zero" --sweep-mesh data=two
expect 2 1 "^meshrt: error: --sweep-mesh needs meshes" \
    "$meshrt" compare "$zero" --sweep-mesh
expect 2 1 "^meshrt: error: --mesh and --sweep-mesh both set the mesh" \
    "$meshrt" compare "$zero" --mesh data=4,model=1 --sweep-mesh data=2,model=2
expect 2 1 "^meshrt: error: option --sweep-mesh is only valid for 'compare'" \
    "$meshrt" plan "$zero" --sweep-mesh data=2,model=2
expect 2 1 "^error: --sweep: no dim 'nope' in .*attention.yaml" \
    "$meshrt" compare "$att" --sweep q_len=16,32 --sweep nope=1,2
# a mesh that the spec's dims do not fit is that point's error cell
"$meshrt" compare "$zero" --sweep-mesh data=2,model=2 nope=4 >"$dir/e.txt" 2>"$dir/err"
check "a mesh with an unknown axis: exit 0 (one point plans)" [ $? = 0 ]
check "its cells are errors" grep -Eq "^ddp +[0-9.]+ us / [0-9.]+ KiB +error" "$dir/e.txt"
exit $fail
