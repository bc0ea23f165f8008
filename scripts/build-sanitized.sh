#!/usr/bin/env bash
# Configures and builds build-sanitize/: everything with clang under AddressSanitizer +
# UndefinedBehaviorSanitizer, every module instrumented for libFuzzer and the fuzz targets
# (tests/fuzz). The one place this configuration is written: scripts/test-sanitized.sh and
# scripts/fuzz.sh both build through here.
#
#   scripts/build-sanitized.sh [extra `cmake --build` arguments, e.g. --target pipeline_fuzz]
#
# CTXGUARD_SANITIZE_BUILD_DIR: another build directory; CTXGUARD_FUZZ_SECONDS: how long each
# fuzz target runs under `ctest -L fuzz` (60); CTXGUARD_BUILD_JOBS: parallel jobs (nproc).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CTXGUARD_SANITIZE_BUILD_DIR:-$repo/build-sanitize}"

CC=clang CXX=clang++ cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS="-O1" -DCTXGUARD_WERROR=ON -DCTXGUARD_SANITIZE=address,undefined \
  -DCTXGUARD_FUZZ=ON -DCTXGUARD_BUILD_BENCH=OFF \
  -DCTXGUARD_FUZZ_SECONDS="${CTXGUARD_FUZZ_SECONDS:-60}" >/dev/null
cmake --build "$build" --parallel "${CTXGUARD_BUILD_JOBS:-$(nproc)}" "$@"
