#!/usr/bin/env bash
# ensure-postgres.sh: make sure the PostgreSQL server binaries (initdb,
# postgres, pg_ctl) are on this machine, for `make run`, `make test` and
# .ci/run. Nothing is started; local-postgres.sh and internal/pgtest do that.
#
#   deploy/ensure-postgres.sh            install them if missing
#   deploy/ensure-postgres.sh --dry-run  only say what it would do
#
# Found when $PG_BIN holds them, or any /usr/lib/postgresql/*/bin does, or
# `pg_config --bindir` does (the places local-postgres.sh and internal/pgtest
# look). Otherwise, on a Debian or Ubuntu machine, it installs the
# `postgresql` package with apt-get: directly as root, through sudo when not
# root (sudo may ask for a password); failing that it stops with one line
# saying what to run. It never removes or upgrades anything.
#
# POSTGRES_LIB_DIR (default /usr/lib/postgresql) exists for tests.
set -euo pipefail

LIB_DIR="${POSTGRES_LIB_DIR:-/usr/lib/postgresql}"
DRY_RUN=""
case "${1:-}" in
  "") ;;
  --dry-run) DRY_RUN=1 ;;
  *) printf 'usage: %s [--dry-run]\n' "$0" >&2; exit 2 ;;
esac

say() { printf 'ensure-postgres: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

has_server() { [[ -x "$1/initdb" && -x "$1/postgres" && -x "$1/pg_ctl" ]]; }

if [[ -n "${PG_BIN:-}" ]]; then
  has_server "$PG_BIN" || die "PG_BIN=$PG_BIN does not hold initdb, postgres and pg_ctl: point it at PostgreSQL's bin directory, or unset it"
  [[ -z "$DRY_RUN" ]] || say "PG_BIN=$PG_BIN holds them; nothing to do"
  exit 0
fi

# found prints the directory holding the server binaries, or fails.
found() {
  local dir
  for dir in "$LIB_DIR"/*/bin; do
    if has_server "$dir"; then printf '%s\n' "$dir"; return; fi
  done
  if dir="$(pg_config --bindir 2>/dev/null)" && has_server "$dir"; then
    printf '%s\n' "$dir"; return
  fi
  return 1
}

if dir="$(found)"; then
  [[ -z "$DRY_RUN" ]] || say "found in $dir; nothing to do"
  exit 0
fi

manual="install the PostgreSQL server (Debian/Ubuntu: sudo apt-get install -y postgresql; macOS: brew install postgresql@15), or set PG_BIN to its bin directory"
command -v apt-get >/dev/null 2>&1 || die "PostgreSQL server binaries not found and there is no apt-get here: $manual"
sudo=()
if [[ "$(id -u)" -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || die "PostgreSQL server binaries not found, and installing them needs root (no sudo here): as root run 'apt-get install -y postgresql', or $manual"
  sudo=(sudo)
fi
install=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get)
if [[ -n "$DRY_RUN" ]]; then
  say "not found; would run: ${install[*]} update && ${install[*]} install -y --no-install-recommends postgresql"
  exit 0
fi
say "PostgreSQL server binaries not found; installing the postgresql package: ${install[*]} install postgresql"
"${install[@]}" update -qq >&2 || die "apt-get update failed; $manual"
"${install[@]}" install -y -qq --no-install-recommends postgresql >&2 || die "apt-get install postgresql failed; $manual"
dir="$(found)" || die "installed postgresql, but still no initdb, postgres and pg_ctl under $LIB_DIR/*/bin: $manual"
say "installed: $dir"
