"""The golden package: torch references and generators of every fixture under tests/golden.

  reference.py   the attention of one layer, written once (every position scheme, score term)
  positions.py   RoPE parameters and rotations, ALiBi slopes, T5 buckets
  hf.py          config.json read as transformers' configuration classes read it
  weights.py     drawing tensors (seeded generators, fixed order)
  folder.py      Hugging Face model folders (folders/)
  gguf.py        GGUF files as llama.cpp's converter writes them (gguf/)
  plain.py       plain attn-run configs (variants/, families/)
  families/      one file per family: its config reading, tensors, quirks and cases
  sets/          the fixtures that are no family's: the tutorials (cases/), positions/, init/
  manifest.py    manifest.json, the case list the C++ tests read
  heldout.py     the held-out and gguf-py modes (run by hand)
  main.py        the entry point (tests/golden/generate.py)
"""
