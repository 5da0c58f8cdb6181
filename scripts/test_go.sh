#!/usr/bin/env bash
# Builds and tests the Go binding (bindings/go) against libsmd installed from a build folder:
#   scripts/test_go.sh [BUILD_DIR] [go test args...]   (default build; e.g. -bench . -run XXX)
# Installs the build into BUILD_DIR/go-prefix, points pkg-config and the loader at it and runs
# `go test -v ./...` in bindings/go. The real smdebug of .venv (scripts/setup.sh) is used for the
# cross-checks; SMD_PYTHON selects another Python.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
if ! command -v go >/dev/null; then
  if [ -x /usr/local/go/bin/go ]; then export PATH=/usr/local/go/bin:$PATH
  else echo "test_go.sh: no Go toolchain (install Go >= 1.24, https://go.dev/dl/)" >&2; exit 2; fi
fi
prefix=$(cd "$build" && pwd)/go-prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
pc=$(ls "$prefix"/lib*/pkgconfig/smd.pc | head -1)
export PKG_CONFIG_PATH=$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export LD_LIBRARY_PATH=$(dirname "$(dirname "$pc")")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The s3:// tests use the server given by SMD_S3_* (scripts/test.sh passes its own), else a local
# one started here (scripts/s3-server.sh) and stopped at exit.
if [ -z "${SMD_S3_ENDPOINT:-}" ]; then
  s3state=$(mktemp -d "${TMPDIR:-/tmp}/smd-go-s3.XXXXXX")
  s3server=$PWD/scripts/s3-server.sh  # (the trap runs after the cd below)
  trap '"$s3server" stop "$s3state" >/dev/null 2>&1 || true; rm -rf "$s3state"' EXIT
  "$s3server" start "$s3state" >/dev/null
  # shellcheck disable=SC1091
  . "$s3state/env"
fi
export SMD_S3_ENDPOINT SMD_S3_ACCESS_KEY SMD_S3_SECRET_KEY SMD_S3_REGION SMD_S3_BUCKET SMD_GO_REQUIRE_S3=1
cd bindings/go
go vet ./...
if [ $# -gt 0 ]; then go test "$@" ./...; exit; fi
go test -count=1 -v ./...
