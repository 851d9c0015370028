"""The one entry point: regenerates every fixture under tests/golden and the manifest.

    /usr/bin/python3 tests/golden/generate.py                 every set, then manifest.json
    /usr/bin/python3 tests/golden/generate.py --only NAME...  only these sets (cases, families,
                      positions, variants, folders, gguf, init) or families (llama, t5, ...)
    /usr/bin/python3 tests/golden/generate.py --check         the fixtures on disk against the
                      manifest (and the manifest against the specs); no torch runs
    /usr/bin/python3 tests/golden/generate.py --heldout       held-out mode (see heldout.py)
    /usr/bin/python3 tests/golden/generate.py --gguf-py       gguf-py mode (see heldout.py)
    --out DIR         write under DIR instead of tests/golden (to compare two runs)
"""
import argparse
import os
import shutil
import sys

import torch

from . import folder, gguf, manifest, plain
from .families import all_families
from .util import GOLDEN

SETS = ("cases", "families", "positions", "variants", "folders", "gguf", "init")


def write_set(name, fams, out, only_fams=None):
    """One set's fixtures under out/<set>; only_fams: just those families' cases (the set's
    other folders stay as they are)."""
    pick = [f for f in fams if only_fams is None or f.__name__.rsplit(".", 1)[1] in only_fams]
    where = os.path.join(out, name)
    print(f"{name}/")
    if name == "cases":
        from .sets import tutorials
        tutorials.main(where)
    elif name == "positions":
        from .sets import positions
        positions.main(os.path.join(where, "cases.json"))
    elif name == "init":
        from .sets import init
        init.main(where, os.path.join(out, "gpt2"))
    elif name == "families":
        if only_fams is None:
            plain.fresh(where)
        for fam in pick:
            for case in getattr(fam, "PLAIN", []):
                shutil.rmtree(os.path.join(where, case["name"]), ignore_errors=True)
                fam.write_plain(where, case)
                print("  " + case["name"])
    elif name == "variants":
        if only_fams is None:
            plain.fresh(where)
        for fam in pick:
            for case in getattr(fam, "VARIANTS", []):
                shutil.rmtree(os.path.join(where, case["name"]), ignore_errors=True)
                plain.write_variant(where, case)
                print("  " + case["name"])
    elif name == "folders":
        for fam in pick:
            for spec in getattr(fam, "FOLDERS", []):
                folder.write_folder(fam, spec, where)
    elif name == "gguf":
        for fam in pick:
            for spec in getattr(fam, "GGUF", []):
                if spec.get("writer") != "gguf-py":
                    gguf.write_gguf(fam, spec, where)
    else:
        raise ValueError(name)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="generate.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", default=None, metavar="NAME")
    ap.add_argument("--out", default=GOLDEN)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--heldout", action="store_true")
    ap.add_argument("--gguf-py", action="store_true")
    ap.add_argument("--fixtures", action="store_true", help="with --gguf-py: rewrite the "
                    "committed gguf-py fixtures")
    args = ap.parse_args(argv)
    fams = all_families()
    if args.check:
        problems = manifest.check(fams, args.out)
        for p in problems:
            print(p)
        print(f"{len(problems)} problem(s)" if problems else "the fixtures match the manifest")
        return 1 if problems else 0
    if args.heldout or args.gguf_py:
        from . import heldout
        return heldout.main(fams, gguf_py=args.gguf_py, fixtures=args.fixtures)
    torch.set_num_threads(1)
    names = [f.__name__.rsplit(".", 1)[1] for f in fams]
    only = args.only or list(SETS)
    unknown = [n for n in only if n not in SETS and n not in names]
    if unknown:
        ap.error(f"--only: unknown set or family {', '.join(unknown)} (sets: {', '.join(SETS)}; "
                 f"families: {', '.join(names)})")
    sets = [n for n in only if n in SETS]
    only_fams = [n for n in only if n in names] or None
    if only_fams:  # a family's cases in every set that has some
        sets = [s for s in SETS if s in ("families", "variants", "folders", "gguf")]
    for name in sets:
        write_set(name, fams, args.out, only_fams)
    if args.only is None:
        manifest.remove_strays(fams, args.out)
    manifest.write(fams, os.path.join(args.out, "manifest.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
