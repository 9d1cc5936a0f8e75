"""Production settings are safe by default and refuse to start without a real secret."""

import secrets

from tests import processes


def run_manage(*args, **env):
    # The browser tests allow Django's async-unsafe calls in this process; production must not.
    return processes.run_manage(
        *args, settings="config.settings.production", unset=("DJANGO_ALLOW_ASYNC_UNSAFE",), **env
    )


def test_check_deploy_is_clean_with_production_settings():
    key = secrets.token_urlsafe(64)
    result = run_manage("check", "--deploy", DJANGO_SECRET_KEY=key, REDIS_URL="redis://127.0.0.1")
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout
    without_redis = processes.run_manage(
        "check",
        "--deploy",
        settings="config.settings.production",
        unset=("DJANGO_ALLOW_ASYNC_UNSAFE", "REDIS_URL"),
        DJANGO_SECRET_KEY=key,
    )
    assert "memory_core.W001" in without_redis.stderr + without_redis.stdout


def test_production_refuses_a_missing_or_weak_secret():
    for weak in ("", "short", "local-" + "x" * 60):
        result = run_manage("check", DJANGO_SECRET_KEY=weak)
        assert result.returncode != 0
        assert "DJANGO_SECRET_KEY must be set" in result.stderr


def test_a_deployment_without_redis_is_warned_that_rate_limits_can_lose_counts(settings, tmp_path):
    from memory_core.checks import check_throttle_cache

    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
                                   "LOCATION": str(tmp_path)}}  # fmt: skip
    assert [w.id for w in check_throttle_cache(None)] == ["memory_core.W001"]
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": "redis://127.0.0.1:6379"}}  # fmt: skip
    assert check_throttle_cache(None) == []
