#!/usr/bin/env python3
"""Rewrites real records so that `fftune best` has a known answer (issue 42).

    known_winner.py OUT.jsonl IN.jsonl...

Per problem, its validated configurations in key order k0 < k1 < k2 < ...:
k0 is the fastest (1 ms) but failed its validation (status failed); k1 is the fastest
validated (2 ms) with an error of 0.5; k2 (3 ms, error 1e-3) is the fastest
within --max-error 0.1; each later k_i takes 3 + i ms. So `best` answers k1,
and k2 under --max-error 0.1; taking the slowest answers the last key,
ignoring validation k0, ignoring the bound k1. The machine, software and
everything else stay as measured (the rung stays exact). One record per key.
"""
import json
import sys


def main(out_path, in_paths):
    by_problem = {}
    for path in in_paths:
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                if r.get("status") != "ok" or not r.get("validation", {}).get("passed"):
                    continue
                keys = by_problem.setdefault(json.dumps(r["problem"], sort_keys=True), {})
                keys.setdefault(r["key"], r)
    written = 0
    with open(out_path, "w") as out:
        for keys in by_problem.values():
            for i, key in enumerate(sorted(keys)):
                r = keys[key]
                ms = [1.0, 2.0, 3.0][i] if i < 3 else 3.0 + i
                r["timing"]["total"]["median"] = ms
                r["timing"]["total"]["ci99"] = [ms, ms]
                r["validation"]["max_rel_error"] = 0.5 if i <= 1 else 1e-3
                if i == 0:  # as the runner records a failed validation
                    r["status"], r["validation"]["passed"] = "failed", False
                out.write(json.dumps(r) + "\n")
                written += 1
    print(f"{written} records of {len(by_problem)} problems with known winners")
    return 0 if written else 1


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
