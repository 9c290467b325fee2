#!/usr/bin/env bash
# cli_generated_names.sh MESHRT — the names meshrt makes up stay unique
# however long the names they are made from (ir/grad_names.h): two
# parameters of 60 characters that share their first 50
# (specs/cli/long_names.yaml), trained and saved at 1-4 ranks, give two
# gradients and two updates, each in a file of its own with its own
# values, and no two tensors of the program share a name.  (The updates
# used to be "<first 40 characters>:next", both of them: --save kept
# one, exit 0.)
set -uo pipefail
meshrt=$1
. "$(dirname "$0")/../lib.sh"
use_temp_dir
spec="$here/specs/cli/long_names.yaml"

# every tensor `check` lists has a name of its own
"$meshrt" check "$spec" >"$dir/check" 2>&1 || bad "check: $(cat "$dir/check")"
dups=$(awk '/^  [^ ]+ +(input|op) /{print $1}' "$dir/check" | sort | uniq -d)
[ -z "$dups" ] || bad "tensors that share a name: $dups"
n=$(awk '/^  [^ ]+ +(input|op) /' "$dir/check" | wc -l)
[ "$n" -ge 40 ] || bad "check listed $n tensors (the listing changed?)"

for np in 1 2 3 4; do
    out="$dir/save$np"
    if ! "$here/mpirun.sh" "$np" "$meshrt" run "$spec" --mesh a="$np" \
            --verify --save "$out" >"$dir/run" 2>&1; then
        bad "run at $np ranks: $(tail -3 "$dir/run")"; continue
    fi
    # loss, two gradients, two updates: five files
    files=$(ls "$out" | wc -l)
    [ "$files" = 5 ] || bad "$np ranks: $files files saved, want 5: $(ls "$out")"
    for pattern in '*:next.npy' 'grad:p*.npy'; do
        set -- "$out"/$pattern
        if [ $# != 2 ]; then
            bad "$np ranks: $# files $pattern saved, want 2"
        elif cmp -s "$1" "$2"; then
            bad "$np ranks: $1 and $2 hold the same values"
        fi
    done
    # the names keep the start of the parameter's name
    ls "$out" | grep -q '^ppppppppppppppppppppppppppppppppppppppppppppppppp~[0-9a-f]\{8\}:next\.npy$' ||
        bad "$np ranks: no update named <first 49 characters>~HASH:next: $(ls "$out")"
    grep -q 'FAILED' "$dir/run" && bad "$np ranks: --verify failed: $(grep FAILED "$dir/run")"
done
exit $fail
