#!/usr/bin/env bash
# pinned.sh MESHRT — pinned strategies (issue 21, item 1): the pinned
# ddp and zero3 rows of examples/zero.yaml move DDP's and ZeRO-3's bytes,
# 2(n-1)/n·Ψ and 3(n-1)/n·Ψ per step for the weights (Ψ the parameter
# bytes, counted here from the spec's dims, not taken from meshrt),
# under three very different machine profiles (the built-in default, an
# H100-like node, a slow network) and the tiered profile of the issue,
# on meshes of 2, 3 and 4 ranks and at two batch sizes; `--planner rules`
# plans the same rows on a copy without pin:, and auto on that copy
# is what the "auto saves" figures say (under the tiered profile auto
# leaves DDP, so the column is not always "nothing").
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
use_temp_dir
zero=$here/../examples/zero.yaml
sed 's/, pin: true//; /^ *pin: true$/d' "$zero" >"$dir/unpinned.yaml"
grep -Eq "^ +[^#]*pin:" "$dir/unpinned.yaml" && bad "the copy without pin: still pins"

for prof in default h100 slow tiered; do
    machine=()
    [ "$prof" != default ] && machine=(--machine "$here/specs/pinned/$prof.yaml")
    for mesh in data=2,model=2 data=4,model=1 data=1,model=4 data=3,model=1 \
                data=2,model=1; do
        for batch in 96 9600; do
            tag=$prof@$mesh@$batch
            "$meshrt" compare "$zero" --mesh "$mesh" --dim batch=$batch \
                "${machine[@]}" --json "$dir/pin@$tag.json" >"$dir/pin@$tag.txt" ||
                bad "compare $tag"
            "$meshrt" compare "$dir/unpinned.yaml" --mesh "$mesh" --dim batch=$batch \
                "${machine[@]}" --planner rules --json "$dir/rules@$tag.json" >/dev/null ||
                bad "compare --planner rules $tag"
            "$meshrt" compare "$dir/unpinned.yaml" --mesh "$mesh" --dim batch=$batch \
                "${machine[@]}" --json "$dir/auto@$tag.json" >/dev/null ||
                bad "compare (auto) $tag"
        done
    done
done
python3 - "$dir" "$zero" <<'PY' || fail=1
import json, sys, yaml
dir, zero = sys.argv[1], sys.argv[2]
spec = yaml.safe_load(open(zero))
dims = spec["dims"]
word = {"float32": 4, "float64": 8}[spec["dtype"]]
psi = 0                        # parameter bytes, from the spec's shapes
for p in spec["train"]["params"]:
    n = 1
    for d in spec["tensors"][p]["shape"]:
        n *= dims[d]
    psi += n * word
fail = 0
def check(ok, what):
    global fail
    if not ok:
        fail = 1
        print("FAIL:", what)
departs = 0
for prof in ["default", "h100", "slow", "tiered"]:
    for mesh, n in [("data=2,model=2", 4), ("data=4,model=1", 4),
                    ("data=1,model=4", 4), ("data=3,model=1", 3),
                    ("data=2,model=1", 2)]:
        for batch in [96, 9600]:
            tag = "%s@%s@%d" % (prof, mesh, batch)
            rows = {r["name"]: r for r in
                    json.load(open("%s/pin@%s.json" % (dir, tag)))["layouts"]}
            rules = {r["name"]: r for r in
                     json.load(open("%s/rules@%s.json" % (dir, tag)))["layouts"]}
            auto = {r["name"]: r for r in
                    json.load(open("%s/auto@%s.json" % (dir, tag)))["layouts"]}
            loss = 2 * (n - 1) * word / n      # the scalar loss, all-reduced
            want = {  # phase -> wire bytes per rank: DDP 2(n-1)/n·Ψ,
                      # ZeRO-3 (n-1)/n·Ψ forward + 2(n-1)/n·Ψ backward
                "ddp": (loss, 2 * (n - 1) * psi / n, 0),
                "zero3": ((n - 1) * psi / n + loss, 2 * (n - 1) * psi / n, 0),
            }
            for name, w in want.items():
                r = rows[name]
                ph = r["phases"]
                got = (ph["forward"]["wire_bytes"], ph["backward"]["wire_bytes"],
                       ph["update"]["wire_bytes"])
                check(r["ok"] and r["pinned"] and got == w,
                      "%s %s: wire bytes by phase %s, want %s" % (tag, name, got, w))
                weights = (2 if name == "ddp" else 3) * (n - 1) * psi / n
                check(abs(r["wire_bytes"] - loss - weights) < 1e-6,
                      "%s %s: the weights' bytes, %s want %s" %
                      (tag, name, r["wire_bytes"] - loss, weights))
            for name, r in rows.items():
                if not r["ok"] or name == "spec":
                    continue
                q, a = rules[name], auto[name]
                check(r["pinned"] and q["pinned"],
                      "%s %s is pinned (pin: and --planner rules)" % (tag, name))
                for k in ("wire_bytes", "comm_bytes", "messages", "time_s"):
                    check(r[k] == q[k], "%s %s: pin: and --planner rules "
                          "differ in %s" % (tag, name, k))
                check(not a.get("pinned") and "auto" not in a,
                      "%s %s: auto rows are not pinned" % (tag, name))
                check(r["auto"]["time_s"] == a["time_s"] and
                      r["auto"]["wire_bytes"] == a["wire_bytes"],
                      "%s %s: 'auto saves' is not auto's plan" % (tag, name))
                if a["wire_bytes"] != r["wire_bytes"]:
                    departs += 1
                    check(r["auto"]["moves"].startswith(("drops ", "adds ")),
                          "%s %s: no moves named" % (tag, name))
check(departs > 0, "auto never departs from the pinned layouts: the test "
      "shows nothing")
print("pinned: %d rows where auto departs from the pinned layouts" % departs)
sys.exit(fail)
PY

# A spec with a dim called `pin`: `pin: data` is that dim's rule, a
# plain `pin: true` still the flag.
cat >"$dir/dim_pin.yaml" <<'Y'
mesh: {data: 2}
dims: {pin: 4, d: 8, e: 8}
tensors:
  x: {shape: [pin, d]}
  w: {shape: [d, e]}
ops:
  - {op: einsum, in: [x, w], out: y, shape: [pin, e]}
outputs: [y]
layouts:
  rule: {pin: data}
  flag: {pin: true, d: data}
Y
"$meshrt" compare "$dir/dim_pin.yaml" --json "$dir/dim_pin.json" >/dev/null ||
    bad "a spec with a dim called pin"
python3 - "$dir/dim_pin.json" <<'PY' || bad "pin: with a dim called pin"
import json, sys
rows = {r["name"]: r for r in json.load(open(sys.argv[1]))["layouts"]}
assert not rows["rule"]["pinned"] and rows["flag"]["pinned"], rows
assert rows["rule"]["comm_bytes"] == 0          # x split on pin: no move
PY
"$meshrt" plan "$dir/dim_pin.yaml" --layout rule >"$dir/rule.txt" &&
    grep -q "x  *\[pin/data, d\]" "$dir/rule.txt" || bad "pin: data is not the rule of dim pin"

# The text: an "auto saves" column, and a line per departing row.
t=$dir/pin@tiered@data=2,model=2@96.txt
check "compare prints 'auto saves'" grep -q "auto saves" "$t"
check "compare names auto's moves for ddp" \
    grep -Eq "^  ddp: auto saves .* on the wire; it drops allreduce grad:w1 over data,model" "$t"
check "rows that agree say nothing" grep -Eq "^  zero3 .* nothing$" "$t"
exit $fail
