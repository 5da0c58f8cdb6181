#!/usr/bin/env bash
# Installs everything smd needs to build and test, idempotently: Debian packages, then a Python
# virtual environment (.venv) with the real smdebug from PyPI, numpy, pytest and tensorboard.
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git curl openssl
  libprotobuf-c-dev protobuf-c-compiler libcurl4-openssl-dev libcjson-dev libpcre2-dev swig
  libssl-dev libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev llvm
  python3 python3-venv python3-dev
  openmpi-bin ccache
  locales  # the locale definitions tests/impl/core/host_locale_test.cc builds with localedef
)

# Java (bindings/java): a JDK (17 or newer) and Maven, from Debian unless already on PATH.
command -v javac >/dev/null 2>&1 || APT_PACKAGES+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || APT_PACKAGES+=(maven)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python: the interpreter on PATH if it is 3.9-3.12 (smdebug needs numpy<2), else Debian's.
PY=""
for cand in python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null 2>&1 &&
     "$cand" -c 'import sys; sys.exit(0 if (3,9) <= sys.version_info[:2] <= (3,12) else 1)' 2>/dev/null &&
     "$cand" -c 'import venv, ensurepip' 2>/dev/null; then
    PY=$(command -v "$cand"); break
  fi
done
[ -n "$PY" ] || { echo "setup: no Python 3.9-3.12 with venv found" >&2; exit 1; }

VENV=${SMD_VENV:-$PWD/.venv}
REQ=scripts/requirements.txt
stamp="$VENV/.smd-requirements"
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV with $PY"
  "$PY" -m venv "$VENV"
fi
if ! cmp -s "$REQ" "$stamp"; then
  echo "setup: installing Python packages into $VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQ"
  cp "$REQ" "$stamp"
fi
# Go: the Go binding (bindings/go) needs the version its go.mod names. Go 1.21 and newer can run
# a newer toolchain themselves (GOTOOLCHAIN, fetched once through the Go module proxy); older ones
# (Debian 12's golang-go is 1.19) cannot.
SMD_GO_TOOLCHAIN=go1.27.3
go_min=$(sed -n 's/^go \([0-9.]*\).*/\1/p' bindings/go/go.mod)
version_lt() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" = "$1" ]; }
go_ok=0
if command -v go >/dev/null 2>&1; then
  go_have=$(go env GOVERSION 2>/dev/null || go version | awk '{print $3}')
  go_have=${go_have#go}
  if ! version_lt "$go_have" "$go_min"; then
    go_ok=1
  elif ! version_lt "$go_have" 1.21; then
    echo "setup: the Go on PATH ($(command -v go), $go_have) is older than the Go binding's minimum" \
      "($go_min); it can fetch a newer toolchain itself: export GOTOOLCHAIN=$SMD_GO_TOOLCHAIN" \
      "(downloaded once through the Go module proxy), as this script does for itself now" >&2
    export GOTOOLCHAIN=$SMD_GO_TOOLCHAIN
    go version >/dev/null 2>&1 && go_ok=1 ||
      echo "setup: GOTOOLCHAIN=$SMD_GO_TOOLCHAIN failed (no access to the Go module proxy?)" >&2
  else
    echo "setup: the Go on PATH ($(command -v go), $go_have) is older than the Go binding's minimum" \
      "($go_min) and too old (< 1.21) to fetch a newer toolchain: install Go >= $go_min from" \
      "https://go.dev/dl/ and put its bin folder first on PATH (Debian 12's golang-go is 1.19);" \
      "the Go binding's tests and the S3 tests (versitygw) need it" >&2
  fi
else
  echo "setup: no Go on PATH: the Go binding and the S3 tests' server (versitygw) need Go >= $go_min:" \
    "install it from https://go.dev/dl/ and put its bin folder on PATH (Debian 12's golang-go is" \
    "1.19, too old)" >&2
fi
# The local S3 server of the S3 tests (scripts/s3-server.sh): versitygw, a Go module.
if ! command -v versitygw >/dev/null 2>&1 && ! [ -x "$(go env GOPATH 2>/dev/null)/bin/versitygw" ]; then
  if [ "$go_ok" = 1 ]; then
    echo "setup: installing versitygw (go install)"
    go install github.com/versity/versitygw/cmd/versitygw@v1.8.0 ||
      echo "setup: installing versitygw failed: the S3 tests (ctest -L s3) will fail" >&2
  else
    echo "setup: no usable Go: versitygw (the S3 tests' server) not installed" >&2
  fi
fi
# Rust (bindings/rust): cargo with clippy. Debian's rustc is too old (the crates need >= 1.70),
# so the toolchain comes from rustup's official installer when no cargo is on PATH or in ~/.cargo.
export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: installing the Rust toolchain (rustup, minimal profile + clippy)"
  curl -sSf --proto '=https' --tlsv1.2 https://sh.rustup.rs |
    sh -s -- -y -q --profile minimal -c clippy >/dev/null ||
    echo "setup: installing Rust failed: the Rust suite (bindings/rust) will fail" >&2
fi
echo "setup: ok ($("$VENV/bin/python" -c 'import smdebug, numpy; print("smdebug", smdebug.__version__, "numpy", numpy.__version__)' 2>/dev/null))"
