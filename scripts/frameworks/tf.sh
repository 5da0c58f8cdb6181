#!/usr/bin/env bash
# .venv-tf (scripts/frameworks/make-venv.sh): TensorFlow (CPU) with Keras 3 and the legacy Keras 2
# (tf_keras), smdebug 1.0.34 for the side-by-side benchmark (its dependencies but not its protobuf
# pin, which TensorFlow does not accept: it runs with protobuf's pure-Python parser, as far as it
# runs with today's TensorFlow at all) and the smd wheel. Prints the venv's python.
exec "$(dirname "$0")/make-venv.sh" tf tensorflow-cpu==2.21.0 keras==3.15.1 tf-keras==2.21.0 \
  numpy==2.4.6 pytest==9.2.0 boto3==1.44.8 pyinstrument==3.4.2 pandas==3.1.1 psutil==7.2.2 \
  --no-deps smdebug==1.0.34
