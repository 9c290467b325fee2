#!/usr/bin/env bash
# tutorial_pictures.sh MESHRT — the `meshrt show` pictures printed in
# docs/tutorial.md are what meshrt draws today: every fenced block whose
# first line is `$ meshrt show ...` is run from the checkout's root and
# its output compared line by line with the block (a block cut short by
# a line starting with "  ..." is compared up to that line).  A picture
# that drifts from the code fails here, not in a reader's terminal.
set -uo pipefail
meshrt=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/../lib.sh"
use_temp_dir
cd "$here/.." || exit 2
export MESHRT_PROFILE=$dir/no-such-profile.yaml

python3 - "$meshrt" docs/tutorial.md <<'PY' || fail=1
import shlex, subprocess, sys
meshrt, doc = sys.argv[1], sys.argv[2]
lines = open(doc, encoding='utf-8').read().split('\n')
blocks, i = [], 0
while i < len(lines):
    if lines[i].startswith('```') and i + 1 < len(lines) \
            and lines[i + 1].startswith('$ meshrt show '):
        j = i + 2
        while not lines[j].startswith('```'):
            j += 1
        blocks.append((i + 2, lines[i + 1][2:], lines[i + 2:j]))
        i = j
    i += 1
if len(blocks) < 4:
    print(f'FAIL: {doc}: {len(blocks)} show pictures, expected at least 4')
    sys.exit(1)
bad = 0
for at, cmd, want in blocks:
    cut = next((k for k, l in enumerate(want) if l.startswith('  ...')), None)
    if cut is not None:
        want = want[:cut]
    argv = shlex.split(cmd)
    argv[0] = meshrt
    r = subprocess.run(argv, capture_output=True, text=True)
    got = r.stdout.rstrip('\n').split('\n')
    if cut is not None:
        got = got[:cut]
    if r.returncode != 0 or got != want:
        bad = 1
        print(f'FAIL: {doc}:{at}: `{cmd}` (exit {r.returncode}) draws:')
        for k, (g, w) in enumerate(zip(got + [''] * len(want), want + [''] * len(got))):
            if g != w:
                print(f'  first difference at line {k + 1}:\n  doc:  {w!r}\n  now:  {g!r}')
                break
        print(r.stderr, end='')
print(f'{len(blocks)} pictures checked')
sys.exit(bad)
PY
exit $fail
