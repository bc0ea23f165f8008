#!/usr/bin/env bash
# Configures and builds build-sanitize/: everything with clang under AddressSanitizer +
# UndefinedBehaviorSanitizer, every module instrumented for libFuzzer and the fuzz targets
# (tests/fuzz). The one place this configuration is written: scripts/test-sanitized.sh and
# scripts/fuzz.sh both build through here.
#
# A unity build (CMake batches of 8 sources per object): this build exists to run the suite under
# the sanitizers, and batching cuts its compile time by a third (882 s to 627 s of CPU). scripts/
# build.sh compiles every file on its own, so a missing #include still fails CI there. Sources
# must therefore not clash when batched: no two helpers of one name in a module's anonymous
# namespaces, no file-scope `using namespace` that makes a name ambiguous.
#
# CTXGUARD_PORTABLE_POSIX: this run also takes the POSIX code path macOS takes (no pipe2, no
# subreaper, no /proc), so a macOS user gets code that has run.
#
#   scripts/build-sanitized.sh [extra `cmake --build` arguments, e.g. --target pipeline_fuzz]
#
# CTXGUARD_SANITIZE_BUILD_DIR: another build directory; CTXGUARD_FUZZ_SECONDS: how long each
# fuzz target runs under `ctest -L fuzz` (20); CTXGUARD_FUZZ_SEED: libFuzzer's seed there (1, so
# the run repeats; 0 draws one); CTXGUARD_BUILD_JOBS: parallel jobs (nproc).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CTXGUARD_SANITIZE_BUILD_DIR:-$repo/build-sanitize}"

# Line tables only (-gline-tables-only, what the sanitizers' symbolizer reads for file:line in a
# report): full debug info makes this build's compile a good part longer on CI's 2 cores.
CC=clang CXX=clang++ cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-gline-tables-only" -DCMAKE_CXX_FLAGS="-O1" -DCTXGUARD_WERROR=ON -DCTXGUARD_SANITIZE=address,undefined \
  -DCTXGUARD_FUZZ=ON -DCTXGUARD_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON -DCTXGUARD_PORTABLE_POSIX=ON \
  -DCTXGUARD_FUZZ_SECONDS="${CTXGUARD_FUZZ_SECONDS:-20}" -DCTXGUARD_FUZZ_SEED="${CTXGUARD_FUZZ_SEED:-1}" \
  >/dev/null
cmake --build "$build" --parallel "${CTXGUARD_BUILD_JOBS:-$(nproc)}" "$@"
