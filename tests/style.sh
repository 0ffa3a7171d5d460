#!/usr/bin/env bash
# style.sh -- every C file we wrote is formatted as .clang-format says.
# clang-format is looked for when this runs (not when the build was
# configured); without it the check fails and says how to get it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
clang_format=${CLANG_FORMAT:-clang-format}
if ! command -v "$clang_format" >/dev/null; then
  echo "style: $clang_format not found: install it (scripts/deps.sh --test, or" \
    "apt-get install clang-format) or point CLANG_FORMAT at it" >&2
  exit 1
fi
mapfile -t files < <(git ls-files -co --exclude-standard '*.c' '*.h' | grep -v '^build')
[[ ${#files[@]} -gt 0 ]] || { echo "no C files found under $top" >&2; exit 1; }
"$clang_format" --dry-run --Werror "${files[@]}"
echo "style: ${#files[@]} files formatted"
