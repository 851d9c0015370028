#!/usr/bin/env bash
# Sets up and builds (scripts/setup.sh), then runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
ctest --test-dir build --output-on-failure -j"$(nproc)"
