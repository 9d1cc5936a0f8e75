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


def correction_waiting_on_a_lost_conflict(api_client, reviewer, user="user-1") -> dict:
    """Return the answer to a sensitive correction of a keyless incident's rival, written
    while it waited for a reviewer, who then chose the incident over the rival (revoked,
    ``conflict_lost``): a write that can only be rejected (``review_conflict_lost``)."""
    from memory_core.models import ReviewItem
    from memory_core.principals import ReviewerPrincipal
    from memory_core.services.conflicts import conflict_resolve

    head = keyless_incident(api_client, HEAD, subject=user)
    rival = correct(api_client, head, RIVAL)["memory"]["id"]
    waiting = correct(
        api_client, rival, "Skipped: the release manager had a stroke.", sensitivity="sensitive",
        expect=202,
    )  # fmt: skip
    conflict = ReviewItem.objects.get(kind="conflict", state="open")
    conflict_resolve(principal=ReviewerPrincipal(tenant_id=conflict.tenant_id, user_id=reviewer.pk),
                     item_id=conflict.pk, outcome="choose_winner", winner_id=head,
                     reason="The disk was full.")  # fmt: skip
    return waiting
