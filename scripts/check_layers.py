#!/usr/bin/env python3
"""The one rule of the layers (docs/architecture.md): a file includes only what lives in its own
stage or a stage below it. lib/src/<stage>/ folders and the public headers (lib/include/attn/,
each assigned a stage below) in the library; app/<part>/ in the executable. Prints every include
that climbs, with the file and line, and exits 1 if there is one.

Usage: scripts/check_layers.py [REPO]   (default: the repository this script is in)
"""
import os
import re
import sys

# Bottom to top: the pipeline's data flow, with the kernels beneath the forward pass.
LIB_STAGES = ["base", "kernels", "containers", "index", "family", "config", "layer", "forward",
              "outputs", "run"]

# The installed headers are one flat folder (the public API); each belongs to a stage.
PUBLIC = {
    "base": "error tensor escape files spelling sha256 nested_array version scores cpus dtype",
    "kernels": "linear positions digest",
    "containers": "npy tensor_info gguf_info",
    "index": "state_dict",
    "family": "layout geometry model_folder",
    "config": "config",
    "layer": "weights layer_weights",
    "forward": "attention masks check_f64",
    "outputs": "output writers report stats map_select map_topk map_summary key_stats head_stats saved_tensors sink_chain",
    "run": "run api",
}
PUBLIC_STAGE = {f"attn/{h}.h": stage for stage, hs in PUBLIC.items() for h in hs.split()}

# app/: terminal and flag plumbing, then pictures, then the modes; main.cpp on top.
APP_STAGES = ["cli", "pictures", "modes", "."]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def rank(stages, stage):
    return stages.index(stage)


def check(repo):
    problems = []
    lib_src = os.path.join(repo, "lib", "src")
    lib_inc = os.path.join(repo, "lib", "include", "attn")
    app = os.path.join(repo, "app")

    def stage_of_lib_include(name):
        if name in PUBLIC_STAGE:
            return PUBLIC_STAGE[name]
        head = name.split("/")[0]
        return head if head in LIB_STAGES and "/" in name else None

    def scan(path, own_rank, stages, resolve):
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                stage = resolve(m.group(1))
                if stage is None:
                    continue
                if rank(stages, stage) > own_rank:
                    rel = os.path.relpath(path, repo)
                    problems.append(f"{rel}:{n}: includes \"{m.group(1)}\" ({stage}), above "
                                    f"its own stage ({stages[own_rank]})")

    for header in sorted(os.listdir(lib_inc)):
        name = f"attn/{header}"
        if name not in PUBLIC_STAGE:
            problems.append(f"lib/include/{name}: no stage assigned in scripts/check_layers.py")
            continue
        scan(os.path.join(lib_inc, header), rank(LIB_STAGES, PUBLIC_STAGE[name]), LIB_STAGES,
             stage_of_lib_include)
    for entry in sorted(os.listdir(lib_src)):
        folder = os.path.join(lib_src, entry)
        if not os.path.isdir(folder) or entry not in LIB_STAGES:
            problems.append(f"lib/src/{entry}: not a stage folder ({', '.join(LIB_STAGES)})")
            continue
        for name in sorted(os.listdir(folder)):
            scan(os.path.join(folder, name), rank(LIB_STAGES, entry), LIB_STAGES,
                 stage_of_lib_include)

    def stage_of_app_include(name):
        head = name.split("/")[0]
        return head if "/" in name and head in APP_STAGES else None

    for root, _, files in os.walk(app):
        part = os.path.relpath(root, app).split(os.sep)[0]
        if part not in APP_STAGES:
            problems.append(f"app/{part}: not a part of app/ ({', '.join(APP_STAGES)})")
            continue
        for name in sorted(files):
            if name.endswith((".cpp", ".h")):
                scan(os.path.join(root, name), rank(APP_STAGES, part), APP_STAGES,
                     stage_of_app_include)
    return problems


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    problems = check(repo)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} include(s) climb; see docs/architecture.md")
        return 1
    print("check_layers: every include points to its own stage or one below")
    return 0


if __name__ == "__main__":
    sys.exit(main())
