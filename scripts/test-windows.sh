#!/usr/bin/env bash
# Cross-builds ctxguard for Windows with MinGW-w64 (cmake/toolchains/mingw-w64.cmake) into
# build-windows/, Release with warnings as errors and no benchmarks; runs under wine, through
# CTest, the unit tests and the end-to-end test of ctxguard.exe with the real SDK client
# (tests/e2e/windows/wine.test.mjs); then makes and checks the .zip (scripts/package.sh --windows).
# Exits non-zero if a target fails to build or a test fails.
#
#   scripts/test-windows.sh [extra ctest arguments, e.g. -R support_tests]
#
# CTXGUARD_WINDOWS_TARGETS: the targets to build, space-separated, or "all" (the default) for the
# whole tree; with fewer, CTest runs only the tests named as targets (a unit test program runs as
# one test, whole, under its own name), and no .zip is made. CTXGUARD_WINDOWS_LABELS: the CTest
# label regex to run (default unit|e2e).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CTXGUARD_WINDOWS_BUILD_DIR:-$repo/build-windows}"
read -r -a targets <<<"${CTXGUARD_WINDOWS_TARGETS:-all}"
step_ns="$(date +%s%N)"
took() {  # took WHAT: prints how long the step since the previous call took
  local now
  now="$(date +%s%N)"
  awk -v what="$1" -v ns="$((now - step_ns))" \
    'BEGIN { printf "test-windows: %s in %.1f s\n", what, ns / 1e9 }' >&2
  step_ns="$now"
}

if ! dpkg-query -W -f='${Status}' wine64 2>/dev/null | grep -q "install ok installed"; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends wine64
fi
prefix="$("$repo/scripts/build-windows-deps.sh")"
took "dependencies"

# A new dependency prefix needs a fresh cache: the packages' *_DIR entries name the old one.
fresh=()
if [[ -f "$build/CMakeCache.txt" ]] &&
    ! grep -qxF "CTXGUARD_WINDOWS_DEPS:PATH=$prefix" "$build/CMakeCache.txt"; then
  fresh=(--fresh)
fi
# Release at -O2, the Linux build's level: GCC 12 at -O3 reports false -Wrestrict errors in
# std::string's operator+ (GCC bug 105329), natively as well. A unity build, as the sanitized one
# (scripts/build-sanitized.sh): scripts/build.sh compiles each file alone, so a missing #include
# still fails there, and batching cuts this build's time (CMakeLists.txt says which warning GCC
# cannot give in batches).
cmake "${fresh[@]}" -S "$repo" -B "$build" -G Ninja \
      -DCMAKE_TOOLCHAIN_FILE="$repo/cmake/toolchains/mingw-w64.cmake" \
      -DCTXGUARD_WINDOWS_DEPS="$prefix" \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
      -DCTXGUARD_WERROR=ON \
      -DCTXGUARD_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON >/dev/null
wine64="$(sed -n 's/^CTXGUARD_WINE64:FILEPATH=//p' "$build/CMakeCache.txt")"
wineserver="$(dirname "$wine64")/wineserver"
took "configure"

# Wine runs the test programs in CTest, each once, whole (tests/CMakeLists.txt). A wineserver, and
# the services the first wine process starts, would inherit the output pipe of whichever CTest
# step started them, and that step would wait for their idle exit (2.4 s a test). So one persistent
# server and its services start here with their output elsewhere, serve every wine process of this
# run, and are stopped on exit. The prefix is private and kept.
# No wine-mono or wine-gecko: console programs do not need them, and wineboot would ask for them.
export WINEPREFIX="$build/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
export CTXGUARD_WINE64="$wine64"  # for the emulator, cmake/toolchains/wine-run.sh
mkdir -p "$WINEPREFIX"
stop_wine() { "$wineserver" -k 2>/dev/null || true; "$wineserver" -w; }
stop_wine  # one left by a run that was killed
# The build and CTest run in the background: a TERM to this script would otherwise leave them
# running, since bash does not pass it on to a foreground child.
child=""
run() { "$@" & child=$!; wait "$child"; child=""; }
trap '[[ -z "$child" ]] || kill "$child" 2>/dev/null || true; stop_wine' EXIT
"$wineserver" -p </dev/null >/dev/null 2>&1
[[ -f "$WINEPREFIX/system.reg" ]] || "$wine64" wineboot --init </dev/null >/dev/null 2>&1
"$wine64" cmd /c exit </dev/null >/dev/null 2>&1
took "wine started"

# Ninja itself, not `cmake --build`: a TERM to Ninja stops its compilers, one to CMake does not.
whole=false only=()
if [[ "${targets[*]}" == all ]]; then
  targets=() whole=true
else
  only=(-R "^($(IFS='|'; echo "${targets[*]}"))\$")
fi
run ninja -C "$build" -j "$(nproc)" "${targets[@]}"
took "build (${targets[*]:-all})"

run ctest --test-dir "$build" -L "${CTXGUARD_WINDOWS_LABELS:-unit|e2e}" --no-tests=error \
      --output-on-failure --parallel "$(nproc)" "${only[@]}" "$@"
took "ctest under wine"

if "$whole"; then
  CTXGUARD_WINDOWS_BUILD_DIR="$build" "$repo/scripts/package.sh" --windows
  took "the .zip"
fi
