"""The S3 keyword arguments of Hook and create_trial, turned into one smd_storage_options (the C
library's storage settings, smd/storage.h) by :func:`storage_options`: the one place that knows
them, so that every part of the package that opens storage takes the same arguments with the same
checks and messages."""
import operator

from smd import smdc as _smd
from smd.exceptions import SMDebugError, SMDebugValueError

_STRING_SETTINGS = (("s3_endpoint", _smd.smd_storage_options_set_s3_endpoint),
                    ("s3_region", _smd.smd_storage_options_set_s3_region),
                    ("s3_profile", _smd.smd_storage_options_set_s3_profile),
                    ("s3_addressing_style", _smd.smd_storage_options_set_s3_addressing_style),
                    ("s3_ca_bundle", _smd.smd_storage_options_set_s3_ca_bundle))

_INT32_MAX = (1 << 31) - 1
_INT64_MAX = (1 << 63) - 1


def _named(name, call, *args):
    """call(*args), with ``name`` (the keyword argument) put in front of the message of an error
    smd reports (its class and code kept)."""
    try:
        call(*args)
    except SMDebugError as e:
        e.msg = f"{name}: {e.msg}"
        e.args = (e.msg,)
        raise


def _str(name, value):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


def _int(name, value, limit):
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, not {type(value).__name__}") from None
    if not -limit - 1 <= value <= limit:
        raise SMDebugValueError(f"{name}: {value} is out of range")
    return value


def _credentials(value):
    """(access_key_id, secret_access_key, session_token) from s3_credentials, a sequence of 1 to 3
    str (or None); what is missing is passed as NULL, for the C library to refuse."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError("s3_credentials must be a tuple (access_key_id, secret_access_key[, session_token]), "
                        f"not {type(value).__name__}")
    creds = tuple(value)
    if not all(c is None or isinstance(c, str) for c in creds):
        raise TypeError("s3_credentials must hold str (or None)")
    if not 1 <= len(creds) <= 3:
        raise SMDebugValueError("s3_credentials: give (access_key_id, secret_access_key[, session_token]), "
                                f"not {len(creds)} items")
    return (creds + (None, None))[:3]


def storage_options(s3_endpoint=None, s3_region=None, s3_profile=None, s3_addressing_style=None,
                    s3_ca_bundle=None, s3_credentials=None, s3_max_attempts=None, s3_backoff_ms=None,
                    s3_stall_timeout_ms=None):
    """An smd_storage_options holding the settings given (None: not set), or None when none is
    given (the C library then uses the AWS configuration chain). A bad setting raises
    SMDebugValueError (TypeError for a wrong type) whose message starts with the keyword
    argument's name."""
    strings = {"s3_endpoint": s3_endpoint, "s3_region": s3_region, "s3_profile": s3_profile,
               "s3_addressing_style": s3_addressing_style, "s3_ca_bundle": s3_ca_bundle}
    retries = {"s3_max_attempts": s3_max_attempts, "s3_backoff_ms": s3_backoff_ms,
               "s3_stall_timeout_ms": s3_stall_timeout_ms}
    if s3_credentials is None and all(v is None for v in strings.values()) and \
            all(v is None for v in retries.values()):
        return None
    options = _smd.smd_storage_options_create()
    for name, setter in _STRING_SETTINGS:
        value = strings[name]
        if value is not None:
            _named(name, setter, options, _str(name, value))
    if s3_credentials is not None:
        _named("s3_credentials", _smd.smd_storage_options_set_s3_credentials, options,
               *_credentials(s3_credentials))
    if any(v is not None for v in retries.values()):
        values = {name: 0 if v is None else _int(name, v, _INT64_MAX if name == "s3_stall_timeout_ms" else _INT32_MAX)
                  for name, v in retries.items()}
        # The C library checks them (a negative one is refused); its message is put after the
        # names of the negative ones.
        negative = ", ".join(name for name, v in values.items() if v < 0) or ", ".join(values)
        _named(negative, _smd.smd_storage_options_set_s3_retries, options, values["s3_max_attempts"],
               values["s3_backoff_ms"], values["s3_stall_timeout_ms"])
    return options
