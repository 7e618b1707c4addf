#!/usr/bin/env bash
# The project's one test command. It starts what the tests need that is not
# already answering (a local redis-server on 127.0.0.1:6379, a 3-master Redis
# Cluster on 127.0.0.1:7000-7002, PostgreSQL on 127.0.0.1:5432, Debian's
# Chromium for the browser test),
# then runs the linters, every test with the
# race detector against miniredis, real Redis and the Cluster, and a short run
# of every fuzz target.
#
# Under CI=true a test that needs a server fails when the server is missing;
# it never skips.
#
#   FUZZTIME=50000x  how many inputs each fuzz target runs (0 skips the fuzz
#                     runs). A count, not a duration: Go 1.26's fuzzer can fail a
#                     duration-bounded run with "context deadline exceeded" as the
#                     time runs out, with no failing input (go.dev/issue/75804,
#                     fixed in Go 1.27); a count never races that deadline.
set -euo pipefail
cd "$(dirname "$0")/.."

export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
FUZZTIME="${FUZZTIME:-50000x}"
STATICCHECK_VERSION=v0.8.2
work="$(mktemp -d)"
started=()

cleanup() {
  for pidfile in "${started[@]}"; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

need_redis_server() {
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing redis-server with apt-get"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  else
    echo "redis-server is needed: install it (Debian: apt-get install redis-server)" >&2
    exit 1
  fi
}

redis_up() { redis-cli -u "$1" ping 2>/dev/null | grep -q PONG; }

# start_redis PORT [ARGS...]: a throwaway, memory-only redis-server on
# 127.0.0.1:PORT, stopped when this script ends.
start_redis() {
  local port=$1
  shift
  redis-server --daemonize yes --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
    --dir "$work" --pidfile "$work/redis-$port.pid" --logfile "$work/redis-$port.log" "$@" >/dev/null
  started+=("$work/redis-$port.pid")
  for _ in $(seq 50); do
    redis_up "redis://127.0.0.1:$port" && return
    sleep 0.1
  done
  echo "redis-server on port $port did not start:" >&2
  cat "$work/redis-$port.log" >&2
  exit 1
}

need_redis_server
if ! redis_up "$REDIS_URL"; then
  # Only a Redis on this machine is ours to start.
  if [[ "$REDIS_URL" =~ ^redis://(127\.0\.0\.1|localhost):([0-9]+)(/[0-9]*)?$ ]]; then
    echo "no Redis answers at $REDIS_URL: starting one"
    start_redis "${BASH_REMATCH[2]}"
  else
    echo "no Redis answers at $REDIS_URL" >&2
    exit 1
  fi
fi

# A 3-master Redis Cluster for the tests that need one. A cluster that
# already answers with cluster_state:ok is used as it is.
export REDIS_CLUSTER_ADDRS="${REDIS_CLUSTER_ADDRS:-127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002}"
cluster_ok() { redis-cli -h "$1" -p "$2" cluster info 2>/dev/null | grep -q 'cluster_state:ok'; }
first=${REDIS_CLUSTER_ADDRS%%,*}
if ! cluster_ok "${first%:*}" "${first#*:}"; then
  nodes=()
  for addr in ${REDIS_CLUSTER_ADDRS//,/ }; do
    host=${addr%:*} port=${addr#*:}
    if [ "$host" != 127.0.0.1 ] && [ "$host" != localhost ]; then
      echo "no Redis Cluster answers at $REDIS_CLUSTER_ADDRS" >&2
      exit 1
    fi
    if redis_up "redis://$addr"; then
      echo "port $port answers but is not an ok cluster node: stop it or set REDIS_CLUSTER_ADDRS" >&2
      exit 1
    fi
    start_redis "$port" --cluster-enabled yes --cluster-config-file "$work/nodes-$port.conf" --cluster-node-timeout 5000
    nodes+=("$addr")
  done
  echo "starting a Redis Cluster on ${nodes[*]}"
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$work/cluster-create.log" 2>&1 || {
    cat "$work/cluster-create.log" >&2
    exit 1
  }
  for _ in $(seq 100); do
    ok=1
    for addr in "${nodes[@]}"; do cluster_ok "${addr%:*}" "${addr#*:}" || ok=0; done
    [ $ok = 1 ] && break
    sleep 0.1
  done
  [ $ok = 1 ] || { echo "the Redis Cluster did not reach cluster_state:ok" >&2; exit 1; }
fi

# PostgreSQL for pgstore and the durability tests: the machine's cluster on
# 127.0.0.1:5432, started (or installed, as root, from Debian's packages) when
# it does not answer, with a database "test" that trusts local connections.
export PGSTORE_DSN="${PGSTORE_DSN:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}"
pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
if ! pg_up; then
  if ! command -v pg_ctlcluster >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "installing postgresql with apt-get"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    else
      echo "PostgreSQL is needed on 127.0.0.1:5432 (Debian: apt-get install postgresql)" >&2
      exit 1
    fi
  fi
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  echo "starting PostgreSQL $version"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  for _ in $(seq 100); do pg_up && break; sleep 0.1; done
  pg_up || { echo "PostgreSQL did not start on 127.0.0.1:5432" >&2; exit 1; }
fi
if ! psql "$PGSTORE_DSN" -qtAc 'select 1' >/dev/null 2>&1; then
  # A fresh install: trust local TCP connections and create the database.
  if [ "$(id -u)" = 0 ]; then
    hba=$(su postgres -c "psql -qtAc 'show hba_file'")
    grep -q '^host all all 127.0.0.1/32 trust' "$hba" || sed -i '1i host all all 127.0.0.1/32 trust' "$hba"
    su postgres -c "psql -qtAc 'select pg_reload_conf()'" >/dev/null
    su postgres -c "createdb test" 2>/dev/null || true
  fi
  psql "$PGSTORE_DSN" -qtAc 'select 1' >/dev/null || { echo "cannot connect to $PGSTORE_DSN" >&2; exit 1; }
fi

# Debian's Chromium for the example server's browser test.
if [ -x scripts/need-chromium.sh ]; then
  if ! scripts/need-chromium.sh; then
    [ "${CI:-}" = true ] && exit 1
    echo "continuing without Chromium: the browser test will skip"
  fi
fi

modules=$(git ls-files 'go.mod' '*/go.mod' 2>/dev/null || echo go.mod)

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi

echo "== go vet, staticcheck"
for mod in $modules; do
  (cd "$(dirname "$mod")" && go vet ./... && go run "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" ./...)
done

echo "== go test -race (miniredis and $REDIS_URL)"
for mod in $modules; do
  (cd "$(dirname "$mod")" && go test -race -count=1 ./...)
done

echo "== bench tool smoke run (small N on $REDIS_URL; figures not checked)"
go run ./examples/bench -members 20000 -d 300ms -c 1,16 -format md > /dev/null

if [ "$FUZZTIME" != 0 ]; then
  echo "== fuzz ($FUZZTIME each)"
  # Every "func FuzzX(" in a _test.go file is a target.
  git ls-files '*_test.go' | xargs grep -l '^func Fuzz' | while read -r file; do
    dir=$(dirname "$file")
    for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | cut -d' ' -f2); do
      echo "-- $dir $target"
      (cd "$dir" && go test -run='^$' -fuzz="^${target}\$" -fuzztime="$FUZZTIME" .)
    done
  done
fi
echo "all checks passed"
