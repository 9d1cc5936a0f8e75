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
