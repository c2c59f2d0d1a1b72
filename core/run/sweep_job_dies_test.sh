#!/usr/bin/env bash
# Issue 42, item 3: kill -9 of the job's launcher process (mpirun) while its
# ranks live on. The sweep records the point it died on as failed and goes on
# after it; no rank of the dead job may still write: the log and the file
# agree, each point has one record, and nothing of the job is left running.
# The job here is started through core/testing/outliving_launcher.sh, whose
# real mpirun and ranks outlive it (until the sweep ends them).
#   sweep_job_dies_test.sh FFTUNE_EXE LAUNCHER
set -euo pipefail
FFTUNE=${1:?usage: sweep_job_dies_test.sh FFTUNE_EXE LAUNCHER}
export FFTUNE_TEST_REAL_LAUNCHER=${2:?usage: sweep_job_dies_test.sh FFTUNE_EXE LAUNCHER}
here=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d /tmp/fftune-sweep-job-dies.XXXXXX)
source "$here/../testing/sweep_faults.sh"
trap 'for p in $(processes_of_work | cut -d" " -f1); do kill -9 "$p" 2>/dev/null; done; rm -rf "$WORK"' EXIT

# 16 points of about 0.2 s at 2 ranks.
cat >"$WORK/tc.json" <<'JSON'
{"name": "dies", "problem": "fft3d", "sizes": [[64, 64, 48]], "ranks": [2], "backend": "fftw",
 "precision": "all", "direction": "all", "decomposition": ["slab_2d1d", "pencil"], "layout": "default",
 "redistribution": ["a2a_sync", "p2p_sync"], "process_grid": "auto", "warmup": 2, "iterations": 60}
JSON
out=$WORK/out
"$FFTUNE" run "$WORK/tc.json" --out "$out" --launcher "$here/../testing/outliving_launcher.sh" >"$WORK/run.log" 2>&1 &
sweep=$!
deadline=$((SECONDS + 120))
while n=$(grep -c '^\[2 ranks' "$WORK/run.log" 2>/dev/null || true); (( ${n:-0} < 3 )); do
  kill -0 "$sweep" 2>/dev/null || fail "the sweep ended early: $(cat "$WORK/run.log")"
  ((SECONDS < deadline)) || fail "3 points were not measured in 120 s"
  sleep 0.02
done
job=$(cat "/proc/$sweep/task/$sweep/children")
[[ $job =~ ^[0-9]+\ ?$ ]] || fail "the sweep's job process: '$job'"
kill -9 $job
echo "== killed the job's launcher process $job"
rc=0; wait "$sweep" || rc=$?
((rc == 1)) || fail "exit status $rc, expected 1 (a failed point): $(cat "$WORK/run.log")"
expect_no_job_left 3 "the sweep ended"
died=$(sed -n 's/^fftune: 2 ranks: job died (status 137) on point \([0-9]*\); resuming$/\1/p' "$WORK/run.log")
[[ $died =~ ^[0-9]+$ ]] || fail "the log does not say once which point the job died on: $(grep -v '^\[' "$WORK/run.log")"
echo "   the log: the job died on point $died"
check_records "$out" dies "$WORK/tc.json" allow_failed
python3 - "$out/dies-r2.jsonl" "$died" <<'PY' || fail "the log and the file disagree"
import json, sys
records = {r["point_index"]: r for r in map(json.loads, open(sys.argv[1]))}
died = int(sys.argv[2]) - 1
failed = sorted(i for i, r in records.items() if r["status"] == "failed")
assert failed == [died], f"failed points {failed}, the log says {died}"
assert "the MPI job exited with status 137 while running this point" in records[died]["error"], records[died]["error"]
PY
echo PASS
