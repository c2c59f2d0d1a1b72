# Helpers of the sweep fault-injection tests (core/run/sweep_*_test.sh), sourced:
#   FFTUNE  the fftune executable        WORK  the test's own folder (in every job's command line)
fail() { echo "FAIL: $*" >&2; exit 1; }

# PIDs of the live processes whose command line names WORK (the test's
# sweeps, their mpirun and ranks), one per line.
processes_of_work() {
  local p cmd
  for p in /proc/[0-9]*; do
    cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue  # a zombie's is empty
    [[ $cmd == *"$WORK"* ]] && echo "${p#/proc/} $cmd"
  done
  return 0
}

# Waits up to $1 seconds until no process of the test runs; fails naming them.
expect_no_job_left() {
  local deadline=$((SECONDS + $1)) left
  while :; do
    left=$(processes_of_work)
    [[ -z $left ]] && return 0
    ((SECONDS >= deadline)) && fail "still running $1 s after $2:"$'\n'"$left"
    sleep 0.05
  done
}

# Complete lines of a file (0 when it does not exist).
lines_of() { if [[ -s $1 ]]; then grep -c '' "$1"; else echo 0; fi; }

# Waits up to $3 seconds until file $1 holds at least $2 lines.
wait_records() {
  local deadline=$((SECONDS + $3))
  while (( $(lines_of "$1") < $2 )); do
    ((SECONDS >= deadline)) && fail "$1 holds $(lines_of "$1") records after $3 s, expected $2"
    sleep 0.02
  done
}

# Points per rank count of a testcase, as "R N" lines (fftune run --dry-run).
point_counts() { "$FFTUNE" run "$1" --dry-run | sed -n 's/^\([0-9]*\) ranks: \([0-9]*\) points$/\1 \2/p'; }

# check_records DIR NAME TESTCASE [ALLOW_FAILED]: every rank count's file and
# the merged one hold each point exactly once, every line whole JSON; no
# failed record unless ALLOW_FAILED.
check_records() {
  python3 - "$1" "$2" "${4:-}" "$(point_counts "$3")" <<'PY' || fail "records in $1"
import json, os, sys
folder, name, allow_failed, counts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
expected = {int(r): int(n) for r, n in (l.split() for l in counts.splitlines())}
def records(path):
    data = open(path, "rb").read()
    assert data == b"" or data.endswith(b"\n"), f"{path}: a torn last line"
    out = []
    for number, line in enumerate(data.decode().splitlines(), 1):
        try:
            out.append(json.loads(line))
        except ValueError:
            raise AssertionError(f"{path} line {number} is not JSON: {line[:80]!r}")
    return out
merged = records(os.path.join(folder, name + ".jsonl"))
for ranks, n in expected.items():
    part = records(os.path.join(folder, f"{name}-r{ranks}.jsonl"))
    got = sorted(r["point_index"] for r in part)
    assert got == list(range(n)), f"{ranks} ranks: points {got[:5]}... ({len(got)} records), expected each of 0..{n - 1} once"
    if not allow_failed:
        bad = [r for r in part if r["status"] == "failed"]
        assert not bad, f"{ranks} ranks: failed: {bad[0]['error']}"
    assert sorted((r["problem"]["ranks"], r["point_index"]) for r in merged if r["problem"]["ranks"] == ranks) == \
        [(ranks, i) for i in range(n)], f"the merged file lacks or repeats {ranks}-rank records"
assert len(merged) == sum(expected.values()), f"the merged file holds {len(merged)} records"
PY
}
