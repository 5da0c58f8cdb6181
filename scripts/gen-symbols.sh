#!/usr/bin/env bash
# Regenerates capi/smd.symbols from the SMD_API declarations of the public headers.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -h -A3 '^SMD_API' capi/include/smd/*.h | tr '\n' ' ' | grep -o 'smd_[a-z0-9_]*(' | tr -d '(' | sort -u > capi/smd.symbols
wc -l < capi/smd.symbols
