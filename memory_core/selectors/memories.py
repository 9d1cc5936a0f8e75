"""Reads of memory rows. Every selector takes the caller's principal and scopes through it."""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import F
from django.db.models.fields.tuple_lookups import TupleGreaterThan, TupleLessThan

from memory_core.exceptions import NotFound
from memory_core.models import PROPOSED_STATUSES, AdmissionDecision, Memory, MemoryEvent

MAX_LIST_LIMIT = 100


def memory_get(*, principal, memory_id) -> Memory:
    """Return the memory ``memory_id`` if ``principal`` may see it; NotFound otherwise."""
    memory = (
        Memory.objects.visible_to(principal).select_related("subject").filter(pk=memory_id).first()
    )
    if memory is None:
        raise NotFound("No memory with this id.")
    return memory


# The ids of the chain through one memory, with each link's place from it (older links
# negative): back along ``supersedes`` as stored, forward along the successor that is a link
# (not a proposal). A chain's versions increase along it (the trigger of migration 0002), so
# neither walk can loop.
_CHAIN_SQL = """
    WITH RECURSIVE older(id, supersedes_id, place) AS (
        SELECT id, supersedes_id, 0 FROM memory_core_memory
        WHERE id = %(id)s AND tenant_id = %(tenant)s
        UNION ALL
        SELECT m.id, m.supersedes_id, o.place - 1 FROM memory_core_memory m
        JOIN older o ON m.id = o.supersedes_id
        WHERE m.tenant_id = %(tenant)s
    ),
    newer(id, place) AS (
        SELECT id, 0 FROM memory_core_memory WHERE id = %(id)s AND tenant_id = %(tenant)s
        UNION ALL
        SELECT m.id, n.place + 1 FROM memory_core_memory m
        JOIN newer n ON m.supersedes_id = n.id
        WHERE m.tenant_id = %(tenant)s AND m.status <> ALL(%(proposed)s)
    )
    SELECT id, place FROM older UNION SELECT id, place FROM newer
"""


def memory_chain_ids(memory: Memory) -> list:
    """Return the ids of the supersession chain containing ``memory``, oldest first.

    One query however long the chain (a recursive CTE on the ``supersedes`` index). The
    caller has scoped ``memory``; the chain never leaves its tenant (a database trigger keeps
    chains within one owner), and every step of the walk says so explicitly as well.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            _CHAIN_SQL,
            {
                "id": memory.pk,
                "tenant": memory.tenant_id,
                "proposed": [str(status) for status in PROPOSED_STATUSES],
            },
        )
        return [pk for pk, _ in sorted(cursor.fetchall(), key=lambda row: row[1])]


def _in_chain_order(ids: list, rows) -> list[Memory]:
    by_id = {row.pk: row for row in rows}
    return [by_id[pk] for pk in ids if pk in by_id]


def memory_chain(memory: Memory) -> list[Memory]:
    """Return the whole supersession chain containing ``memory``, oldest first, as stored.

    Two queries whatever the chain's length: its ids, then its rows.
    """
    ids = memory_chain_ids(memory)
    return _in_chain_order(ids, Memory.objects.filter(tenant_id=memory.tenant_id, pk__in_array=ids))


def memory_visible_chain(*, principal, memory: Memory) -> list[Memory]:
    """Return ``memory``'s chain as ``principal`` may see it, oldest first.

    A version the principal may not see on its own (another type, another agent's, above its
    sensitivity; a chain never crosses tenant or subject) is left out here too. Two queries
    whatever the chain's length.
    """
    ids = memory_chain_ids(memory)
    return _in_chain_order(ids, Memory.objects.visible_to(principal).filter(pk__in_array=ids))


def memory_list(
    *, principal, subject: str = "", memory_type: str = "", status: str = "", key: str = ""
):
    """Return the memories ``principal`` may see, newest first, filtered by the subject's
    external id, type, status and memory_key (each optional)."""
    queryset = Memory.objects.visible_to(principal).select_related("subject")
    if subject:
        queryset = queryset.filter(subject__external_id=subject)
    if memory_type:
        queryset = queryset.filter(memory_type=memory_type)
    if status:
        queryset = queryset.filter(status=status)
    if key:
        queryset = queryset.filter(memory_key=key)
    return queryset.order_by("-created_at", "-id")


@dataclass(frozen=True)
class ListPosition:
    """A row's place in a newest-first memory list: its ``created_at`` and its id.

    The pair is unique (the id is), so a position splits the list in two with no tie to
    break, and it is the order of migration 0015's index, so a bound on it is a range of that
    index however deep the page lies.
    """

    created_at: datetime
    pk: uuid.UUID

    @classmethod
    def of(cls, memory: Memory) -> "ListPosition":
        return cls(created_at=memory.created_at, pk=memory.pk)


@dataclass
class ListPage:
    """Up to a page of rows, newest first, and whether more lie beyond them in the direction
    they were read (older for a page read forward, newer for one read backward)."""

    rows: list[Memory]
    more: bool


def memory_list_page(memories, *, position: ListPosition | None, older: bool, size: int):
    """Return the page of ``memories`` (a ``memory_list`` queryset) next to ``position``.

    ``older`` reads the ``size`` rows just older than ``position`` (the whole list's newest
    without one), else the ``size`` rows just newer, still returned newest first. The bound is
    one row comparison, ``(created_at, id) < (t, i)``: PostgreSQL reads it as a range of
    migration 0015's index, where the equivalent ``t' < t OR (t' = t AND i' < i)`` would be a
    filter over every row before the page, as an offset is. One row more than the page says
    whether there is more. The bound only narrows the caller's own queryset, so a position
    taken from another tenant's list shows nothing of that tenant.
    """
    if position is not None:
        bound = TupleLessThan if older else TupleGreaterThan
        memories = memories.filter(
            bound((F("created_at"), F("id")), (position.created_at, position.pk))
        )
    if not older:
        memories = memories.reverse()  # oldest first from the bound: the index read backward
    rows = list(memories[: size + 1])
    page = rows[:size]
    if not older:
        page.reverse()
    return ListPage(rows=page, more=len(rows) > size)


@dataclass
class MemoryDetail:
    """A memory with its provenance: admission decision, whole chain, and every event."""

    memory: Memory
    chain: list[Memory]
    events: list[MemoryEvent]
    decision: AdmissionDecision | None


def memory_detail(*, principal, memory_id) -> MemoryDetail:
    """Return ``memory_id`` with its chain, events and admission decision; NotFound if the
    principal may not see it."""
    memory = memory_get(principal=principal, memory_id=memory_id)
    chain = memory_visible_chain(principal=principal, memory=memory)
    ids = [m.id for m in chain]
    events = list(MemoryEvent.objects.filter(tenant_id=memory.tenant_id, memory_id__in_array=ids))
    decision = (
        AdmissionDecision.objects.filter(tenant_id=memory.tenant_id, memory_id=memory.id)
        .order_by("-created_at")
        .first()
    )
    return MemoryDetail(memory=memory, chain=chain, events=events, decision=decision)
