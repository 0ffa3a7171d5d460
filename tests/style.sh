#!/usr/bin/env bash
# style.sh -- every C file we wrote is formatted as .clang-format says.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
mapfile -t files < <(git ls-files -co --exclude-standard '*.c' '*.h' | grep -v '^build')
[[ ${#files[@]} -gt 0 ]] || { echo "no C files found under $top" >&2; exit 1; }
clang-format --dry-run --Werror "${files[@]}"
echo "style: ${#files[@]} files formatted"
