#!/usr/bin/env bash
# Builds the Debian package of ctxguard with CPack and checks it: the binary in /usr/bin, the
# commented default configuration in /usr/share/ctxguard/, the documentation in
# /usr/share/doc/ctxguard/, a man page made by help2man from --help, and a Depends line that
# dpkg-shlibdeps computed from the binary's shared libraries. The check unpacks the package into
# a scratch root (dpkg-deb -x) and runs the binary from there: --version, --help, wrap --help.
#
#   scripts/package.sh [OUTDIR]     (default: build/package; the build is build/, as build.sh makes
#                                     it, or $CTXGUARD_BUILD_DIR)
#
# Install the package with: apt install ./OUTDIR/ctxguard_VERSION_ARCH.deb
#
#   scripts/package.sh --windows    the Windows .zip of build-windows/ (scripts/test-windows.sh
#                                     builds it, or $CTXGUARD_WINDOWS_BUILD_DIR): ctxguard.exe, the
#                                     README, the default configuration and the docs, checked by
#                                     running the unpacked ctxguard.exe under wine64
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [[ "${1:-}" == --windows ]]; then
  build="${CTXGUARD_WINDOWS_BUILD_DIR:-$repo/build-windows}"
  version="$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")"
  name="ctxguard-$version-windows-x86_64"
  stage="$(mktemp -d)"
  trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage/$name/docs"
  cp "$build/ctxguard.exe" "$repo/README.md" "$repo/CHANGELOG.md" "$repo/config/ctxguard.yaml" \
     "$stage/$name/"
  cp "$repo"/docs/*.md "$stage/$name/docs/"
  x86_64-w64-mingw32-strip "$stage/$name/ctxguard.exe"
  mkdir -p "$build/package"
  zip="$build/package/$name.zip"
  rm -f "$zip"
  (cd "$stage" && cmake -E tar cf "$zip" --format=zip "$name")
  # The check: unpacked anew, the .exe reports this version.
  mkdir "$stage/check" && (cd "$stage/check" && cmake -E tar xf "$zip")
  wine64="$(sed -n 's/^CTXGUARD_WINE64:FILEPATH=//p' "$build/CMakeCache.txt")"
  said="$(WINEDEBUG=-all "$wine64" "$stage/check/$name/ctxguard.exe" --version </dev/null 2>/dev/null)"
  [[ "$said" == "ctxguard $version"* ]] || { echo "package: $zip: --version says '$said'" >&2; exit 1; }
  echo "$zip ($(($(stat -c %s "$zip") / 1024)) KiB)"
  exit 0
fi

build="${CTXGUARD_BUILD_DIR:-$repo/build}"
out="$(mkdir -p "${1:-$build/package}" && cd "${1:-$build/package}" && pwd)"

# help2man writes the man page; dpkg-shlibdeps (dpkg-dev) computes Depends, from what `file`
# says the installed files are.
missing=()
for tool in help2man:help2man dpkg-shlibdeps:dpkg-dev file:file; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool##*:}")
done
if ((${#missing[@]})); then
  echo "package: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

# The binary the tests ran (scripts/build.sh), configured again so that CMake finds help2man;
# CTXGUARD_CMAKE_ARGS adds options for a fresh build (the Dockerfile: Release, no tests).
# shellcheck disable=SC2086
cmake -S "$repo" -B "$build" -G Ninja -DCTXGUARD_WERROR=ON ${CTXGUARD_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" --target ctxguard ctxguard_manpage >/dev/null
rm -f "$out"/ctxguard_*.deb
(cd "$build" && cpack -G DEB -B "$out" >/dev/null)
rm -rf "$out/_CPack_Packages"
deb="$(ls "$out"/ctxguard_*.deb)"

# The check: what the package holds, and the binary it installs, run from a scratch root.
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
dpkg-deb -x "$deb" "$root"
for file in usr/bin/ctxguard usr/share/ctxguard/ctxguard.yaml usr/share/man/man1/ctxguard.1.gz \
            usr/share/doc/ctxguard/README.md usr/share/doc/ctxguard/CHANGELOG.md \
            usr/share/doc/ctxguard/docs/configuration.md; do
  [[ -s "$root/$file" ]] || { echo "package: $deb lacks /$file" >&2; exit 1; }
done
depends="$(dpkg-deb -f "$deb" Depends)"
for library in libboost-json libyaml-cpp libspdlog libssl libtomlplusplus; do
  [[ "$depends" == *"$library"* ]] || { echo "package: Depends lacks $library: $depends" >&2; exit 1; }
done
version="$("$root/usr/bin/ctxguard" --version)"
[[ "$version" == "ctxguard $(dpkg-deb -f "$deb" Version)" ]] ||
  { echo "package: --version says '$version'" >&2; exit 1; }
"$root/usr/bin/ctxguard" --help | grep -q -- '-- <server command>' ||
  { echo "package: --help does not show the usage" >&2; exit 1; }
"$root/usr/bin/ctxguard" wrap --help | grep -q 'ctxguard wrap --client claude-desktop' ||
  { echo "package: wrap --help does not show its examples" >&2; exit 1; }
zcat "$root/usr/share/man/man1/ctxguard.1.gz" | grep -q '^\.TH CTXGUARD' ||
  { echo "package: the man page has no title" >&2; exit 1; }

echo "$deb ($(du -k "$deb" | cut -f1) KiB)"
echo "  Depends: $depends"
echo "  $version; --help, wrap --help and the man page checked in a scratch root"
