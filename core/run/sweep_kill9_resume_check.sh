#!/usr/bin/env bash
# Issue 42, "done when": a sweep of a few hundred CPU points whose launcher is
# killed with kill -9 at three random moments, and resumed each time, ends
# with exactly the records of an uninterrupted sweep (the same points, keys
# and outcomes; timing and provenance aside), none twice, every line valid
# JSON, what was stored before a kill kept byte for byte (never measured
# again), and no mpirun (or rank) left running 10 s after any kill.
#   sweep_kill9_resume_check.sh FFTUNE_EXE LAUNCHER [SEED]
set -euo pipefail
FFTUNE=${1:?usage: sweep_kill9_resume_check.sh FFTUNE_EXE LAUNCHER [SEED]}
launcher=${2:?usage: sweep_kill9_resume_check.sh FFTUNE_EXE LAUNCHER [SEED]}
RANDOM=${3:-$$}
WORK=$(mktemp -d /tmp/fftune-kill9.XXXXXX)
source "$(dirname "$0")/../testing/sweep_faults.sh"
trap 'for p in $(processes_of_work | cut -d" " -f1); do kill -9 "$p" 2>/dev/null; done; rm -rf "$WORK"' EXIT

# 568 points at 1 and 2 ranks ("all" brings only what applies at each rank count).
cat >"$WORK/tc.json" <<'JSON'
{"name": "kill9", "problem": "fft3d", "sizes": [[24, 20, 18], [17, 12, 10]], "ranks": [1, 2], "backend": "fftw",
 "precision": "all", "direction": "all", "decomposition": "all", "layout": "all", "redistribution": "all",
 "process_grid": "all", "warmup": 2, "iterations": 10}
JSON
total=$(point_counts "$WORK/tc.json" | awk '{n += $2} END {print n}')
run() { "$FFTUNE" run "$WORK/tc.json" --out "$1" --launcher "$launcher"; }
stored() { echo $(( $(lines_of "$WORK/out/kill9-r1.jsonl") + $(lines_of "$WORK/out/kill9-r2.jsonl") )); }

start=$SECONDS
run "$WORK/reference" >"$WORK/reference.log" 2>&1 || fail "the uninterrupted sweep failed: $(tail "$WORK/reference.log")"
echo "uninterrupted sweep: $(lines_of "$WORK/reference/kill9.jsonl") records of $total points in $((SECONDS - start)) s"

for kill in 1 2 3; do
  have=$(stored)
  # A random moment: after 1 to (what is left - 100) more records, then 0-49 ms more.
  left=$((total - have - 100)); ((left > 0)) || left=1
  target=$((have + 1 + RANDOM % left))
  pause=$(printf '0.0%02d' $((RANDOM % 50)))
  "$FFTUNE" run "$WORK/tc.json" --out "$WORK/out" --launcher "$launcher" >"$WORK/run$kill.log" 2>&1 &
  sweep=$!  # the launcher itself, not a subshell
  deadline=$((SECONDS + 120))
  while (( $(stored) < target )); do
    kill -0 "$sweep" 2>/dev/null || fail "kill $kill: the sweep ended before record $target: $(tail "$WORK/run$kill.log")"
    ((SECONDS < deadline)) || fail "kill $kill: $(stored) records after 120 s, waiting for $target"
    sleep 0.005
  done
  sleep "$pause"
  at=$(stored)
  kill -9 "$sweep" 2>/dev/null || fail "kill $kill: the sweep had ended already: $(tail -3 "$WORK/run$kill.log")"
  wait "$sweep" 2>/dev/null || true
  expect_no_job_left 10 "kill $kill (kill -9 of the launcher)"
  echo "kill $kill: kill -9 of the launcher at $at of $total records stored; $(stored) stored once its job had ended; no mpirun or rank left"
  mkdir -p "$WORK/kill$kill"
  cp "$WORK"/out/kill9-r*.jsonl "$WORK/kill$kill/"
done
run "$WORK/out" >"$WORK/final.log" 2>&1 || fail "the final resumed sweep failed: $(tail "$WORK/final.log")"
expect_no_job_left 5 "the final sweep"
check_records "$WORK/out" kill9 "$WORK/tc.json"
# What was stored before a kill is still there, byte for byte: not measured again, not dropped.
for f in "$WORK"/kill[123]/*; do
  cmp -s -n "$(stat -c %s "$f")" "$f" "$WORK/out/$(basename "$f")" ||
    fail "records stored before $(basename "$(dirname "$f")") were changed or dropped in $(basename "$f")"
done
echo "every record stored before each kill is kept unchanged (a byte prefix of the final file)"
python3 - "$WORK/reference" "$WORK/out" <<'PY' || fail "the resumed sweep's records differ from the uninterrupted sweep's"
import json, os, sys
def outcomes(folder, name):
    out = []
    for line in open(os.path.join(folder, name)):
        r = json.loads(line)
        out.append((r["problem"]["ranks"], r["point_index"], r["key"], json.dumps(r["problem"], sort_keys=True),
                    r["status"], r.get("reason", "")))
    return out
for name in ("kill9-r1.jsonl", "kill9-r2.jsonl", "kill9.jsonl"):
    ref, got = outcomes(sys.argv[1], name), outcomes(sys.argv[2], name)
    assert len(got) == len(set(got)), f"{name}: a record twice"
    assert sorted(ref) == sorted(got), f"{name}: {len(set(ref) - set(got))} missing, {len(set(got) - set(ref))} extra"
print(f"same records as the uninterrupted sweep: {len(got)} in the merged file (ranks, point, key, problem, "
      f"status, reason), none twice, every line JSON")
PY
echo PASS
