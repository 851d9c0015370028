"""tests/golden/manifest.json: every case the generators write, per set, from the specs (no torch
run needed), which the C++ golden tests read for their counts and lists:

  {"generator": "tests/golden/generate.py",
   "sets": {"<set>": [{"case": "<folder under tests/golden/<set>>", "family": "<family file>",
                       ...set-specific keys, "checks": [...]}, ...], ...}}

  cases      the tutorial modules' cases (family: the module's layout)
  families   families/<case> (the v2 layouts without positions)
  variants   variants/<case>
  folders    "<folder>/<case dir>", "folder", "layer", checks: "config" (--config case.json),
             "model" (also as --model DIR --layer N: unpadded, default positions, the folder's
             own module), "residual_norm" (expected/residual_norm.npy), "input_norm"
             (residual.npy: the residual stream, run with --residual), "tokens" (tokens.npy:
             token ids, run with --tokens)
  gguf       "<folder>/layer<N>", "folder", "layer", "arch", "writer" (gguf-py: written by
             llama.cpp's gguf-py, the --gguf-py --fixtures mode), checks: "input_norm"
             (residual.npy, run with --residual), "tokens" (tokens.npy, run with --tokens)
  gpt2       gpt2/config_*.json, one per container of init's GPT-2 fixture
"""
import json
import os
import shutil

from . import folder


def family_name(fam):
    return fam.__name__.rsplit(".", 1)[1]


def folder_entries(fam):
    out = []
    for spec in getattr(fam, "FOLDERS", []):
        if hasattr(fam, "folder_case_checks"):
            cases = fam.folder_case_checks(spec)
        else:
            layers = folder.layers_of(fam, spec["config"])
            rnorm = spec.get("residual_norm") or {}
            cases = []
            for n in spec["layers"]:
                checks = ["config"]
                if not spec.get("pad") and not folder.needs_positions(spec, layers[n]):
                    checks.append("model")
                if n in rnorm.get("layers", []):
                    checks.append("residual_norm")
                if n in (spec.get("input_norm") or {}).get("layers", []):
                    checks.append("input_norm")
                if n in (spec.get("tokens") or {}).get("layers", []):
                    checks.append("tokens")
                cases.append((f"layer{n}", n, checks))
        for d, n, checks in cases:
            out.append({"case": f"{spec['name']}/{d}", "family": family_name(fam),
                        "folder": spec["name"], "layer": n, "checks": checks})
    return out


def build(fams):
    from .sets import init, tutorials
    sets = {"cases": [{"case": name, "family": layout, "checks": ["context", "attention"]}
                      for name, layout in tutorials.case_names()],
            "families": [], "variants": [], "folders": [], "gguf": [],
            "gpt2": [{"case": c, "family": "gpt2", "checks": ["context"]}
                     for c in init.container_configs()]}
    for fam in fams:
        name = family_name(fam)
        for case in getattr(fam, "PLAIN", []):
            sets["families"].append({"case": case["name"], "family": name,
                                     "checks": ["context", "attention"]})
        for case in getattr(fam, "VARIANTS", []):
            sets["variants"].append({"case": case["name"], "family": name,
                                     "checks": ["context", "attention"] +
                                     (["save"] if case.get("save") else [])})
        sets["folders"] += folder_entries(fam)
        for spec in getattr(fam, "GGUF", []):
            for n in spec["layers"]:
                sets["gguf"].append({"case": f"{spec['name']}/layer{n}", "family": name,
                                     "folder": spec["name"], "layer": n, "arch": spec["arch"],
                                     "writer": spec.get("writer", "by_family"),
                                     "checks": ["context", "attention"] + (
                                         ["input_norm"] if n in (spec.get("input_norm") or {})
                                         .get("layers", []) else []) + (
                                         ["tokens"] if n in (spec.get("tokens") or {})
                                         .get("layers", []) else [])})
    for entries in sets.values():
        entries.sort(key=lambda e: e["case"])
    return {"generator": "tests/golden/generate.py", "sets": sets}


def write(fams, path):
    with open(path, "w") as f:
        json.dump(build(fams), f, indent=1)
        f.write("\n")
    print("wrote", os.path.relpath(path))


def on_disk(root, set_name):
    """The cases found under root/<set>: folders with a config (case.json or config.json)."""
    base = os.path.join(root, set_name)
    if not os.path.isdir(base):
        return []
    if set_name == "gpt2":
        return sorted(f for f in os.listdir(base) if f.endswith(".json"))
    found = []
    for name in sorted(os.listdir(base)):
        d = os.path.join(base, name)
        if not os.path.isdir(d):
            continue
        if set_name in ("folders", "gguf"):
            found += [f"{name}/{e}" for e in sorted(os.listdir(d))
                      if os.path.exists(os.path.join(d, e, "case.json"))]
        elif os.path.exists(os.path.join(d, "config.json")):
            found.append(name)
    return found


def check(fams, root):
    """Problems: the committed manifest is not what the specs give, or the cases on disk are not
    the manifest's (missing, extra, or a check its files do not back)."""
    problems = []
    path = os.path.join(root, "manifest.json")
    want = build(fams)
    if not os.path.exists(path):
        return [f"{path}: missing (run tests/golden/generate.py)"]
    with open(path) as f:
        have = json.load(f)
    if have != want:
        problems.append(f"{path}: not what the specs give (run tests/golden/generate.py)")
    for set_name, entries in want["sets"].items():
        listed = sorted(e["case"] for e in entries)
        disk = on_disk(root, set_name)
        for c in sorted(set(listed) - set(disk)):
            problems.append(f"{set_name}/{c}: in the manifest, not on disk")
        for c in sorted(set(disk) - set(listed)):
            problems.append(f"{set_name}/{c}: on disk, not in the manifest")
    for e in want["sets"]["folders"]:
        d = os.path.join(root, "folders", e["case"])
        if not os.path.exists(os.path.join(d, "case.json")):
            continue
        with open(os.path.join(d, "case.json")) as f:
            case = json.load(f)
        model = not any(k in case for k in ("attention_mask", "positions", "weights_prefix"))
        if model != ("model" in e["checks"]):
            problems.append(f"folders/{e['case']}: case.json says model={model}")
        norm = os.path.exists(os.path.join(d, "expected", "residual_norm.npy"))
        if norm != ("residual_norm" in e["checks"]):
            problems.append(f"folders/{e['case']}: residual_norm.npy present={norm}")
    return problems


def remove_strays(fams, root):
    """Folders under folders/ and gguf/ that no spec writes (a renamed or dropped spec)."""
    m = build(fams)
    for set_name in ("folders", "gguf"):
        keep = {e["folder"] for e in m["sets"][set_name]}
        base = os.path.join(root, set_name)
        for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            if name not in keep and os.path.isdir(os.path.join(base, name)):
                print(f"removing {set_name}/{name}: no spec writes it")
                shutil.rmtree(os.path.join(base, name))
