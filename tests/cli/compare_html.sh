#!/usr/bin/env bash
# compare_html.sh MESHRT PNG_CHECK — `meshrt compare --html FILE`: one
# self-contained page (the table, the time and bytes-per-axis charts,
# each layout's pictures), for the MLP and the Transformer layer.
# Checked: nothing in it is fetched (no src=, href=, url( or @import),
# every inline SVG renders on its own with rsvg-convert, not blank,
# and headless Chromium (Debian's chromium, which ./dev test installs)
# loads it with no console message (a script error is one), runs its
# inline script (data-rendered on <html> counts every <svg> of the
# parsed page: the charts and one picture per layout that plans), and
# its screenshot is not blank (PNG_CHECK).
set -uo pipefail
meshrt=$1
png_check=$2
. "$(dirname "$0")/../lib.sh"
use_temp_dir
export MESHRT_PROFILE=$dir/no-such-profile.yaml
command -v chromium >/dev/null ||
    { echo "FAIL: chromium is missing (./dev test installs it)"; exit 1; }
browser=(timeout 120 chromium --headless --no-sandbox --disable-gpu
         --user-data-dir="$dir/profile" --enable-logging=stderr --v=0)

page() { # NAME SPEC
    local name=$1 spec=$2 html=$dir/$1.html
    if ! "$meshrt" compare "$spec" --html "$html" >"$dir/out" 2>"$dir/err"; then
        bad "meshrt compare $spec --html:"
        cat "$dir/err"
        return
    fi
    grep -Eiq 'src=|href=|url\(|@import' "$html" &&
        bad "$name.html fetches something: $(grep -Eio '(src=|href=|url\(|@import).{0,40}' "$html" | head -3)"
    local svgs rows
    svgs=$(grep -o '<svg ' "$html" | wc -l)
    rows=$(grep -c '^<h3>' "$html")
    [ "$svgs" -ge $((2 + rows)) ] ||
        bad "$name.html has $svgs pictures for $rows layouts and 2 charts"
    # each inline picture is an SVG document of its own, as rsvg-convert
    # reads it (well formed, drawn, not blank)
    rm -f "$dir"/inline*.svg
    awk -v d="$dir" '/^<svg /{n++; f=d "/inline" n ".svg"} f{print > f}
                     /^<\/svg>/{close(f); f=""}' "$html"
    local k
    for k in "$dir"/inline*.svg; do
        if ! rsvg-convert "$k" -o "$dir/inline.png" 2>"$dir/log"; then
            bad "$name.html: rsvg-convert refuses $(basename "$k"): $(head -3 "$dir/log")"
        elif ! "$png_check" "$dir/inline.png" >/dev/null 2>&1; then
            bad "$name.html: $(basename "$k") renders blank"
        fi
    done
    [ "$(ls "$dir"/inline*.svg | wc -l)" = "$svgs" ] ||
        bad "$name.html: $svgs <svg> but $(ls "$dir"/inline*.svg | wc -l) taken apart"
    "${browser[@]}" --dump-dom "file://$html" >"$dir/dom" 2>"$dir/log" ||
        bad "chromium --dump-dom $name.html failed: $(tail -3 "$dir/log")"
    grep -q ":CONSOLE" "$dir/log" &&
        bad "$name.html wrote on the console: $(grep ':CONSOLE' "$dir/log" | head -3)"
    grep -q "data-rendered=\"$svgs\"" "$dir/dom" ||
        bad "$name.html: its script did not count $svgs pictures: $(grep -o 'data-rendered="[^"]*"' "$dir/dom")"
    "${browser[@]}" --screenshot="$dir/$name.png" --window-size=1000,1400 \
        "file://$html" >/dev/null 2>"$dir/log" ||
        bad "chromium --screenshot $name.html failed: $(tail -3 "$dir/log")"
    "$png_check" "$dir/$name.png" >"$dir/png" 2>&1 ||
        bad "the screenshot of $name.html is blank: $(cat "$dir/png")"
    [ $fail = 0 ] && echo "$name.html: $svgs pictures, $(cat "$dir/png")"
}

expect 2 1 "--html draws one comparison, not a --sweep" \
    "$meshrt" compare "$here/../examples/mlp.yaml" --sweep batch=64 --html "$dir/x.html"
check "a refused --html writes nothing" [ ! -e "$dir/x.html" ]
expect 2 1 "--html needs a file name" \
    "$meshrt" compare "$here/../examples/mlp.yaml" --html ''

page mlp "$here/../examples/mlp.yaml"
page transformer "$here/../examples/transformer_layer.yaml"
exit $fail
