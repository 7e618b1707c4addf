#!/usr/bin/env bash
# The project's one test command. It starts what the tests need that is not
# already answering (a local redis-server on 127.0.0.1:6379), then runs the
# linters, every test with the race detector against miniredis AND real Redis,
# and a short run of every fuzz target.
#
# Under CI=true a test that needs a server fails when the server is missing;
# it never skips.
#
#   FUZZTIME=10s   how long each fuzz target runs (0 skips the fuzz runs)
set -euo pipefail
cd "$(dirname "$0")/.."

export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
FUZZTIME="${FUZZTIME:-10s}"
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

# start_redis PORT: a throwaway, memory-only redis-server on 127.0.0.1:PORT.
start_redis() {
  local port=$1
  redis-server --daemonize yes --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
    --dir "$work" --pidfile "$work/redis-$port.pid" --logfile "$work/redis-$port.log" >/dev/null
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
