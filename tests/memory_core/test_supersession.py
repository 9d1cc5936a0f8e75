"""A correction adds a version; the old one stays, superseded, in one unbroken chain."""

import pytest
from django.db import connection

from memory_core.exceptions import Conflict
from memory_core.models import Memory, MemoryEvent, MemoryType, Status
from memory_core.selectors.memories import memory_visible_chain
from memory_core.services.memories import MemoryDraft, memory_store_many, memory_supersede

pytestmark = pytest.mark.django_db


def draft(subject, content):
    return MemoryDraft(
        subject=subject,
        memory_type=MemoryType.PROJECT_CONSTRAINT,
        memory_key="project.backend_language",
        scope_kind="project",
        scope_ref="lunest",
        content=content,
        authority="explicit_user",
        source_type="user_input",
    )


def test_chain_of_three_versions(subject, system_principal):
    [first] = memory_store_many(
        drafts=[draft(subject, "Default backend language is Python.")], principal=system_principal
    )
    second = memory_supersede(
        previous=first, draft=draft(subject, "The service moved to Go."), principal=system_principal
    )
    third = memory_supersede(
        previous=second,
        draft=draft(subject, "The service uses Go 1.23."),
        principal=system_principal,
    )
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    chain = memory_visible_chain(principal=system_principal, memory=second)
    assert [m.id for m in chain] == [first.id, second.id, third.id]
    assert [m.version for m in chain] == [1, 2, 3]
    assert [m.status for m in chain] == [Status.SUPERSEDED, Status.SUPERSEDED, Status.ACTIVE]
    heads = Memory.objects.filter(memory_key="project.backend_language", status=Status.ACTIVE)
    assert list(heads) == [third]
    # The old text is kept as evidence, never overwritten.
    assert Memory.objects.get(pk=first.pk).content == "Default backend language is Python."
    actions = list(MemoryEvent.objects.filter(memory_id=second.id).values_list("action", flat=True))
    assert actions == ["corrected", "superseded"]


def test_only_the_head_can_be_superseded(subject, system_principal):
    [first] = memory_store_many(drafts=[draft(subject, "Python.")], principal=system_principal)
    memory_supersede(previous=first, draft=draft(subject, "Go."), principal=system_principal)
    with pytest.raises(Conflict) as caught:
        memory_supersede(previous=first, draft=draft(subject, "Rust."), principal=system_principal)
    assert caught.value.code == "not_chain_head"


@pytest.mark.django_db(transaction=True)
def test_batches_superseding_overlapping_keys_in_opposite_orders_all_land(tenant, agent):
    """A batch locks its heads in id order and moves them together (``memory_supersede_many``):
    three at once, two on the same four keys in opposite orders, neither deadlock nor fork a
    chain (stop 51's review of the batched moves)."""
    import threading

    from django.db import transaction

    from memory_core.principals import AgentPrincipal
    from memory_core.rls import tenant_scope
    from memory_core.services.writes import memory_write, memory_write_batch
    from tests.factories import write_body
    from tests.threads import errors_of, in_thread

    principal = AgentPrincipal.from_agent(agent)
    keys = ["k.a", "k.b", "k.c", "k.d"]
    with tenant_scope(tenant.id):
        for key in keys:
            memory_write(
                principal=principal, data=write_body(memory_key=key, content=f"User likes {key}.")
            )
    go = threading.Event()

    def batch(order, word):
        def work():
            assert go.wait(10)
            with tenant_scope(tenant.id), transaction.atomic():
                return memory_write_batch(
                    principal=principal,
                    items=[
                        write_body(memory_key=key, content=f"User likes {key} {word}.")
                        for key in order
                    ],
                )

        return work

    threads = [
        in_thread(batch(keys, "first")),
        in_thread(batch(keys[::-1], "second")),
        in_thread(batch(keys[1:3], "third")),
    ]
    go.set()
    assert errors_of(*threads) == []
    with tenant_scope(tenant.id):
        for key in keys:
            chain = list(
                Memory.objects.filter(memory_key=key)
                .order_by("version")
                .values_list("version", "status")
            )
            versions = [version for version, _ in chain]
            assert versions == list(range(1, len(chain) + 1)), chain
            assert [status for _, status in chain].count(Status.ACTIVE) == 1, chain
            assert chain[-1][1] == Status.ACTIVE
