#!/usr/bin/env bash
# The .deb end to end: `cpack -G DEB` in the build folder, the package's
# metadata (name, Depends on the runtime libraries), its files (program, man
# page, bash completion, examples), then `dpkg-deb -x` into a temporary root
# and runs from there: --version, a shipped example config, a PNG (the picture
# module, usr/lib*/attn-run), the man page through man, the completion in bash.
# Usage: tests/package/test_deb.sh BUILD_DIR. Exit 77 (skipped) without the tools.
set -euo pipefail
build=$(cd "$1" && pwd)
for tool in cpack dpkg-deb; do
  command -v "$tool" >/dev/null || { echo "skipping: no $tool"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$build" && cpack -G DEB -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; fail "cpack -G DEB"; }
debs=("$tmp"/pkg/*.deb)
[[ ${#debs[@]} -eq 1 && -f ${debs[0]} ]] || fail "expected one .deb in $tmp/pkg, found: ${debs[*]}"
deb=${debs[0]}
echo "built $(basename "$deb") ($(stat -c %s "$deb") bytes)"

info=$(dpkg-deb -f "$deb" Package Depends)
echo "$info"
grep -qx "Package: attn-run" <<<"$info" || fail "package name"
for lib in libcairo2 zlib1g libspdlog; do
  grep -q "^Depends:.*$lib" <<<"$info" || fail "Depends lacks $lib"
done
# OpenBLAS always: the portable build (-DATTN_NATIVE=OFF) links it; a build whose
# own kernels replace every float32 OpenBLAS call (AVX2, AVX-512) does not, and
# loads it (dlopen) only for --check-f64's float64 products.
grep -q "^Depends:.*libopenblas0" <<<"$info" || fail "Depends lacks libopenblas0"
if [[ "$(readelf -d "$build/attn-run")" != *NEEDED*libopenblas* ]]; then
  nm -D --undefined-only "$build/attn-run" | grep -q blas && fail "an own-kernel build links BLAS"
fi

contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/attn-run ./usr/share/man/man1/attn-run.1.gz \
         ./usr/share/bash-completion/completions/attn-run \
         ./usr/share/attn-run/examples/configs/warner_causal.json \
         ./usr/share/attn-run/examples/data/sentence_c8.npy; do
  grep -q " $f\$" <<<"$contents" || fail "$f is not in the package"
done
grep -Eq " \./usr/lib[^ ]*/attn-run/attn-run-cairo\.so\$" <<<"$contents" ||
  fail "the picture module (usr/lib*/attn-run/attn-run-cairo.so) is not in the package"
# dpkg-shlibdeps reads the module too: fontconfig is its library alone.
grep -q "^Depends:.*libfontconfig1" <<<"$info" || fail "Depends lacks libfontconfig1 (the module's)"

root="$tmp/root"
dpkg-deb -x "$deb" "$root"
exe="$root/usr/bin/attn-run"
version=$("$exe" --version)
[[ $version == "attn-run "* ]] || fail "--version printed: $version"
out=$(cd "$tmp" && "$exe" -q --config "$root/usr/share/attn-run/examples/configs/warner_causal.json")
[[ $out == "tensor([["* ]] || fail "the example config printed: ${out:0:200}"
# The example run again from inside the unpacked tree, to a folder.
(cd "$tmp" && "$exe" -q --config "$root/usr/share/attn-run/examples/configs/warner_causal.json" -o out)
[[ -f $tmp/out/context.npy && -f $tmp/out/attention.npy ]] || fail "no results in out/"
# A picture: the program finds its picture module in the unpacked tree.
(cd "$tmp" && "$exe" -q --config "$root/usr/share/attn-run/examples/configs/warner_causal.json" \
   --plot out/w.png >/dev/null)
[[ -s $tmp/out/w.png ]] || fail "--plot out/w.png drew nothing"

if command -v man >/dev/null; then
  man -l "$root/usr/share/man/man1/attn-run.1.gz" 2>/dev/null | grep -q -- "--merge-shards" ||
    fail "man -l does not show the page"
fi
completion=$(bash -c "source '$root/usr/share/bash-completion/completions/attn-run' && complete -p attn-run \
  && COMP_WORDS=(attn-run --ou) COMP_CWORD=1 && _attn_run && echo \"\${COMPREPLY[*]}\"")
[[ $completion == $'complete -F _attn_run attn-run\n--out-dir' ]] || fail "completion: $completion"
echo "ok: installed into a temporary root and ran from there"
