#!/usr/bin/env bash
# adam_by_hand.sh MESHRT — Adam and AdamW computed by hand: python3
# writes a linear model's data (.npy), meshrt trains it 3 steps on 2
# ranks (w split over data) and saves its outputs, and python3 runs the
# textbook update from the same data — g = 2 xᵀ(xw - t) / n (mse's
# gradient), m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g²,
# m̂ = m / (1 - b1^t), v̂ = v / (1 - b2^t), w -= lr (m̂ / (sqrt(v̂) + eps)
# + wd w) (AdamW's decay; Adam's adds wd w to g instead) — and compares
# the parameters, both moments and the last gradient with meshrt's,
# element by element (float64: within 1e-12 relative).  meshrt folds
# the bias correction into lr_t and eps_t (ir/optimizer.c): equal in
# exact arithmetic, so only rounding may differ.  The same spec with
# steps: 1 run with --repeat 3 saves the same bytes (the runner counts
# the steps it has run).
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
use_temp_dir

cat >"$dir/npy.py" <<'PY'
import ast, math, random, struct, sys
def save(path, rows):
    shape = (len(rows), len(rows[0]))
    h = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }" % shape
    h += " " * (63 - (len(h) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode())
        f.write(struct.pack("<%dd" % (shape[0] * shape[1]), *[x for r in rows for x in r]))
def load(path):
    b = open(path, "rb").read()
    n = struct.unpack("<H", b[8:10])[0]
    hd = ast.literal_eval(b[10:10 + n].decode())
    assert hd["descr"] == "<f8" and not hd["fortran_order"]
    shape = hd["shape"]; c = shape[-1] if shape else 1
    flat = struct.unpack("<%dd" % (len(b[10 + n:]) // 8), b[10 + n:])
    return [list(flat[i:i + c]) for i in range(0, len(flat), c)]
PY

python3 - "$dir" <<'PY' || exit 1
import sys; sys.path.insert(0, sys.argv[1]); from npy import *
d = sys.argv[1]
random.seed(7)
for name, r, c in (("x", 8, 6), ("w", 6, 4), ("t", 8, 4)):
    save(f"{d}/{name}.npy", [[random.uniform(-1, 1) for _ in range(c)] for _ in range(r)])
PY

for opt in adam adamw; do
    cat >"$dir/$opt.yaml" <<YAML
mesh: {data: 2}
dtype: float64
dims: {b: 8, i: 6, o: 4}
layout: {i: data}
tensors:
  x: {shape: [b, i], init: {file: x.npy}}
  w: {shape: [i, o], init: {file: w.npy}}
  t: {shape: [b, o], init: {file: t.npy}}
ops:
  - {op: einsum, in: [x, w], out: y, shape: [b, o]}
  - {op: mse, in: [y, t], out: loss}
train: {loss: loss, params: [w], lr: 0.05, steps: 3, optimizer: $opt,
        betas: [0.8, 0.95], eps: 1e-3, weight_decay: 0.1}
YAML
    if ! timeout 120 "$here/mpirun.sh" 2 "$meshrt" run "$dir/$opt.yaml" \
         --save "$dir/$opt" >"$dir/$opt.out" 2>&1; then
        bad "$opt: the run failed"; cat "$dir/$opt.out"; continue
    fi
    # steps: 1 run with --repeat 3: the runner counts the steps (Adam's
    # bias correction), so the same three steps
    sed 's/steps: 3/steps: 1/' "$dir/$opt.yaml" >"$dir/$opt.1.yaml"
    if ! timeout 120 "$here/mpirun.sh" 2 "$meshrt" run "$dir/$opt.1.yaml" \
         --repeat 3 --save "$dir/$opt.r" >"$dir/$opt.r.out" 2>&1; then
        bad "$opt: the --repeat run failed"; cat "$dir/$opt.r.out"; continue
    fi
    for n in w:next w:m:next w:v:next; do
        cmp -s "$dir/$opt/$n.npy" "$dir/$opt.r/$n.npy" ||
            bad "$opt: $n after --repeat 3 is not that of steps: 3"
    done
    python3 - "$dir" "$opt" <<'PY' || fail=1
import sys; sys.path.insert(0, sys.argv[1]); from npy import *
d, opt = sys.argv[1], sys.argv[2]
x, w, t = (load(f"{d}/{n}.npy") for n in ("x", "w", "t"))
B, I, O = len(x), len(w), len(w[0])
lr, b1, b2, eps, wd = 0.05, 0.8, 0.95, 1e-3, 0.1
m = [[0.0] * O for _ in range(I)]; v = [[0.0] * O for _ in range(I)]
for step in range(1, 4):
    r = [[sum(x[b][i] * w[i][o] for i in range(I)) - t[b][o] for o in range(O)] for b in range(B)]
    g = [[2 * sum(x[b][i] * r[b][o] for b in range(B)) / (B * O) for o in range(O)] for i in range(I)]
    for i in range(I):
        for o in range(O):
            ga = g[i][o] + (wd * w[i][o] if opt == "adam" else 0)
            m[i][o] = b1 * m[i][o] + (1 - b1) * ga
            v[i][o] = b2 * v[i][o] + (1 - b2) * ga * ga
            u = (m[i][o] / (1 - b1 ** step)) / (math.sqrt(v[i][o] / (1 - b2 ** step)) + eps)
            w[i][o] -= lr * (u + wd * w[i][o]) if opt == "adamw" else lr * u
ok = True
for n, ref in (("w:next", w), ("w:m:next", m), ("w:v:next", v), ("grad:w", g)):
    got = load(f"{d}/{opt}/{n}.npy")
    scale = max(abs(a) for row in ref for a in row)
    err = max(abs(a - b) for ra, rb in zip(got, ref) for a, b in zip(ra, rb)) / scale
    if not err < 1e-12:
        print(f"FAIL: {opt} {n}: relative error {err:.3g} against the hand computation")
        ok = False
sys.exit(0 if ok else 1)
PY
done
exit $fail
