#!/usr/bin/env bash
# Checks the sources without building them: every C++ file is formatted as .clang-format says,
# and every module includes only itself and the modules below it (docs/architecture.md,
# Modules: support -> jsonrpc -> session -> config -> mcp -> budget -> cursor -> cache ->
# pipeline -> spill -> telemetry -> wrap -> proxy). A module's tests (tests/<module>/) are held to the
# same order, so they cannot lean on a module above the one they test. No helper is defined twice
# where a unity batch could see both (scripts/unity-clashes.pl). Exits 1 with every problem
# listed.
#
#   scripts/check-sources.sh
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

modules=(support jsonrpc session config wrap budget mcp cursor cache spill pipeline telemetry proxy)
declare -A rank
for i in "${!modules[@]}"; do rank[${modules[$i]}]=$i; done

problems=0

# Formatting: the files git knows, as clang-format would write them.
mapfile -t sources < <(git ls-files 'app/*.cpp' 'app/*.hpp' 'lib/*.cpp' 'lib/*.hpp' \
  'tests/*.cpp' 'tests/*.hpp' 'bench/*.cpp' 'bench/*.hpp')
if ! clang-format --dry-run -Werror "${sources[@]}" 2>/tmp/ctxguard-format.$$; then
  grep -E '^[^ ].*: (error|warning):' /tmp/ctxguard-format.$$ | cut -d: -f1 | sort -u |
    sed 's/^/check-sources: not formatted (clang-format -i): /' >&2
  problems=1
fi
rm -f /tmp/ctxguard-format.$$

# Layering: `#include "<module>/..."` from lib/<own>/ or tests/<own>/ must not name a module
# above <own>.
for file in "${sources[@]}"; do
  case "$file" in
    lib/*/* | tests/*/*) ;;
    *) continue ;;
  esac
  own="${file#*/}"
  own="${own%%/*}"
  [[ -n "${rank[$own]:-}" ]] || continue  # tests/e2e, tests/fuzz, ...
  while IFS= read -r included; do
    if ((${rank[$included]} > ${rank[$own]})); then
      echo "check-sources: $file includes $included/, a module above $own" >&2
      problems=1
    fi
  done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+"([a-z]+)\/.*/\1/p' "$file" |
    while read -r name; do [[ -n "${rank[$name]:-}" ]] && echo "$name"; done)
done

# Unity batches: a helper defined in two files of one module, or again beside a header's inline
# one, breaks whichever unity build puts them in one batch; one place per helper.
while IFS= read -r clash; do
  echo "check-sources: defined twice, a unity build cannot hold both: $clash" >&2
  problems=1
done < <(git ls-files 'lib/*.cpp' 'lib/*.hpp' 'tests/*.cpp' 'tests/*.hpp' | perl scripts/unity-clashes.pl)

# scripts/fuzz.sh runs every fuzz target tests/fuzz/CMakeLists.txt declares.
declared="$(sed -nE 's/^ctxguard_fuzz_target\(([a-z_]+).*/\1/p' tests/fuzz/CMakeLists.txt | sort)"
listed="$(sed -n '/^all_targets=(/,/)/p' scripts/fuzz.sh | tr -d '()' | sed 's/all_targets=//' |
  tr ' ' '\n' | grep -v '^$' | sort)"
if [[ "$declared" != "$listed" ]]; then
  echo "check-sources: scripts/fuzz.sh's all_targets differ from tests/fuzz/CMakeLists.txt's:" \
    "$(comm -3 <(echo "$declared") <(echo "$listed") | tr -d '\t' | tr '\n' ' ')" >&2
  problems=1
fi

if ((problems)); then exit 1; fi
echo "check-sources: ${#sources[@]} files formatted; every module includes only the ones below it; no helper defined twice; fuzz.sh lists every fuzz target"
