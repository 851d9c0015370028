#!/usr/bin/env bash
# Checks that the C++ of lib/, app/, tests/, bench/ and fuzz/ is laid out as
# .clang-format says (Debian 12's clang-format 14), changing nothing; lists the
# files that differ and fails when any does. `scripts/format_check.sh --fix`
# rewrites them in place instead.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format-14}
command -v "$CLANG_FORMAT" >/dev/null || CLANG_FORMAT=clang-format
mapfile -t files < <(git ls-files 'lib/*.cpp' 'lib/*.h' 'app/*.cpp' 'app/*.h' 'tests/*.cpp' \
                                  'tests/*.h' 'bench/*.cpp' 'bench/*.h' 'fuzz/*.cpp' 'fuzz/*.h')
if [ "${1:-}" = "--fix" ]; then
  "$CLANG_FORMAT" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$CLANG_FORMAT" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ "${#bad[@]}" -gt 0 ]; then
  printf 'format_check: %s differs from .clang-format\n' "${bad[@]}" >&2
  echo "format_check: ${#bad[@]} of ${#files[@]} files differ; scripts/format_check.sh --fix rewrites them" >&2
  exit 1
fi
echo "format_check: ${#files[@]} files match .clang-format"
