#!/bin/sh
# test_install (ctest): `cmake --install` the build into a temporary prefix,
# build tests/install/ (a client using find_package(attn) and attn/api.h)
# against it, run it on configs/raschka_mha_causal.json and compare its first
# sequence with the tutorial's table in README.md; check that README.md shows
# this client's source. Also runs the installed attn-run, and draws a PNG with
# it (the picture module, found from the installed executable).
# Usage: test_install.sh CMAKE BUILD_DIR SOURCE_DIR CXX [CXX_FLAGS]
set -eu
cmake=$1 build=$2 src=$3 cxx=$4 flags=${5:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$cmake" --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"
for f in bin/attn-run include/attn/api.h lib/cmake/attn/attnConfig.cmake; do
  [ -e "$tmp/prefix/$f" ] || { echo "test_install: $f not installed" >&2; exit 1; }
done
"$tmp/prefix/bin/attn-run" --version
# The picture module installs to <libdir>/attn-run and the installed program finds it.
ls "$tmp"/prefix/lib*/attn-run/attn-run-cairo.so >/dev/null 2>&1 ||
  { echo "test_install: the picture module attn-run-cairo.so is not installed" >&2; exit 1; }
(cd "$src" && "$tmp/prefix/bin/attn-run" -q --config configs/warner_causal.json \
   --plot "$tmp/plot.png" >/dev/null) || { echo "test_install: --plot FILE.png failed" >&2; exit 1; }
[ -s "$tmp/plot.png" ] || { echo "test_install: no picture" >&2; exit 1; }

"$cmake" -S "$src/tests/install" -B "$tmp/client" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$flags" \
  >"$tmp/configure.log" || { cat "$tmp/configure.log" >&2; exit 1; }
"$cmake" --build "$tmp/client" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; exit 1; }

cd "$src"
"$tmp/client/client" configs/raschka_mha_causal.json >"$tmp/out"
cat "$tmp/out"
# README's quick start: tensor([[[0.3190, 0.4858], ... the first 6 rows.
sed -n '/^tensor(\[\[\[/,/^\.\.\./p' README.md | grep -o '[0-9]\.[0-9]*, [0-9]\.[0-9]*' \
  | head -6 | tr -d ',' >"$tmp/want"
[ "$(wc -l <"$tmp/want")" -eq 6 ] || { echo "test_install: no table in README.md" >&2; exit 1; }
head -6 "$tmp/out" >"$tmp/got"
diff "$tmp/want" "$tmp/got" || { echo "test_install: context differs from README.md" >&2; exit 1; }
grep -q '^maps shape {2, 2, 6, 6}' "$tmp/out" || { echo "test_install: maps shape" >&2; exit 1; }
# The README shows this very program.
sed -n '/^```cpp$/,/^```$/p' README.md | sed '1d;$d' >"$tmp/readme.cpp"
diff "$src/tests/install/main.cpp" "$tmp/readme.cpp" >&2 \
  || { echo "test_install: README.md's C++ example is not tests/install/main.cpp" >&2; exit 1; }
echo "test_install: OK"
