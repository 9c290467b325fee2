#!/usr/bin/env python3
"""fast_math_fit.py — the polynomials of kernels/fast_math.h, refitted.

Weighted minimax fits of the relative error by a Remez exchange, in
pure Python double precision: P for e^r = 1 + r + r^2 P(r) on
|r| <= ln2/2, Q for tanh a = a + a^3 Q(a^2) on [0, 1/2] and R for
log((1+s)/(1-s)) = 2s + s^3 R(s^2) on |s| <= (sqrt2-1)/(sqrt2+1), each a
little wider than its interval.  It prints, for a few degrees (and
tanh's switch points), the largest weighted error and the coefficients
rounded to float, lowest degree first, in C's hex notation.
fast_math.h uses exp's degree 4, tanh's 0.5 / degree 4 and log's
degree 2.  Run: python3 kernels/fast_math_fit.py (a minute or so).
"""
import math, struct

def f32(v):
    return struct.unpack('f', struct.pack('f', v))[0]

def solve(a, b):
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                k = m[r][c] / m[c][c]
                for j in range(c, n + 1):
                    m[r][j] -= k * m[c][j]
    return [m[i][n] / m[i][i] for i in range(n)]

def remez(f, w, basis, lo, hi, iters=30, grid=20000):
    n = len(basis)
    xs = [lo + (hi - lo) * (1 - math.cos(math.pi * i / (n))) / 2 for i in range(n + 1)]
    g = [lo + (hi - lo) * i / grid for i in range(grid + 1)]
    for _ in range(iters):
        a = [[b(x) for b in basis] + [(-1) ** i / w(x)] for i, x in enumerate(xs)]
        sol = solve(a, [f(x) for x in xs])
        c = sol[:n]
        err = lambda x: w(x) * (f(x) - sum(ci * b(x) for ci, b in zip(c, basis)))
        e = [err(x) for x in g]
        # one extremum per sign run
        ext, i = [], 0
        while i < len(g):
            j = i
            while j + 1 < len(g) and (e[j + 1] >= 0) == (e[i] >= 0):
                j += 1
            k = max(range(i, j + 1), key=lambda t: abs(e[t]))
            ext.append(k)
            i = j + 1
        while len(ext) > n + 1:  # drop the smallest at the ends
            if abs(e[ext[0]]) < abs(e[ext[-1]]):
                ext.pop(0)
            else:
                ext.pop()
        if len(ext) < n + 1:
            break
        xs = [g[k] for k in ext]
    return c, max(abs(v) for v in e)

def exp_fit(deg):
    # e^r = 1 + r + r^2 P(r), relative error, |r| <= ln2/2 (+ a margin)
    def f(r):
        if abs(r) < 1e-3:
            return sum(r ** k / math.factorial(k + 2) for k in range(8))
        return (math.expm1(r) - r) / (r * r)
    w = lambda r: r * r / math.exp(r)
    h = math.log(2) / 2 * 1.0002
    return remez(f, w, [lambda r, j=j: r ** j for j in range(deg + 1)], -h, h)

def tanh_fit(deg, t):
    # tanh a = a + a^3 Q(a^2), relative error, 0 <= a <= t
    def f(a):
        if a < 1e-2:
            return -1/3 + 2*a**2/15 - 17*a**4/315 + 62*a**6/2835
        return (math.tanh(a) - a) / a ** 3
    w = lambda a: a ** 3 / math.tanh(a) if a > 0 else 0.0
    return remez(f, w, [lambda a, j=j: a ** (2 * j) for j in range(deg + 1)], 1e-9, t)

def log_fit(deg):
    # log((1+s)/(1-s)) = 2s + s^3 R(s^2), relative error, |s| <= (sqrt2-1)/(sqrt2+1)
    smax = (math.sqrt(2) - 1) / (math.sqrt(2) + 1) * 1.0002
    def f(s):
        if s < 1e-2:
            return sum(2 * s ** (2 * k) / (2 * k + 3) for k in range(6))
        return (2 * math.atanh(s) - 2 * s) / s ** 3
    w = lambda s: s ** 3 / (2 * math.atanh(s)) if s > 0 else 0.0
    return remez(f, w, [lambda s, j=j: s ** (2 * j) for j in range(deg + 1)], 1e-9, smax)

if __name__ == '__main__':
    for d in (3, 4):
        c, e = exp_fit(d); print('exp', d, e, [f32(x).hex() for x in c], c)
    for t in (0.5, 0.55, 0.625):
        for d in (4, 5):
            c, e = tanh_fit(d, t); print('tanh', t, d, e, [f32(x).hex() for x in c])
    for d in (2, 3):
        c, e = log_fit(d); print('log', d, e, [f32(x).hex() for x in c])
