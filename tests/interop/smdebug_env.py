"""Prepares a Python process to run the real smdebug (PyPI 1.0.34) for the interop tests.

Import it before any `smdebug` module:

    import smdebug_env  # noqa: F401

It
  * sets smdebug's environment variables that only add waiting, each unless the caller set it:
      SMDEBUG_LOG_LEVEL=warning
      SMDEBUG_TRAINING_END_DELAY_REFRESH=0     (otherwise one extra second of sleep after the
                                               reader first sees training_job_end.ts)
      SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT=0 (otherwise a value whose event file is missing is
                                               retried for minutes before the reader gives up;
                                               on a folder that does not change the answer is
                                               the same, only later)
    and removes TRAINING_JOB_NAME (with it, the hook believes it runs on SageMaker and does not
    write training_job_end.ts);
  * imports smdebug and stops with exit status 2 and a message saying what to install when it,
    or one of its dependencies, is missing;
  * moves smdebug's log output from stdout to stderr, so that a program printing JSON on stdout
    is not interleaved with smdebug's log lines.

scripts/setup.sh installs smdebug and its dependencies into .venv/ (scripts/requirements.txt).
"""
import os
import sys

for _name, _value in (("SMDEBUG_LOG_LEVEL", "warning"),
                      ("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"),
                      ("SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT", "0")):
    os.environ.setdefault(_name, _value)
os.environ.pop("TRAINING_JOB_NAME", None)

try:
    import smdebug  # noqa: E402
    from smdebug.core.logger import get_logger  # noqa: E402
except ImportError as _e:
    sys.stderr.write(
        f"smdebug_env: cannot import the real smdebug ({_e!r}) with {sys.executable}.\n"
        "  Run the interop tests with the project's virtual environment (.venv/bin/python, made by\n"
        "  scripts/setup.sh), or: pip install -r scripts/requirements.txt\n")
    sys.exit(2)

# smdebug configures its logger once, at its first import, with a handler on stdout.
for _handler in list(get_logger().handlers):
    if getattr(_handler, "stream", None) in (sys.stdout, sys.__stdout__):
        _handler.setStream(sys.stderr)

SMDEBUG_VERSION = getattr(smdebug, "__version__", "unknown")

# numpy 2 removed ndarray.tostring(), which smdebug 1.0.34's writer calls to encode a tensor
# (smdebug.core.tfevent.util.make_tensor_proto); under numpy 2 (scripts/test.sh runs this suite a
# second time in .venv-np2) its writer is given arrays of a subclass that still answers
# tostring() with tobytes(). Nothing else of smdebug is changed: its reader works under numpy 2.
import numpy as _np  # noqa: E402

if not hasattr(_np.ndarray, "tostring"):
    from smdebug.core.tfevent import util as _util  # noqa: E402

    class _WithToString(_np.ndarray):
        def tostring(self):
            return self.tobytes()

    _make_tensor_proto = _util.make_tensor_proto

    def _make_tensor_proto_numpy2(nparray_data, tag):
        return _make_tensor_proto(nparray_data.view(_WithToString), tag)

    for _mod in list(sys.modules.values()):
        if getattr(_mod, "make_tensor_proto", None) is _make_tensor_proto:
            _mod.make_tensor_proto = _make_tensor_proto_numpy2
    _util.make_tensor_proto = _make_tensor_proto_numpy2

    # numpy 2 also refuses float() of a one-element array of more than 0 dimensions, which
    # smdebug's TensorBoard writer calls on a scalar saved as a (1,) array
    # (smdebug.core.tfevent.summary.scalar_summary): its writer is given the element instead.
    from smdebug.core.tfevent import summary as _summary  # noqa: E402

    _scalar_summary = _summary.scalar_summary

    def _scalar_summary_numpy2(tag, scalar, *args, **kwargs):
        if isinstance(scalar, _np.ndarray) and scalar.size == 1:
            scalar = scalar.reshape(())
        return _scalar_summary(tag, scalar, *args, **kwargs)

    for _mod in list(sys.modules.values()):
        if getattr(_mod, "scalar_summary", None) is _scalar_summary:
            _mod.scalar_summary = _scalar_summary_numpy2
    _summary.scalar_summary = _scalar_summary_numpy2
