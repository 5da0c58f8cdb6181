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
