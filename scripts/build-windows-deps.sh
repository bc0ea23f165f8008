#!/usr/bin/env bash
# Builds ctxguard's Windows (MinGW-w64) dependencies into a prefix that
# cmake/toolchains/mingw-w64.cmake searches, and prints the prefix's path on stdout (progress and
# timings go to stderr). Idempotent: the prefix is named after the Debian versions of what goes in
# (and a hash of this script and the toolchain file), so a warm run only computes that name.
#
#   prefix="$(scripts/build-windows-deps.sh)"
#
# CTXGUARD_WINDOWS_DEPS_CACHE: the cache directory (default /var/cache/ctxguard/windows-deps);
# the prefix is <cache>/<key>, the Debian sources are kept in <cache>/sources.
#
# The prefix holds the same libraries, at the same versions, as the Linux build links: Boost's
# headers and the header-only libraries as Debian installs them (symlinked, never /usr/include
# itself, which would bring Linux headers into the Windows build); Boost.ProgramOptions, Boost.JSON
# and yaml-cpp compiled from Debian's sources; a small CMake config for each, naming the targets
# the project links.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${CTXGUARD_WINDOWS_DEPS_CACHE:-/var/cache/ctxguard/windows-deps}"
toolchain="$repo/cmake/toolchains/mingw-w64.cmake"
cxx=x86_64-w64-mingw32-g++-posix
jobs="$(nproc)"
start_ns="$(date +%s%N)"
say() { echo "build-windows-deps: $*" >&2; }
elapsed() { awk -v ns="$(($(date +%s%N) - start_ns))" 'BEGIN { printf "%.1f s", ns / 1e9 }'; }

# The cross compiler and the tools below; the packages whose headers and sources go in.
tools=(g++-mingw-w64-x86-64-posix cmake ninja-build dpkg-dev xz-utils)
keyed=(libboost1.81-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libtomlplusplus-dev
       libfast-float-dev catch2 g++-mingw-w64-x86-64-posix mingw-w64-x86-64-dev)
missing=()
for package in "${tools[@]}" "${keyed[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]})); then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

format='${Package} ${Version} ${source:Package} ${source:Version}\n'
versions="$(dpkg-query -W -f="$format" "${keyed[@]}")"
key="$({ echo "$versions"; cat "${BASH_SOURCE[0]}" "$toolchain"; } | sha256sum | cut -c1-16)"
prefix="$cache/$key"
version_of() { awk -v p="$1" '$1 == p { print $2 }' <<<"$versions"; }
source_of() { awk -v p="$1" '$1 == p { print $3 "=" $4 }' <<<"$versions"; }
# The upstream version CMake compares: 1:1.10.0+ds-0.4 -> 1.10.0.
upstream() { version_of "$1" | sed -E 's/^[0-9]+://; s/[-+~].*//'; }

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9  # a second run waits, then finds the prefix complete
if [[ -f "$prefix/.complete" ]]; then
  say "up to date: $prefix ($(elapsed))"
  echo "$prefix"
  exit 0
fi
say "building $prefix"
rm -rf "$prefix"
work="$(mktemp -d "$cache/work.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$prefix/include" "$prefix/lib/cmake"
echo "$versions" >"$prefix/versions.txt"

# --- Debian sources, from the deb-src twins of this system's own Debian entries, fetched through
# private apt lists (the system's lists and sources stay as they are).
sources="$cache/sources"
mkdir -p "$sources"
boost_src="$(source_of libboost1.81-dev)" yaml_src="$(source_of libyaml-cpp-dev)"
dsc() { local s="${1%%=*}" v="${1#*=}"; echo "$sources/${s}_${v#*:}.dsc"; }
if [[ ! -f "$(dsc "$boost_src")" || ! -f "$(dsc "$yaml_src")" ]]; then
  # shellcheck source=/dev/null
  . /etc/os-release
  mkdir -p "$work/apt/parts" "$work/apt/lists/partial"
  cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
    awk -v RS= -v c="$VERSION_CODENAME" '$0 ~ "(^|\n)Suites:[^\n]*[ \t]" c "([ \t\n-]|$)" {
      sub(/(^|\n)Types:[^\n]*/, "\nTypes: deb-src"); print $0 "\n" }' >"$work/apt/parts/src.sources"
  grep -hE "^deb[[:space:]]+[^[:space:]]+[[:space:]]+$VERSION_CODENAME(-[a-z]+)?[[:space:]]" \
    /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    sed 's/^deb/deb-src/' >"$work/apt/parts/src.list" || true
  apt=(apt-get -q -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$work/apt/parts"
       -o "Dir::State::Lists=$work/apt/lists" -o APT::Sandbox::User=root)
  "${apt[@]}" update >&2
  (cd "$sources" && "${apt[@]}" source --download-only "$boost_src" "$yaml_src" >&2)
fi
say "sources ready ($(elapsed))"

# --- Header-only libraries and Boost's headers, as Debian installs them.
for dir in boost fmt spdlog toml++ fast_float catch2; do
  ln -s "/usr/include/$dir" "$prefix/include/$dir"
done

# --- Boost.ProgramOptions (its own .cpp files) and Boost.JSON (boost/json/src.hpp), static. The
# headers are Debian's, already patched; the .cpp files come from the orig tarball, so stop if a
# Debian patch ever touches them.
boost_dsc="$(dsc "$boost_src")"
if tar -xJOf "${boost_dsc%.dsc}.debian.tar.xz" --wildcards 'debian/patches/*' |
    grep -q '^+++ .*libs/program_options/src/'; then
  say "a Debian patch changes libs/program_options/src: apply it here" && exit 1
fi
mkdir -p "$work/boost" "$work/obj"
tar -xJf "${boost_dsc%_*}_$(upstream libboost1.81-dev).orig.tar.xz" -C "$work/boost" \
    --strip-components=1 --wildcards '*/libs/program_options/src/*'
echo '#include <boost/json/src.hpp>' >"$work/boost/boost_json_src.cpp"
flags=(-std=c++20 -O2 -DNDEBUG -isystem "$prefix/include" -c)
(cd "$work/obj" && printf '%s\n' "$work"/boost/*.cpp "$work"/boost/libs/program_options/src/*.cpp |
  xargs -P"$jobs" -n1 "$cxx" "${flags[@]}")
x86_64-w64-mingw32-ar rcs "$prefix/lib/libboost_json.a" "$work/obj/boost_json_src.o"
rm "$work/obj/boost_json_src.o"
x86_64-w64-mingw32-ar rcs "$prefix/lib/libboost_program_options.a" "$work"/obj/*.o
say "Boost.ProgramOptions and Boost.JSON built ($(elapsed))"

# --- yaml-cpp with Debian's patches, through CMake and the toolchain file. apt checked the files
# against the signed Sources index; --no-check skips the uploader's signature (no keyring here).
dpkg-source --no-check -x "$(dsc "$yaml_src")" "$work/yaml-cpp" >/dev/null
cmake -S "$work/yaml-cpp" -B "$work/yaml-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCTXGUARD_WINDOWS_DEPS="$prefix" \
      -DCMAKE_INSTALL_PREFIX="$prefix" -DYAML_BUILD_SHARED_LIBS=OFF -DYAML_CPP_BUILD_TESTS=OFF \
      -DYAML_CPP_BUILD_TOOLS=OFF >/dev/null
cmake --build "$work/yaml-build" --parallel "$jobs" >/dev/null
cmake --install "$work/yaml-build" >/dev/null
say "yaml-cpp built ($(elapsed))"

# --- CMake configs for what Debian's own configs cannot give (they point at /usr/include, or at
# Linux shared libraries): the targets the project links, from the prefix.
config() {  # config NAME VERSION < body
  local dir="$prefix/lib/cmake/$1"
  mkdir -p "$dir"
  { echo "# Written by scripts/build-windows-deps.sh: $1 for the MinGW-w64 build."
    echo 'get_filename_component(_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)'
    cat; } >"$dir/$1Config.cmake"
  cat >"$dir/$1ConfigVersion.cmake" <<EOF
set(PACKAGE_VERSION $2)
set(PACKAGE_VERSION_COMPATIBLE TRUE)
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
  set(PACKAGE_VERSION_EXACT TRUE)
endif()
EOF
}
# interface TARGET DEFINITIONS LINKS: a header-only target over the prefix's include directory.
interface() {
  cat <<EOF
if(NOT TARGET $1)
  add_library($1 INTERFACE IMPORTED)
  set_target_properties($1 PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "\${_prefix}/include"
                        INTERFACE_COMPILE_DEFINITIONS "$2" INTERFACE_LINK_LIBRARIES "$3")
endif()
EOF
}
# static TARGET FILE: a library of the prefix, over Boost's headers.
static() {
  cat <<EOF
if(NOT TARGET $1)
  add_library($1 STATIC IMPORTED)
  set_target_properties($1 PROPERTIES IMPORTED_LOCATION "\${_prefix}/lib/$2"
                        INTERFACE_LINK_LIBRARIES Boost::headers)
endif()
EOF
}
# FindBoost takes the config-mode result when Boost_FOUND is set; every component is here.
{ interface Boost::headers "" ""
  static Boost::json libboost_json.a
  static Boost::program_options libboost_program_options.a
  echo 'foreach(_c headers json program_options)'
  echo '  set(Boost_${_c}_FOUND TRUE)'
  echo 'endforeach()'; } | config Boost "$(upstream libboost1.81-dev)"
interface fmt::fmt FMT_HEADER_ONLY=1 "" | config fmt "$(upstream libfmt-dev)"
# spdlog is header-only whenever SPDLOG_COMPILED_LIB is undefined (its common.h then defines
# SPDLOG_HEADER_ONLY itself); its fmt is the external one, as in Debian's build.
{ echo 'include(CMakeFindDependencyMacro)'
  echo 'find_dependency(fmt)'
  interface spdlog::spdlog SPDLOG_FMT_EXTERNAL=1 fmt::fmt; } |
  config spdlog "$(upstream libspdlog-dev)"
interface tomlplusplus::tomlplusplus TOML_HEADER_ONLY=1 "" |
  config tomlplusplus "$(upstream libtomlplusplus-dev)"
interface FastFloat::fast_float "" "" | config FastFloat "$(upstream libfast-float-dev)"
# Catch2 2.x: the single header, and Catch.cmake (catch_discover_tests) beside the config, as
# Debian's catch2 package has it.
{ interface Catch2::Catch2 "" ""
  echo 'list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}")'; } |
  config Catch2 "$(upstream catch2)"
cp /usr/lib/cmake/Catch2/{Catch,CatchAddTests,ParseAndAddCatchTests}.cmake \
   "$prefix/lib/cmake/Catch2/"

touch "$prefix/.complete"
say "built $prefix in $(elapsed)"
echo "$prefix"
