"""Production settings are safe by default and refuse to start without a real secret."""

import os
import re
import secrets
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass

import pytest

from tests import processes


def run_manage(*args, **env):
    # The browser tests allow Django's async-unsafe calls in this process; production must not.
    return processes.run_manage(
        *args, settings="config.settings.production", unset=("DJANGO_ALLOW_ASYNC_UNSAFE",), **env
    )


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    secret = secrets.token_urlsafe(64)
    # Before collectstatic, the deployment check says what is missing.
    result = run_manage("check", "--deploy", DJANGO_SECRET_KEY=secret, DJANGO_STATIC_ROOT=tmp_path)
    assert result.returncode != 0
    assert "memory_core.E004" in result.stderr and "collectstatic" in result.stderr
    collected = run_manage(
        "collectstatic", "--noinput", DJANGO_SECRET_KEY=secret, DJANGO_STATIC_ROOT=tmp_path
    )
    assert collected.returncode == 0, collected.stderr
    result = run_manage(
        "check",
        "--deploy",
        DJANGO_SECRET_KEY=secret,
        DJANGO_STATIC_ROOT=tmp_path,
        REDIS_URL="redis://127.0.0.1",
    )
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout
    # Without Redis, the default cache is memledger's locking file cache, whose counters
    # are exact across the host's processes: no warning (Django's own file cache is warned
    # about, below).
    without_redis = processes.run_manage(
        "check",
        "--deploy",
        settings="config.settings.production",
        unset=("DJANGO_ALLOW_ASYNC_UNSAFE", "REDIS_URL"),
        DJANGO_SECRET_KEY=secret,
        DJANGO_STATIC_ROOT=tmp_path,
    )
    assert without_redis.returncode == 0, without_redis.stderr
    assert "memory_core.W002" not in without_redis.stderr + without_redis.stdout


@pytest.mark.django_db
def test_production_serves_the_collected_static_files(tmp_path, monkeypatch):
    # gunicorn config.wsgi with production settings, as deployed: the portal's CSS and
    # script and the admin's CSS come from the application (WhiteNoise), after collectstatic.
    from django.db import connection

    from memory_core.benchmarks.load import start_gunicorn

    static = tmp_path / "static"
    secret = secrets.token_urlsafe(64)
    collected = run_manage(
        "collectstatic", "--noinput", DJANGO_SECRET_KEY=secret, DJANGO_STATIC_ROOT=static
    )
    assert collected.returncode == 0, collected.stderr
    monkeypatch.setenv("DJANGO_STATIC_ROOT", str(static))
    monkeypatch.setenv("MEMLEDGER_WARM_UP", "false")  # no model: static files only
    server = start_gunicorn(
        database=connection.settings_dict["NAME"],
        workers=1,
        threads=1,
        torch_threads=1,
        log_dir=tmp_path,
    )
    base = f"http://127.0.0.1:{server.port}"
    try:
        css = _get(f"{base}/static/portal/portal.css")
        assert css.status == 200 and css.body == (static / "portal" / "portal.css").read_bytes()
        assert css.headers["Content-Type"].startswith("text/css")
        assert _get(f"{base}/static/portal/deletion.js").status == 200
        assert _get(f"{base}/static/admin/css/base.css").status == 200
        # A page links the hashed names, which are cached for a year.
        page = _get(f"{base}/accounts/login/")
        assert page.status == 200
        linked = re.search(rb'href="(/static/portal/portal\.[0-9a-f]{12}\.css)"', page.body)
        assert linked, page.body[:500]
        hashed = _get(base + linked.group(1).decode())
        assert hashed.status == 200 and hashed.body == css.body
        assert "max-age=315360000" in hashed.headers["Cache-Control"]
        assert _get(f"{base}/static/portal/nothing.css").status == 404
    finally:
        server.stop()


@dataclass
class _Response:
    status: int
    headers: dict
    body: bytes


def _get(url: str) -> _Response:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 - local server
            return _Response(response.status, dict(response.headers), response.read())
    except urllib.error.HTTPError as error:
        return _Response(error.code, dict(error.headers), error.read())


def test_production_refuses_a_missing_or_weak_secret():
    for weak in ("", "short", "local-" + "x" * 60):
        result = run_manage("check", DJANGO_SECRET_KEY=weak)
        assert result.returncode != 0
        assert "DJANGO_SECRET_KEY must be set" in result.stderr


def test_production_refuses_a_weak_old_secret_among_the_fallbacks():
    """An old key in DJANGO_SECRET_KEY_FALLBACKS still verifies subject tokens and sessions:
    a weak one was accepted beside a strong current key."""
    secret = secrets.token_urlsafe(64)
    result = run_manage(
        "check", DJANGO_SECRET_KEY=secret,
        DJANGO_SECRET_KEY_FALLBACKS=f"{secrets.token_urlsafe(64)},short",
    )  # fmt: skip
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY_FALLBACKS" in result.stderr
    strong = run_manage(
        "check", DJANGO_SECRET_KEY=secret, DJANGO_SECRET_KEY_FALLBACKS=secrets.token_urlsafe(64)
    )
    assert strong.returncode == 0, strong.stderr


def test_a_deployment_without_redis_is_warned_that_rate_limits_can_lose_counts(settings, tmp_path):
    from memory_core.checks import check_throttle_cache

    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
                                   "LOCATION": str(tmp_path)}}  # fmt: skip
    assert [w.id for w in check_throttle_cache(None)] == ["memory_core.W002"]
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": "redis://127.0.0.1:6379"}}  # fmt: skip
    assert check_throttle_cache(None) == []
    settings.CACHES = {"default": {"BACKEND": "memory_core.cache_backends.LockingFileBasedCache",
                                   "LOCATION": str(tmp_path)}}  # fmt: skip
    assert check_throttle_cache(None) == []


@pytest.mark.parametrize("days", [0, -1, 36_501])
def test_a_backup_retention_out_of_range_fails_the_checks(days):
    """A negative period let prune_deletion_journal drop lines a replay needs and the sweep
    journal nothing it had missed; a huge one overflowed. Nothing checked it; then only the
    checks (memory_core.E005), which gunicorn and beat never run: the settings refuse it now
    (stop 52), and the check stays for settings made in code."""
    result = run_manage(
        "check",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(64),
        MEMLEDGER_BACKUP_RETENTION_DAYS=str(days),
    )
    assert result.returncode != 0
    assert (
        f"MEMLEDGER_BACKUP_RETENTION_DAYS is '{days}': it must be a whole number from 1 to 36,500."
        in result.stderr
    )


def test_a_backup_retention_in_range_passes_the_checks():
    from memory_core.checks import check_backup_retention_days

    assert check_backup_retention_days(None) == []


def test_comma_separated_settings_ignore_the_spaces_around_commas(tmp_path):
    code = (
        "import json, django; django.setup()\n"
        "from django.conf import settings\n"
        "from django.http.request import validate_host\n"
        "print(json.dumps({'hosts': settings.ALLOWED_HOSTS,\n"
        "    'b_allowed': validate_host('b.example.com', settings.ALLOWED_HOSTS),\n"
        "    'eval': settings.MEMLEDGER_EVAL_DATA_DIRS,\n"
        "    'results': settings.MEMLEDGER_EVALUATION_RESULTS,\n"
        "    'replicas': [settings.DATABASES[a]['HOST'] for a in "
        "settings.MEMLEDGER_REPLICA_DATABASES]}))"
    )
    parsed = processes.run_python_json(
        code,
        settings="config.settings.local",
        DJANGO_ALLOWED_HOSTS="a.example.com, b.example.com ,",
        MEMLEDGER_EVAL_DATA_DIRS=f"{tmp_path}/a, {tmp_path}/b",
        MEMLEDGER_EVALUATION_RESULTS=f"{tmp_path}/latest.json, /shared/results",
        MEMLEDGER_REPLICA_DATABASE_URLS="postgres://u@r1:5432/m,  postgres://u@r2:5432/m",
    )
    assert parsed == {
        "hosts": ["a.example.com", "b.example.com"],
        "b_allowed": True,
        "eval": [f"{tmp_path}/a", f"{tmp_path}/b"],
        "results": [f"{tmp_path}/latest.json", "/shared/results"],
        "replicas": ["r1", "r2"],
    }


def test_a_trusted_origin_passes_the_csrf_check_behind_a_proxy_that_rewrites_host():
    # The proxy serves https://memory.example.com and passes Host: 10.0.0.5:8000.
    code = (
        "import json, django; django.setup()\n"
        "from django.conf import settings\n"
        "from django.middleware.csrf import CsrfViewMiddleware\n"
        "from django.test import RequestFactory\n"
        "def verdict(origin):\n"
        "    request = RequestFactory().post('/accounts/login/', secure=True,\n"
        "        HTTP_HOST='10.0.0.5:8000', HTTP_ORIGIN=origin)\n"
        "    middleware = CsrfViewMiddleware(lambda r: None)\n"
        "    return middleware._origin_verified(request)\n"
        "print(json.dumps({'origins': settings.CSRF_TRUSTED_ORIGINS,\n"
        "    'proxy': verdict('https://memory.example.com'),\n"
        "    'other': verdict('https://evil.example.net')}))"
    )
    parsed = processes.run_python_json(
        code,
        settings="config.settings.local",
        DJANGO_ALLOWED_HOSTS="10.0.0.5",
        DJANGO_CSRF_TRUSTED_ORIGINS="https://memory.example.com, https://admin.example.com",
    )
    assert parsed == {
        "origins": ["https://memory.example.com", "https://admin.example.com"],
        "proxy": True,
        "other": False,
    }


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("import config.wsgi", "config.settings.production False"),  # gunicorn config.wsgi
        ("import config.celery_app", "config.settings.production False"),  # celery -A ...
    ],
)
def test_gunicorn_and_celery_default_to_the_production_settings(entry, expected):
    # config/__init__ imports the Celery app first: its default was "local", so gunicorn
    # config.wsgi without DJANGO_SETTINGS_MODULE served with DEBUG on and a public secret.
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE")
    }
    env.update(DJANGO_SECRET_KEY=secrets.token_urlsafe(64), MEMLEDGER_WARM_UP="false")
    code = f"{entry}\nfrom django.conf import settings as s\nprint(s.SETTINGS_MODULE, s.DEBUG)"
    result = subprocess.run(  # noqa: S603 - this interpreter, a fixed snippet
        [sys.executable, "-c", code],
        cwd=processes.ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == expected


def test_manage_py_still_defaults_to_the_local_settings():
    result = processes.run_manage(
        "shell", "-c", "from django.conf import settings; print(settings.SETTINGS_MODULE)",
        unset=("DJANGO_SETTINGS_MODULE",),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "config.settings.local"


def test_the_redis_cache_gives_up_on_a_hung_server_within_its_timeout():
    """Without socket timeouts a Redis that hangs held each request until gunicorn killed
    its worker (30 s) and a deletion's cache step until Celery's time limit."""
    code = (
        "import json, django; django.setup()\n"
        "from django.conf import settings\n"
        "print(json.dumps(settings.CACHES['default']))"
    )
    default = processes.run_python_json(
        code, settings="config.settings.local", REDIS_URL="redis://127.0.0.1:6379/0"
    )
    assert default["OPTIONS"] == {"socket_connect_timeout": 2.0, "socket_timeout": 2.0}
    chosen = processes.run_python_json(
        code,
        settings="config.settings.local",
        REDIS_URL="redis://127.0.0.1:6379/0",
        REDIS_TIMEOUT_SECONDS="0.5",
    )
    assert chosen["OPTIONS"] == {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}


def test_each_test_worker_of_a_run_has_its_own_database_and_folders():
    """Two pytest-xdist workers sharing a database would flush each other's rows; sharing a
    broker folder or a journal, take each other's tasks and lines."""
    code = (
        "import json, django; django.setup()\n"
        "from django.conf import settings\n"
        "print(json.dumps({'database': settings.DATABASES['default']['TEST']['NAME'],\n"
        "    'paths': [str(p) for p in (settings.CACHES['default']['LOCATION'],\n"
        "        settings.MEMLEDGER_EXPORT_DIR, settings.MEMLEDGER_DELETION_LEDGER,\n"
        "        *settings.MEMLEDGER_EVAL_DATA_DIRS)]}))"
    )
    seen = {}
    for worker in ("", "gw0", "gw1"):
        parsed = processes.run_python_json(
            code, TEST_DATABASE_NAME="test_run", PYTEST_XDIST_WORKER=worker
        )
        seen[worker] = parsed
        expected = f"test_run_{worker}" if worker else "test_run"
        assert parsed["database"] == expected
        assert all(expected in os.path.basename(path) for path in parsed["paths"]), parsed
    paths = [path for parsed in seen.values() for path in parsed["paths"]]
    assert len(set(paths)) == len(paths)


@pytest.mark.parametrize("setting", ["MEMLEDGER_RATE_LIMIT", "MEMLEDGER_WRITE_QUOTA"])
@pytest.mark.parametrize(
    "rate",
    ["100/week", "100 per minute", "1,200/min", "0/min", "00/day", "5/month", "10/dozen"],
)
def test_a_malformed_rate_is_refused_at_start_naming_the_variable(setting, rate):
    """ "100/week" passed ``manage.py check`` and made every API request a 500 (KeyError in
    the throttle's parse; stop 48's audit); "0/min" every one a 400 ``over_limit`` telling
    the client to send smaller batches (stop 49's); "5/month" was read by its first letter,
    5 a minute, and "10/dozen" 10 a day (stop 52's)."""
    result = processes.run_manage("check", **{setting: rate})
    assert result.returncode != 0
    assert f"{setting} is {rate!r}: a rate is a count of at least 1 and a period" in result.stderr


def test_the_torch_runtime_alone_runs_the_model_as_shipped():
    """Its precision stayed int8, which only the onnx runtime runs: every embedding failed
    and every write answered 503 (stop 48's audit)."""
    shown = processes.run_manage(
        "shell",
        "-c",
        "from django.conf import settings as s; print(s.MEMLEDGER_EMBEDDER['PRECISION'])",
        MEMLEDGER_EMBEDDING_RUNTIME="torch",
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip().splitlines()[-1] == "fp32"
