#!/usr/bin/env bash
# A job-array task whose earlier run was ended by a rank (a lost device, a
# point past point_timeout_s: the job's note beside its result file) records
# that point as failed with the note's reason, and runs only the points after
# it; the note is consumed. Without the note, the same point would run (and
# hang) again on every resubmission.
#   task_resume_test.sh FFTUNE_EXE LAUNCHER
set -euo pipefail
fftune=${1:?usage: task_resume_test.sh FFTUNE_EXE LAUNCHER}
launcher=${2:?usage: task_resume_test.sh FFTUNE_EXE LAUNCHER}
work=$(mktemp -d /tmp/fftune-task-resume.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$work/tc.json" <<'JSON'
{"name": "task resume", "problem": "fft3d", "sizes": [[8, 6, 5]], "ranks": [1], "backend": "fftw",
 "precision": "double", "direction": "all", "decomposition": ["reference_3d"], "layout": "default",
 "redistribution": ["a2a_sync"], "warmup": 0, "iterations": 2}
JSON
echo '{"name": "one", "partitions": {"cpu": {"nodes": 1, "cpus_per_node": 1}}, "points_per_task": 2}' >"$work/site.json"
"$fftune" jobs slurm "$work/tc.json" --cluster "$work/site.json" --out "$work/jobs" >/dev/null
out="$work/jobs/results/r1-n1x1/0"
mkdir -p "$out"
result="$out/task_resume-r1.jsonl"
# The earlier run: killed while writing its first record (a torn line), its
# rank 0 having said why.
printf '{"status": "ok", "poin' >"$result"
echo "rank 0: point 1 of 2 (1 ranks: 8x6x5 ...) still running after 1 s (point_timeout_s)" >"$result.died"
"$launcher" -n 1 "$fftune" run "$work/jobs/testcase.json" --no-launch --manifest "$work/jobs/manifest.jsonl" \
    --task r1-n1x1:0 --out "$out" >"$work/run.log" 2>&1 || true
[[ ! -e $result.died ]] || fail "the note was left behind"
python3 - "$result" <<'PY' || fail "records: $(cat "$result")"
import json, sys
records = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{") and l.strip().endswith("}")]
by_point = {r["point_index"]: r for r in records}
assert sorted(by_point) == [0, 1] and len(records) == 2, records
want = ("the MPI job ended while running this point (rank 0: point 1 of 2 (1 ranks: 8x6x5 ...) still running "
        "after 1 s (point_timeout_s)); this task resumed after it")
assert by_point[0]["status"] == "failed" and by_point[0]["error"] == want, by_point[0]
assert by_point[0]["problem"]["direction"] == "forward", by_point[0]
assert by_point[1]["status"] == "ok", by_point[1]
PY
echo PASS
