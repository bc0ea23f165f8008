#!/usr/bin/env bash
# Checks that a change of structure changed no answer: the pipeline's first answers and every
# ctxguard_fetch answer that follows their cursors, byte for byte, at two commits.
#
#   scripts/answers-identical.sh OLD_REV [NEW_REV]     (NEW_REV: the working tree's HEAD)
#
# Builds tests/fuzz/pipeline_fuzz of each commit (clang, libFuzzer, -O2, no sanitizer: only the
# answers matter here) from `git archive`, grows a corpus from the committed seeds with the new
# binary for CTXGUARD_ANSWERS_SECONDS (180; the seed is fixed, so a rerun grows the same corpus),
# then runs every input of it through both binaries with CTXGUARD_FUZZ_VERBOSE=1, which prints
# each answer the harness checks (pipeline_fuzz.cpp fixes the cursor key, both clocks and the
# entry salt, so an input's answers repeat byte for byte). Prints the number of inputs and
# answers compared; exits 1 and shows the first differences when any answer differs.
#
# CTXGUARD_ANSWERS_DIR: where the builds, corpus and answers go (/var/tmp/ctxguard-answers).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(($# >= 1 && $# <= 2)) || { sed -n '5p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
old="$(git -C "$repo" rev-parse --short "$1")"
new="$(git -C "$repo" rev-parse --short "${2:-HEAD}")"
work="${CTXGUARD_ANSWERS_DIR:-/var/tmp/ctxguard-answers}"
seconds="${CTXGUARD_ANSWERS_SECONDS:-180}"
mkdir -p "$work"

build_at() {  # build_at REV: prints the path of that commit's pipeline_fuzz
  local rev="$1" dir="$work/$1"
  if [[ ! -x "$dir/build/tests/fuzz/pipeline_fuzz" ]]; then
    rm -rf "$dir" && mkdir -p "$dir/src"
    git -C "$repo" archive "$rev" | tar -x -C "$dir/src"
    CC=clang CXX=clang++ cmake -S "$dir/src" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCTXGUARD_FUZZ=ON -DCTXGUARD_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON >/dev/null
    cmake --build "$dir/build" --target pipeline_fuzz >"$dir/build.log" 2>&1 ||
      { tail -20 "$dir/build.log" >&2; echo "answers-identical: $rev did not build" >&2; exit 1; }
  fi
  echo "$dir/build/tests/fuzz/pipeline_fuzz"
}

old_fuzz="$(build_at "$old")"
new_fuzz="$(build_at "$new")"

corpus="$work/corpus-$seconds"
if [[ ! -d "$corpus" ]]; then
  mkdir -p "$corpus.tmp"
  cp "$repo"/tests/fuzz/corpus/pipeline_fuzz/* "$corpus.tmp/"
  "$new_fuzz" -seed=1 -max_total_time="$seconds" -dict="$repo/tests/fuzz/json.dict" \
    "$corpus.tmp" >"$work/grow.log" 2>&1 || { tail -20 "$work/grow.log" >&2; exit 1; }
  mv "$corpus.tmp" "$corpus"
fi

# The answers of every input, in one order; libFuzzer's own lines (timings, its banner naming
# the binary) are left out.
answers() {  # answers BINARY OUT
  find "$corpus" -type f -print0 | sort -z |
    xargs -0 -n 200 env CTXGUARD_FUZZ_VERBOSE=1 "$1" -runs=1 2>&1 >/dev/null |
    grep -a -v -E '^(INFO:|Executed |MERGE|\*\*\*|Done |#|Running: )' | grep -a -v -F "$1: " >"$2" || true
}
answers "$old_fuzz" "$work/answers-$old.txt"
answers "$new_fuzz" "$work/answers-$new.txt"

inputs="$(find "$corpus" -type f | wc -l)"
count="$(wc -l <"$work/answers-$new.txt")"
first="$(grep -a -c '^first answer: ' "$work/answers-$new.txt" || true)"
if cmp -s "$work/answers-$old.txt" "$work/answers-$new.txt"; then
  echo "answers-identical: $inputs inputs, $count answers ($first first answers, the rest fetches):" \
    "$old and $new answer byte for byte alike"
  exit 0
fi
echo "answers-identical: $inputs inputs: $old and $new differ" >&2
diff "$work/answers-$old.txt" "$work/answers-$new.txt" | head -40 >&2
exit 1
