"""A write's answer shows its value as stored.

Stop 57's audit of the write API found that a write whose value held a whole number written
with an exponent (``1e+20``) was answered with the float the request parsed, while jsonb
keeps it as ``100000000000000000000`` (docs/api.md, ``value``: "each number written in full,
as PostgreSQL keeps it"), which its idempotent replay and the memory's detail answered: the
same request got two bodies (docs/api.md, "Idempotency keys"). The answer reads the stored
value now (``IdempotentWriteMixin.shown``), in the query that reads what the caller may see.
"""

import pytest

from tests.api.test_memories import URL, body

pytestmark = pytest.mark.django_db
BATCH = "/api/v1/memories/batch"


@pytest.mark.parametrize("number", [1e20, 1e308])
def test_a_replay_answers_the_value_the_first_answer_did(api_client, number):
    data = body(value={"n": number})
    first = api_client.post(URL, data, format="json", HTTP_IDEMPOTENCY_KEY="v")
    assert first.status_code == 201, first.json()
    replay = api_client.post(URL, data, format="json", HTTP_IDEMPOTENCY_KEY="v")
    assert replay["Idempotent-Replayed"] == "true"
    answered, replayed = first.json()["memory"]["value"]["n"], replay.json()["memory"]["value"]["n"]
    # The same number of the same JSON type: 1e+20 (a float) was replayed as the integer
    # 100000000000000000000, and 1e+308 as 10**308, which is not the float 1e+308.
    assert (type(replayed), replayed) == (type(answered), answered)
    assert answered == 10**20 if number == 1e20 else answered == 10**308


def test_the_write_answers_the_value_the_detail_answers(api_client):
    first = api_client.post(URL, body(value={"n": 1e20, "ok": [1.5, True]}), format="json")
    assert first.status_code == 201, first.json()
    detail = api_client.get(f"{URL}/{first.json()['memory']['id']}").json()
    answered, stored = first.json()["memory"]["value"], detail["memory"]["value"]
    assert answered == stored == {"n": 10**20, "ok": [1.5, True]}
    assert type(answered["n"]) is type(stored["n"]) is int


def test_a_batch_replay_answers_the_value_the_first_answer_did(api_client):
    items = [body(value=[1e20])]
    first = api_client.post(BATCH, {"items": items}, format="json", HTTP_IDEMPOTENCY_KEY="b")
    assert first.status_code == 200, first.json()
    replay = api_client.post(BATCH, {"items": items}, format="json", HTTP_IDEMPOTENCY_KEY="b")
    answered = first.json()["results"][0]["memory"]["value"][0]
    replayed = replay.json()["results"][0]["memory"]["value"][0]
    assert (type(replayed), replayed) == (type(answered), answered) == (int, 10**20)
