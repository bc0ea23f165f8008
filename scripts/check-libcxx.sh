#!/usr/bin/env bash
# Compiles every translation unit of lib/, app/, tests/ and bench/ against LLVM's libc++ with
# clang 16, the standard library macOS ships: an include that libstdc++ happens to pull in, or a
# function libc++ lacks, fails here rather than on a Mac. In CMake's unity batches (8 sources a
# unit): 51 units in 125 s where the 186 files one by one took 308 s of CI's time. Within a batch
# a file may lean on an include of the file before it; scripts/build.sh compiles each file alone
# (against libstdc++), and .github/workflows/platforms.yml builds each alone on macOS.
# Syntax only, with the project's own flags and warnings as errors: Debian's Boost.JSON,
# yaml-cpp and spdlog are built for libstdc++, so nothing can link; CMake still configures, as
# find_package needs only the headers. Exits 1 with every failing file and its errors.
#
#   scripts/check-libcxx.sh        (build-libcxx/, 2 files at a time; CTXGUARD_LIBCXX_JOBS)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CTXGUARD_LIBCXX_DIR:-$repo/build-libcxx}"
jobs="${CTXGUARD_LIBCXX_JOBS:-2}"
start_ns="$(date +%s%N)"

cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++-16 \
  -DCMAKE_CXX_FLAGS=-stdlib=libc++ -DCTXGUARD_WERROR=ON -DCTXGUARD_BUILD_TESTS=ON \
  -DCTXGUARD_BUILD_BENCH=ON -DCMAKE_UNITY_BUILD=ON >/dev/null

# Pairs of lines for xargs: the file (a unity batch by its build path), then the shell command
# that checks it (CMake writes each command as shell text, quoting included; -o names an object
# that -fsyntax-only never writes). A file built into several targets is checked once.
units="$build/libcxx-units"
jq -r --arg repo "$repo/" --arg build "$build/" 'unique_by(.file) | .[]
  | (.file | ltrimstr($build) | ltrimstr($repo)) as $name
  | select($name | test("^(lib|app|tests|bench)/"))
  | $name, "cd \(.directory | @sh) && \(.command) -fsyntax-only"' \
  "$build/compile_commands.json" >"$units"
total=$(($(wc -l <"$units") / 2))

# One block per failing file, written at once so that files checked in parallel do not interleave.
check_one='errors=$(eval "$2" 2>&1) && exit 0
printf "check-libcxx: %s does not compile against libc++:\n%s\n" "$1" "$errors"; exit 1'
report="$build/libcxx-report"
xargs -d '\n' -n 2 -P "$jobs" bash -c "$check_one" _ <"$units" >"$report" || true
cat "$report" >&2
failed=$(grep -c '^check-libcxx: .* does not compile' "$report" || true)

seconds=$(awk -v ns="$(($(date +%s%N) - start_ns))" 'BEGIN { printf "%.0f", ns / 1e9 }')
echo "check-libcxx: $((total - failed)) of $total translation units compile against libc++" \
  "(clang 16, $jobs at a time, ${seconds} s)"
((failed == 0))
