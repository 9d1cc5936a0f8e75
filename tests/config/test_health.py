"""The load balancer's probes: /healthz (the process answers) and /readyz (it can serve)."""

import json

import psycopg
import pytest
from django.core.cache.backends.base import BaseCache
from django.db import connection
from django.test import override_settings

from memory_core.embeddings import EmbeddingError, get_embedder
from memory_core.readiness import readiness_forget
from tests.processes import run_manage, run_python_json, shell_without_database
from tests.rls_support import owner_conninfo

pytestmark = pytest.mark.django_db

PROBE = r"""
import json
from django.test import Client
client = Client()
print("RESULTS" + json.dumps({
    path: {"status": r.status_code, "body": json.loads(r.content)}
    for path in ("/healthz", "/readyz")
    for r in [client.get(path)]
}))
"""


@pytest.fixture(autouse=True)
def _forget_migrations():
    readiness_forget()
    yield
    readiness_forget()


def test_liveness_answers_ok_and_is_never_cached(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["Cache-Control"] == "no-store"


def test_readiness_names_its_checks(client):
    response = client.get("/readyz")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "ready"
    assert body["checks"]["database"] == {"ok": True}
    assert body["checks"]["migrations"] == {"ok": True}
    assert body["checks"]["rate_limit_cache"] == {"ok": True}
    assert isinstance(body["checks"]["embedding_model"]["loaded"], bool)


def test_a_rate_limit_cache_that_is_down_is_not_ready(client, settings):
    """Every agent request of a process whose Redis is down answers 503
    rate_limiter_unavailable: /readyz said ready, and a load balancer kept sending it them."""
    settings.CACHES = {
        **settings.CACHES,
        "throttle": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        },
    }
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["rate_limit_cache"] == {
        "ok": False,
        "code": "cache_unavailable",
    }


def test_readiness_ignores_a_down_counter_cache_when_no_rate_limit_or_quota_is_set(
    client, api_client, settings
):
    """With MEMLEDGER_RATE_LIMIT and MEMLEDGER_WRITE_QUOTA empty no request counts in the
    throttle cache, yet its outage made /readyz answer 503 ``cache_unavailable`` while every
    agent request was served (stop 58's audit of failures): it is not asked then."""
    settings.MEMLEDGER_RATE_LIMIT = None
    settings.MEMLEDGER_WRITE_QUOTA = None
    settings.CACHES = {
        **settings.CACHES,
        "throttle": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        },
    }
    served = api_client.get("/api/v1/whoami")
    assert served.status_code == 200, served.content
    response = client.get("/readyz")
    assert response.status_code == 200, response.json()
    assert response.json()["checks"]["rate_limit_cache"] == {"ok": True, "used": False}


class ReadOnlyCache(BaseCache):
    """A cache that still reads but no longer writes: a full or read-only cache folder, or
    Redis out of memory under ``noeviction`` (reads pass, INCR is refused)."""

    def __init__(self, location, params):
        super().__init__(params)

    def get(self, key, default=None, version=None):
        return default

    def _full(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    add = set = touch = incr = decr = delete = _full


def test_a_rate_limit_cache_that_reads_and_cannot_count_is_not_ready(client, api_client, settings):
    """A read alone passed it, while every agent request answered 503: the counters could not
    be written (stop 47's audit)."""
    settings.CACHES = {
        **settings.CACHES,
        "throttle": {"BACKEND": "tests.config.test_health.ReadOnlyCache"},
    }
    api_client.raise_request_exception = False
    refused = api_client.get("/api/v1/whoami")
    assert refused.status_code == 503
    assert refused.json()["error"]["code"] == "rate_limiter_unavailable"
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["rate_limit_cache"] == {
        "ok": False,
        "code": "cache_unavailable",
    }


def test_the_readiness_counter_is_kept_in_the_rate_limits_cache(client):
    from django.core.cache import caches

    from memory_core.cache_backends import counter_cache_alias
    from memory_core.readiness import READYZ_COUNTER

    assert client.get("/readyz").status_code == 200
    counted = caches[counter_cache_alias()].get(READYZ_COUNTER)
    assert client.get("/readyz").status_code == 200
    assert caches[counter_cache_alias()].get(READYZ_COUNTER) == counted + 1


def test_an_empty_readiness_counter_file_is_recreated_and_the_probe_stays_ready(client, api_client):
    """Stop 59's audit of rate limits found that an empty file for the readiness counter (a
    crash as the file was replaced), a miss to Django's file cache, made the probe say
    ``cache_unavailable`` for ever: ``LockingFileBasedCache.incr`` unpickled it unguarded
    (EOFError, not ValueError) and its key is fixed, while agent requests counted in the same
    cache were served. The entry should be recreated and the probe say ready."""
    from django.core.cache import caches

    from memory_core.cache_backends import counter_cache_alias
    from memory_core.readiness import READYZ_COUNTER

    assert client.get("/readyz").status_code == 200
    backend = caches[counter_cache_alias()]
    open(backend._key_to_file(READYZ_COUNTER), "wb").close()  # emptied
    assert api_client.get("/api/v1/whoami").status_code == 200  # the cache counts fine
    statuses = [client.get("/readyz").status_code for _ in range(3)]
    assert statuses == [200, 200, 200], client.get("/readyz").json()["checks"]


def test_readiness_says_loaded_only_once_the_model_has_loaded(client, settings):
    # An embedder made with weights that fail their check is made, and never loads: the
    # probe must not call it loaded (it did while it counted embedders made).
    wrong_weights = {**settings.MEMLEDGER_EMBEDDER, "SHA256": "0" * 64}
    with override_settings(MEMLEDGER_EMBEDDER=wrong_weights):
        with pytest.raises(EmbeddingError):
            get_embedder().embed(["a text"])
        body = client.get("/readyz").json()
        assert body["checks"]["embedding_model"] == {"ok": True, "loaded": False}
    get_embedder().embed(["a text"])  # the configured model, once it has embedded
    assert client.get("/readyz").json()["checks"]["embedding_model"]["loaded"] is True


@override_settings(SECURE_SSL_REDIRECT=True, ALLOWED_HOSTS=["memory.example.com"])
def test_probes_pass_the_https_redirect_and_the_host_check(client):
    # A load balancer probes over plain HTTP, with the instance's address as its Host.
    for path in ("/healthz", "/readyz"):
        assert client.get(path, HTTP_HOST="10.0.3.7").status_code == 200, path
    # Any other path is turned away by them, as before.
    assert client.get("/api/v1/whoami", HTTP_HOST="10.0.3.7").status_code in (301, 400)


def test_head_answers_the_status_without_a_body(client):
    response = client.head("/readyz")
    assert response.status_code == 200
    assert response.content == b""


@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_other_methods_are_405_with_a_stable_code(client, method):
    response = getattr(client, method)("/healthz")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert response["Allow"] == "GET, HEAD"


def test_database_down_is_not_ready_but_alive():
    result = shell_without_database(PROBE)
    assert result.returncode == 0, result.stderr[-3000:]
    line = next(x for x in result.stdout.splitlines() if x.startswith("RESULTS"))
    results = json.loads(line[len("RESULTS") :])
    assert results["/healthz"] == {"status": 200, "body": {"status": "ok"}}
    assert results["/readyz"]["status"] == 503
    checks = results["/readyz"]["body"]["checks"]
    assert results["/readyz"]["body"]["status"] == "not_ready"
    assert checks["database"] == {"ok": False, "code": "database_unavailable"}
    assert checks["migrations"]["ok"] is False


def _admin(sql: str):
    with psycopg.connect(**owner_conninfo(), dbname="postgres", autocommit=True) as conn:
        conn.execute(sql)


@pytest.mark.slow
def test_a_schema_behind_the_release_is_not_ready():
    # A process of a new release started before `migrate`: out of the load balancer.
    scratch = f"{connection.settings_dict['NAME']}_behind"
    _admin(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')
    _admin(f'CREATE DATABASE "{scratch}"')
    try:
        migrated = run_manage(
            "migrate", "memory_core", "0015", "--noinput", timeout=180, MEMLEDGER_DB_NAME=scratch
        )
        assert migrated.returncode == 0, migrated.stderr + migrated.stdout
        code = PROBE.replace('print("RESULTS" + ', "print(").replace(
            "import json\n", "import json, django\ndjango.setup()\n", 1
        )
        results = run_python_json(code, MEMLEDGER_DB_NAME=scratch)
        assert results["/healthz"]["status"] == 200
        assert results["/readyz"]["status"] == 503
        migrations = results["/readyz"]["body"]["checks"]["migrations"]
        assert migrations["ok"] is False and migrations["code"] == "migrations_pending"
        assert migrations["pending"] >= 1
        assert results["/readyz"]["body"]["checks"]["database"] == {"ok": True}
    finally:
        _admin(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')


class PlainEmbedder:
    """An embedder providing exactly what ``memory_core.embeddings.Embedder`` asks for."""

    def __init__(self, *, dimensions=384, **options):
        self.model_name = "plain-test-embedder"
        self.dimensions = dimensions

    def embed(self, texts):
        return [[1.0] + [0.0] * (self.dimensions - 1) for _ in texts]

    def count_tokens(self, text):
        return len(text.split())


@pytest.fixture
def plain_embedder():
    readiness_forget()
    get_embedder.cache_clear()
    backend = "tests.config.test_health.PlainEmbedder"
    with override_settings(MEMLEDGER_EMBEDDER={"BACKEND": backend, "DIMENSIONS": 384}):
        yield
    get_embedder.cache_clear()
    readiness_forget()


def test_readyz_answers_its_json_with_a_documented_custom_embedder(client, plain_embedder):
    """An embedder of the documented interface (README, MEMLEDGER_EMBEDDER_BACKEND) has no
    ``loaded``: once made, every probe was a 500 (stop 50's audit)."""
    client.raise_request_exception = False
    # A retrieval or a write makes the embedder; here it is made directly.
    assert get_embedder().embed(["a text"])
    response = client.get("/readyz")
    assert response.status_code == 200, response.content[:500]
    body = response.json()
    assert body["status"] == "ready"
    assert body["checks"]["embedding_model"] == {"ok": True, "loaded": True}
