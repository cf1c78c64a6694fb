#!/usr/bin/env bash
# Makes sure everything LoopSmith needs is here and running: Postgres, Redis, a Docker engine, npm
# dependencies, the generated Prisma client, the database schema and the sandbox image.
# On a Debian machine as root it installs what is missing from Debian's packages and starts it;
# elsewhere it says exactly what is missing and how to provide it, and exits non-zero.
# Idempotent: with everything up it returns in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

DATABASE_URL="${DATABASE_URL:-postgresql://postgres:postgres@127.0.0.1:5432/loopsmith}"
REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
export DATABASE_URL REDIS_URL

started=$(date +%s)
say() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

can_install=false
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && [ -f /etc/debian_version ]; then can_install=true; fi

apt_updated=false
apt_install() {
  $can_install || return 1
  if ! $apt_updated; then
    say "apt-get update"
    apt-get update -qq >/dev/null
    apt_updated=true
  fi
  say "installing Debian packages: $*"
  if ! DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1 apt-get install -y -qq "$@" >/tmp/loopsmith-apt.log 2>&1; then
    tail -20 /tmp/loopsmith-apt.log >&2
    return 1
  fi
}

# host and port out of a URL like scheme://user:pass@host:port/db
url_host() { local r="${1#*://}"; r="${r#*@}"; r="${r%%/*}"; echo "${r%:*}"; }
url_port() { local r="${1#*://}"; r="${r#*@}"; r="${r%%/*}"; [[ "$r" == *:* ]] && echo "${r##*:}" || echo "$2"; }
is_local() { case "$1" in 127.0.0.1|localhost|::1) return 0;; *) return 1;; esac; }

wait_for() { # wait_for SECONDS CMD...
  local n=$1; shift
  for _ in $(seq 1 "$((n * 4))"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.25; done
  return 1
}

# ---------------------------------------------------------------- Postgres
pg_host=$(url_host "$DATABASE_URL"); pg_port=$(url_port "$DATABASE_URL" 5432)
pg_up() { (exec 3<>"/dev/tcp/$pg_host/$pg_port") 2>/dev/null; }
if ! pg_up; then
  is_local "$pg_host" || die "Postgres at $pg_host:$pg_port is not reachable. Start it, or set DATABASE_URL to a reachable server."
  if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    apt_install postgresql || die "Postgres is not installed. Install PostgreSQL 15+ (Debian: apt-get install postgresql) or set DATABASE_URL."
  fi
  command -v pg_lsclusters >/dev/null || die "pg_lsclusters not found: start Postgres on $pg_host:$pg_port yourself or set DATABASE_URL."
  cluster=$(pg_lsclusters -h | awk -v p="$pg_port" '$3==p {print $1" "$2; exit}')
  if [ -z "$cluster" ]; then
    ver=$(ls /usr/lib/postgresql | sort -V | tail -1)
    say "creating Postgres $ver cluster on port $pg_port"
    pg_createcluster "$ver" main --port "$pg_port" >/dev/null
    cluster="$ver main"
  fi
  say "starting Postgres cluster $cluster"
  # shellcheck disable=SC2086
  pg_ctlcluster $cluster start || true
  wait_for 30 pg_up || die "Postgres did not come up on $pg_host:$pg_port (see /var/log/postgresql)."
  # A fresh cluster only allows peer auth for postgres: give it the password the default URL uses.
  pg_user=$(echo "$DATABASE_URL" | sed -E 's#^[a-z]+://([^:@/]+).*#\1#')
  pg_pass=$(echo "$DATABASE_URL" | sed -nE 's#^[a-z]+://[^:@/]+:([^@]*)@.*#\1#p')
  if [ "$pg_user" = postgres ] && [ -n "$pg_pass" ]; then
    su postgres -c "psql -p $pg_port -qc \"ALTER USER postgres PASSWORD '$pg_pass'\"" >/dev/null
  fi
fi
say "Postgres: up at $pg_host:$pg_port"

# ---------------------------------------------------------------- Redis
rd_host=$(url_host "$REDIS_URL"); rd_port=$(url_port "$REDIS_URL" 6379)
redis_up() {
  local reply
  exec 3<>"/dev/tcp/$rd_host/$rd_port" || return 1
  printf 'PING\r\n' >&3
  read -r -t 2 reply <&3 || true
  exec 3>&-
  [[ "$reply" == +PONG* || "$reply" == -NOAUTH* ]]
}
if ! redis_up 2>/dev/null; then
  is_local "$rd_host" || die "Redis at $rd_host:$rd_port is not reachable. Start it, or set REDIS_URL."
  if ! command -v redis-server >/dev/null; then
    apt_install redis-server || die "Redis is not installed. Install Redis 7 (Debian: apt-get install redis-server) or set REDIS_URL."
  fi
  say "starting redis-server on port $rd_port"
  redis-server --port "$rd_port" --bind 127.0.0.1 --daemonize yes --save "" --appendonly no \
    --logfile /tmp/loopsmith-redis.log >/dev/null
  wait_for 15 redis_up || die "Redis did not come up on port $rd_port (see /tmp/loopsmith-redis.log)."
fi
say "Redis: up at $rd_host:$rd_port"

# ---------------------------------------------------------------- Docker engine
docker_up() { docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

# gVisor (runsc): a second wall between the programs and the host's kernel. Registered with the engine as
# runtime "runsc" with --network=none (the sandbox has no network, and gVisor's network setup fails inside
# a VM's root network namespace); the runner takes it wherever the engine offers it (SANDBOX_RUNTIME).
# A running engine reloads its runtimes on SIGHUP, leaving running containers alone.
register_gvisor() {
  [ -z "${DOCKER_HOST:-}" ] || return 0 # a remote engine is its operator's to configure
  if ! command -v runsc >/dev/null; then
    apt_install runsc || { say "no gVisor (runsc): sandboxes run under runc (Debian: apt-get install runsc)"; return 0; }
  fi
  [ "$(id -u)" = 0 ] || { say "gVisor: only root can register runsc with the engine (/etc/docker/daemon.json)"; return 0; }
  local changed
  changed=$(python3 - "$(command -v runsc)" <<'PY'
import json, os, sys
path = "/etc/docker/daemon.json"
try:
    with open(path) as f:
        conf = json.load(f)
except FileNotFoundError:
    conf = {}
want = {"path": sys.argv[1], "runtimeArgs": ["--network=none"]}
if conf.setdefault("runtimes", {}).get("runsc") == want:
    print("no")
else:
    conf["runtimes"]["runsc"] = want
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(conf, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)
    print("yes")
PY
  )
  if [ "$changed" = yes ] && docker_up; then
    say "gVisor: registered runsc, reloading the engine's runtimes"
    pkill -HUP -x dockerd || true
    wait_for 10 sh -c "docker info --format '{{json .Runtimes}}' | grep -q runsc" || say "gVisor: the engine did not pick up runsc (restart dockerd)"
  fi
}
register_gvisor

if ! docker_up; then
  [ -z "${DOCKER_HOST:-}" ] || die "The Docker engine at DOCKER_HOST=$DOCKER_HOST is not reachable."
  if [ ! -x /usr/sbin/dockerd ] && ! command -v dockerd >/dev/null; then
    apt_install docker.io || die "No Docker engine. Install Docker (Debian: apt-get install docker.io) and start dockerd, or set DOCKER_HOST."
  fi
  command -v docker >/dev/null || die "The docker CLI is missing (Debian: apt-get install docker.io)."
  [ "$(id -u)" = 0 ] || die "The Docker engine is not running and only root can start it here: start dockerd, or set DOCKER_HOST."
  say "starting dockerd"
  setsid nohup "$(command -v dockerd || echo /usr/sbin/dockerd)" >/var/log/loopsmith-dockerd.log 2>&1 < /dev/null &
  wait_for 60 docker_up || die "dockerd did not come up (see /var/log/loopsmith-dockerd.log)."
fi
say "Docker engine: $(docker version --format '{{.Server.Version}}'), runtimes $(docker info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}' 2>/dev/null)"

# docker-compose.yml is validated by the test suite with `docker compose config` (or docker-compose v1).
if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null; then
  apt_install docker-compose || say "no docker compose: the compose file test will fail until one is installed"
fi

# ---------------------------------------------------------------- a browser for the console's tests
# The console's end-to-end tests drive Debian's Chromium (playwright-core never downloads a browser).
if [ ! -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]; then
  apt_install chromium || say "no Chromium: the console's browser tests will fail until one is installed (Debian: apt-get install chromium, or set CHROMIUM_PATH)"
fi

# ---------------------------------------------------------------- npm dependencies
lock_hash=$(sha256sum package-lock.json | cut -c1-16)
if [ "$(cat node_modules/.loopsmith-lock 2>/dev/null)" != "$lock_hash" ]; then
  say "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_hash" > node_modules/.loopsmith-lock
else
  say "npm dependencies: up to date"
fi

# ---------------------------------------------------------------- Prisma client + schema
bash scripts/prisma-generate.sh
node --import tsx packages/db-tooling/src/migrate-cli.ts

# ---------------------------------------------------------------- compiled API and runner
# The processes run plain JavaScript (npm run api / runner, the image, the tests that spawn them).
node --import tsx scripts/build.ts

# ---------------------------------------------------------------- sandbox image
if [ -z "${SANDBOX_IMAGE:-}" ]; then
  tag=$(node --import tsx packages/sandbox/src/image-cli.ts tag)
  if ! docker image inspect "$tag" >/dev/null 2>&1; then
    if [ "${LOOPSMITH_SANDBOX_BUILD:-auto}" != dockerfile ] && ! command -v debootstrap >/dev/null; then
      apt_install debootstrap || say "debootstrap is not available: falling back to the Dockerfile build (needs a registry)"
    fi
  fi
  node --import tsx packages/sandbox/src/image-cli.ts ensure
else
  docker image inspect "$SANDBOX_IMAGE" >/dev/null 2>&1 || die "SANDBOX_IMAGE=$SANDBOX_IMAGE does not exist in the Docker engine."
  say "sandbox image: $SANDBOX_IMAGE (from SANDBOX_IMAGE)"
fi

# ---------------------------------------------------------------- Node sandbox image (issue 14)
# JavaScript and TypeScript goals: built from the Python image plus this host's Node and TypeScript from npm.
if [ -z "${SANDBOX_NODE_IMAGE:-}" ]; then
  node --import tsx packages/sandbox/src/image-cli.ts ensure node
else
  docker image inspect "$SANDBOX_NODE_IMAGE" >/dev/null 2>&1 || die "SANDBOX_NODE_IMAGE=$SANDBOX_NODE_IMAGE does not exist in the Docker engine."
  say "Node sandbox image: $SANDBOX_NODE_IMAGE (from SANDBOX_NODE_IMAGE)"
fi

say "ready in $(( $(date +%s) - started ))s"
