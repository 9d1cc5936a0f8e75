"""Settings read from the environment (config/env.py): a malformed value is refused at start,
naming the variable, never a bare ValueError or a silently different value; an empty one is
the default (stop 50's audit).

Each case runs ``manage.py check`` (which loads the settings) or prints a setting from a
child process whose working directory is the test's own folder: a path read as "." lands
there, never in the checkout.
"""

import os
import secrets
import subprocess
import sys

import pytest

from tests import processes

INT_SETTINGS = [
    "DJANGO_CONN_MAX_AGE",
    "DB_CONNECT_TIMEOUT",
    "MEMLEDGER_SUBJECT_TOKEN_TTL",
    "MEMLEDGER_IDEMPOTENCY_TTL_HOURS",
    "MEMLEDGER_MAX_BODY_BYTES",
    "MEMLEDGER_DELETION_STALE_SECONDS",
    "MEMLEDGER_DELETION_MAX_ATTEMPTS",
    "MEMLEDGER_DELETION_QUEUE_ABOVE",
    "MEMLEDGER_EXPORT_RETENTION_HOURS",
    "MEMLEDGER_BACKUP_RETENTION_DAYS",
    "MEMLEDGER_TORCH_THREADS",
    "MEMLEDGER_DB_PREPARE_THRESHOLD",
]
FLOAT_SETTINGS = [
    "REDIS_TIMEOUT_SECONDS",
    "MEMLEDGER_DELETION_REQUEST_BUDGET",
    "MEMLEDGER_SUBJECT_LOCK_WAIT",
    "MEMLEDGER_REQUEST_LOCK_TIMEOUT",
]


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _check(tmp_path, **env) -> subprocess.CompletedProcess:
    return processes.run_manage("check", MEMLEDGER_DATA_DIR=str(tmp_path), **env)


def _setting(tmp_path, expression: str, settings="config.settings.local", **env) -> str:
    """Return what ``expression`` (of ``django.conf.settings`` as ``s``) prints in a child
    process run from ``tmp_path``; fail the test if the process fails."""
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": settings, **env}
    environment.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    code = (
        f"import django; django.setup(); from django.conf import settings as s; print({expression})"
    )
    result = subprocess.run(  # noqa: S603 - this interpreter, a fixed snippet
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={**environment, "PYTHONPATH": str(processes.ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("setting", INT_SETTINGS + FLOAT_SETTINGS)
def test_a_non_numeric_setting_is_refused_naming_the_variable(setting, tmp_path):
    """``MEMLEDGER_MAX_BODY_BYTES=1MB`` ended every process at start with ``ValueError:
    invalid literal for int() with base 10: '1MB'``, naming none of ~30 variables; a decimal
    setting read "1MB" as 1.0 and passed the checks."""
    result = _check(tmp_path, **{setting: "1MB"})
    assert result.returncode != 0
    assert f"{setting} is '1MB'" in _last_line(result.stderr), _last_line(result.stderr)


@pytest.mark.parametrize("setting", FLOAT_SETTINGS)
@pytest.mark.parametrize("value", ["1.5.2", "3s", "nan", "inf"])
def test_a_seconds_setting_that_is_no_number_is_refused(setting, value, tmp_path):
    """django-environ's float parse drops what is not a digit: ``1.5.2`` was read as 15.2 and
    ``3s`` as 3.0, and ``manage.py check`` passed."""
    result = _check(tmp_path, **{setting: value})
    assert result.returncode != 0
    assert setting in _last_line(result.stderr), _last_line(result.stderr)


def test_a_seconds_setting_is_read_as_written(tmp_path):
    """``1e3`` is a thousand seconds (it was read as 13.0)."""
    assert _setting(tmp_path, "s.REDIS_TIMEOUT_SECONDS", REDIS_TIMEOUT_SECONDS="1e3") == "1000.0"


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        # Every deletion dead-lettered before its first run: its derived stores never purged.
        ("MEMLEDGER_DELETION_MAX_ATTEMPTS", "0"),
        # The retention sweep deleted every export as soon as it was made (0 keeps them).
        ("MEMLEDGER_EXPORT_RETENTION_HOURS", "-1"),
        # Every API request (a GET's Content-Length 0 > -1 too) answered 413.
        ("MEMLEDGER_MAX_BODY_BYTES", "-1"),
        # Every subject token was expired when issued.
        ("MEMLEDGER_SUBJECT_TOKEN_TTL", "0"),
        # An Idempotency-Key was forgotten before its answer was stored: a retry wrote twice.
        ("MEMLEDGER_IDEMPOTENCY_TTL_HOURS", "-1"),
        # A Redis timeout of 0 makes every call non-blocking: every one fails.
        ("REDIS_TIMEOUT_SECONDS", "0"),
    ],
)
def test_an_out_of_range_setting_is_refused_naming_it(setting, value, tmp_path):
    result = _check(tmp_path, **{setting: value})
    assert result.returncode != 0, result.stdout
    assert setting in _last_line(result.stderr), _last_line(result.stderr)


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        # At -1 the deletion sweep journaled nothing it had missed; at 1,000,000 its cutoff
        # overflowed. Only ``manage.py check`` said so: gunicorn and beat run no checks.
        ("MEMLEDGER_BACKUP_RETENTION_DAYS", "-1"),
        ("MEMLEDGER_BACKUP_RETENTION_DAYS", "1000000"),
        # libpq reads 0 as no limit: a host dropping packets held every request.
        ("DB_CONNECT_TIMEOUT", "0"),
        # Every retention sweep raised OverflowError computing its cutoff.
        ("MEMLEDGER_EXPORT_RETENTION_HOURS", "20000000"),
        ("MEMLEDGER_IDEMPOTENCY_TTL_HOURS", "20000000"),
        # kombu has no such transport: every task send failed, and no deletion ever ran.
        ("CELERY_BROKER_URL", "reddis://127.0.0.1:6379/0"),
        ("CELERY_BROKER_URL", "http://127.0.0.1:6379/0"),
        # Transports whose libraries the project does not install: the same (stop 52's review).
        ("CELERY_BROKER_URL", "librabbitmq://guest@127.0.0.1:5672//"),
        ("CELERY_BROKER_URL", "sqs://127.0.0.1"),
        # A subject token's expiry overflowed (a 500), the deletion sweep's cutoff every run.
        ("MEMLEDGER_SUBJECT_TOKEN_TTL", "1000000000000"),
        ("MEMLEDGER_DELETION_STALE_SECONDS", "1000000000000"),
        # PostgreSQL's lock_timeout and statement_timeout take at most 2,147,483,647 ms: every
        # API request (the lock wait), every deletion over HTTP (its budget) raised DataError,
        # a 500; the queue's threshold became an OFFSET past bigint (stop 53's audit).
        ("MEMLEDGER_REQUEST_LOCK_TIMEOUT", "4000000000"),
        ("MEMLEDGER_SUBJECT_LOCK_WAIT", "2147484"),
        ("MEMLEDGER_DELETION_REQUEST_BUDGET", "4000000000"),
        ("MEMLEDGER_DELETION_QUEUE_ABOVE", "10000000000000000000"),
        # A socket's timeout overflowed time_t: every Redis call raised OverflowError.
        ("REDIS_TIMEOUT_SECONDS", "1e12"),
    ],
)
def test_a_process_that_runs_no_checks_refuses_an_out_of_range_setting(setting, value, tmp_path):
    """As gunicorn and beat start: the settings alone (stop 52's audit of operations)."""
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.local", setting: value}
    result = subprocess.run(  # noqa: S603 - this interpreter, a fixed snippet
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=tmp_path,
        env={**environment, "PYTHONPATH": str(processes.ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0, result.stdout
    line = _last_line(result.stderr)
    assert setting in line and "ImproperlyConfigured" in line, line
    assert "127.0.0.1" not in line  # a URL is never shown: it may hold a password


@pytest.mark.parametrize(
    ("variable", "setting", "default"),
    [
        # No folder scanned: a deletion's evaluation step left the default folder's copies.
        ("MEMLEDGER_EVAL_DATA_DIRS", "MEMLEDGER_EVAL_DATA_DIRS", "['d/eval']"),
        # No host allowed: every request 400.
        ("DJANGO_ALLOWED_HOSTS", "ALLOWED_HOSTS", "['127.0.0.1', 'localhost']"),
    ],
)
def test_an_empty_list_setting_is_the_default(variable, setting, default, tmp_path):
    shown = _setting(
        tmp_path,
        f"[str(v).removeprefix('{tmp_path}/') for v in s.{setting}]",
        MEMLEDGER_DATA_DIR=str(tmp_path / "d"),
        **{variable: ""},
    )
    assert shown == default


def test_a_replicas_connection_attempt_is_bounded_as_the_databases(tmp_path):
    """An unreachable replica held a deletion's ``replicas`` step for the kernel's TCP timeout
    on each attempt (stop 52's audit)."""
    shown = _setting(
        tmp_path,
        "s.DATABASES['replica1']['OPTIONS']['connect_timeout']",
        MEMLEDGER_REPLICA_DATABASE_URLS="postgres://reader@replica.example:5432/memledger",
        DB_CONNECT_TIMEOUT="7",
    )
    assert shown == "7"


@pytest.mark.parametrize("value", ["ture", "enabled", "yes please", "f", "ok"])
def test_production_refuses_a_misspelt_ssl_redirect(value, tmp_path):
    """``DJANGO_SECURE_SSL_REDIRECT=ture`` (or ``enabled``) was read as false: production
    silently served the portal's logins and the API's keys over plain HTTP. So were "f" and
    "ok", django-environ's words, which the README does not name (stop 54's audit of the
    docs)."""
    result = processes.run_manage(
        "check",
        settings="config.settings.production",
        unset=("DJANGO_ALLOW_ASYNC_UNSAFE",),
        DJANGO_SECRET_KEY=secrets.token_urlsafe(64),
        MEMLEDGER_WARM_UP="false",
        MEMLEDGER_DATA_DIR=str(tmp_path),
        DJANGO_SECURE_SSL_REDIRECT=value,
    )
    assert result.returncode != 0, result.stdout
    assert "DJANGO_SECURE_SSL_REDIRECT" in _last_line(result.stderr), result.stderr[-500:]


@pytest.mark.parametrize(("value", "shown"), [("Off", "False"), ("1", "True"), ("", "True")])
def test_a_switch_reads_its_words_and_empty_is_the_default(value, shown, tmp_path):
    assert _setting(tmp_path, "s.MEMLEDGER_WARM_UP", MEMLEDGER_WARM_UP=value) == shown


def test_an_empty_celery_queue_is_the_default_queue(tmp_path):
    """docs/operations.md runs the worker with ``-Q "${MEMLEDGER_CELERY_QUEUE:-memledger}"``:
    an empty variable (an env file's ``MEMLEDGER_CELERY_QUEUE=``) consumes ``memledger``,
    while the settings read it as a queue named ``''``: every deletion's task and every
    sweep's re-send went to a queue no worker consumes, and deletions stayed pending."""
    shown = _setting(
        tmp_path,
        "repr(s.CELERY_TASK_DEFAULT_QUEUE)",
        MEMLEDGER_DATA_DIR=str(tmp_path / "data"),
        MEMLEDGER_CELERY_QUEUE="",
    )
    assert shown == "'memledger'"


@pytest.mark.parametrize(
    ("variable", "setting", "default"),
    [
        # The journal: "." is a folder, every append fails, every deletion ends partial and
        # then dead-lettered (an operation completes only once journaled).
        ("MEMLEDGER_DELETION_LEDGER", "MEMLEDGER_DELETION_LEDGER", "d/deletion-ledger.jsonl"),
        # Subjects' full exports were written under the process's working directory.
        ("MEMLEDGER_EXPORT_DIR", "MEMLEDGER_EXPORT_DIR", "d/exports"),
        # collectstatic gathered the static files into the working directory.
        ("DJANGO_STATIC_ROOT", "STATIC_ROOT", "d/static"),
        ("MEMLEDGER_BROKER_DIR", "BROKER_DIR", "d/broker"),
    ],
)
def test_an_empty_path_setting_is_the_default(variable, setting, default, tmp_path):
    """An empty path variable (``MEMLEDGER_DELETION_LEDGER=`` in an env file, a compose
    ``${LEDGER}`` left unset) was read as ``Path("")``, the process's working directory."""
    shown = _setting(
        tmp_path, f"str(s.{setting})", MEMLEDGER_DATA_DIR=str(tmp_path / "d"), **{variable: ""}
    )
    assert shown == str(tmp_path / default)


@pytest.mark.parametrize(
    ("variable", "expression", "default"),
    [
        # Celery's own default broker then, amqp://guest@localhost:5672//, which no one runs:
        # no deletion, sweep or export task was ever delivered.
        ("CELERY_BROKER_URL", "s.CELERY_BROKER_URL", "filesystem://localhost/"),
        # "Unknown embedding runtime ''": every write 503.
        ("MEMLEDGER_EMBEDDING_RUNTIME", "s.MEMLEDGER_EMBEDDER['RUNTIME']", "onnx"),
        ("MEMLEDGER_EMBEDDING_PRECISION", "s.MEMLEDGER_EMBEDDER['PRECISION']", "int8"),
        (
            "MEMLEDGER_EMBEDDER_BACKEND",
            "s.MEMLEDGER_EMBEDDER['BACKEND']",
            "memory_core.embeddings.SentenceTransformerEmbedder",
        ),
        ("MEMLEDGER_DB_APP_ROLE", "s.MEMLEDGER_DB_APP_ROLE", "memledger_app"),
        # "ValueError: Unable to configure root logger", naming no variable.
        ("DJANGO_LOG_LEVEL", "s.LOGGING['root']['level']", "INFO"),
    ],
)
def test_an_empty_text_setting_is_the_default(variable, expression, default, tmp_path):
    """Read as the empty text (stop 52's audit of the documentation's promises)."""
    assert _setting(tmp_path, expression, **{variable: ""}) == default


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("DJANGO_LOG_LEVEL", "verbose", "one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
        ("MEMLEDGER_EMBEDDING_RUNTIME", "tensorflow", "one of onnx, torch"),
        ("MEMLEDGER_EMBEDDING_PRECISION", "fp16", "one of int8, fp32"),
    ],
)
def test_a_word_outside_its_choices_is_refused_naming_the_variable(
    variable, value, expected, tmp_path
):
    """A bad log level stopped every process with logging's own ValueError, naming no
    variable; a bad runtime or precision started, and every write answered 503."""
    result = _check(tmp_path, **{variable: value})
    assert result.returncode != 0
    assert f"{variable} is {value!r}: it must be {expected}." in _last_line(result.stderr)


def test_int8_precision_with_the_torch_runtime_is_refused_naming_why(tmp_path):
    """The torch runtime runs no int8: the two started, and every embedding failed, every
    write 503 (stop 52's review)."""
    result = _check(
        tmp_path, MEMLEDGER_EMBEDDING_RUNTIME="torch", MEMLEDGER_EMBEDDING_PRECISION="int8"
    )
    assert result.returncode != 0
    assert _last_line(result.stderr).endswith(
        "MEMLEDGER_EMBEDDING_PRECISION is 'int8': it must be one of fp32 (the torch runtime runs "
        "the model as shipped)."
    )


def test_a_log_level_is_read_in_any_letter_case(tmp_path):
    assert _setting(tmp_path, "s.LOGGING['root']['level']", DJANGO_LOG_LEVEL="debug") == "DEBUG"


def test_an_empty_data_dir_is_the_default(tmp_path):
    """Every ``.data`` default (cache, broker, exports, journal) was the working directory."""
    shown = _setting(tmp_path, "str(s.MEMLEDGER_DELETION_LEDGER)", MEMLEDGER_DATA_DIR="")
    assert shown == str(processes.ROOT / ".data" / "deletion-ledger.jsonl")


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        # Every request: "settings.DATABASES is improperly configured. Please supply the
        # ENGINE value." (django-environ warns "Engine not recognized" and picks the dummy).
        ("DATABASE_URL", "memledger_app:s3cret@db.internal:5432/memledger"),
        ("DATABASE_URL", "postgress://memledger_app:s3cret@db.internal/memledger"),
        # migrate connected with an empty user, host and port.
        ("DATABASE_OWNER_URL", "memledger:s3cret@db.internal:5432/memledger"),
        # The replicas step failed every deletion until each was dead-lettered.
        ("MEMLEDGER_REPLICA_DATABASE_URLS", "replica.internal:5432/memledger"),
        # Every agent request answered 503 rate_limiter_unavailable.
        ("REDIS_URL", "cache.internal:6379"),
        # Django's GIS backend: every process died wanting the GDAL library, naming nothing.
        ("DATABASE_URL", "postgis://memledger_app:s3cret@db.internal:5432/memledger"),
    ],
)
def test_a_url_without_a_known_scheme_is_refused_naming_the_variable(variable, value, tmp_path):
    env = {variable: value}
    if variable == "DATABASE_OWNER_URL":
        env["DATABASE_URL"] = "postgres://memledger_app:s3cret@db.internal:5432/memledger"
    result = _check(tmp_path, **env)
    assert result.returncode != 0, f"{variable}={value!r} was accepted: {result.stdout[-200:]}"
    assert variable in _last_line(result.stderr), _last_line(result.stderr)
    assert "s3cret" not in result.stderr  # a URL's password is never printed


def test_an_empty_embedded_server_folder_is_the_default(monkeypatch, tmp_path):
    """``MEMLEDGER_EMBEDDED_PGDATA=`` was ``Path("")``: the embedded server would have been
    created in (or a stop looked for it in) whatever folder the process started from."""
    from config.embedded import _data_dir

    monkeypatch.setenv("MEMLEDGER_EMBEDDED_PGDATA", "")
    assert _data_dir(tmp_path) == tmp_path / ".data" / "postgres"


def test_a_psql_database_url_is_still_accepted(tmp_path):
    """``psql://`` is one of django-environ's PostgreSQL schemes (its own documentation's
    example, ``DATABASE_URL=psql://user:...@127.0.0.1:8458/database``), read as Django's
    PostgreSQL backend until stop 50, which refused it at first (its review)."""
    engine = _setting(
        tmp_path,
        "s.DATABASES['default']['ENGINE']",
        MEMLEDGER_DATA_DIR=str(tmp_path),
        DATABASE_URL="psql://memledger_app:pw@db.example:5432/memledger",
    )
    assert engine == "django.db.backends.postgresql"


@pytest.mark.parametrize(
    ("url", "secret"),
    [
        # A generated (base64) password with a "/" not percent-encoded.
        ("postgres://memledger:Zq9SecretPart/rest@db.example:5432/memledger", "Zq9SecretPart"),
        # A password with a "[".
        ("postgres://memledger:Zq9Secret[Part@db.example:5432/memledger", "Zq9Secret"),
    ],
)
def test_a_malformed_database_url_is_refused_naming_it_without_its_password(tmp_path, url, secret):
    """README: a malformed setting "stops every process at start with an error naming it ...
    (the error never shows the URL, which may hold a password)"."""
    result = _check(tmp_path, DATABASE_URL=url)
    assert result.returncode != 0
    assert secret not in result.stderr, result.stderr[-400:]
    assert "DATABASE_URL" in _last_line(result.stderr), _last_line(result.stderr)


def test_a_broker_url_of_several_sentinels_is_accepted(tmp_path):
    """kombu's Sentinel form names several sentinels separated by ";": parsed as one URL, its
    "port" was no number, and every process refused to start, saying a character of the
    password may need percent-encoding (stop 52's review of its own check)."""
    url = "sentinel://127.0.0.1:26379;sentinel://127.0.0.1:26380"
    assert _setting(tmp_path, "s.CELERY_BROKER_URL", CELERY_BROKER_URL=url) == url


CENTURY_SECONDS = 876_000 * 3600  # config.env.MAX_HOURS, in seconds


@pytest.mark.parametrize(
    ("setting", "module"),
    [
        ("DB_CONNECT_TIMEOUT", "config.settings.test"),
        ("DJANGO_CONN_MAX_AGE", "config.settings.test"),
        ("DJANGO_SECURE_HSTS_SECONDS", "config.settings.production"),
    ],
)
def test_a_number_of_seconds_above_a_century_is_refused_at_start(setting, module, tmp_path):
    """README, "Configuration": a number of seconds above a century stops the process at
    start; these three took any number (stop 53's audit of the docs)."""
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": module,
        "DJANGO_SECRET_KEY": "k" * 64,
        "PYTHONPATH": str(processes.ROOT),
        setting: str(CENTURY_SECONDS * 10),
    }
    result = subprocess.run(  # noqa: S603 - this interpreter, a fixed snippet
        [sys.executable, "-c", "from django.conf import settings; settings.DATABASES"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0, f"{setting}={CENTURY_SECONDS * 10} was accepted at start"
    assert setting in result.stderr.strip().splitlines()[-1], result.stderr[-500:]


_TEST_NAMES = (
    "import json, django; django.setup()\n"
    "from django.conf import settings\n"
    "print(json.dumps({'database': settings.DATABASES['default']['TEST']['NAME'],\n"
    "    'ledger': str(settings.MEMLEDGER_DELETION_LEDGER),\n"
    "    'cache': str(settings.CACHES['default']['LOCATION'])}))"
)


@pytest.mark.parametrize("worker", ["", "gw0"])
def test_an_empty_test_database_name_is_its_documented_default(worker):
    """README: "An empty variable is its default", ``TEST_DATABASE_NAME``'s ``test_memledger``.
    Read with ``env.str``, ``TEST_DATABASE_NAME=`` was the empty text: a pytest-xdist worker's
    database was ``_gw0``, its journal ``.data/test-ledger/_gw0.jsonl``, and without a worker
    the cache was the shared ``.data/test-cache`` folder itself (stop 55's audit of the docs)."""
    parsed = processes.run_python_json(
        _TEST_NAMES, TEST_DATABASE_NAME="", PYTEST_XDIST_WORKER=worker
    )
    expected = f"test_memledger_{worker}" if worker else "test_memledger"
    assert parsed["database"] == expected, parsed
    assert parsed["ledger"].endswith(f"/{expected}.jsonl"), parsed
    assert parsed["cache"].endswith(f"/{expected}"), parsed
