"""results/h200x1-2026-11-29-family-state: two nvidia-h200 leases, d0ed5cf
(issue 44). Every family's fixed share (set-up + validation + release over
timing.wall_ms) at 256³ and more on one GPU, one rank. Call 5, a fresh
lease, ran each testcase once ("run1": the lease's cold caches); call 6,
another fresh lease, ran poisson and fft3d twice and convolution once after
them ("run2": warm).

Prints per call, run and testcase the points at 256³ and more: count,
validated, share median and max, how many are over 25%, and each point over
25% with its set-up, validation and timed wall (ms)."""
import re
import statistics

from campaign import fixed_share, matching_records

CAMPAIGN = "h200x1-2026-11-29-family-state"
RUNS = re.compile(r"call(\d)-(run\d)-(gpu_\w+)\.jsonl\.gz")


def size(r):
    s = r["problem"]["size"]
    return s[0] if isinstance(s, list) else s


def main():
    over = []
    print("| call | run | testcase | points ≥ 256³ | validated | share median | max | over 25% |")
    print("|---|---|---|---|---|---|---|---|")
    for m, rs in matching_records(CAMPAIGN, RUNS):
        call, run, tc = m.groups()
        big = [r for r in rs if r["status"] == "ok" and size(r) >= 256]
        sh = [100 * fixed_share(r["timing"]["wall_ms"]) for r in big]
        valid = sum(r["validation"]["passed"] for r in big)
        print(f"| {call} | {run} | {tc} | {len(big)} | {valid}/{len(big)} | {statistics.median(sh):.1f}% | "
              f"{max(sh):.1f}% | {sum(s > 25 for s in sh)} |")
        for r, s in zip(big, sh):
            if s > 25:
                w = r["timing"]["wall_ms"]
                what = " ".join(str(r["problem"].get(k)) for k in ("precision", "direction") if r["problem"].get(k))
                over.append(f"| {call} | {run} | {size(r)}³ {r['key'][:48]} {what} | {s:.1f}% | {w['setup']:.1f} | "
                            f"{w['validate']:.1f} | {w['timed']:.1f} |")
    print()
    print("| call | run | point | share | set-up | validate | timed |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(over))


if __name__ == "__main__":
    main()
