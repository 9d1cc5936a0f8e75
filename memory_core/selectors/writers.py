"""Who wrote a memory, as its subject and an export are told it.

Apart from ``selectors.memories``: the export (``memory_core.exports``) reads it, and the
deletion's stores import the export.
"""

import uuid
from dataclasses import dataclass

from django.db.models import Case, F, OuterRef, Subquery, Value, When

from memory_core.models import AdmissionDecision, Memory, MemoryEvent
from memory_core.models.events import IMPORT_ACTOR_PREFIX

# A ``Writer.kind`` beside the event actor types: memledger's import command wrote it.
WRITER_IMPORT = "import"

# The events a memory row is made with: ``created`` (a new chain, a write waiting for a
# reviewer, an import's row) or ``corrected`` (a chain's next version). Not its first event
# whatever it is: each is stamped by the clock of the host that made it, and the expiry
# sweep's by the moment the sweep began (``retention.memories_expire``), so a row imported past
# its end during a sweep, or on a host whose clock is ahead, had its ``expired`` event first,
# and was "written by memledger" (stop 68's review).
CREATION_ACTIONS = [MemoryEvent.Action.CREATED, MemoryEvent.Action.CORRECTED]
_CREATED_FIRST = Case(When(action=MemoryEvent.Action.CREATED, then=Value(0)), default=Value(1))


@dataclass(frozen=True)
class Writer:
    """Who wrote a memory. ``kind``: the actor type of its creation event
    (``MemoryEvent.ActorType``: "agent", "user", "reviewer", "admin", "system"), or
    ``WRITER_IMPORT``; ``agent``: the name of the agent whose write it is, or None."""

    kind: str
    agent: str | None = None


def memory_writers(*, tenant_id, memory_ids) -> dict[uuid.UUID, Writer]:
    """Return ``{memory_id: Writer}`` of those of ``memory_ids`` in tenant ``tenant_id``: one
    query whatever their number (none for no ids); one with neither an agent's decision nor an
    event is left out.

    The agent is the one of the memory's earliest admission decision naming one (an agent's
    write: the export's ``written_by_agent``; a person's correction, an import's row or
    memledger's name none). The rest by the kind of actor of its creation event only
    (``CREATION_ACTIONS``): the event's ``actor_id`` of a person or a reviewer is a login's,
    never read here (the portal tells the person a memory is about who wrote it)."""
    if not memory_ids:
        return {}
    agent = AdmissionDecision.objects.filter(
        tenant_id=tenant_id, memory_id=OuterRef("pk"), agent__isnull=False
    ).order_by("created_at")
    first = (
        MemoryEvent.objects.filter(
            tenant_id=tenant_id, memory_id=OuterRef("pk"), action__in=CREATION_ACTIONS
        )
        # Its ``created`` event before a ``corrected`` one: an approved correction has both,
        # the second made by the approval.
        .order_by(_CREATED_FIRST, "created_at", "id")
        .annotate(
            kind=Case(
                When(
                    actor_type=MemoryEvent.ActorType.SYSTEM,
                    actor_id__startswith=IMPORT_ACTOR_PREFIX,
                    then=Value(WRITER_IMPORT),
                ),
                default=F("actor_type"),
            )
        )
    )
    rows = (
        Memory.objects.filter(tenant_id=tenant_id, pk__in_array=memory_ids)
        .annotate(
            agent_name=Subquery(agent.values("agent__name")[:1]),
            first_actor=Subquery(first.values("kind")[:1]),
        )
        .order_by()  # a dict: the model's default order would be a sort for nothing
        .values_list("pk", "first_actor", "agent_name")
    )
    return {
        pk: Writer(kind=kind or MemoryEvent.ActorType.AGENT, agent=name)
        for pk, kind, name in rows
        if kind or name
    }
