#!/usr/bin/env python3
"""The layers of fftune, checked on every #include "..." of the sources.

Each layer may include itself and the layers listed for it, nothing above:
core/base < core/platform < core/records < core/engine < core/run; variants
(backends, decompositions, transports) and families on top of core; no family
includes another; tuner and jobs on core; app on everything. Tests, benchmarks
and test helpers (*_test.*, *_bench.*, core/testing/) are exempt.

  check_layers.py ROOT        exit 1 and one line per wrong-way include
"""
import os
import re
import sys

CORE = ["core/base", "core/platform", "core/records", "core/engine", "core/run"]
ALLOWED = {layer: CORE[: i + 1] for i, layer in enumerate(CORE)}
ALLOWED["variants"] = CORE[:4] + ["variants"]
ALLOWED["tuner"] = CORE + ["tuner"]
ALLOWED["jobs"] = CORE + ["tuner", "jobs"]
EXEMPT = re.compile(r"(_test|_bench)\.(cpp|hpp|cu)$|^core/testing/|^cmake/")


def layer(path):
    parts = path.split("/")
    if parts[0] in ("core", "families") and len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0]


def allowed(src):
    if src.startswith("families/"):
        return CORE + [src]  # its own folder only: families never include each other
    if src == "app":
        return None  # the CLI may use every layer
    return ALLOWED.get(src)


def main(root):
    wrong = []
    for top in ("core", "variants", "families", "tuner", "jobs", "app"):
        for base, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if not f.endswith((".cpp", ".hpp", ".cu")):
                    continue
                rel = os.path.relpath(os.path.join(base, f), root)
                if EXEMPT.search(rel):
                    continue
                may = allowed(layer(rel))
                if may is None:
                    continue
                with open(os.path.join(root, rel), encoding="utf-8") as fh:
                    for n, line in enumerate(fh, 1):
                        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                        if m and "/" in m.group(1) and layer(m.group(1)) not in may:
                            wrong.append(f"{rel}:{n}: {layer(rel)} includes {m.group(1)} "
                                         f"(layer {layer(m.group(1))}; allowed: {', '.join(may)})")
    for w in wrong:
        print(w)
    print(f"layers: {len(wrong)} wrong-way includes")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
