#!/usr/bin/env bash
# check_layers.py passes on the tree and fails on copies with wrong-way
# includes: a lower core layer including a higher one, one family another's
# header, the tuner a family's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd) root=$1 work=$2
python3 "$here/check_layers.py" "$root"
rm -rf "$work"
for case in 'core/base/x.cpp:core/engine/plan.hpp' 'families/poisson/x.cpp:families/fft3d/fft3d.hpp' \
            'tuner/x.cpp:families/krylov/operator.hpp' 'core/engine/x.hpp:core/run/runner.hpp'; do
  file=${case%%:*} inc=${case#*:}
  mkdir -p "$work/$(dirname "$file")"
  printf '#include "%s"\n' "$inc" > "$work/$file"
  if out=$(python3 "$here/check_layers.py" "$work"); then echo "not caught: $file includes $inc"; exit 1; fi
  grep -q "^$file:1: .* includes $inc" <<<"$out" || { echo "wrong message: $out"; exit 1; }
  rm -rf "$work"
  echo "caught: $file includes $inc"
done
