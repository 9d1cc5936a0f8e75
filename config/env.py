"""Settings read from the environment: a malformed value is refused at start, naming its
variable, never read as something else.

django-environ alone read ``MEMLEDGER_MAX_BODY_BYTES=1MB`` with a bare ``ValueError`` that
named no variable, ``REDIS_TIMEOUT_SECONDS=1e3`` as 13.0 (its float parse drops what is not a
digit), ``DJANGO_SECURE_SSL_REDIRECT=ture`` as false, an empty path as the working directory
and a database URL without a known scheme as Django's dummy engine (stop 50's audit). An
empty variable (an env file's ``NAME=``, a compose ``${NAME}`` left unset) is the default,
as the operations guide's shell lines (``${NAME:-default}``) read it.
"""

import math
import re
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured

env = environ.Env()

# The words of a switch, as the README and ``env_flag`` name them: django-environ's "y", "t",
# "ok", "n" and "f" were read too, so a stray ``DJANGO_SECURE_SSL_REDIRECT=f`` turned the
# redirect off where it is refused as misspelt (stop 54's audit of the docs).
TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})
# django-environ's schemes of Django's PostgreSQL backend (not ``postgis``: its GIS backend
# needs the GDAL library, and died at start naming no variable: stop 50's review).
DATABASE_SCHEMES = ("postgres", "postgresql", "pgsql", "psql")
REDIS_SCHEMES = ("redis", "rediss", "unix")
# kombu's transports a deployment may name whose libraries the project installs (its filesystem
# one the embedded default; redis-py and py-amqp): librabbitmq and sqs need packages it does not
# install, and every send failed (stop 52's review).
BROKER_SCHEMES = (
    *("filesystem", "redis", "rediss", "redis+socket", "sentinel"),
    *("amqp", "amqps", "pyamqp", "memory"),
)
# A rate's period: s, m, h or d, or one of their words (the throttles read its first letter).
RATE_PERIODS = r"(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# A century: the most a setting of hours takes. 20,000,000 hours was read, and every retention
# sweep then raised OverflowError computing its cutoff (before year 1): stop 52's audit.
MAX_HOURS = 876_000
# The most seconds a setting PostgreSQL gets as a timeout takes: its lock_timeout and
# statement_timeout hold at most 2,147,483,647 ms (about 24.8 days). A larger one was read,
# and every request that set it raised DataError, a 500 (stop 53's audit).
MAX_TIMEOUT_SECONDS = 2_147_483


def _given(name: str) -> str:
    """Return the variable's value, stripped; "" when unset or empty (the default applies)."""
    return env.str(name, default="").strip()


def _refuse(name: str, value: str, expected: str) -> NoReturn:
    raise ImproperlyConfigured(f"{name} is {value!r}: it must be {expected}.")


def _bounds(least, above, most=None) -> str:
    if above is not None and most is not None:
        return f" above {above:g} and at most {most:,}"
    if above is not None:
        return f" above {above:g}"
    if least is not None and most is not None:
        return f" from {least:g} to {most:,}"
    return f" of at least {least:g}" if least is not None else ""


def env_int(name: str, default: int, *, least: int | None = None, most: int | None = None) -> int:
    """Return the whole number ``name`` (``default`` when unset or empty), from ``least`` to
    ``most``."""
    value = _given(name)
    if not value:
        return default
    expected = f"a whole number{_bounds(least, None, most)}"
    try:
        number = int(value)
    except ValueError:
        _refuse(name, value, expected)
    if (least is not None and number < least) or (most is not None and number > most):
        _refuse(name, value, expected)
    return number


def env_float(
    name: str,
    default: float,
    *,
    least: float | None = None,
    above: float | None = None,
    most: float | None = None,
) -> float:
    """Return the finite number ``name`` (``default`` when unset or empty), at least ``least``
    or more than ``above``, and at most ``most``: "1e3" is a thousand, and "1.5.2" or "3s" are
    refused."""
    value = _given(name)
    if not value:
        return default
    expected = f"a number{_bounds(least, above, most)}"
    try:
        number = float(value)
    except ValueError:
        _refuse(name, value, expected)
    if not math.isfinite(number):
        _refuse(name, value, expected)
    if (least is not None and number < least) or (above is not None and number <= above):
        _refuse(name, value, expected)
    if most is not None and number > most:
        _refuse(name, value, expected)
    return number


def env_flag(name: str, default: bool) -> bool:
    """Return the switch ``name``: true, yes, on or 1; false, no, off or 0 (any letter case);
    ``default`` when unset or empty. Anything else is refused, not read as false."""
    value = _given(name)
    if not value:
        return default
    if value.lower() in TRUE_WORDS:
        return True
    if value.lower() in FALSE_WORDS:
        return False
    _refuse(name, value, "true or false (yes or no, on or off, 1 or 0)")


def env_text(name: str, default: str) -> str:
    """Return the text ``name``; ``default`` when unset or empty."""
    return _given(name) or default


def env_choice(
    name: str, default: str, choices: tuple[str, ...], *, upper: bool = False, why: str = ""
) -> str:
    """Return the word ``name``, one of ``choices`` (in upper case with ``upper``, as the
    logging levels are spelt, any case accepted); ``default`` when unset or empty. ``why``:
    what narrows the choices, said with the refusal."""
    value = _given(name)
    if not value:
        return default
    word = value.upper() if upper else value
    if word not in choices:
        _refuse(name, value, f"one of {', '.join(choices)}{why}")
    return word


def env_path(name: str, default: Path | str) -> Path:
    """Return the path ``name``; ``default`` when unset or empty (an empty path was the
    process's working directory)."""
    return Path(_given(name) or default)


def env_list(name: str, default: list[str]) -> list[str]:
    """Return the comma-separated variable ``name`` as a list, each entry stripped of spaces
    and empty ones dropped ("a.com, b.com" is ["a.com", "b.com"]); ``default`` when unset or
    empty.

    django-environ's ``env.list`` kept the space after a comma: " b.com" matched no host
    (400), and " /srv/eval" named a folder that does not exist; and it read an empty variable
    (or one of commas) as no entry: ``MEMLEDGER_EVAL_DATA_DIRS=`` scanned no folder, so a
    deletion's ``evaluation`` step left the default folder's copies (stop 52's audit).
    """
    given = [item.strip() for item in _given(name).split(",") if item.strip()]
    return given or list(default)


def env_rate(name: str, default: str) -> str | None:
    """Return the rate ``name`` ("1200/min": a count, a slash, a period whose first letter,
    s, m, h or d, counts, as the throttles read it), or None when set empty (no limit).
    Refused at start: "100/week" or "1,200/min" made every API request a 500, "0/min"
    every one a 400 telling the client to send smaller batches (stop 49's audit), and a period
    that is no spelling of the four, "5/month", was read by its first letter (5 a minute:
    stop 52's audit)."""
    rate = env.str(name, default=default)
    if not rate:
        return None
    if not re.fullmatch(r"0*[1-9]\d*/" + RATE_PERIODS, rate):
        raise ImproperlyConfigured(
            f"{name} is {rate!r}: a rate is a count of at least 1 and a period, s, m, h or d"
            ' ("1200/min", "20000/day"), or empty for no limit.'
        )
    return rate


def checked_url(name: str, url: str, schemes: tuple[str, ...], example: str) -> str:
    """Return ``url`` if its scheme is one of ``schemes``; else refuse it, naming ``name`` and
    the scheme found but never the URL, which may hold a password."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port that is no number raises here
    except ValueError:
        _refuse_url(
            name,
            example,
            "it cannot be parsed: a character of the password may need "
            "percent-encoding (/ as %2F, [ as %5B, @ as %40)",
        )
    scheme = parts.scheme.lower() if "://" in url else ""
    if scheme not in schemes:
        _refuse_url(
            name, example, f"it starts with {scheme + '://'!r}" if scheme else "it has no scheme"
        )
    return url


def checked_broker_url(name: str, value: str, example: str) -> str:
    """Return the broker URL ``value`` if each URL it lists (kombu's ``;`` between the
    sentinels or brokers to fail over to) has a scheme of ``BROKER_SCHEMES``; else refuse it
    (``checked_url``). Parsed whole, a list of sentinels was refused as unreadable (stop 52's
    review of its own check)."""
    for url in value.split(";"):
        checked_url(name, url.strip(), BROKER_SCHEMES, example)
    return value


def _refuse_url(name: str, example: str, found: str) -> NoReturn:
    # ``from None``: the parser's own message quotes the URL's network location, password
    # included.
    raise ImproperlyConfigured(
        f"{name} must be a URL such as {example} ({found}; the value is not shown: it may hold "
        "a password)."
    ) from None


DATABASE_EXAMPLE = "postgres://USER:PASSWORD@HOST:5432/NAME"


def database_url_config(name: str, url: str) -> dict:
    """Return Django's settings of the PostgreSQL URL ``url``, the value of ``name``."""
    checked_url(name, url, DATABASE_SCHEMES, DATABASE_EXAMPLE)
    try:
        return env.db_url_config(url)
    except ValueError:
        _refuse_url(name, DATABASE_EXAMPLE, "it cannot be parsed")


def env_database_url(name: str, default: str = "") -> dict:
    """Return Django's settings of the PostgreSQL URL ``name`` (``default`` when unset)."""
    return database_url_config(name, _given(name) or default)
