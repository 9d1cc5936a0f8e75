"""What an approval of a write waiting for a reviewer lands on, read by the approval (locked)
and by the review queue (unlocked, to say what an approval would do), and the chains a write
may join: selectors, so that the portal's queue reads them without importing a service."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from memory_core.models import (
    AUTHORITY_RANK,
    PROPOSED_STATUSES,
    Agent,
    Memory,
    MemoryEvent,
    ReviewItem,
    Status,
)
from memory_core.principals import AgentPrincipal


def shared_or_own(agent_id) -> Q:
    """The memories shared by a tenant's agents, and those private to ``agent_id``."""
    return Q(agent_id__isnull=True) | Q(agent_id=agent_id)


def chain_rows(queryset, *, memory_type: str, agent_id):
    """Limit ``queryset`` to the rows a write of ``memory_type`` by ``agent_id`` may chain onto.

    A chain holds one memory type and one owner: a write never supersedes, or stands in
    conflict with, a memory of another type or another agent's private memory (rows its
    writer may not see). ``agent_id`` None (a portal user, memledger itself) reaches the
    shared rows only.
    """
    return queryset.filter(shared_or_own(agent_id), memory_type=memory_type)


def heads_on_key(memory: Memory, *, agent_id):
    """Return the active heads of every chain on ``memory``'s key, in its scope and its
    environment, of its type and reachable by ``agent_id`` (``chain_rows``)."""
    return chain_rows(
        Memory.objects.filter(
            tenant_id=memory.tenant_id,
            subject_id=memory.subject_id,
            memory_key=memory.memory_key,
            scope_kind=memory.scope_kind,
            scope_ref=memory.scope_ref,
            environment=memory.environment,
            status=Status.ACTIVE,
        ),
        memory_type=memory.memory_type,
        agent_id=agent_id,
    )


def standing_heads(memory: Memory, *, agent_id) -> list:
    """Return the ids of ``heads_on_key``: the candidates of a conflict on the key."""
    return list(heads_on_key(memory, agent_id=agent_id).values_list("id", flat=True))


def approval_head(memory: Memory, item: ReviewItem, *, lock: bool = True) -> Memory | None:
    """Return the head an approval of the pending ``memory`` (``item``'s write) lands on now,
    or None: the memory it was written on, or its chain's newest version, or else the key's
    current head (``current_head``). Approved, ``memory`` becomes its next version, or, of
    lower authority, stands beside it in a conflict.

    Locked (the rows the approval changes) unless ``lock`` is false: the review queue says
    with it what an approval would do, and said "becomes the next version" of a head that
    had moved on to a stronger version, beside which the approval opened a conflict.
    """
    head = None
    if item.candidate_ids:
        rows = Memory.objects.filter(pk=item.candidate_ids[0])
        head = (rows.select_for_update() if lock else rows).first()
    if head is not None and head.status == Status.SUPERSEDED:
        # Versions were added while the write waited (another approved correction): the
        # chain's newest version is the head now, with or without a memory_key.
        head = newest_version(head, lock=lock)
    if head is not None and not writer_reaches(memory, Memory.objects.filter(pk=head.pk)):
        head = None  # a head its writer may not read (now) is never superseded by it
    if head is None or head.status != Status.ACTIVE:
        # The head moved on while the write waited, or the key had none then: take the key's
        # current head, if any, as a write would now (``writes._heads``).
        head = current_head(memory, lock=lock) if memory.memory_key else None
    return head


def current_head(memory: Memory, *, lock: bool = True) -> Memory | None:
    """Return the head the approved ``memory`` lands on now: among the active heads on its
    key that its writer may read, the strongest, then the newest (locked).

    As a write measures itself (``writes._heads``): not the newest alone, which let an
    approval supersede a weaker chain while a stronger one stood (two heads of explicit
    authority left on the key), nor a head the writing agent may not read (a restricted
    memory its grant does not reach), which a write never supersedes or conflicts with.
    """
    heads = writer_reaches(memory, heads_on_key(memory, agent_id=memory.agent_id))
    heads = heads.exclude(pk=memory.pk)
    rows = list((heads.select_for_update(of=("self",)) if lock else heads).order_by("pk"))
    if not rows:
        return None
    return max(rows, key=lambda row: (AUTHORITY_RANK[row.authority], row.created_at))


def writer_reaches(memory: Memory, queryset):
    """Limit ``queryset`` to the memories the writer of the approved ``memory`` may read now:
    for an agent, what its grant reaches (types, sensitivity, shared or its own) of the
    subject it wrote about (bound by a subject token, it acted for that subject only); a
    person or memledger itself reads the subject's shared memories (``heads_on_key``)."""
    writer = writer_of(memory)
    if writer is None or writer.actor_type != AgentPrincipal.actor_type:
        return queryset
    agent = Agent.objects.filter(tenant_id=memory.tenant_id, pk=writer.actor_id).first()
    if agent is None:
        return queryset.none()  # a writer no longer known reads nothing
    grant = AgentPrincipal.from_agent(agent, bound_user_id=memory.subject.external_id)
    return grant.scope_granted(queryset)


@dataclass(frozen=True)
class Actor:
    actor_type: str
    actor_id: str


def writer_of(memory: Memory) -> Actor | None:
    """Who wrote the pending ``memory``: the actor of its ``pending`` event."""
    event = (
        MemoryEvent.objects.filter(
            tenant_id=memory.tenant_id, memory_id=memory.id, action=MemoryEvent.Action.PENDING
        )
        .order_by("created_at")
        .values_list("actor_type", "actor_id")
        .first()
    )
    return Actor(*event) if event else None


def newest_version(memory: Memory, *, lock: bool = True) -> Memory:
    """Follow ``memory``'s successors (locked unless ``lock`` is false) to the newest version
    of its chain."""
    while True:
        successors = Memory.objects.filter(supersedes_id=memory.id).exclude(
            status__in=PROPOSED_STATUSES
        )
        successor = (successors.select_for_update() if lock else successors).first()
        if successor is None:
            return memory
        memory = successor
