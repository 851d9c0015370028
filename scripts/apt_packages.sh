# Sourced by the scripts here: the Debian 12 packages attn-run needs, and
# ensure_packages PKG..., which installs those not installed yet (with sudo
# when not root).

# The tool: compiler and build (scripts/setup.sh builds with Ninja), the
# libraries it links, and for --plot cairo, fontconfig and one font (DejaVu
# covers Latin, Greek and Cyrillic labels).
TOOL_PACKAGES=(cmake g++ make ninja-build pkg-config libcli11-dev nlohmann-json3-dev libxtensor-dev
               xtl-dev libxsimd-dev libopenblas-dev libspdlog-dev zlib1g-dev libcairo2-dev
               libfontconfig-dev fonts-dejavu-core)

# The tests, on top: doctest and xtensor-blas (the reference attention); fonts
# for every script the picture tests draw (Noto: CJK, Thai, Devanagari, ...);
# chromium for the HTML page's browser test; a pseudo-terminal (script), the
# man page check (groff), the .deb (dpkg-dev's dpkg-shlibdeps) and a
# single-node Slurm (tests/slurm starts munged, slurmctld and slurmd itself
# when run as root); NumPy, which reads the .npz that --dump-weights FILE.npz
# writes (test_cli_dump), and python3 for scripts/check_layers.py;
# clang-format, which CI runs over the C++ (scripts/format_check.sh); GNU
# parallel, which the README's sharding example uses.
TEST_PACKAGES=(doctest-dev libxtensor-blas-dev fonts-noto-core fonts-noto-cjk chromium bsdutils
               groff-base man-db dpkg-dev munge slurmctld slurmd slurm-client python3
               python3-numpy clang-format parallel)

ensure_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "installing ${missing[*]}" >&2
  local sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
