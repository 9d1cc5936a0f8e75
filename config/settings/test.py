"""Settings for the test suite."""

from .base import *

DEBUG = False
SECRET_KEY = SECRET_KEY or "test-only-not-secret"  # noqa: S105
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Several test runs may share one embedded server (a developer and CI, or parallel helpers).
DATABASES["default"]["TEST"] = {"NAME": env.str("TEST_DATABASE_NAME", default="test_memledger")}
DATABASES["default"]["CONN_MAX_AGE"] = 0
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(DATA_DIR / "test-cache" / env.str("TEST_DATABASE_NAME", "test_memledger")),
    }
}
