#!/usr/bin/python3
"""Regenerates every golden fixture under tests/golden (and manifest.json) with the golden
package gen/: see tests/golden/README.md and `generate.py --help`."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gen.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
