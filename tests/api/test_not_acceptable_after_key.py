"""An ``Accept`` header the API cannot satisfy is answered after the key, the permission
and the rate limit, as every other refusal of what a request asks for.

Stop 63's audit of authentication found DRF's ``APIView.initial`` negotiating the answer's
format before it authenticated and throttled, ``api.negotiation.QualityNegotiation`` raising
``NotAcceptable`` there: a request whose ``Accept`` leaves out JSON was answered ``406
not_acceptable`` before the key (401), the permission and the rate limit were looked at, so
such requests never counted against the key's rate limit (docs/api.md: "every request"), the
hole stop 61 closed for the query string, one header over. The refusal now waits for those
checks (``api.negotiation.NotAcceptableLast``).
"""

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from api import throttling
from memory_core.services.api_keys import api_key_create, api_key_revoke

pytestmark = pytest.mark.django_db

HTML = "text/html"


class _Clock:
    def __init__(self, now: float):
        self.now = now

    def time(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def _fixed_clock_and_clean_counters(monkeypatch):
    # 45 s into a minute: every request of a test falls in one slice of the window.
    monkeypatch.setattr(throttling, "time", _Clock(60 * 28_000_000 + 45))
    throttling.counter_cache().clear()
    yield
    throttling.counter_cache().clear()


@override_settings(MEMLEDGER_RATE_LIMIT="3/min")
def test_requests_refused_406_count_against_the_keys_rate_limit(api_client):
    """Three requests of a key limited to 3/min, each asking for HTML: the fourth request
    of the key, an ordinary one, must be refused 429. They never counted, so a key can send
    any number of them (each a request the server parses and answers) without its limit."""
    refused = [api_client.get("/api/v1/whoami", HTTP_ACCEPT=HTML).status_code for _ in range(3)]
    assert refused == [406, 406, 406]
    after = api_client.get("/api/v1/whoami")
    assert after.status_code == 429, (after.status_code, after.content[:200])


def test_a_request_without_a_valid_key_is_401_whatever_it_accepts(agent):
    """docs/api.md: 401 for no API key, an unknown, revoked or expired one. With an ``Accept``
    the API cannot satisfy, such a request is answered 406 instead, before any key is read:
    a revoked key (or none at all) is told only about the format."""
    key, raw = api_key_create(agent=agent)
    api_key_revoke(key=key)
    revoked = APIClient()
    revoked.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert revoked.get("/api/v1/whoami").status_code == 401  # as documented
    answers = {
        "no key": APIClient().get("/api/v1/whoami", HTTP_ACCEPT=HTML),
        "revoked key": revoked.get("/api/v1/whoami", HTTP_ACCEPT=HTML),
    }
    statuses = {name: answer.status_code for name, answer in answers.items()}
    assert statuses == {"no key": 401, "revoked key": 401}


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ("{not json", "application/json"),  # was 400 malformed_json
        ("items=1", "text/plain"),  # was 415 unsupported_media_type
    ],
)
def test_a_batch_whose_accept_excludes_json_is_406_whatever_its_body(
    api_client, body, content_type
):
    """Stop 63's review found that with the 406 raised after the throttles, the write quota's
    throttle priced a batch by reading its body (``MemoryBatchView.items_cost``), so a batch
    whose ``Accept`` leaves out JSON was answered about its body (400 ``malformed_json``, 415)
    where ``POST /api/v1/memories`` and every other endpoint answer 406, as the batch did
    before; stop 59 fixed this order for the 405. Such a request now costs nothing of the
    quota (``ApiKeyWriteQuotaThrottle.cost``) and is 406 whatever its body."""
    answer = api_client.generic(
        "POST", "/api/v1/memories/batch", body, content_type=content_type, HTTP_ACCEPT=HTML
    )
    assert (answer.status_code, answer.json()["error"]["code"]) == (406, "not_acceptable")
