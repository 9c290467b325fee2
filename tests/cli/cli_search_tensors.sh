#!/usr/bin/env bash
# cli_search_tensors.sh MESHRT — `meshrt search --per-tensor` (issue 10,
# item 7): global rules and a layout of its own for each parameter.
# (a) the pruned search finds what --exhaustive (every candidate of every
#     combination planned) finds: the same K best and Pareto front, also
#     under a memory cap that prunes most candidates;
# (b) its best is at least as fast as the search over global rules alone
#     (its space holds that one);
# (c) every layout it lists, pasted into a copy of the spec (the rules as
#     layout:, each parameter's own layout: in its entry), plans to the
#     time it reported;
# (d) bad usage is one line and exit 2;
# (e) --activations: an op result (r, pinned by its op's layout: to a
#     costly split) gets a layout of its own: pruned == exhaustive, it
#     beats --per-tensor alone, and pasted as the op's layout: it plans
#     to the time reported.
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
small="$here/specs/cli/per_tensor.yaml"
mlp="$here/../examples/mlp.yaml"
use_temp_dir

# --- (a) pruned == exhaustive -------------------------------------------
same_results() { # A.json B.json
    python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda l: [(r["rules"], r["tensors"], r["time_s"], r["peak_memory"]) for r in l]
assert a["top"] and key(a["top"]) == key(b["top"]), (key(a["top"]), key(b["top"]))
assert key(a["pareto"]) == key(b["pareto"]), "fronts differ"
' "$1" "$2"
}
n=0
for args in "$small" "$small --max-memory 700 --top 3" \
            "$mlp --mesh rows=4,cols=1" "$mlp --mesh rows=4,cols=1 --max-memory 250K --top 2"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    "$meshrt" search $args --per-tensor --json "$dir/p$n.json" >"$dir/p$n.txt" 2>&1
    check "search --per-tensor $args exits 0" [ $? = 0 ]
    # shellcheck disable=SC2086
    "$meshrt" search $args --per-tensor --exhaustive --json "$dir/e$n.json" >/dev/null 2>&1
    check "search --per-tensor --exhaustive $args exits 0" [ $? = 0 ]
    check "pruned and exhaustive agree: $args" same_results "$dir/p$n.json" "$dir/e$n.json"
done
check "the exhaustive run planned every candidate" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = d["candidates"]
assert d["exhaustive"] and c["pruned"] == 0 and c["planned"] == c["enumerated"] - c["invalid"], c
' "$dir/e4.json"
check "the capped search pruned some" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["candidates"]["pruned"] > 0
' "$dir/p4.json"
check "the combinations are counted" grep -q "(w1, w2): 16 combinations of their layouts" "$dir/p3.txt"

# --- (b) at least as good as the rules alone -----------------------------
"$meshrt" search "$mlp" --mesh rows=4,cols=1 --json "$dir/rules.json" >/dev/null 2>&1
check "per-tensor is no slower than the rules alone" python3 -c '
import json, sys
p, r = (json.load(open(f)) for f in sys.argv[1:3])
assert p["top"][0]["time_s"] <= r["top"][0]["time_s"], (p["top"][0], r["top"][0])
' "$dir/p3.json" "$dir/rules.json"

# --- (c) pasted, every listed layout plans to its time ---------------------
paste_and_plan() { # SPEC JSON MESH_ARGS...
    local spec=$1 json=$2; shift 2
    python3 - "$spec" "$json" "$dir" "$meshrt" "$@" <<'EOF'
import json, re, subprocess, sys
spec, res, out, meshrt, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
text = open(spec).read()
d = json.load(open(res))
def flow(rules):
    return "{" + ", ".join("%s: [%s]" % (k, ", ".join(v)) for k, v in rules.items()) + "}"
seen = []
for n, r in enumerate(d["top"] + d["pareto"]):
    if (r["rules"], r["tensors"]) in seen:
        continue
    seen.append((r["rules"], r["tensors"]))
    t = re.sub(r"(?m)^layout: .*$", "layout: " + flow(r["rules"]), text)
    for name, own in r["tensors"].items():
        if own is not None:
            t, k = re.subn(r"(?m)^(  %s: \{.*)\}$" % name,
                           r"\1, layout: %s}" % flow(own).replace("\\", "\\\\"), t)
            assert k == 1, name
    path = "%s/paste%d.yaml" % (out, n)
    open(path, "w").write(t)
    p = subprocess.run([meshrt, "plan", path, "--json"] + extra,
                       capture_output=True, text=True)
    assert p.returncode == 0, (path, p.stderr)
    got = json.loads(p.stdout)["totals"]["time_s"]
    # plan --json prints 6 digits
    assert abs(got - r["time_s"]) <= 1e-5 * r["time_s"], (r, got)
EOF
}
check "the small spec's layouts plan, pasted, to their times" paste_and_plan "$small" "$dir/p1.json"
check "the MLP's layouts plan, pasted, to their times" paste_and_plan "$mlp" "$dir/p3.json" --mesh rows=4,cols=1

# --- (e) activations: an op's result with a layout of its own -------------
act="$here/specs/cli/per_activation.yaml"
for args in "" "--max-memory 380K --top 3"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    "$meshrt" search "$act" $args --activations r --json "$dir/p$n.json" >"$dir/p$n.txt" 2>&1
    check "search --activations r $args exits 0" [ $? = 0 ]
    # shellcheck disable=SC2086
    "$meshrt" search "$act" $args --activations r --exhaustive --json "$dir/e$n.json" >/dev/null 2>&1
    check "search --activations r --exhaustive $args exits 0" [ $? = 0 ]
    check "pruned and exhaustive agree: --activations r $args" same_results "$dir/p$n.json" "$dir/e$n.json"
done
"$meshrt" search "$act" --per-tensor --json "$dir/noact.json" >/dev/null 2>&1
check "r's own layout beats what the rules and parameters alone reach" python3 -c '
import json, sys
a, p = (json.load(open(f)) for f in sys.argv[1:3])
assert a["activations"] == ["r"] and a["params"] == ["w1", "w2"], (a["activations"], a["params"])
best = a["top"][0]
assert best["tensors"]["r"] is not None, best
assert best["time_s"] < p["top"][0]["time_s"] * (1 - 1e-6), (best, p["top"][0])
' "$dir/p$((n - 1)).json" "$dir/noact.json"
check "the winner names r's op" grep -q "^  out: r, layout: {" "$dir/p$((n - 1)).txt"
paste_ops() { # SPEC JSON: every listed layout, pasted (r's op too), plans to its time
    python3 - "$1" "$2" "$dir" "$meshrt" <<'EOF2'
import json, re, subprocess, sys
spec, res, out, meshrt = sys.argv[1:5]
text = open(spec).read()
d = json.load(open(res))
flow = lambda rules: "{" + ", ".join("%s: [%s]" % (k, ", ".join(v)) for k, v in rules.items()) + "}"
for n, r in enumerate(d["top"] + d["pareto"]):
    t = re.sub(r"(?m)^layout: .*$", "layout: " + flow(r["rules"]), text)
    for name, own in r["tensors"].items():
        if own is None:
            continue
        if name in d["activations"]:   # the op whose out: is name
            t, k = re.subn(r"(?m)^(  - \{op: \w+, in: \[.*\], out: %s)(, layout: \{[^}]*\})?\}$" % name,
                           r"\1, layout: %s}" % flow(own), t)
        else:
            t, k = re.subn(r"(?m)^(  %s: \{.*)\}$" % name, r"\1, layout: %s}" % flow(own), t)
        assert k == 1, name
    path = "%s/apaste%d.yaml" % (out, n)
    open(path, "w").write(t)
    p = subprocess.run([meshrt, "plan", path, "--json"], capture_output=True, text=True)
    assert p.returncode == 0, (path, p.stderr)
    got = json.loads(p.stdout)["totals"]["time_s"]
    assert abs(got - r["time_s"]) <= 1e-5 * r["time_s"], (r, got)
EOF2
}
check "the activation search's layouts plan, pasted, to their times" paste_ops "$act" "$dir/p$((n - 1)).json"
"$meshrt" search "$here/specs/cli/per_activation_chain.yaml" --activations all >"$dir/all.txt" 2>&1
check "--activations all exits 0" [ $? = 0 ]
check "--activations all stops at the cap and says which it left out" \
    grep -q "cap of 4096 combinations cut the space: .*: h7, h8$" "$dir/all.txt"
check "--activations all searched the rest" grep -q "(x, h1, h2, h3, h4, h5, h6): 2187 combinations" "$dir/all.txt"
"$meshrt" search "$act" --activations nosuch >/dev/null 2>"$dir/err"
check "--activations of no op's result exits 2" [ $? = 2 ]
check "--activations of no op's result says so in one line" \
    [ "$(grep -c "no op makes 'nosuch'" "$dir/err")" = 1 ]

# --- (d) usage -------------------------------------------------------------
"$meshrt" plan "$small" --per-tensor >/dev/null 2>"$dir/err"
check "--per-tensor on plan exits 2" [ $? = 2 ]
check "--per-tensor on plan says so" grep -q "option --per-tensor is only valid for 'search'" "$dir/err"
"$meshrt" search "$mlp" --per-tensor --planner meshtf >/dev/null 2>"$dir/err"
check "--per-tensor with meshtf exits 2" [ $? = 2 ]
check "--per-tensor with meshtf says why" grep -q "needs the auto planner" "$dir/err"
"$meshrt" search "$mlp" --per-tensor --layout mixed >/dev/null 2>"$dir/err"
check "--per-tensor with --layout exits 2" [ $? = 2 ]
check "--per-tensor with --layout is one line" [ "$(wc -l <"$dir/err")" = 1 ]

[ $fail = 0 ] && echo "cli_search_tensors: all checks passed"
exit $fail
