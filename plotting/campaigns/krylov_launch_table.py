#!/usr/bin/env python3
"""Kernel-only rates from fftune_krylov_launch_bench JSON: each benchmark's
bytes per second as a fraction of the `copy` benchmark of the same size in
the same run.
python3 plotting/campaigns/krylov_launch_table.py results/h100x1-2026-11-26-krylov/micro-krylov_launch-db4e603.json.gz"""
import json
import sys

from campaign import open_text, results_dir

bench = json.load(open_text(sys.argv[1]))["benchmarks"]
size = lambda b: next(p for p in b["name"].split("/") if p.isdigit())
copy = {size(b): b["bytes_per_second"] for b in bench if b["name"].startswith("copy/")}
print("| kernel | n | µs | GB/s | ÷ copy |")
print("|---|---|---|---|---|")
for b in bench:
    n = size(b)
    if n not in copy:
        continue
    name = b["name"].replace("/manual_time", "").replace(f"/{n}", "")
    print(f"| {name} | {n}³ | {b['real_time']:.1f} | {b['bytes_per_second'] / 1e9:.0f} | {100 * b['bytes_per_second'] / copy[n]:.1f}% |")
