"""Settings for the test suite."""

import os

from .base import *

DEBUG = False
SECRET_KEY = SECRET_KEY or "test-only-not-secret"  # noqa: S105
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Several test runs may share one embedded server (a developer and CI, or parallel helpers),
# and one run's pytest-xdist workers (``make test`` runs two) each have their own database:
# the worker's name, which its child processes inherit, follows the run's.
_RUN = env_text("TEST_DATABASE_NAME", "test_memledger")  # empty: the default (stop 55)
_WORKER = env.str("PYTEST_XDIST_WORKER", default="")
if _WORKER:
    _RUN = f"{_RUN}_{_WORKER}"
DATABASES["default"]["TEST"] = {"NAME": _RUN}
DATABASES["default"]["CONN_MAX_AGE"] = 0
# Each process's connections carry its name: the last teardown tells a connection this
# process left open (a test's bug, which fails the run) from another process's.
DATABASES["default"]["OPTIONS"]["application_name"] = f"memledger-tests-{os.getpid()}"
# A second connection to the test database, standing in for a read replica where a test asks
# for it (a replica's connection is its own: tests/deletion/test_stores_extra.py).
DATABASES["replica"] = {
    **DATABASES["default"],
    "ATOMIC_REQUESTS": False,  # requests never use it
    "TEST": {"MIRROR": "default"},
}
_CACHE_DIR = DATA_DIR / "test-cache" / _RUN
CACHES = {
    "default": {
        "BACKEND": "memory_core.cache_backends.LockingFileBasedCache",
        "LOCATION": str(_CACHE_DIR),
    },
    "throttle": {
        "BACKEND": "memory_core.cache_backends.LockingFileBasedCache",
        "LOCATION": str(_CACHE_DIR / "throttle"),
    },
    "logins": {
        "BACKEND": "memory_core.cache_backends.LockingFileBasedCache",
        "LOCATION": str(_CACHE_DIR / "logins"),
        "OPTIONS": {"CULL_LIVE": False},
    },
}

# Per test database (one per parallel run): the broker folder, exports, evaluation files and
# the deletion journal, so runs never steal each other's tasks or files.
if CELERY_BROKER_URL.startswith("filesystem://"):
    BROKER_DIR = DATA_DIR / "test-broker" / _RUN
    CELERY_BROKER_TRANSPORT_OPTIONS = filesystem_broker_options(BROKER_DIR)
MEMLEDGER_EXPORT_DIR = DATA_DIR / "test-exports" / _RUN
MEMLEDGER_EVAL_DATA_DIRS = [str(DATA_DIR / "test-eval" / _RUN)]
MEMLEDGER_DELETION_LEDGER = DATA_DIR / "test-ledger" / f"{_RUN}.jsonl"
# Test-only fault injection for the deletion runner, e.g. "exports=sleep:30" or
# "exports=fail:2" (memory_core/deletion/runner.py); never read outside the test settings.
MEMLEDGER_DELETION_FAULTS = env.str("MEMLEDGER_DELETION_FAULTS", default="")

# Row-level security in the test process (tests/rls_support.py): a test-client request runs
# without the test body's platform mode, as in production.
MIDDLEWARE = ["tests.rls_support.RequestIsolationMiddleware", *MIDDLEWARE]

# The suite loads the model when a test needs it, not when a module imports config.wsgi.
MEMLEDGER_WARM_UP = False
