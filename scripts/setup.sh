#!/usr/bin/env bash
# Installs everything ctxguard needs to build, test and demo on Debian 12, as root. Idempotent:
# packages already present are not fetched again, and `npm ci` runs only when the lock changed.
#
#   scripts/setup.sh
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Boost 1.81 (Debian 12's default Boost is 1.74, without Boost.JSON), spdlog, yaml-cpp, Catch2 2.13.
packages=(
  build-essential cmake ninja-build pkg-config procps
  libboost1.81-dev libboost-json1.81-dev libboost-program-options1.81-dev
  libboost-filesystem1.81-dev libssl-dev libyaml-cpp-dev libspdlog-dev libfmt-dev catch2
  libtomlplusplus-dev  # `ctxguard wrap` reads and writes Codex's config.toml
  libfast-float-dev  # support/double_chars: doubles read without std::from_chars (macOS lacks it)
  prometheus  # promtool checks what /metrics serves (tests); the server is not started
  # The sanitized build and the fuzz targets (scripts/test-sanitized.sh, scripts/fuzz.sh):
  # clang, its sanitizer and libFuzzer runtimes, llvm-symbolizer for readable reports.
  clang libclang-rt-14-dev llvm
  clang-format  # scripts/check-sources.sh: every source formatted as .clang-format says
  # scripts/check-libcxx.sh: every source compiled against LLVM's libc++, as on macOS; jq reads
  # the compile commands.
  clang-16 libc++-16-dev libc++abi-16-dev jq
  # scripts/test-windows.sh: the MinGW-w64 cross compiler and Wine to run what it builds;
  # scripts/build-windows-deps.sh unpacks Debian source packages with dpkg-source; lld links
  # what it builds (cmake/toolchains/mingw-w64.cmake says why).
  g++-mingw-w64-x86-64-posix mingw-w64-x86-64-dev wine64 dpkg-dev xz-utils lld
  # A real PostgreSQL for server-postgres in the e2e tests (tests/e2e/lib/postgres.mjs starts a
  # scratch cluster of its own and stops it; the package's default cluster is not used).
  postgresql-15
)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# End-to-end test dependencies: the real MCP SDK client and servers, pinned by package-lock.json.
e2e="$repo/tests/e2e"
stamp="$e2e/node_modules/.package-lock.json"
if [[ ! -f "$stamp" || "$e2e/package-lock.json" -nt "$stamp" ]]; then
  echo "setup: npm ci in tests/e2e" >&2
  (cd "$e2e" && npm ci --no-audit --no-fund --loglevel=error)
fi
