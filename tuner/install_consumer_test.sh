#!/usr/bin/env bash
# Installs fftune into a fresh prefix, builds a C++-only application against
# the installed package (tuner/testdata/consumer: the installed example) and
# runs it at 2 ranks on a tuning database.
# Usage: install_consumer_test.sh BUILD_DIR WORK_DIR DB MPIEXEC
set -euo pipefail
build=$1 work=$2 db=$3 mpiexec=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
for f in bin/fftune bin/fftune_example_app bin/fftune_example_family share/fftune/examples/example_app.cpp \
         share/fftune/examples/example_family.cpp; do
  [[ -e $work/prefix/$f ]] || { echo "not installed: $f"; exit 1; }
done
cmake -S "$here/testdata/consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_RPATH="$work/prefix/lib;$work/prefix/lib64"
cmake --build "$work/consumer"
"$mpiexec" -n 2 "$work/consumer/consumer_app" 24 12 10 --db "$db"
# Every family from the installed library, one call from problem to work: the
# database's answer where it has one (fft3d), the family's default otherwise.
for problem in '{"kind":"fft3d","size":[24,12,10]}' '{"kind":"poisson","size":[20,18,16]}' \
               '{"kind":"krylov","size":[12,12,12],"iterations":[20],"operator":"curlcurl13"}' \
               '{"kind":"convolution","size":[16,16,16]}'; do
  out=$("$mpiexec" -n 2 "$work/consumer/consumer_family" "$problem" --db "$db")
  grep -q "^validation: passed" <<<"$out" || { echo "family example failed for $problem:"; echo "$out"; exit 1; }
  echo "family example: $problem: $(head -1 <<<"$out")"
done
# The installed example and CLI run from the prefix alone.
"$mpiexec" -n 2 "$work/prefix/bin/fftune_example_app" 24 12 10 --db "$db" | sed 's/^/installed example: /'
"$work/prefix/bin/fftune" --version
