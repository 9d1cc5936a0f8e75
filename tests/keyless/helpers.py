"""Helpers of the tests of conflicts between memories without a key (stop 54's audit)."""

from tests.factories import write_body

HEAD = "Atlas deploy failed on Monday: disk full on the build host."
RIVAL = "Monday's deploy was skipped: the release manager cancelled it."


def keyless_incident(api_client, content: str = HEAD, **extra) -> str:
    body = write_body(memory_type="incident", content=content, **extra)
    body.pop("memory_key")
    response = api_client.post("/api/v1/memories", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()["memory"]["id"]


def correct(
    api_client,
    memory_id: str,
    content: str = RIVAL,
    source_type="model_inference",
    expect=201,
    **extra,
):
    body = {
        "content": content,
        "source": {"type": source_type, "conversation_id": "c", "message_id": "m9"},
        **extra,
    }
    answer = api_client.post(f"/api/v1/memories/{memory_id}/supersede", body, format="json")
    assert answer.status_code == expect, answer.json()
    return answer.json()


def deploy_question(api_client, user="user-1") -> list[str]:
    found = api_client.post(
        "/api/v1/retrieve",
        {"query": "what went wrong with Monday's Atlas deploy?", "context": {"user_id": user}},
        format="json",
    )
    assert found.status_code == 200, found.json()
    return found.json()
