#!/usr/bin/env bash
# .venv-torch (scripts/frameworks/make-venv.sh): pinned PyTorch (CPU use; the PyPI wheel brings its
# CUDA libraries along), the real smdebug 1.0.34 (its PyTorch hook is the reference of a test and of
# the benchmark, with the runtime dependencies it does not declare) and the smd wheel. Prints the
# venv's python.
exec "$(dirname "$0")/make-venv.sh" torch torch==2.15.0 numpy==1.26.4 pytest==9.2.0 \
  smdebug==1.0.34 protobuf==3.20.3 boto3==1.44.8 packaging pyinstrument==3.4.2 \
  requests==2.34.2 psutil==7.2.2 pandas==2.2.3
