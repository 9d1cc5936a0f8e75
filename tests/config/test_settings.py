"""Production settings are safe by default and refuse to start without a real secret."""

import secrets

from tests import processes


def run_manage(*args, **env):
    # The browser tests allow Django's async-unsafe calls in this process; production must not.
    return processes.run_manage(
        *args, settings="config.settings.production", unset=("DJANGO_ALLOW_ASYNC_UNSAFE",), **env
    )


def test_check_deploy_is_clean_with_production_settings():
    result = run_manage("check", "--deploy", DJANGO_SECRET_KEY=secrets.token_urlsafe(64))
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_a_missing_or_weak_secret():
    for weak in ("", "short", "local-" + "x" * 60):
        result = run_manage("check", DJANGO_SECRET_KEY=weak)
        assert result.returncode != 0
        assert "DJANGO_SECRET_KEY must be set" in result.stderr


def test_comma_separated_settings_ignore_the_spaces_around_commas(tmp_path):
    code = (
        "import json, django; django.setup()\n"
        "from django.conf import settings\n"
        "from django.http.request import validate_host\n"
        "print(json.dumps({'hosts': settings.ALLOWED_HOSTS,\n"
        "    'b_allowed': validate_host('b.example.com', settings.ALLOWED_HOSTS),\n"
        "    'eval': settings.MEMLEDGER_EVAL_DATA_DIRS,\n"
        "    'replicas': [settings.DATABASES[a]['HOST'] for a in "
        "settings.MEMLEDGER_REPLICA_DATABASES]}))"
    )
    parsed = processes.run_python_json(
        code,
        settings="config.settings.local",
        DJANGO_ALLOWED_HOSTS="a.example.com, b.example.com ,",
        MEMLEDGER_EVAL_DATA_DIRS=f"{tmp_path}/a, {tmp_path}/b",
        MEMLEDGER_REPLICA_DATABASE_URLS="postgres://u@r1:5432/m,  postgres://u@r2:5432/m",
    )
    assert parsed == {
        "hosts": ["a.example.com", "b.example.com"],
        "b_allowed": True,
        "eval": [f"{tmp_path}/a", f"{tmp_path}/b"],
        "replicas": ["r1", "r2"],
    }
