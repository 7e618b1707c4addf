#!/usr/bin/env bash
# The project's one test command (make test). It runs the linters, every
# test with the race detector against miniredis, a real Redis, a Redis
# Cluster and PostgreSQL, a smoke run of the benchmark tool, and a short run
# of every fuzz target.
#
# First it makes sure the servers the tests need answer, and it says what it
# will do before doing it:
#   - Redis: installs Debian's redis-server with apt-get when redis-server is
#     missing (as root); starts a throwaway, memory-only redis-server on
#     REDIS_URL's port (default 127.0.0.1:6379) when none answers there, a
#     replica of it on REDIS_REPLICA_ADDR (default 127.0.0.1:6380) when
#     none answers there, and six on 127.0.0.1:7000-7005 made into a
#     Cluster of three masters (REDIS_CLUSTER_ADDRS) with a replica each
#     (each master's port + 3) when no Cluster answers; they run from a
#     temp dir and stop when this script ends.
#   - PostgreSQL: installs Debian's postgresql with apt-get when missing (as
#     root); starts the machine's PostgreSQL cluster when none answers on
#     127.0.0.1:5432 (it keeps running); and when the database "test" does
#     not let user postgres in from 127.0.0.1, adds the line
#     "host all all 127.0.0.1/32 trust" at the top of pg_hba.conf (any local
#     TCP connection, any user, any database, no password), reloads
#     PostgreSQL and creates the database. Those changes stay.
#   - Chromium: installs Debian's chromium with apt-get (about 114 packages,
#     350 MB) for the browser test of examples/server (scripts/need-chromium.sh).
#
#   - Go modules: fetches the ones the checks build from the Go module
#     proxy into Go's module cache when they are missing.
#
#   NO_INSTALL=1     install nothing and change nothing on the machine: no
#                    apt-get, no pg_hba.conf, no database created, no
#                    PostgreSQL started (Go modules are still fetched into
#                    Go's own cache: nothing builds without them). It still starts throwaway
#                    redis-servers when redis-server is on PATH. A part that
#                    is missing is named here, and the tests that need it
#                    skip (make test-local is the same).
#   CI=true          a missing part fails the run instead; tests that need a
#                    server fail when it is missing, never skip (.ci/run).
#   FUZZTIME=50000x  how many inputs each fuzz target runs (0 skips the fuzz
#                    runs). A count, not a duration: Go 1.26's fuzzer can fail a
#                    duration-bounded run with "context deadline exceeded" as the
#                    time runs out, with no failing input (go.dev/issue/75804,
#                    fixed in Go 1.27); a count never races that deadline.
set -euo pipefail
cd "$(dirname "$0")/.."

export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
export REDIS_CLUSTER_ADDRS="${REDIS_CLUSTER_ADDRS:-127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002}"
export REDIS_REPLICA_ADDR="${REDIS_REPLICA_ADDR:-127.0.0.1:6380}"
export PGSTORE_DSN="${PGSTORE_DSN:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}"
FUZZTIME="${FUZZTIME:-50000x}"
NO_INSTALL="${NO_INSTALL:-}"
STATICCHECK_VERSION=v0.8.2
work="$(mktemp -d)"
started=()
missing=()

# cleanup stops the servers this run started and removes their directory.
# A redis-server writes its log and, in a Cluster, its nodes file while it
# shuts down after SIGTERM: the directory goes only once every one has
# exited, or rm races those writes ("Directory not empty").
cleanup() {
  local pids=() pid
  for pidfile in "${started[@]}"; do
    [ -f "$pidfile" ] && pids+=("$(cat "$pidfile")")
  done
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  done
  rm -rf "$work" 2>/dev/null || { sleep 1; rm -rf "$work"; } || echo "warning: could not remove $work" >&2
}
trap cleanup EXIT

# redact hides the user part of a URL or DSN (user:password@) before it is printed.
redact() { sed -E 's#(://).*@#\1xxxxx@#' <<<"$1"; }

may_install() { [ -z "$NO_INSTALL" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; }

# apt_install PACKAGE WHAT: installs a Debian package, saying so first.
apt_install() {
  echo "installing $1 with apt-get ($2)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null
}

# missing_part WHAT: a part the tests need is not there and will not be set up.
missing_part() {
  echo "MISSING: $1: the tests that need it skip (they fail under CI=true)"
  missing+=("$1")
}

# inline HOST PORT COMMAND: a Redis's reply to an inline command, without
# redis-cli (which may not be installed yet).
inline() {
  timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2" && printf "%s\r\nQUIT\r\n" "$3" >&3 && cat <&3' _ "$@" 2>/dev/null || true
}
# hostport URL: "host port" of a redis:// URL.
hostport() {
  local hp=${1#*://}
  hp=${hp##*@} hp=${hp%%/*} hp=${hp%%\?*}
  echo "${hp%:*} ${hp##*:}"
}
redis_up() {
  if command -v redis-cli >/dev/null; then
    redis-cli -u "$1" ping 2>/dev/null | grep -q PONG
  else
    # shellcheck disable=SC2046
    inline $(hostport "$1") PING | grep -Eq '^(\+PONG|-NOAUTH)'
  fi
}
cluster_ok() { inline "$1" "$2" "CLUSTER INFO" | grep -q 'cluster_state:ok'; }
pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
pg_test_db() { psql "$PGSTORE_DSN" -qtAc 'select 1' >/dev/null 2>&1; }
# local_url URL: a Redis URL on this machine with a port (BASH_REMATCH[2]).
local_url() { [[ "$1" =~ ^redis://(127\.0\.0\.1|localhost):([0-9]+)(/[0-9]*)?$ ]]; }
is_local() { [ "$1" = 127.0.0.1 ] || [ "$1" = localhost ]; }

# start_redis PORT [ARGS...]: a throwaway, memory-only redis-server on
# 127.0.0.1:PORT, stopped when this script ends. Each has a dump file name
# of its own: a replica saves the RDB its primary sends, which a server
# started later in the same directory would load.
start_redis() {
  local port=$1
  shift
  redis-server --daemonize yes --bind 127.0.0.1 --port "$port" --save "" --appendonly no --dbfilename "dump-$port.rdb" \
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

# The plan: what answers, and what this run will install, start or change.
plan_redis=""    # "": answers; start; remote: not ours to start; none: no redis-server
plan_cluster=""  # "": answers; start; none: no redis-server
plan_replica=""  # "": answers; start; none: not ours to start, or no redis-server
redis_install="" # 1: apt-get install redis-server first
plan_pg=""       # "": answers; install; start; none
plan_pg_db=""    # "": lets us in; trust: will edit pg_hba.conf; maybe: will see; none
plan_chromium="" # "": there; install; none
may_change() { [ -z "$NO_INSTALL" ] && [ "$(id -u)" = 0 ]; }
make_plan() {
  local first=${REDIS_CLUSTER_ADDRS%%,*} server=1
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null || server=0
  if ! redis_up "$REDIS_URL"; then
    if local_url "$REDIS_URL"; then plan_redis=start; else plan_redis=remote; fi
  fi
  cluster_ok "${first%:*}" "${first#*:}" || plan_cluster=start
  if ! redis_up "redis://$REDIS_REPLICA_ADDR"; then
    if local_url "$REDIS_URL" && is_local "${REDIS_REPLICA_ADDR%:*}"; then plan_replica=start; else plan_replica=none; fi
  fi
  if [ $server = 0 ] && { [ "$plan_redis" = start ] || [ "$plan_cluster" = start ] || [ "$plan_replica" = start ]; }; then
    if may_install; then
      redis_install=1
    else
      [ "$plan_redis" = start ] && plan_redis=none
      [ "$plan_cluster" = start ] && plan_cluster=none
      [ "$plan_replica" = start ] && plan_replica=none
    fi
  fi
  if ! pg_up; then
    if command -v pg_ctlcluster >/dev/null && may_change; then plan_pg=start
    elif may_install; then plan_pg=install
    else plan_pg=none; fi
  fi
  if [ "$plan_pg" = none ]; then :
  elif [ -n "$plan_pg" ]; then plan_pg_db=maybe
  elif ! pg_test_db; then
    if may_change; then plan_pg_db=trust; else plan_pg_db=none; fi
  fi
  if [ ! -x "${CHROME_PATH:-/usr/bin/chromium}" ]; then
    if [ -z "${CHROME_PATH:-}" ] && may_install; then plan_chromium=install; else plan_chromium=none; fi
  fi
}

trust_line="add 'host all all 127.0.0.1/32 trust' at the top of pg_hba.conf (no password for any local TCP connection), reload PostgreSQL and create the database test; these stay"

print_plan() {
  if [ -n "$NO_INSTALL" ]; then
    echo "== setup (NO_INSTALL is set: nothing is installed, and nothing on the machine changed)"
  else
    echo "== setup (NO_INSTALL=1 installs and changes nothing; scripts/test.sh says what this does)"
  fi
  [ -n "$redis_install" ] && echo "  Redis: will install Debian's redis-server with apt-get (redis-server is missing)"
  case "$plan_redis" in
    start) echo "  Redis: will start a throwaway redis-server for $(redact "$REDIS_URL") (stopped at the end)" ;;
    remote) echo "  Redis: nothing answers at $(redact "$REDIS_URL"), which is not on this machine: not ours to start" ;;
    none) echo "  Redis: nothing answers at $(redact "$REDIS_URL"), and redis-server is not installed, and will not be (NO_INSTALL, or not root)" ;;
    *) echo "  Redis: answers at $(redact "$REDIS_URL")" ;;
  esac
  case "$plan_replica" in
    start) echo "  Redis replica: will start a throwaway redis-server on $REDIS_REPLICA_ADDR replicating $(redact "$REDIS_URL") (stopped at the end)" ;;
    none) echo "  Redis replica: nothing answers at $REDIS_REPLICA_ADDR, and none will be started (REDIS_URL or the address is not on this machine, or no redis-server)" ;;
    *) echo "  Redis replica: answers at $REDIS_REPLICA_ADDR" ;;
  esac
  case "$plan_cluster" in
    start) echo "  Redis Cluster: will start six throwaway redis-servers, the masters on $REDIS_CLUSTER_ADDRS and a replica of each on its port + 3 (stopped at the end)" ;;
    none) echo "  Redis Cluster: nothing answers at $REDIS_CLUSTER_ADDRS, and redis-server is not installed, and will not be" ;;
    *) echo "  Redis Cluster: answers at $REDIS_CLUSTER_ADDRS" ;;
  esac
  case "$plan_pg" in
    install) echo "  PostgreSQL: will install Debian's postgresql with apt-get and start it (it keeps running)" ;;
    start) echo "  PostgreSQL: will start the machine's PostgreSQL cluster (it keeps running)" ;;
    none) echo "  PostgreSQL: nothing answers on 127.0.0.1:5432, and nothing will be installed or started (NO_INSTALL, or not root)" ;;
    *) echo "  PostgreSQL: answers on 127.0.0.1:5432" ;;
  esac
  case "$plan_pg_db" in
    trust) echo "  PostgreSQL: $(redact "$PGSTORE_DSN") does not let us in: will $trust_line" ;;
    maybe) echo "  PostgreSQL: if $(redact "$PGSTORE_DSN") then does not let us in, will $trust_line" ;;
    none) echo "  PostgreSQL: $(redact "$PGSTORE_DSN") does not let us in, and pg_hba.conf will not be changed (NO_INSTALL, or not root)" ;;
  esac
  case "$plan_chromium" in
    install) echo "  Chromium: will install Debian's chromium with apt-get (about 114 packages, 350 MB) for one browser test" ;;
    none) echo "  Chromium: ${CHROME_PATH:-/usr/bin/chromium} is missing, and will not be installed" ;;
    *) echo "  Chromium: ${CHROME_PATH:-/usr/bin/chromium}" ;;
  esac
}

setup_redis() {
  [ -n "$redis_install" ] && apt_install redis-server "the tests' Redis"
  if ! command -v redis-server >/dev/null; then
    missing_part "redis-server on PATH (the durability tests start their own)"
  fi
  case "$plan_redis" in
    start)
      local_url "$REDIS_URL" # sets BASH_REMATCH
      echo "starting a redis-server on port ${BASH_REMATCH[2]}"
      start_redis "${BASH_REMATCH[2]}" ;;
    remote) missing_part "Redis at $(redact "$REDIS_URL") (not on this machine, so not ours to start)" ;;
    none) missing_part "Redis at $(redact "$REDIS_URL") (no redis-server; Debian: apt-get install redis-server)" ;;
  esac
  case "$plan_replica" in
    start) setup_replica ;;
    none) missing_part "a replica of $(redact "$REDIS_URL") at $REDIS_REPLICA_ADDR (the replica-read tests)" ;;
  esac
  case "$plan_cluster" in
    start) setup_cluster ;;
    none) missing_part "Redis Cluster at $REDIS_CLUSTER_ADDRS (no redis-server to start one)" ;;
  esac
  return 0
}

# A replica of the tests' standalone Redis, for the replica-read tests.
setup_replica() {
  local_url "$REDIS_URL" # sets BASH_REMATCH
  local primary=${BASH_REMATCH[2]} port=${REDIS_REPLICA_ADDR#*:}
  echo "starting a replica of port $primary on port $port"
  start_redis "$port" --replicaof 127.0.0.1 "$primary"
  for _ in $(seq 100); do
    inline 127.0.0.1 "$port" "INFO replication" | grep -q 'master_link_status:up' && return
    sleep 0.1
  done
  echo "the replica on port $port did not reach its primary" >&2
  exit 1
}

# A 3-master Redis Cluster with a replica each (on each master's port + 3)
# for the tests that need one.
setup_cluster() {
  local nodes=() replicas=() addr host port
  for addr in ${REDIS_CLUSTER_ADDRS//,/ }; do
    host=${addr%:*} port=${addr#*:}
    if ! is_local "$host"; then
      missing_part "Redis Cluster at $REDIS_CLUSTER_ADDRS (not on this machine)"
      return
    fi
    if redis_up "redis://$addr"; then
      echo "port $port answers but is not an ok cluster node: stop it or set REDIS_CLUSTER_ADDRS" >&2
      exit 1
    fi
    start_redis "$port" --cluster-enabled yes --cluster-config-file "$work/nodes-$port.conf" --cluster-node-timeout 5000
    start_redis "$((port + 3))" --cluster-enabled yes --cluster-config-file "$work/nodes-$((port + 3)).conf" --cluster-node-timeout 5000
    nodes+=("$addr")
    replicas+=("$host:$((port + 3))")
  done
  echo "starting a Redis Cluster on ${nodes[*]}, with replicas on ${replicas[*]}"
  redis-cli --cluster create "${nodes[@]}" "${replicas[@]}" --cluster-replicas 1 --cluster-yes >"$work/cluster-create.log" 2>&1 || {
    cat "$work/cluster-create.log" >&2
    exit 1
  }
  local ok=0
  for _ in $(seq 100); do
    ok=1
    for addr in "${nodes[@]}" "${replicas[@]}"; do cluster_ok "${addr%:*}" "${addr#*:}" || ok=0; done
    [ $ok = 1 ] && break
    sleep 0.1
  done
  [ $ok = 1 ] || { echo "the Redis Cluster did not reach cluster_state:ok" >&2; exit 1; }
}

# PostgreSQL for pgstore and the durability tests.
setup_postgres() {
  case "$plan_pg" in
    none) missing_part "PostgreSQL on 127.0.0.1:5432 (Debian: apt-get install postgresql)"; return ;;
    install) apt_install postgresql "pgstore's tests" ;;
  esac
  if [ -n "$plan_pg" ]; then
    local version
    version=$(ls /etc/postgresql | sort -V | tail -n 1)
    echo "starting PostgreSQL $version"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
    for _ in $(seq 100); do pg_up && break; sleep 0.1; done
    pg_up || { missing_part "PostgreSQL on 127.0.0.1:5432 (it did not start)"; return; }
  fi
  pg_test_db && return
  if may_change; then
    echo "PostgreSQL: $(redact "$PGSTORE_DSN") does not let us in: going to $trust_line"
    local hba
    hba=$(su postgres -c "psql -qtAc 'show hba_file'")
    grep -q '^host all all 127.0.0.1/32 trust' "$hba" || sed -i '1i host all all 127.0.0.1/32 trust' "$hba"
    su postgres -c "psql -qtAc 'select pg_reload_conf()'" >/dev/null
    su postgres -c "createdb test" 2>/dev/null || true
  fi
  pg_test_db || missing_part "PostgreSQL database at $(redact "$PGSTORE_DSN") (cannot connect)"
}

# Debian's Chromium for the example server's browser test.
setup_chromium() {
  case "$plan_chromium" in
    none) missing_part "Chromium at ${CHROME_PATH:-/usr/bin/chromium} (Debian: apt-get install chromium, or set CHROME_PATH)" ;;
    install) scripts/need-chromium.sh || missing_part "Chromium (apt-get install chromium failed)" ;;
  esac
}

make_plan
print_plan
setup_redis
setup_postgres
setup_chromium
if [ ${#missing[@]} -gt 0 ] && [ "${CI:-}" = true ]; then
  echo "CI=true: every part is required; missing: ${missing[*]}" >&2
  exit 1
fi

modules=$(git ls-files 'go.mod' '*/go.mod' 2>/dev/null || echo go.mod)

# The Go modules every check builds, fetched here, under their own header,
# rather than in the middle of the first check that needs them: Go's module
# cache (go env GOMODCACHE) keeps them, so this prints nothing once they are
# there. Under NO_INSTALL too: without them nothing can be checked. Each
# module is fetched as the workspace (go.work) builds it and as it builds on
# its own (GOWORK=off), which can pick other versions (golang.org/x/sys:
# v0.48.0 in the workspace, which examples/bench needs, v0.47.0 alone), so
# that no check, whichever way it is run, downloads in its midst.
echo "== Go modules (from the Go module proxy, into Go's module cache, when missing)"
for mod in $modules; do
  (cd "$(dirname "$mod")" && go list -deps -test ./... >/dev/null && GOWORK=off go list -deps -test ./... >/dev/null)
done
go run "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" -version >/dev/null

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

echo "== go test -race (miniredis and $(redact "$REDIS_URL"))"
# The root package runs every test body on miniredis, Redis and the
# Cluster under the race detector: 15 to 25 minutes on a loaded 2-CPU
# machine, past go test's default limit of 10; 45 leaves room, and a test
# that hangs still ends the run.
for mod in $modules; do
  (cd "$(dirname "$mod")" && go test -race -count=1 -timeout 45m ./...)
done

if redis_up "$REDIS_URL" 2>/dev/null; then
  echo "== bench tool smoke run (small N on $(redact "$REDIS_URL"); figures not checked)"
  go run ./examples/bench -members 20000 -d 300ms -rounds 1 -c 1,16 -format md >/dev/null
else
  echo "== bench tool smoke run: skipped, no Redis at $(redact "$REDIS_URL")"
fi

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
if [ ${#missing[@]} -gt 0 ]; then
  echo "checks passed, WITHOUT: ${missing[*]}: the tests that need them were skipped"
else
  echo "all checks passed"
fi
