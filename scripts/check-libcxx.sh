#!/usr/bin/env bash
# Compiles every translation unit of lib/, app/, tests/ and bench/ against LLVM's libc++ with
# clang 16, the standard library macOS ships: an include that libstdc++ happens to pull in, or a
# function libc++ lacks, fails here rather than on a Mac. The product's sources (lib/, app/: what a
# Mac user builds, README) are checked one by one, so each must include what it uses; the tests'
# and benchmarks' in CMake's unity batches (their own build dir, build-libcxx/unity), which takes
# 125 s where one by one took 308 s.
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

configure() {  # configure DIR [cmake options]
  local dir="$1"
  shift
  cmake -S "$repo" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++-16 \
    -DCMAKE_CXX_FLAGS=-stdlib=libc++ -DCTXGUARD_WERROR=ON -DCTXGUARD_BUILD_TESTS=ON \
    -DCTXGUARD_BUILD_BENCH=ON "$@" >/dev/null
}
configure "$build"
configure "$build/unity" -DCMAKE_UNITY_BUILD=ON

# Pairs of lines for xargs: the file (a unity batch by its build path), then the shell command
# that checks it (CMake writes each command as shell text, quoting included; -o names an object
# that -fsyntax-only never writes). A file built into several targets is checked once.
units="$build/libcxx-units"
select_units() {  # select_units DIR REGEX: the units of DIR whose path in the source tree, or
  # in DIR for a batch, matches
  jq -r --arg repo "$repo/" --arg dir "$1/" --arg pattern "$2" 'unique_by(.file) | .[]
    | (.file | ltrimstr($dir) | ltrimstr($repo)) as $name | select($name | test($pattern))
    | $name, "cd \(.directory | @sh) && \(.command) -fsyntax-only"' "$1/compile_commands.json"
}
{
  select_units "$build" '^(lib|app)/'
  select_units "$build/unity" '^(tests|bench)/'
} >"$units"
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
