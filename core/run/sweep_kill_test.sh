#!/usr/bin/env bash
# Issue 42, item 2: a sweep owns its output folder (a second is refused,
# naming the first's PID); killing the launcher (kill -9, SIGTERM, SIGINT,
# SIGHUP) ends its MPI job; run again, the sweep continues after its last
# stored record (taking over the dead launcher's lock), re-measuring and
# dropping nothing; a partial re-run (--ranks) keeps the other rank counts in
# the merged file; another testcase's results are not continued.
#   sweep_kill_test.sh FFTUNE_EXE LAUNCHER
set -euo pipefail
FFTUNE=${1:?usage: sweep_kill_test.sh FFTUNE_EXE LAUNCHER}
launcher=${2:?usage: sweep_kill_test.sh FFTUNE_EXE LAUNCHER}
WORK=$(mktemp -d /tmp/fftune-sweep-kill.XXXXXX)
source "$(dirname "$0")/../testing/sweep_faults.sh"
trap 'for p in $(processes_of_work | cut -d" " -f1); do kill -9 "$p" 2>/dev/null; done; rm -rf "$WORK"' EXIT

# 16 points of about 0.1 s at 1 and 2 ranks.
cat >"$WORK/tc.json" <<'JSON'
{"name": "kill", "problem": "fft3d", "sizes": [[64, 64, 48]], "ranks": [1, 2], "backend": "fftw",
 "precision": "all", "direction": "all", "decomposition": ["slab_2d1d", "pencil"], "layout": "default",
 "redistribution": ["a2a_sync", "p2p_sync"], "process_grid": "auto", "warmup": 2, "iterations": 60}
JSON
out=$WORK/out
r1=$out/kill-r1.jsonl
r2=$out/kill-r2.jsonl
# A sweep in the background with the default action of every signal (a
# non-interactive shell starts background jobs with SIGINT ignored).
# Its output goes to $WORK/started.log.
start() {
  rm -f "$WORK/started.log"
  python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$FFTUNE" run "$WORK/tc.json" --out "$out" --launcher "$launcher" "$@" \
    >"$WORK/started.log" 2>&1 &
}
# Waits up to 120 s until the started sweep $1 has measured $2 points (its progress lines).
wait_measured() {
  local deadline=$((SECONDS + 120))
  local n
  while n=$(grep -c '^\[' "$WORK/started.log" 2>/dev/null || true); (( ${n:-0} < $2 )); do
    kill -0 "$1" 2>/dev/null || fail "the sweep ended before measuring $2 points: $(cat "$WORK/started.log")"
    ((SECONDS < deadline)) || fail "the sweep measured fewer than $2 points in 120 s"
    sleep 0.02
  done
}
stored() { echo $(( $(lines_of "$r1") + $(lines_of "$r2") )); }
# Every record stored before ($WORK/before/*) is still there, unchanged, at the start of its file.
expect_kept() {
  local f
  [[ -e $WORK/before/kill-r1.jsonl ]] || fail "no snapshot"
  for f in "$WORK"/before/*; do
    cmp -s -n "$(stat -c %s "$f")" "$f" "$out/$(basename "$f")" ||
      fail "$1: records stored before were changed or dropped in $(basename "$f")"
  done
}
snapshot() { rm -rf "$WORK/before"; mkdir "$WORK/before"; cp "$r1" "$WORK/before/"; [[ ! -e $r2 ]] || cp "$r2" "$WORK/before/"; }

echo "== kill -9 of the launcher ends its job (one point of 10-20 s)"
cat >"$WORK/long.json" <<'JSON'
{"name": "long", "problem": "fft3d", "sizes": [[64, 64, 64]], "ranks": [1], "backend": "fftw", "precision": "double",
 "direction": "forward", "decomposition": ["reference_3d"], "layout": "default", "warmup": 0, "iterations": 20000}
JSON
"$FFTUNE" run "$WORK/long.json" --out "$WORK/long" --launcher "$launcher" >"$WORK/long.log" 2>&1 &
long=$!
deadline=$((SECONDS + 60))
until [[ $(processes_of_work) == *--no-launch* ]]; do  # the job's rank runs its point
  ((SECONDS < deadline)) || fail "the job did not start in 60 s: $(cat "$WORK/long.log")"
  sleep 0.02
done
sleep 0.5
kill -9 "$long"
wait "$long" 2>/dev/null || true
expect_no_job_left 5 "kill -9 of the launcher"

echo "== a second sweep on the same folder is refused, naming the first's PID"
start; first=$!
wait_measured "$first" 19  # 3 points into the 2-rank job
rc=0
"$FFTUNE" run "$WORK/tc.json" --out "$out" --launcher "$launcher" >"$WORK/second.log" 2>&1 || rc=$?
((rc != 0)) || fail "a second sweep ran on the folder of the first: $(cat "$WORK/second.log")"
grep -q "$out is in use by PID $first on host" "$WORK/second.log" ||
  fail "the refusal does not name the first's PID $first: $(cat "$WORK/second.log")"
kill -0 "$first" 2>/dev/null || fail "the first sweep ended when the second was refused"

echo "== kill -9 mid-sweep (in the 2-rank job)"
kill -9 "$first"
wait "$first" 2>/dev/null || true
expect_no_job_left 5 "kill -9 of the launcher"
snapshot
echo "   stored before the kill: $(stored) records"

echo "== run again: it continues after the last stored record"
"$FFTUNE" run "$WORK/tc.json" --out "$out" --launcher "$launcher" >"$WORK/resume.log" 2>&1 ||
  fail "the resumed sweep failed: $(cat "$WORK/resume.log")"
grep -q "took over the lock of PID $first on host" "$WORK/resume.log" ||
  fail "the dead launcher's lock was not reported taken over: $(cat "$WORK/resume.log")"
grep -Eq "records stored in $r2; continuing at point [0-9]+" "$WORK/resume.log" ||
  fail "the sweep did not say where it continues: $(cat "$WORK/resume.log")"
check_records "$out" kill "$WORK/tc.json"
expect_kept "after kill -9"

echo "== SIGTERM, SIGINT and SIGHUP stop the sweep and its job; each run continues"
first_run=(--fresh)
for sig in TERM INT HUP; do
  snapshot
  start "${first_run[@]}"; pid=$!
  first_run=()
  wait_measured "$pid" 2
  kill -"$sig" "$pid"
  rc=0; wait "$pid" || rc=$?
  want=$((128 + $(kill -l "$sig")))
  ((rc == want)) || fail "SIG$sig: exit status $rc, expected $want"
  grep -q "interrupted by SIG$sig: the sweep stopped" "$WORK/started.log" ||
    fail "SIG$sig: the sweep did not say it stopped: $(cat "$WORK/started.log")"
  expect_no_job_left 3 "SIG$sig to the launcher"
  [[ $sig == TERM ]] || expect_kept "after SIG$sig"
done
"$FFTUNE" run "$WORK/tc.json" --out "$out" --launcher "$launcher" >"$WORK/resume2.log" 2>&1 ||
  fail "the sweep after the signals failed: $(cat "$WORK/resume2.log")"
check_records "$out" kill "$WORK/tc.json"
expect_kept "after the signals"

echo "== a partial re-run (--ranks 1) keeps the 2-rank records in the merged file"
cp "$r2" "$WORK/r2.before"
"$FFTUNE" run "$WORK/tc.json" --out "$out" --launcher "$launcher" --ranks 1 >"$WORK/partial.log" 2>&1 ||
  fail "the partial re-run failed: $(cat "$WORK/partial.log")"
check_records "$out" kill "$WORK/tc.json"
cp "$r1" "$WORK/r1.before"
"$FFTUNE" run "$WORK/tc.json" --out "$out" --launcher "$launcher" --ranks 1 --fresh >"$WORK/fresh.log" 2>&1 ||
  fail "the partial --fresh re-run failed: $(cat "$WORK/fresh.log")"
check_records "$out" kill "$WORK/tc.json"
cmp -s "$r1" "$WORK/r1.before" && fail "--fresh did not measure the 1-rank points again"
cmp -s "$r2" "$WORK/r2.before" || fail "--ranks 1 --fresh changed the 2-rank records"

echo "== another testcase's results in the folder are not continued"
sed 's/\[64, 64, 48\]/[64, 64, 40]/' "$WORK/tc.json" >"$WORK/other.json"
md5sum "$out"/*.jsonl >"$WORK/sums"
rc=0
"$FFTUNE" run "$WORK/other.json" --out "$out" --launcher "$launcher" >"$WORK/other.log" 2>&1 || rc=$?
((rc != 0)) || fail "another testcase continued this folder's results"
grep -q "kill-r1.jsonl line 1: a record of .* the folder holds results of another testcase" "$WORK/other.log" ||
  fail "the refusal does not say why: $(cat "$WORK/other.log")"
md5sum -c --quiet "$WORK/sums" || fail "the refused run changed the results"
echo PASS
