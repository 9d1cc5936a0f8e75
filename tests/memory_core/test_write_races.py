"""Writes on one memory_key from two transactions at once: the second waits, then supersedes.

The first writer holds its transaction open while the second writes the same key; before
the key lock the second read no head (two separate version-1 chains) or lost the head
(409 ``not_chain_head``). A correction and a revoke of one memory at once take turns on its
row as well.
"""

import threading
import time

import pytest
from django.db import transaction

from memory_core.embeddings import get_embedder
from memory_core.models import Memory, Status
from memory_core.rls import tenant_scope
from memory_core.services.writes import memory_correct, memory_revoke, memory_write
from tests.deletion.conftest import requested_while_held
from tests.factories import MemoryFactory, SubjectFactory, write_body
from tests.threads import errors_of, in_thread

pytestmark = pytest.mark.django_db(transaction=True)


def body(content):
    return write_body(memory_key="ui.theme", content=content)


def _race(principal, first: str, second: str) -> list:
    """Write ``first`` and, while its transaction is open, ``second``; return the results."""
    written, started = threading.Event(), threading.Event()

    def first_writer():
        with tenant_scope(principal.tenant_id), transaction.atomic():
            result = memory_write(principal=principal, data=body(first))
            written.set()
            started.wait(10)
            time.sleep(0.5)  # the second writer is at its head lookup by now
        return result

    def second_writer():
        written.wait(10)
        started.set()
        with tenant_scope(principal.tenant_id):
            return memory_write(principal=principal, data=body(second))

    threads = [in_thread(first_writer, released=[written]), in_thread(second_writer)]
    assert errors_of(*threads) == []
    return [thread.result for thread in threads]


def _chain(tenant_id):
    with tenant_scope(tenant_id):
        return list(
            Memory.objects.filter(memory_key="ui.theme")
            .order_by("version")
            .values_list("version", "status", "content", "supersedes_id", "id")
        )


def test_a_second_write_on_a_new_key_supersedes_the_first(agent_principal):
    first, second = _race(agent_principal, "User prefers light mode.", "User prefers dark mode.")
    assert second.decision == "accepted"
    rows = _chain(agent_principal.tenant_id)
    assert [(v, s, c) for v, s, c, _, _ in rows] == [
        (1, Status.SUPERSEDED, "User prefers light mode."),
        (2, Status.ACTIVE, "User prefers dark mode."),
    ]
    assert rows[1][3] == rows[0][4] == first.memory.id


def test_a_second_write_on_a_key_with_a_head_supersedes_the_new_head(agent_principal):
    with tenant_scope(agent_principal.tenant_id):
        memory_write(principal=agent_principal, data=body("User prefers the system theme."))
    _race(agent_principal, "User prefers light mode.", "User prefers dark mode.")
    rows = _chain(agent_principal.tenant_id)
    assert [(v, s) for v, s, _, _, _ in rows] == [
        (1, Status.SUPERSEDED),
        (2, Status.SUPERSEDED),
        (3, Status.ACTIVE),
    ]
    assert rows[2][2] == "User prefers dark mode."


@pytest.mark.parametrize("first", ["revoke", "correct"])
def test_a_correction_and_a_revoke_of_one_memory_at_once_take_turns(
    api_client, agent_principal, tenant, first
):
    """A correction and a revoke of one memory sent at once (POST .../supersede and
    .../revoke): stop 57's audit of races found that they take turns on the memory's row,
    the one that waits reading it again once it has the lock. The second is refused (409),
    and the memory is what the first left: revoked, or superseded by its new version."""
    get_embedder().embed(["warm the model up outside the held transaction"])
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    head = MemoryFactory(
        subject=subject,
        memory_key="style.answers",
        content="User prefers concise answers.",
        authority="tool_observation",
        source_type="verified_tool_output",
    )
    url = f"/api/v1/memories/{head.id}"
    correction = {
        "content": "User prefers long answers.",
        "source": {"type": "user_input", "conversation_id": "c-1", "message_id": "m-2"},
    }
    if first == "revoke":

        def hold():
            memory_revoke(principal=agent_principal, memory_id=head.id, reason="wrong")

        def request():
            return api_client.post(f"{url}/supersede", correction, format="json")
    else:

        def hold():
            memory_correct(principal=agent_principal, memory_id=head.id, data=correction)

        def request():
            return api_client.post(f"{url}/revoke", {"reason": "wrong"}, format="json")

    response = requested_while_held(tenant.id, hold, request)
    assert response.status_code == 409, (response.status_code, response.content)
    with tenant_scope(tenant.id):
        states = sorted(
            Memory.objects.filter(memory_key="style.answers").values_list("status", flat=True)
        )
    assert states == (["revoked"] if first == "revoke" else ["active", "superseded"]), states
