# Cross-compiles ctxguard for 64-bit Windows with Debian's MinGW-w64 and runs what it builds under
# wine64 (catch_discover_tests and CTest go through CMAKE_CROSSCOMPILING_EMULATOR).
#
#   cmake -S . -B build-windows -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/mingw-w64.cmake \
#         -DCTXGUARD_WINDOWS_DEPS="$(scripts/build-windows-deps.sh)"
#
# CTXGUARD_WINDOWS_DEPS (cache variable, or the environment variable of that name) is the prefix
# scripts/build-windows-deps.sh fills: Boost, yaml-cpp and the header-only libraries, each with a
# CMake config naming the targets the project links. scripts/test-windows.sh does all of it.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_VERSION 10.0)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

# The posix thread model: std::thread, std::mutex and std::condition_variable need it in GCC 12
# (the win32 model has none of them).
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)

# Windows 10 APIs (job objects with handle lists, CNG); <windows.h> without winsock 1 (it clashes
# with Asio's winsock2) and without the min/max macros that break std::min and std::max. Sources
# must not #define these again: a redefinition is a warning, and warnings are errors.
set(ctxguard_windows_defines
    "-D_WIN32_WINNT=0x0A00 -DWINVER=0x0A00 -DWIN32_LEAN_AND_MEAN -DNOMINMAX")
set(CMAKE_C_FLAGS_INIT "${ctxguard_windows_defines}")
set(CMAKE_CXX_FLAGS_INIT "${ctxguard_windows_defines}")
# One self-contained .exe: no libstdc++-6.dll, libgcc_s_seh-1.dll or libwinpthread-1.dll to ship.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -static-libgcc -static-libstdc++")

# LLVM's lld links, not GNU ld: binutils 2.40's PE linker takes 14 s for any program that holds
# Catch2's main (7,900 COMDAT functions, 24,000 sections; lld: 0.4 s), and each of the 13 test
# programs does. Debian's MinGW GCC has GNU ld's path built in, so -fuse-ld=lld is ignored; the
# driver's `linker` spec names the program it runs instead of collect2. lld takes collect2's
# arguments and ignores the LTO plugin ones.
find_program(CTXGUARD_MINGW_LLD NAMES ld.lld DOC "LLVM's linker, which links the Windows build")
if(CTXGUARD_MINGW_LLD)
  set(ctxguard_lld_specs "${CMAKE_CURRENT_LIST_DIR}/mingw-lld.specs")
  string(APPEND CMAKE_EXE_LINKER_FLAGS_INIT " -specs=${ctxguard_lld_specs}")
  string(APPEND CMAKE_SHARED_LINKER_FLAGS_INIT " -specs=${ctxguard_lld_specs}")
else()
  message(STATUS "ld.lld not found: GNU ld links the Windows build (install lld: much faster)")
endif()

# Dependencies come from the prefix (and the MinGW sysroot) only, never from the host's /usr;
# programs (node, help2man, wine) come from the host.
if(NOT CTXGUARD_WINDOWS_DEPS AND DEFINED ENV{CTXGUARD_WINDOWS_DEPS})
  set(CTXGUARD_WINDOWS_DEPS "$ENV{CTXGUARD_WINDOWS_DEPS}")
endif()
set(CTXGUARD_WINDOWS_DEPS "${CTXGUARD_WINDOWS_DEPS}"
    CACHE PATH "Prefix of the Windows dependencies (scripts/build-windows-deps.sh prints it)")
if(NOT IS_DIRECTORY "${CTXGUARD_WINDOWS_DEPS}")
  message(FATAL_ERROR "CTXGUARD_WINDOWS_DEPS is not a directory: '${CTXGUARD_WINDOWS_DEPS}' "
                      "(set it to what scripts/build-windows-deps.sh prints)")
endif()
# try_compile projects read this file again and need the prefix too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CTXGUARD_WINDOWS_DEPS)
set(CMAKE_FIND_ROOT_PATH "${CTXGUARD_WINDOWS_DEPS}" /usr/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Debian installs wine64 outside PATH. The emulator is wine-run.sh beside this file, which starts
# a run again when Wine failed to start it. One program, not a command line: catch_discover_tests
# passes the emulator as a single -D value, so CTXGUARD_WINE64, WINEPREFIX and WINEDEBUG come from
# the environment (scripts/test-windows.sh exports them).
find_program(CTXGUARD_WINE64 NAMES wine64 PATHS /usr/lib/wine NO_CMAKE_FIND_ROOT_PATH
             DOC "wine64, which runs the test binaries")
if(CTXGUARD_WINE64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${CMAKE_CURRENT_LIST_DIR}/wine-run.sh")
else()
  message(WARNING "wine64 not found: test binaries build, but catch_discover_tests cannot list "
                  "their cases (build with -DCTXGUARD_BUILD_TESTS=OFF, or install wine64)")
endif()
