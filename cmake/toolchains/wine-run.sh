#!/usr/bin/env bash
# Runs a Windows test binary under wine64 for CMake: the cross build's CMAKE_CROSSCOMPILING_EMULATOR
# (mingw-w64.cmake), through which catch_discover_tests lists cases and CTest runs them.
#
# On a loaded machine Wine now and then fails to start a process: the run ends at once, non-zero,
# having printed nothing (CI saw it for 1 case in 580, in 0.01 s). A Catch2 binary always prints
# something, its case list or its summary, so a run that printed nothing never reached the
# program: it is run again, at most twice, and the retry is reported on stderr. A run that printed
# anything keeps its status, pass or fail.
#
# CTXGUARD_WINE64: the wine64 binary (Debian's /usr/lib/wine/wine64 by default); WINEPREFIX and
# WINEDEBUG come from the environment.
set -uo pipefail
wine="${CTXGUARD_WINE64:-/usr/lib/wine/wine64}"
out="$(mktemp)" err="$(mktemp)"
child=""
trap '[[ -z "$child" ]] || kill "$child" 2>/dev/null; rm -f "$out" "$err"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

attempts=3
for ((attempt = 1; ; ++attempt)); do
  "$wine" "$@" >"$out" 2>"$err" & child=$!
  wait "$child"
  status=$? child=""
  if ((status == 0)) || [[ -s "$out" || -s "$err" ]] || ((attempt == attempts)); then
    break
  fi
  echo "wine-run: wine exited $status before $1 printed anything; starting it again" \
       "(attempt $((attempt + 1)) of $attempts)" >&2
done
cat "$out"
cat "$err" >&2
exit "$status"
