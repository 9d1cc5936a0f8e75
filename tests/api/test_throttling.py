"""Each API key has its own rate limit and write quota; one key's flood leaves others alone."""

import pytest
from django.core.cache import cache
from django.test import override_settings

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _clear_counters():
    cache.clear()
    yield
    cache.clear()


@override_settings(MEMLEDGER_RATE_LIMIT="3/min")
def test_flooding_key_is_limited_and_other_tenant_is_not(api_client, other_api_client):
    statuses = [api_client.get("/api/v1/whoami").status_code for _ in range(5)]
    assert statuses == [200, 200, 200, 429, 429]
    limited = api_client.get("/api/v1/whoami")
    assert limited.json()["error"]["code"] == "rate_limited"
    assert int(limited["Retry-After"]) > 0
    assert other_api_client.get("/api/v1/whoami").status_code == 200


@override_settings(MEMLEDGER_WRITE_QUOTA="2/day", MEMLEDGER_RATE_LIMIT=None)
def test_write_quota_counts_only_writes(api_client):
    # POST to a read-only endpoint still counts as a write attempt against the quota.
    codes = [api_client.post("/api/v1/whoami", {}, format="json").status_code for _ in range(3)]
    assert codes == [405, 405, 429]
    assert all(api_client.get("/api/v1/whoami").status_code == 200 for _ in range(5))


@override_settings(MEMLEDGER_WRITE_QUOTA="2/day", MEMLEDGER_RATE_LIMIT=None)
def test_retrieval_is_a_read_and_leaves_the_write_quota_alone(api_client):
    body = {"query": "What does the user prefer?", "context": {"user_id": "dana"}}
    codes = [api_client.post("/api/v1/retrieve", body, format="json").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 200]
    # Writes still have their two.
    write = {"subject": "dana", "memory_type": "episode", "scope": "global",
             "source": {"type": "user_input"}}  # fmt: skip
    statuses = [
        api_client.post("/api/v1/memories", {**write, "content": f"Note {i}."}, format="json")
        for i in range(3)
    ]
    assert [r.status_code for r in statuses][2] == 429
