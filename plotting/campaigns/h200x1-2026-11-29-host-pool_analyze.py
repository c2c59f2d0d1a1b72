"""results/h200x1-2026-11-29-host-pool: freed pinned host arrays kept for the
next allocation of their size (the cuda backend's allocate_host), A/B on one
H200 shared by 2 ranks (issue 44).

Prints per side and run, for fft3d 256^3 at 2 ranks: the host-staged points'
`allocate` (set-up part) and `release` (ms), every point's wall time summed,
and the cuda_ipc_push points' parts (untouched by the change)."""
import re
import statistics

from campaign import matching_records

CAMPAIGN = "h200x1-2026-11-29-host-pool"
NAME = re.compile(r"run(\d)-(base|new)-gpu_setup_cost_fft3d_256_shared\.jsonl\.gz")


def span(values):
    return f"{min(values):.2f}-{max(values):.2f}" if values else "none"


def main():
    print("| run | side | commit | validated | host-staged forward `allocate` ms (first of a precision; later) | "
          "host-staged inverse `release` ms | cuda_ipc_push `transports` ms (forward) | every point's wall, s |")
    print("|---|---|---|---|---|---|---|---|")
    for m, rs in matching_records(CAMPAIGN, NAME):
        ok = sum(r["status"] == "ok" and r["validation"]["passed"] for r in rs)
        first, later, release, ipc = [], [], [], []
        seen = set()
        for r in rs:
            transport, w = r["config"]["redistribution"][0], r["timing"]["wall_ms"]
            parts = r["fft3d"]["setup_parts_ms"]
            forward = r["problem"]["direction"] == "forward"
            if transport == "cuda_ipc_push":
                if forward:
                    ipc.append(parts.get("transports", 0.0))
                continue
            if forward:
                # the first host-staged plan of a precision: its sizes are new to the process
                precision = r["problem"]["precision"]
                (later if precision in seen else first).append(parts.get("allocate", 0.0))
                seen.add(precision)
            else:
                release.append(w["release"])
        wall = sum(sum(r["timing"]["wall_ms"].values()) for r in rs) / 1000
        print(f"| {m.group(1)} | {m.group(2)} | `{rs[0]['provenance']['git_sha'][:7]}` | {ok}/{len(rs)} | "
              f"{span(first)}; {span(later)} (median {statistics.median(later):.2f}) | {span(release)} | "
              f"{span(ipc)} | {wall:.2f} |")


if __name__ == "__main__":
    main()
