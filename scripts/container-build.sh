#!/usr/bin/env bash
# Builds the Dockerfile for real and checks the image: podman from Debian with the overlay storage
# driver (vfs where the kernel will not mount overlay) and chroot isolation (no Docker engine, no
# daemon), FROM images made locally with debootstrap from the machine's own apt mirror (no
# registry is reachable). The image is checked without running a container (crun cannot here:
# cgroups in hybrid mode): its root is mounted and its ctxguard run inside it with chroot,
# --version and wrap --help.
#
# Where podman cannot build (no root, no chroot), it says why and runs the Dockerfile's build
# step without the engine instead: scripts/package.sh with the Dockerfile's own options, into a
# scratch build directory, so the Release build with warnings as errors is still covered.
#
#   scripts/container-build.sh [TAG]     (default: ctxguard:test)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tag="${1:-ctxguard:test}"
work="${CTXGUARD_CONTAINER_DIR:-/var/tmp/ctxguard-container}"

without_engine() {
  echo "container-build: $1; building the Dockerfile's build stage without the engine" >&2
  local scratch
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' RETURN
  CTXGUARD_BUILD_DIR="$scratch/build" \
    CTXGUARD_CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Release -DCTXGUARD_BUILD_TESTS=OFF" \
    "$repo/scripts/package.sh" "$scratch/out"
}

[[ "$(id -u)" == 0 ]] || { without_engine "podman builds with chroot isolation need root"; exit 0; }
missing=()
for tool in podman:podman debootstrap:debootstrap; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool##*:}")
done
if ((${#missing[@]})); then
  echo "container-build: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

# Short image names resolve to local images only; no ulimits (the chroot cannot set them).
mkdir -p "$work"
printf '[containers]\ndefault_ulimits = []\n' >"$work/containers.conf"
printf 'unqualified-search-registries = ["localhost"]\nshort-name-mode = "permissive"\n' \
  >"$work/registries.conf"
export CONTAINERS_CONF="$work/containers.conf" CONTAINERS_REGISTRIES_CONF="$work/registries.conf"
# overlay keeps a layer as its changes; vfs copies the whole root for each one (the build's COPY
# 13 s -> 1 s, the image's commit 49 s -> 9 s here). Each driver has its own store: podman
# refuses a store made by the other.
podman=(podman --storage-driver vfs)
probe="$(mktemp -d)"
mkdir -p "$probe"/{lower,upper,work,merged}
if mount -t overlay overlay -o "lowerdir=$probe/lower,upperdir=$probe/upper,workdir=$probe/work" \
    "$probe/merged" 2>/dev/null; then
  umount "$probe/merged"
  podman=(podman --storage-driver overlay --root "$work/overlay" --runroot "$work/overlay-run")
fi
rm -rf "$probe"

# debian:12 and debian:12-slim, as the Dockerfile names them: one minimal Debian 12 root.
if ! "${podman[@]}" image exists debian:12; then
  mirror="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null)"
  rootfs="$work/rootfs-bookworm"
  rm -rf "$rootfs"
  if ! debootstrap --variant=minbase bookworm "$rootfs" "${mirror:-http://deb.debian.org/debian}" \
    >"$work/debootstrap.log" 2>&1; then
    without_engine "debootstrap could not make a Debian 12 root ($(tail -1 "$work/debootstrap.log"))"
    exit 0
  fi
  tar -C "$rootfs" -c . | "${podman[@]}" import - debian:12 >/dev/null
  rm -rf "$rootfs"
fi
"${podman[@]}" image exists debian:12-slim || "${podman[@]}" tag debian:12 debian:12-slim

if ! "${podman[@]}" build --isolation chroot --pull=never -t "$tag" "$repo" >"$work/build.log" 2>&1; then
  tail -30 "$work/build.log" >&2
  echo "container-build: podman build failed (the whole log: $work/build.log)" >&2
  exit 1
fi

# The image, checked from its files: the binary runs inside its root.
mount="$("${podman[@]}" image mount "$tag")"
trap '"${podman[@]}" image unmount "$tag" >/dev/null 2>&1 || true' EXIT
version="$(chroot "$mount" /usr/bin/ctxguard --version)"
chroot "$mount" /usr/bin/ctxguard wrap --help | grep -q 'ctxguard wrap --client claude-desktop'
chroot "$mount" /bin/sh -c 'command -v node >/dev/null && command -v npx >/dev/null'
[[ -f "$mount/usr/share/ctxguard/ctxguard.yaml" ]]
size="$("${podman[@]}" image inspect --format '{{.Size}}' "$tag")"
echo "container-build: $tag built ($((size / 1024 / 1024)) MiB); in it $version, wrap --help, node and npx"
