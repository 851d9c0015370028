"""Paths and the writers under scripts/ (no safetensors or gguf package in Debian 12)."""
import os
import sys

GOLDEN = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tests/golden
ROOT = os.path.dirname(os.path.dirname(GOLDEN))  # the repository
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from safetensors_write import save_safetensors  # noqa: E402,F401
from gguf_quants import F16_SCALES, ID, TYPES, dequantize, random_blocks  # noqa: E402,F401
import gguf_write  # noqa: E402,F401
