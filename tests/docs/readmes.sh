#!/usr/bin/env bash
# Each top-level folder's README lists what is in the folder, and the list is checked here against
# the folder itself. The convention (tests/README.md): a section `## Files` whose items begin with
# the names they describe, in backticks, relative to the folder, before a colon (an item may
# go on over lines indented by two spaces):
#     - `loop/loop.c`, `loop/loop.h`: the one ask -> evaluate -> record -> tell loop
#     - `h200/`: recorded spaces (a folder named as a whole, with a trailing slash)
# Every name must exist (a trailing slash: a folder), and every file under the folder must be
# named, itself or through a folder named as a whole. The README itself needs no entry.
# Usage: readmes.sh ROOT
set -u
root=${1:?usage: readmes.sh ROOT}
cd "$root" || exit 2
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# The files of a folder, relative to it: what git tracks or would track (ignored build outputs
# left out), else every file but caches and hidden ones.
files_of() {
    if git -C "$1" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        (cd "$1" && git ls-files --cached --others --exclude-standard -- . | sort -u)
    else
        (cd "$1" && find . -type f ! -path '*/.*' ! -path '*/__pycache__/*' | sed 's|^\./||' | sort)
    fi
}

checked=0
for readme in */README.md; do
    dir=${readme%/README.md}
    # The names at the heads of the items of the `## Files` section.
    names=$(awk 'function heads(item,   head) {
                     head = item; sub(/`: .*/, "`", head); sub(/`:$/, "`", head)
                     while (match(head, /`[^`]+`/)) {
                         print substr(head, RSTART + 1, RLENGTH - 2)
                         head = substr(head, RSTART + RLENGTH)
                     }
                 }
                 /^## / { if (item != "") heads(item); item = ""; in_files = ($0 == "## Files")
                          next }
                 !in_files { next }
                 /^- `/ { if (item != "") heads(item); item = $0; next }
                 /^  / && item != "" { item = item " " substr($0, 3); next }
                 { if (item != "") heads(item); item = "" }
                 END { if (item != "") heads(item) }' "$readme")
    if ! grep -qx '## Files' "$readme"; then
        fail "$readme: no '## Files' section listing the folder's files"
        continue
    fi
    checked=$((checked + 1))
    while IFS= read -r name; do
        [ -n "$name" ] || continue
        case $name in
            */) [ -d "$dir/$name" ] || fail "$readme names \`$name\`, which is not a folder of $dir/" ;;
            *) [ -f "$dir/$name" ] || fail "$readme names \`$name\`, which is not a file of $dir/" ;;
        esac
    done <<< "$names"
    while IFS= read -r file; do
        [ -n "$file" ] && [ "$file" != README.md ] || continue
        named=0
        while IFS= read -r name; do
            case $name in
                */) case $file in "$name"*) named=1 ;; esac ;;
                *) [ "$file" = "$name" ] && named=1 ;;
            esac
            [ $named = 1 ] && break
        done <<< "$names"
        [ $named = 1 ] || fail "$readme does not name \`$file\` (add it, or its folder, to '## Files')"
    done <<< "$(files_of "$dir")"
done
[ $checked -gt 0 ] || fail "no top-level README found under $root"
[ $failed = 0 ] && echo "ok: $checked READMEs list their folders"
exit $failed
