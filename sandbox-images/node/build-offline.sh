#!/usr/bin/env bash
# Builds the Node sandbox image without a registry: the Python sandbox image's file system (Debian
# bookworm with python3, which runs the sandbox bootstrap) minus its Python libraries, plus this host's
# Node 20 and npm, TypeScript (typescript.version) from the npm registry, and the TypeScript loader here.
# The same layout as the Dockerfile beside this script. Seconds, not minutes: no debootstrap.
# Usage: build-offline.sh ROOTFS_DIR TAG BASE_IMAGE   (ROOTFS_DIR is scratch space, deleted afterwards)
# Needs the docker CLI, node and npm on the host (NODE_BIN overrides `command -v node`).
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 ROOTFS_DIR TAG BASE_IMAGE" >&2
  exit 2
fi
rootfs=$1
tag=$2
base=$3
here=$(cd "$(dirname "$0")" && pwd)
node_bin=${NODE_BIN:-$(command -v node)}
npm_dir=$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)
ts_version=$(tr -d '[:space:]' < "$here/typescript.version")

if [[ -e $rootfs && -n $(ls -A "$rootfs") ]]; then
  echo "$rootfs exists and is not empty" >&2
  exit 2
fi
mkdir -p "$rootfs"
cid=""
trap 'rm -rf --one-file-system "$rootfs"; [[ -z $cid ]] || docker rm -f "$cid" >/dev/null 2>&1 || true' EXIT

cid=$(docker create "$base" true)
docker export "$cid" | tar -C "$rootfs" -x --numeric-owner
docker rm "$cid" >/dev/null
cid=""
# The Python libraries serve Python goals; this image keeps only the interpreter the bootstrap needs.
rm -rf "$rootfs"/usr/lib/python3/dist-packages/* "$rootfs"/usr/share/python3-* 2>/dev/null || true

install -d "$rootfs/usr/local/bin" "$rootfs/usr/local/lib/node_modules" "$rootfs/opt/loopsmith"
install -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
# node needs libstdc++ and libgcc_s; the base has them through numpy's dependencies, or not.
for lib in $(ldd "$node_bin" | awk '/=> \//{print $3}'); do
  [[ -e $rootfs$lib ]] || { install -d "$rootfs$(dirname "$lib")"; cp -L "$lib" "$rootfs$lib"; }
done
cp -a "$npm_dir" "$rootfs/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"

pack=$(mktemp -d)
(cd "$pack" && npm pack --silent "typescript@$ts_version" >/dev/null)
install -d "$rootfs/usr/local/lib/node_modules/typescript"
tar -C "$rootfs/usr/local/lib/node_modules/typescript" -xzf "$pack"/typescript-*.tgz --strip-components=1 --no-same-owner
rm -rf "$pack"
ln -s ../lib/node_modules/typescript/bin/tsc "$rootfs/usr/local/bin/tsc"
install -m 0644 "$here/ts-hooks.mjs" "$here/ts-register.mjs" "$rootfs/opt/loopsmith/"

tar --numeric-owner -C "$rootfs" -c . | docker import \
  --change 'USER 10001' \
  --change 'WORKDIR /work' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 NODE_ENV=test' \
  --change 'CMD ["node"]' \
  - "$tag"
