#!/usr/bin/env bash
# Issue 42, item 1: a record that cannot be stored (a full disk: an LD_PRELOAD
# hook lets the result file grow to 2.5 records, then fails writes with
# ENOSPC) stops the sweep at once with a non-zero exit and a message naming
# the file; the file keeps its whole records and no torn line; no progress
# line or summary claims what was not stored; run again with space, the sweep
# continues after the last stored record. The merged file is replaced whole
# or left as it was, never left empty.
#   sweep_write_error_test.sh FFTUNE_EXE LAUNCHER FULL_DISK_PRELOAD
set -euo pipefail
FFTUNE=${1:?usage: sweep_write_error_test.sh FFTUNE_EXE LAUNCHER FULL_DISK_PRELOAD}
launcher=${2:?usage: sweep_write_error_test.sh FFTUNE_EXE LAUNCHER FULL_DISK_PRELOAD}
preload=${3:?usage: sweep_write_error_test.sh FFTUNE_EXE LAUNCHER FULL_DISK_PRELOAD}
WORK=$(mktemp -d /tmp/fftune-sweep-full.XXXXXX)
source "$(dirname "$0")/../testing/sweep_faults.sh"
trap 'rm -rf "$WORK"' EXIT

cat >"$WORK/tc.json" <<'JSON'
{"name": "full", "problem": "fft3d", "sizes": [[8, 6, 5], [9, 10, 11]], "ranks": [1], "backend": "fftw",
 "precision": "all", "direction": "all", "decomposition": ["reference_3d"], "layout": "default",
 "warmup": 0, "iterations": 2}
JSON
out=$WORK/out
part=$out/full-r1.jsonl
merged=$out/full.jsonl
run() { "$FFTUNE" run "$WORK/tc.json" --out "$out" --launcher "$launcher" "$@"; }
# run_on_full_disk PATTERN BYTES: files whose path holds PATTERN may grow to BYTES only.
run_on_full_disk() {
  LD_PRELOAD="$preload" FFTUNE_TEST_FULL_DISK_PATH="$1" FFTUNE_TEST_FULL_DISK_BYTES="$2" \
    "$FFTUNE" run "$WORK/tc.json" --out "$out" --launcher "$launcher"
}

# How big records are: a first sweep elsewhere.
"$FFTUNE" run "$WORK/tc.json" --out "$WORK/sizes" --launcher "$launcher" >/dev/null 2>&1
budget=$(python3 -c 'import sys; l = open(sys.argv[1], "rb").read().split(b"\n"); print(len(l[0]) + len(l[1]) + 2 + len(l[2]) // 2)' \
  "$WORK/sizes/full-r1.jsonl")

echo "== the disk fills up while the third record is written"
rc=0
run_on_full_disk /full-r1.jsonl "$budget" >"$WORK/full.log" 2>&1 || rc=$?
((rc != 0)) || fail "exit status 0 after a failed write: $(cat "$WORK/full.log")"
grep -q "$part: cannot store a record: No space left on device" "$WORK/full.log" ||
  fail "the message does not name the file and the reason: $(cat "$WORK/full.log")"
grep -q "the 1-rank job could not store a record in $part (No space left on device), so the sweep stopped" \
  "$WORK/full.log" ||
  fail "the sweep did not say it stopped: $(cat "$WORK/full.log")"
grep -Eq "Summary:|Results:|job died" "$WORK/full.log" && fail "a summary, or a resumed job, after the failed write: $(cat "$WORK/full.log")"
claimed=$(grep -c '^\[1 ranks [0-9]*/8\] .*: ok' "$WORK/full.log" || true)
stored=$(lines_of "$part")
((stored == 2)) || fail "$stored records stored, expected 2: $(cat "$part")"
((claimed == stored)) || fail "progress said ok $claimed times, but $stored records are stored"
python3 - "$part" <<'PY' || fail "the result file is not whole records: $(cat "$part")"
import json, sys
data = open(sys.argv[1], "rb").read()
assert data.endswith(b"\n"), "a torn last line"
[json.loads(line) for line in data.decode().splitlines()]
PY
cp "$part" "$WORK/before"

echo "== with space again, the same command continues after the last stored record"
run >"$WORK/resume.log" 2>&1 || fail "the resumed sweep failed: $(cat "$WORK/resume.log")"
grep -q "2 records stored in $part; continuing at point 3" "$WORK/resume.log" ||
  fail "the sweep did not continue after the stored records: $(cat "$WORK/resume.log")"
check_records "$out" full "$WORK/tc.json"
cmp -s -n "$(stat -c %s "$WORK/before")" "$WORK/before" "$part" || fail "the stored records were changed"

echo "== the merged file cannot be written: it is left as it was, and the run fails naming it"
md5sum "$merged" >"$WORK/merged.sum"
rc=0
run_on_full_disk /full.jsonl 100 >"$WORK/merge.log" 2>&1 || rc=$?
((rc != 0)) || fail "exit status 0 although the merged file could not be written: $(cat "$WORK/merge.log")"
grep -q "$merged: cannot write the merged results (No space left on device); it is left as it was" "$WORK/merge.log" ||
  fail "the message does not name the merged file: $(cat "$WORK/merge.log")"
md5sum -c --quiet "$WORK/merged.sum" || fail "the merged file changed: $(wc -c <"$merged") bytes"
[[ ! -e $merged.tmp ]] || fail "a partial merged file was left behind"
echo PASS
