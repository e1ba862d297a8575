#!/usr/bin/env bash
# local-postgres.sh: a kept local PostgreSQL cluster for `make run`.
#
#   deploy/local-postgres.sh start   create (first time) and start; last line is the DATABASE_URL
#   deploy/local-postgres.sh stop    stop it
#   deploy/local-postgres.sh status  say whether it runs
#   deploy/local-postgres.sh url     print the DATABASE_URL
#
# Data lives in .data/pg (repo root, gitignored), the socket in .data/pg-socket,
# the log in .data/pg.log. Port: $PGPORT_LOCAL (default 54329), 127.0.0.1 only,
# trust authentication (development only). Binaries: $PG_BIN, else the highest
# /usr/lib/postgresql/*/bin, else `pg_config --bindir`. PostgreSQL refuses to
# run as root, so as root the cluster runs as user postgres (else nobody).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA_DIR="$ROOT/.data"
PGDATA_DIR="$DATA_DIR/pg"
SOCKET_DIR="$DATA_DIR/pg-socket"
LOG_FILE="$DATA_DIR/pg.log"
PORT="${PGPORT_LOCAL:-54329}"
DB_NAME="invoicing"

say() { printf 'local-postgres: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

has_server() { [[ -x "$1/initdb" && -x "$1/postgres" && -x "$1/pg_ctl" ]]; }

find_bin() {
  if [[ -n "${PG_BIN:-}" ]]; then
    has_server "$PG_BIN" || die "PG_BIN=$PG_BIN does not hold initdb, postgres and pg_ctl"
    printf '%s\n' "$PG_BIN"; return
  fi
  local dir
  while IFS= read -r dir; do
    if has_server "$dir"; then printf '%s\n' "$dir"; return; fi
  done < <(compgen -G '/usr/lib/postgresql/*/bin' | sort -t/ -k5,5 -V -r)
  if dir="$(pg_config --bindir 2>/dev/null)" && has_server "$dir"; then
    printf '%s\n' "$dir"; return
  fi
  die "PostgreSQL server binaries not found (looked in \$PG_BIN, /usr/lib/postgresql/*/bin, pg_config --bindir); install PostgreSQL (e.g. apt-get install -y postgresql) or set PG_BIN"
}

# RUN_AS is empty when not root, else the unprivileged user to run the server as.
RUN_AS=""
if [[ "$(id -u)" -eq 0 ]]; then
  for candidate in postgres nobody; do
    if id -u "$candidate" >/dev/null 2>&1; then RUN_AS="$candidate"; break; fi
  done
  [[ -n "$RUN_AS" ]] || die "running as root, which PostgreSQL refuses, and neither user postgres nor nobody exists (useradd --system postgres)"
fi

# as_server runs a command as the user that owns the cluster.
as_server() {
  if [[ -z "$RUN_AS" ]]; then "$@"; return; fi
  if command -v runuser >/dev/null; then
    runuser -u "$RUN_AS" -- "$@"
  else
    su -s /bin/sh "$RUN_AS" -c "$(printf '%q ' "$@")"
  fi
}

BIN="$(find_bin)"

# running_port prints the port of the running postmaster and succeeds, or fails.
running_port() {
  [[ -f "$PGDATA_DIR/postmaster.pid" ]] || return 1
  (cd / && as_server "$BIN/pg_ctl" status -D "$PGDATA_DIR" >/dev/null 2>&1) || return 1
  sed -n 4p "$PGDATA_DIR/postmaster.pid"
}

url() {
  local port
  port="$(running_port)" || port="$PORT"
  printf 'postgres://postgres@127.0.0.1:%s/%s?sslmode=disable\n' "$port" "$DB_NAME"
}

init_cluster() {
  mkdir -p "$PGDATA_DIR" "$SOCKET_DIR"
  chmod 700 "$PGDATA_DIR"
  if [[ -n "$RUN_AS" ]]; then
    chown "$RUN_AS": "$PGDATA_DIR" "$SOCKET_DIR"
    touch "$LOG_FILE" && chown "$RUN_AS": "$LOG_FILE"
    as_server test -w "$PGDATA_DIR" ||
      die "user $RUN_AS cannot write $PGDATA_DIR: a parent directory of $ROOT is not open to it (chmod o+x the parents, or clone the repo elsewhere)"
  fi
  [[ -f "$PGDATA_DIR/PG_VERSION" ]] && return
  say "initialising a new cluster in $PGDATA_DIR (binaries: $BIN)"
  (cd / && as_server env LC_ALL=C "$BIN/initdb" -D "$PGDATA_DIR" --auth=trust -U postgres \
    --encoding=UTF8 --locale=C >/dev/null) || die "initdb failed"
}

start() {
  local port
  if port="$(running_port)"; then
    say "already running on 127.0.0.1:$port (data $PGDATA_DIR)"
  else
    init_cluster
    say "starting PostgreSQL on 127.0.0.1:$PORT (log $LOG_FILE)"
    (cd / && as_server env LC_ALL=C "$BIN/pg_ctl" start -D "$PGDATA_DIR" -l "$LOG_FILE" -w -t 60 \
      -o "-h 127.0.0.1 -p $PORT -k '$SOCKET_DIR'" >/dev/null) ||
      { tail -n 20 "$LOG_FILE" >&2 || true; die "PostgreSQL did not start; see $LOG_FILE"; }
    port="$PORT"
  fi
  local psql=("$BIN/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1)
  if [[ "$("${psql[@]}" -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'")" != 1 ]]; then
    say "creating database $DB_NAME"
    "${psql[@]}" -c "CREATE DATABASE $DB_NAME"
  fi
  url
}

stop() {
  if ! running_port >/dev/null; then
    say "not running"; return
  fi
  (cd / && as_server "$BIN/pg_ctl" stop -D "$PGDATA_DIR" -m fast -w -t 60 >/dev/null)
  say "stopped"
}

status() {
  local port
  if port="$(running_port)"; then
    say "running on 127.0.0.1:$port (data $PGDATA_DIR)"
  else
    say "not running"; return 3
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  url) url ;;
  *) printf 'usage: %s start|stop|status|url\n' "$0" >&2; exit 2 ;;
esac
