#!/usr/bin/env bash
# End to end against a real Slurm (issue "SLURM job arrays"): a single-node
# cluster on localhost (jobs/testing/local_slurm.sh), a CPU testcase at ranks
# 1-2 split into several arrays by a small MaxArraySize, one injected task
# failure, status, resubmit --failed, merged database, and the mpirun launcher.
#   slurm_e2e_test.sh FFTUNE_EXE SOURCE_DIR
set -euo pipefail
fftune=${1:?usage: slurm_e2e_test.sh FFTUNE_EXE SOURCE_DIR}
src=${2:?usage: slurm_e2e_test.sh FFTUNE_EXE SOURCE_DIR}
work=$(mktemp -d /tmp/fftune-slurm-e2e.XXXXXX)
cleanup() {
    bash "$src/jobs/testing/local_slurm.sh" stop "$work/slurm" || true
    [[ -n ${FFTUNE_KEEP_TEST_DIR:-} ]] || rm -rf "$work"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*" >&2
    for f in "$work"/jobs*/logs/*.out; do [[ -e $f ]] && { echo "== $f" >&2; tail -n 5 "$f" >&2; }; done
    exit 1
}
wait_lines() {  # FILE N SECONDS: until FILE has at least N lines
    for _ in $(seq "$3"); do
        [[ -e $1 && $(wc -l <"$1") -ge $2 ]] && return 0
        sleep 1
    done
    squeue >&2 || true
    fail "timed out after $3 s waiting for $2 line(s) in $1"
}
json_field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }

eval "$(bash "$src/jobs/testing/local_slurm.sh" start "$work/slurm")"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "--- init-site"
"$fftune" init-site --out "$work/site.json"
[[ $(json_field "$work/site.json" partition) == debug ]] || fail "init-site: partition"
[[ $(json_field "$work/site.json" max_array_size) == 1001 ]] || fail "init-site: MaxArraySize"
[[ $(json_field "$work/site.json" launcher) == srun ]] || fail "init-site: launcher (pmix is available)"
python3 -c 'import json,sys,os; p=json.load(open(sys.argv[1]))["partitions"]["debug"]; assert p["cpus_per_node"]==os.cpu_count() and p["nodes"]==1, p' \
    "$work/site.json" || fail "init-site: partition shape"
"$fftune" init-site --out "$work/site.json" 2>/dev/null && fail "init-site overwrote a profile without --force"

cat >"$work/tc.json" <<'JSON'
{"name": "slurm_e2e", "problem": "fft3d", "sizes": [[12, 10, 9]], "ranks": [1, 2], "backend": "fftw",
 "precision": "double", "direction": ["forward", "inverse"], "decomposition": ["slab_2d1d", "pencil"],
 "layout": "default", "redistribution": ["a2a_sync", "p2p_sync"], "warmup": 1, "iterations": 3}
JSON
# 8 points per rank count, 2 per task -> 4 tasks per shape -> MaxArraySize 2 splits each shape in 2 arrays.
# The setup line makes task 1 of r2-n1x2-a0 fail until the test allows it (a broken node, say).
cat >"$work/profile.json" <<JSON
{"name": "localhost", "partitions": {"debug": {"nodes": 1, "cpus_per_node": $(nproc)}},
 "launcher": "srun", "srun_mpi": "pmix", "points_per_task": 2, "max_array_size": 2, "array_throttle": 2,
 "time_limit": "00:10:00",
 "setup": ["if [[ \$array == r2-n1x2-a0 && \$task == 1 && ! -e $work/allow ]]; then echo injected failure >&2; exit 3; fi"]}
JSON

echo "--- jobs slurm --submit"
"$fftune" jobs slurm "$work/tc.json" --cluster "$work/profile.json" --out "$work/jobs" --db "$work/tuning.sqlite" \
    --submit | tee "$work/submit.txt"
for a in r1-n1x1-a0 r1-n1x1-a1 r2-n1x2-a0 r2-n1x2-a1; do
    grep -q "^array $a: job [0-9]* (2 tasks)" "$work/submit.txt" || fail "no array $a submitted"
done
merge=$(sed -n 's/^merge: job \([0-9]*\) .*/\1/p' "$work/submit.txt")
ids=$(sed -n 's/^array [^:]*: job \([0-9]*\) .*/\1/p' "$work/submit.txt" | paste -sd:)
scontrol show job "$merge" | grep -q "Dependency=afterany:" || fail "merge job $merge has no afterany dependency"
for id in ${ids//:/ }; do
    scontrol show job "$merge" | grep -q "afterany:${id}_\*" || fail "merge job does not wait for array job $id"
done
grep -q '^#SBATCH --array=0-1%2$' "$work/jobs/scripts/r2-n1x2-a1.sbatch" || fail "array range/throttle in the script"

wait_lines "$work/jobs/markers/merge" 1 300
echo "--- status after the first merge"
"$fftune" jobs status "$work/jobs" | tee "$work/status1.txt"
"$fftune" jobs status "$work/jobs" --json >"$work/status1.jsonl"
python3 - "$work/status1.jsonl" <<'PY' || fail "status after the injected failure"
import json, sys
states = {(t["array"], t["task"]): t["state"] for t in map(json.loads, open(sys.argv[1]))}
assert len(states) == 8, states
assert states.pop(("r2-n1x2-a0", 1)) == "failed"
assert set(states.values()) == {"done"}, states
PY
grep -q "FAILED r2-n1x2-a0:1 .*last marker: start" "$work/status1.txt" || fail "status text names the failed task"
records() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from records").fetchone()[0])' "$work/tuning.sqlite"; }
[[ $(records) == 14 ]] || fail "after the first merge the database has $(records) records, expected 14 (16 - 2 of the failed task)"

md5_done() { find "$work/jobs/results" -name '*.jsonl' ! -path '*/r2-n1x2-a0/1/*' -exec md5sum {} + | sort; }
before=$(md5_done)

echo "--- resubmit --failed"
touch "$work/allow"
"$fftune" jobs resubmit "$work/jobs" --failed | tee "$work/resubmit.txt"
grep -q "^array r2-n1x2-a0: tasks 1 resubmitted as job" "$work/resubmit.txt" || fail "resubmit: the failed task"
[[ $(grep -c "resubmitted" "$work/resubmit.txt") == 1 ]] || fail "resubmit submitted more than the failed task"
wait_lines "$work/jobs/markers/merge" 2 300
"$fftune" jobs status "$work/jobs" --json >"$work/status2.jsonl"
python3 -c 'import json,sys; s=[json.loads(l)["state"] for l in open(sys.argv[1])]; assert s==["done"]*8, s' \
    "$work/status2.jsonl" || fail "not every task done after the resubmission"
[[ $(md5_done) == "$before" ]] || fail "tasks that had succeeded were rerun"
for m in "$work"/jobs/markers/r*; do
    want=1
    [[ $m == */r2-n1x2-a0.1 ]] && want=2
    [[ $(grep -c '^start' "$m") == "$want" ]] || fail "$m: $(grep -c '^start' "$m") starts, expected $want"
done
[[ $(records) == 16 ]] || fail "after the resubmission the database has $(records) records, expected 16"
"$fftune" jobs resubmit "$work/jobs" --failed | grep -q "nothing resubmitted" || fail "resubmit with nothing failed"

echo "--- winners of the merged database"
cat "$work/jobs/winners.txt"
for row in "1        12x10x9 double forward" "1        12x10x9 double inverse" \
           "2        12x10x9 double forward" "2        12x10x9 double inverse"; do
    grep -q "$row .*fftw/" "$work/jobs/winners.txt" || fail "winners: no row '$row'"
done
"$fftune" best --size 12 10 9 --ranks 2 --db "$work/tuning.sqlite" | grep -q "\[exact\]" || fail "best is not exact"

echo "--- the mpirun launcher (rankfile binding)"
python3 - "$work/profile.json" "$work/profile-mpirun.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p.update(launcher="mpirun", points_per_task=100, max_array_size=1001, setup=[])
p.pop("srun_mpi")
json.dump(p, open(sys.argv[2], "w"))
PY
"$fftune" jobs slurm "$work/tc.json" --cluster "$work/profile-mpirun.json" --out "$work/jobs-mpirun" \
    --db "$work/tuning-mpirun.sqlite" --submit
wait_lines "$work/jobs-mpirun/markers/merge" 1 300
"$fftune" jobs status "$work/jobs-mpirun" | tee "$work/status-mpirun.txt"
grep -q "r2-n1x2 .* 1 tasks: 1 done, 0 failed" "$work/status-mpirun.txt" || fail "mpirun launcher: task not done"
grep -q "^rank 1=$(hostname -s) slot=1-1$" "$work/jobs-mpirun/results/r2-n1x2/0/rankfile" || fail "mpirun rankfile"
echo "PASS"
