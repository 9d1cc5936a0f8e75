"""A write's first answer, its idempotent replay and ``GET`` of its memory agree, over bodies
the API normalises (offsets, fractions, padded ids, whole-number floats, sensitive text):
stop 58's audit of the API found them in agreement; kept so that a change shows."""

import pytest

from tests.factories import write_body

pytestmark = pytest.mark.django_db
URL = "/api/v1/memories"


def post(c, url, data, key=None):
    h = {} if key is None else {"HTTP_IDEMPOTENCY_KEY": key}
    return c.post(url, data, format="json", **h)


def detail(c, mid):
    r = c.get(f"{URL}/{mid}")
    assert r.status_code == 200, r.json()
    return r.json()["memory"]


CASES = {
    "plain": write_body(),
    "tz": write_body(valid_until="2027-09-01T00:00:00+05:00"),
    "micro": write_body(valid_until="2027-09-01T00:00:00.1234567Z"),
    "naive": write_body(valid_until="2027-09-01T00:00:00"),
    "date": write_body(valid_until="2027-09-01"),
    "scope_ws": write_body(scope=" project:atlas ", memory_type="project_constraint"),
    "env": write_body(environment="Staging"),
    "subject_ws": write_body(subject=" user-1 "),
    "conf": write_body(confidence=0.1 + 0.2),
    "inference": write_body(
        source={"type": "model_inference", "conversation_id": "c", "message_id": "m"},
        memory_type="episode",
        confidence=0.95,
    ),
    "tool": write_body(
        source={
            "type": "verified_tool_output",
            "conversation_id": "c",
            "message_id": "m",
            "tool": "gh",
        },
        memory_type="incident",
    ),
    "value": write_body(value={"b": 1, "a": [1.0, 2.50, 1e2, -0.0]}),
    "sensitive": write_body(content="User has asthma and uses an inhaler."),
    "ids_ws": write_body(
        session_id=" s-1 ",
        task_id=" t-1 ",
        source={"type": "user_input", "conversation_id": " c-1 ", "message_id": " m 1 "},
    ),
    "content_ws": write_body(content="  User prefers concise answers.  \n"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_write_vs_get_vs_replay(api_client, name):
    """A replay answers as the first answer did, and the first answer's memory is what GET shows."""
    data = CASES[name]
    first = post(api_client, URL, data, key=f"k-{name}")
    replay = post(api_client, URL, data, key=f"k-{name}")
    assert replay.status_code == first.status_code
    assert replay.json() == first.json()
    mem = first.json().get("memory")
    if mem:
        assert detail(api_client, mem["id"]) == mem
