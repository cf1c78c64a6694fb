#!/usr/bin/env bash
# Generates the Prisma client (generator "prisma-client") into packages/db/src/generated, offline.
# Skips the work when prisma/schema.prisma and the installed prisma version match the last run (stamp
# file); `--force` regenerates anyway.
#
# Why the env: the Prisma CLI resolves its native schema-engine binary for every command and tries to
# download it when missing, which fails without network access. `prisma generate` never runs that
# binary, so pointing PRISMA_SCHEMA_ENGINE_BINARY at a stub stops the download. The stub fails loudly if
# some command does try to run it (use packages/db-tooling's migrate/migration tooling instead).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCHEMA="$ROOT/prisma/schema.prisma"
OUT="$ROOT/packages/db/src/generated"
STAMP="$OUT/.schema-stamp"
PRISMA="$ROOT/node_modules/.bin/prisma"

if [[ ! -x "$PRISMA" ]]; then
  echo "prisma-generate: $PRISMA not found; run npm install first" >&2
  exit 1
fi

prisma_version="$(node -p 'require(process.argv[1]).version' "$ROOT/node_modules/prisma/package.json")"
hash="$( { cat "$SCHEMA"; echo "prisma@$prisma_version"; } | sha256sum | cut -d' ' -f1)"

if [[ "${1:-}" != "--force" && -f "$STAMP" && -f "$OUT/client.ts" && "$(cat "$STAMP")" == "$hash" ]]; then
  echo "prisma-generate: client is up to date ($OUT)"
  exit 0
fi

if [[ -z "${PRISMA_SCHEMA_ENGINE_BINARY:-}" || ! -e "${PRISMA_SCHEMA_ENGINE_BINARY}" ]]; then
  stub="${TMPDIR:-/tmp}/loopsmith-schema-engine-stub"
  if [[ ! -x "$stub" ]]; then
    printf '#!/bin/sh\necho "schema-engine stub: the native Prisma schema engine is not installed here; see packages/db-tooling/README.md" >&2\nexit 1\n' >"$stub.$$"
    chmod +x "$stub.$$"
    mv -f "$stub.$$" "$stub"
  fi
  export PRISMA_SCHEMA_ENGINE_BINARY="$stub"
fi
export CHECKPOINT_DISABLE=1          # no update/telemetry check
export PRISMA_HIDE_UPDATE_MESSAGE=1
export PRISMA_ENGINES_CHECKSUM_IGNORE_MISSING=1

cd "$ROOT"
"$PRISMA" generate --schema "$SCHEMA"
echo "$hash" >"$STAMP"
