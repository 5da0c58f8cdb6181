#!/usr/bin/env bash
# .venv-mxnet (scripts/frameworks/make-venv.sh): MXNet 1.9.1 (its last release; it imports only with
# numpy < 1.24, hence its own environment), the real smdebug 1.0.34 (its MXNet hook is the reference
# of a test) and the smd wheel (built against .venv's numpy; smd uses numpy only from Python, and its
# tests run here with numpy 1.23). Prints the venv's python.
exec "$(dirname "$0")/make-venv.sh" mxnet mxnet==1.9.1 numpy==1.23.5 pytest==9.2.0 \
  smdebug==1.0.34 protobuf==3.20.3 boto3==1.44.8 packaging pyinstrument==3.4.2 requests==2.34.2 psutil==7.2.2 pandas==2.2.3
