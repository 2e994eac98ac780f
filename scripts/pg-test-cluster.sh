#!/usr/bin/env bash
# A private PostgreSQL 15 cluster for the tests (Debian's postgresql package): initdb in a
# temporary directory, on a free loopback port, run as the `postgres` user when started by root.
#   eval "$(bash scripts/pg-test-cluster.sh start)"   # exports SCHEMAGATE_TEST_POSTGRES_URL, PG_TEST_DIR
#   bash scripts/pg-test-cluster.sh stop "$PG_TEST_DIR"
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { echo "pg-test-cluster: PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
start)
  dir=$(mktemp -d /tmp/schemagate-pg.XXXXXX)
  if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$dir"; fi
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
  # TLS on offer (a self-signed certificate), so that URLs with ?sslmode=require are tested too.
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
    -keyout "$dir/data/server.key" -out "$dir/data/server.crt" >/dev/null 2>&1
  chmod 600 "$dir/data/server.key"
  if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$dir/data/server.key" "$dir/data/server.crt"; fi
  echo "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=on -c max_connections=200 -c ssl=on" >"$dir/options"
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$(cat "$dir/options")" start >/dev/null ||
    { cat "$dir/server.log" >&2; exit 1; }
  as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres schemagate_test
  echo "export SCHEMAGATE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$port/schemagate_test"
  echo "export PG_TEST_DIR=$dir PG_TEST_PORT=$port PG_TEST_BIN=$bin"
  ;;
stop)
  dir=${2:?usage: pg-test-cluster.sh stop DIR}
  as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  ;;
down) # the server stops, the cluster stays
  dir=${2:?usage: pg-test-cluster.sh down DIR}
  as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
  ;;
up)
  dir=${2:?usage: pg-test-cluster.sh up DIR}
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$(cat "$dir/options")" start >/dev/null
  ;;
restart)
  dir=${2:?usage: pg-test-cluster.sh restart DIR}
  as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$(cat "$dir/options")" start >/dev/null
  ;;
*)
  echo "usage: pg-test-cluster.sh start | stop DIR | down DIR | up DIR | restart DIR" >&2
  exit 2
  ;;
esac
