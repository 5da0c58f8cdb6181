#!/usr/bin/env bash
# A throwaway local S3 server that verifies SigV4 signatures (versitygw, posix backend), for the
# tests. Listens on 127.0.0.1 only, on a free port, over a fresh temporary data folder.
#
#   scripts/s3-server.sh start [STATE_DIR]   starts it, creates a bucket, writes STATE_DIR/env and
#                                            prints it (shell `export` lines):
#                                            SMD_S3_ENDPOINT, SMD_S3_ACCESS_KEY, SMD_S3_SECRET_KEY,
#                                            SMD_S3_REGION, SMD_S3_BUCKET, SMD_S3_SERVER_DIR
#   scripts/s3-server.sh stop [STATE_DIR]    stops it and deletes its data
#
# STATE_DIR defaults to $SMD_S3_SERVER_DIR, else a new temporary folder (start).
# With SMD_S3_TLS=1 the server speaks HTTPS with a fresh self-signed certificate for 127.0.0.1;
# the env then also has SMD_S3_CA_BUNDLE (that certificate). Needs the openssl tool.
# versitygw is found on PATH, in $GOBIN or in $(go env GOPATH)/bin; scripts/setup.sh installs it.
set -euo pipefail

cmd=${1:-}
state=${2:-${SMD_S3_SERVER_DIR:-}}

find_versitygw() {
  if command -v versitygw >/dev/null 2>&1; then command -v versitygw; return; fi
  local d
  for d in "${GOBIN:-}" "$(go env GOPATH 2>/dev/null)/bin" "$HOME/go/bin"; do
    if [ -n "$d" ] && [ -x "$d/versitygw" ]; then echo "$d/versitygw"; return; fi
  done
  return 1
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

stop() {
  [ -n "$state" ] || { echo "s3-server: stop needs STATE_DIR or SMD_S3_SERVER_DIR" >&2; exit 2; }
  if [ -f "$state/pid" ]; then
    local pid
    pid=$(cat "$state/pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -rf "$state/data" "$state/pid" "$state/env"
}

start() {
  local gw
  gw=$(find_versitygw) || { echo "s3-server: versitygw not found (run scripts/setup.sh)" >&2; exit 1; }
  if [ -z "$state" ]; then state=$(mktemp -d "${TMPDIR:-/tmp}/smd-s3.XXXXXX"); fi
  mkdir -p "$state"
  [ -f "$state/pid" ] && stop
  rm -rf "$state/data"
  mkdir -p "$state/data/root" "$state/data/sidecar"
  local scheme=http tls_args=() curl_tls=()
  if [ "${SMD_S3_TLS:-0}" = 1 ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
      -addext "subjectAltName=IP:127.0.0.1" -keyout "$state/data/key.pem" \
      -out "$state/data/cert.pem" >/dev/null 2>&1
    scheme=https
    tls_args=(--cert "$state/data/cert.pem" --key "$state/data/key.pem")
    curl_tls=(--cacert "$state/data/cert.pem")
  fi
  local access=smdtest secret region=us-east-1 bucket=smd-test port pid
  secret="smd-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
  # versitygw reads the root credentials from its environment, so they stay off the command line.
  for attempt in 1 2 3 4 5; do
    port=$(free_port)
    ROOT_ACCESS_KEY="$access" ROOT_SECRET_KEY="$secret" \
      setsid "$gw" --port "127.0.0.1:$port" --region "$region" --keep-alive --quiet "${tls_args[@]}" \
      posix --sidecar "$state/data/sidecar" "$state/data/root" >"$state/server.log" 2>&1 &
    pid=$!
    echo "$pid" >"$state/pid"
    for _ in $(seq 100); do
      if curl -s -o /dev/null "${curl_tls[@]}" "$scheme://127.0.0.1:$port/"; then break; fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    kill -0 "$pid" 2>/dev/null && break
    echo "s3-server: start on port $port failed (attempt $attempt):" >&2
    tail -5 "$state/server.log" >&2
    [ "$attempt" = 5 ] && exit 1
  done
  # Create the bucket (a signed request: curl's own SigV4 is fine for a request without a key).
  local code
  code=$(curl -s -o "$state/mb.out" -w '%{http_code}' -X PUT --aws-sigv4 "aws:amz:$region:s3" \
    -H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
    "${curl_tls[@]}" --user "$access:$secret" "$scheme://127.0.0.1:$port/$bucket")
  if [ "$code" != 200 ]; then
    echo "s3-server: creating bucket $bucket failed: HTTP $code $(cat "$state/mb.out")" >&2
    stop; exit 1
  fi
  cat >"$state/env" <<EOF
export SMD_S3_ENDPOINT=$scheme://127.0.0.1:$port
export SMD_S3_ACCESS_KEY=$access
export SMD_S3_SECRET_KEY=$secret
export SMD_S3_REGION=$region
export SMD_S3_BUCKET=$bucket
export SMD_S3_SERVER_DIR=$state
EOF
  if [ "$scheme" = https ]; then echo "export SMD_S3_CA_BUNDLE=$state/data/cert.pem" >>"$state/env"; fi
  cat "$state/env"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop [STATE_DIR]" >&2; exit 2 ;;
esac
