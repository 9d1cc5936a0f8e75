"""Writes on one memory_key from two transactions at once: the second waits, then supersedes.

The first writer holds its transaction open while the second writes the same key; before
the key lock the second read no head (two separate version-1 chains) or lost the head
(409 ``not_chain_head``).
"""

import threading
import time

import pytest
from django.db import transaction

from memory_core.models import Memory, Status
from memory_core.rls import tenant_scope
from memory_core.services.writes import memory_write
from tests.factories import write_body
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
