#!/usr/bin/env bash
# Lints transport/openapi.yaml with Redocly CLI, using redocly.yaml at the
# repository root (recommended-strict: any finding fails the run).
#
# Redocly CLI is pinned and installed from the npm registry on first use into
# a cache directory (never globally): $REDOCLY_CACHE_DIR, else
# ${XDG_CACHE_HOME:-~/.cache}/invoicing/redocly-cli-<version>. Needs node
# (>= 20.19 within 20.x, or >= 22.12) and npm.
set -euo pipefail

REDOCLY_VERSION=2.77.0

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${REDOCLY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/invoicing/redocly-cli-$REDOCLY_VERSION}"
redocly="$cache/node_modules/.bin/redocly"

# No usage data leaves the machine, and no update check runs.
export REDOCLY_TELEMETRY=off
export REDOCLY_SUPPRESS_UPDATE_NOTICE=true

if [[ ! -x "$redocly" ]]; then
	if ! command -v npm >/dev/null 2>&1; then
		echo "openapi-lint: npm is required (Debian: apt-get install nodejs npm)" >&2
		exit 1
	fi
	echo "openapi-lint: installing @redocly/cli@$REDOCLY_VERSION into $cache" >&2
	mkdir -p "$cache"
	npm install --no-save --no-audit --no-fund --loglevel=error \
		--prefix "$cache" "@redocly/cli@$REDOCLY_VERSION" >&2
fi

cd "$root"
exec "$redocly" lint --config redocly.yaml --format=stylish transport/openapi.yaml
