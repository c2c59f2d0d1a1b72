#!/usr/bin/env bash
# Faults around `fftune ingest` (issue 42): what the user sees, and that the
# database is left as it was.
#   ingest_faults_test.sh FFTUNE_EXE SOURCE_DIR SCENARIO
# SCENARIO:
#   disk_full  the disk fills during the ingest (RLIMIT_FSIZE, ulimit -f): it
#              fails naming the error, stores nothing, leaves no journal, and
#              `fftune best` reads the database as before
#   corrupt    a database that fails PRAGMA quick_check is refused, not written
#   foreign    another program's SQLite file (a `users` table) is refused, not written
set -euo pipefail
fftune=${1:?usage: ingest_faults_test.sh FFTUNE_EXE SOURCE_DIR SCENARIO}
src=${2:?usage: ingest_faults_test.sh FFTUNE_EXE SOURCE_DIR SCENARIO}
scenario=${3:?usage: ingest_faults_test.sh FFTUNE_EXE SOURCE_DIR SCENARIO}
work=$(mktemp -d /tmp/fftune-ingest-faults.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Real records of this machine (so that `best` answers exact): tiny.json at 1 rank.
"$fftune" run "$src/tuner/testdata/tiny.json" --ranks 1 --out "$work/run" >"$work/run.log" 2>&1 ||
    fail "the sweep: $(tail -5 "$work/run.log")"
records="$work/run/tiny.jsonl"
db="$work/tuning.sqlite"

case $scenario in
disk_full)
    "$fftune" ingest "$records" --db "$db" >/dev/null
    # 40 times the records again, each copy another timestamp (another record).
    python3 - "$records" "$work/more.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
with open(sys.argv[2], "w") as out:
    for i in range(40):
        for r in recs:
            r["provenance"]["timestamp"] = f"copy {i}"
            out.write(json.dumps(r) + "\n")
PY
    before=$(md5sum <"$db")
    limit_kb=$(( $(stat -c %s "$db") / 1024 + 64 ))
    # A write past the limit fails with EFBIG (SIGXFSZ ignored), as one on a full disk with ENOSPC.
    rc=0
    (trap '' XFSZ; ulimit -f "$limit_kb"; exec "$fftune" ingest "$work/more.jsonl" --db "$db") >"$work/out.txt" 2>&1 || rc=$?
    cat "$work/out.txt"
    [[ $rc == 1 ]] || fail "ingest exited $rc, expected 1"
    grep -q "tuning.sqlite: .*(File too large); nothing was stored, the database is as it was before this ingest" "$work/out.txt" ||
        fail "the message does not say what failed and that nothing was stored"
    ! grep -q "cannot rollback" "$work/out.txt" || fail "a failed rollback"
    [[ ! -e $db-journal ]] || fail "a journal was left behind"
    [[ $(md5sum <"$db") == "$before" ]] || fail "the database changed"
    "$fftune" best --size 24 12 10 --ranks 1 --db "$db" >"$work/best.txt" 2>&1
    cat "$work/best.txt"
    grep -q "\[exact\]" "$work/best.txt" || fail "best does not answer from the database as before"
    # With room again, the same ingest stores everything.
    "$fftune" ingest "$work/more.jsonl" --db "$db" | grep -q " 4960 added" || fail "the ingest after the fault"
    ;;
corrupt)
    "$fftune" ingest "$records" --db "$db" >/dev/null
    # Three pages past the end that no table owns: SQLite reads and writes on,
    # PRAGMA quick_check reports "Page N is never used".
    python3 - "$db" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(28)
    pages = struct.unpack(">I", f.read(4))[0]
    f.seek(0, 2)
    f.write(b"\0" * 4096 * 3)
    f.seek(28)
    f.write(struct.pack(">I", pages + 3))
PY
    before=$(md5sum <"$db")
    rc=0
    "$fftune" ingest "$records" --db "$db" >"$work/out.txt" 2>&1 || rc=$?
    cat "$work/out.txt"
    [[ $rc == 1 ]] || fail "ingest exited $rc, expected 1"
    grep -q "tuning.sqlite: the database is damaged (PRAGMA quick_check: .*Page [0-9]* is never used" "$work/out.txt" ||
        fail "the message does not name the check and its finding"
    grep -q "nothing is written into it" "$work/out.txt" || fail "the message does not say it was left alone"
    [[ $(md5sum <"$db") == "$before" ]] || fail "the database was written"
    ;;
foreign)
    python3 - "$db" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
con.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
con.execute("INSERT INTO users (name) VALUES ('ada')")
con.commit()
PY
    before=$(md5sum <"$db")
    rc=0
    "$fftune" ingest "$records" --db "$db" >"$work/out.txt" 2>&1 || rc=$?
    cat "$work/out.txt"
    [[ $rc == 1 ]] || fail "ingest exited $rc, expected 1"
    grep -q "tuning.sqlite: not an fftune database: it holds the table users, and not fftune's (meta with a schema_version, records)" "$work/out.txt" ||
        fail "the message does not say whose file it is"
    [[ $(md5sum <"$db") == "$before" ]] || fail "the foreign database was written"
    ;;
*)
    fail "unknown scenario $scenario"
    ;;
esac
echo PASS
