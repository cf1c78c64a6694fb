#!/usr/bin/env bash
# Builds the sandbox image without a registry: debootstrap a bookworm rootfs from Debian's archive and
# `docker import` it with the same user, env and workdir as the Dockerfile beside this script.
# Usage: build-offline.sh ROOTFS_DIR TAG   (ROOTFS_DIR is scratch space and is deleted afterwards)
# Needs root (debootstrap, chroot) and the docker CLI. DEBIAN_MIRROR overrides the archive.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 ROOTFS_DIR TAG" >&2
  exit 2
fi
rootfs=$1
tag=$2
here=$(cd "$(dirname "$0")" && pwd)
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

# The directory is removed at exit, so never accept one that already holds something.
if [[ -e $rootfs && -n $(ls -A "$rootfs") ]]; then
  echo "$rootfs exists and is not empty" >&2
  exit 2
fi
mkdir -p "$rootfs"
# --one-file-system: if debootstrap died with /proc or /sys still mounted inside, do not descend into them.
trap 'rm -rf --one-file-system "$rootfs"' EXIT

include=$(grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$here/packages.txt" | paste -sd, -)
echo "debootstrap bookworm (minbase) with: $include"
debootstrap --variant=minbase --include="$include" bookworm "$rootfs" "$mirror"

chroot "$rootfs" groupadd -g 10001 sandbox
chroot "$rootfs" useradd -u 10001 -g 10001 -M -d /work -s /usr/sbin/nologin sandbox
install -d -o 10001 -g 10001 -m 0755 "$rootfs/work"

# Nothing in the sandbox installs packages or reads documentation; the test suites shipped inside
# numpy and pandas are tens of megabytes that no analysis script imports.
rm -rf "$rootfs"/var/cache/apt/* "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/* \
  "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
  "$rootfs"/usr/share/locale/* "$rootfs"/var/cache/debconf/*-old
find "$rootfs"/usr/lib/python3/dist-packages/numpy "$rootfs"/usr/lib/python3/dist-packages/pandas \
  -depth -type d -name tests -exec rm -rf {} +

tar --numeric-owner -C "$rootfs" -c . | docker import \
  --change 'USER 10001' \
  --change 'WORKDIR /work' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 LANG=C.UTF-8' \
  --change 'CMD ["python3"]' \
  - "$tag"
