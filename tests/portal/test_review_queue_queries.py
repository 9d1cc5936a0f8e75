"""The review queue reads what approving each write of a page does for the whole page at
once (``selectors.approvals.approval_heads``): one ``approval_head`` per write made 261
queries for a page of 50 writes written on a memory."""

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from memory_core.models import Memory, MemoryEvent, ReviewItem
from memory_core.selectors.approvals import approval_head, approval_heads
from tests.factories import AgentFactory, MemoryFactory, pending_write_on

pytestmark = pytest.mark.django_db

ITEM = 'class="card review-item"'


def write_on(head, *, writer=None, key=None, **fields) -> ReviewItem:
    """Return the open item of a pending sensitive write on ``head``'s key, written on it;
    ``writer``: the agent whose ``pending`` event it carries (none: no event)."""
    item = pending_write_on(head, f"Waiting on {head.content}", key=key, **fields)
    if writer is not None:
        actor_type, actor_id = writer if isinstance(writer, tuple) else ("agent", writer.pk)
        MemoryEvent.objects.create(
            tenant_id=head.tenant_id,
            memory_id=item.memory_id,
            action="pending_approval",
            actor_type=actor_type,
            actor_id=str(actor_id),
        )
    return item


def moved_on(head, *, status="active", **fields) -> Memory:
    """Supersede ``head`` with a newer version of ``status``; return it."""
    Memory.objects.filter(pk=head.pk).update(status="superseded")
    return MemoryFactory(
        subject=head.subject,
        memory_key=head.memory_key,
        content=f"{head.content} (v{head.version + 1})",
        supersedes=head,
        version=head.version + 1,
        status=status,
        **fields,
    )


def agent_writes(subject, agent, count: int, batch: str) -> None:
    """``count`` agents' writes waiting on a head: a third on the head written on, a third on
    a chain moved on since, a third on a head revoked since (the key's other memory)."""
    for n in range(count):
        head = MemoryFactory(subject=subject, memory_key=f"{batch}.{n}", content=f"{batch} {n}")
        write_on(head, writer=agent)
        if n % 3 == 1:
            moved_on(head)
        elif n % 3 == 2:
            Memory.objects.filter(pk=head.pk).update(status="revoked")
            MemoryFactory(subject=subject, memory_key=head.memory_key, content=f"other {n}")


def queue_queries(client) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(reverse("portal:review:queue"))
    assert response.status_code == 200
    return len(captured), response.content.decode()


def test_the_queue_of_50_writes_on_memories_makes_as_many_queries_as_of_5(
    reviewer_client, alice_subject, bob_subject, tenant
):
    agent = AgentFactory(tenant=tenant)
    agent_writes(alice_subject, agent, 5, "a")
    few, body = queue_queries(reviewer_client)
    assert body.count(ITEM) == 5
    agent_writes(bob_subject, agent, 45, "b")

    many, body = queue_queries(reviewer_client)

    assert body.count(ITEM) == 50
    assert body.count("Approved, it becomes the next version of") == 50
    # Moved on since (a third) or revoked since (a third): 3 of the first 5, 30 of 45.
    assert body.count("the key's memory in use now") == 3 + 30
    assert many == few, f"{few} queries for 5 writes, {many} for 50"
    assert many <= 25


def test_approval_heads_finds_what_each_approval_finds(tenant, alice_subject, bob_subject):
    """Each write's head, read for the page at once, is the one ``approval_head`` finds for
    it alone: written on, moved on (twice; to a revoked version), a head its writer's grant
    does not reach, an unknown writer, a person, no pending event, a key's stronger head, a
    key's head written since a write that cited none (the queue now reads every write's)."""
    agent = AgentFactory(tenant=tenant)
    narrow = AgentFactory(tenant=tenant, read_types=["project_constraint"])
    items = []
    head = MemoryFactory(subject=alice_subject, memory_key="k.same")
    items.append(write_on(head, writer=agent))
    twice = MemoryFactory(subject=alice_subject, memory_key="k.twice")
    items.append(write_on(twice, writer=agent))
    moved_on(moved_on(twice))
    gone = MemoryFactory(subject=alice_subject, memory_key="k.gone")
    items.append(write_on(gone, writer=agent))
    moved_on(gone, status="revoked")
    MemoryFactory(subject=alice_subject, memory_key="k.gone", authority="model_inference")
    MemoryFactory(subject=alice_subject, memory_key="k.gone", authority="explicit_admin")
    hidden = MemoryFactory(subject=alice_subject, memory_key="k.hidden")
    items.append(write_on(hidden, writer=narrow))
    for writer in [("agent", uuid.uuid4()), ("user", "7"), None]:
        shared = MemoryFactory(subject=bob_subject, memory_key="k.shared")
        items.append(write_on(shared, writer=writer))
    deleted = MemoryFactory(subject=bob_subject, memory_key="k.deleted")
    items.append(write_on(deleted, writer=agent))
    Memory.objects.filter(pk=deleted.pk).update(status="deleted", content="", value=None)
    keyless = MemoryFactory(subject=bob_subject, memory_key="k.keyless", status="revoked")
    items.append(write_on(keyless, writer=agent, key=""))
    # Written while its key had no memory (it cites none): the key's head written since.
    later = write_on(MemoryFactory(subject=bob_subject, memory_key="k.later"), writer=agent)
    ReviewItem.objects.filter(pk=later.pk).update(candidate_ids=[])
    items.append(later)
    items = list(
        ReviewItem.objects.filter(pk__in=[item.pk for item in items]).select_related(
            "memory", "memory__subject"
        )
    )

    found = approval_heads(items)

    expected = {item.pk: approval_head(item.memory, item, lock=False) for item in items}
    assert {pk: getattr(head, "pk", None) for pk, head in found.items()} == {
        pk: getattr(head, "pk", None) for pk, head in expected.items()
    }
    assert sum(head is None for head in expected.values()) >= 2
    assert sum(head is not None for head in expected.values()) >= 5
