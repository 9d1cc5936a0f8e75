"""Reads of memory rows. Every selector takes the caller's principal and scopes through it."""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import F, Subquery
from django.db.models.fields.tuple_lookups import TupleGreaterThan, TupleLessThan

from memory_core.admission.normalize import holds_space
from memory_core.deletion.selectors import deletion_visible_ids
from memory_core.exceptions import NotFound, PermissionDenied
from memory_core.models import (
    PROPOSED_STATUSES,
    AdmissionDecision,
    Memory,
    MemoryEvent,
    Status,
    Subject,
)
from memory_core.models.choices import sensitivities_up_to

MAX_LIST_LIMIT = 100
# The deepest offset a list's page may start at: deeper, a page walks every row before it.
MAX_LIST_OFFSET = 1_000_000
# What agents are not answered of a memory whose words are withheld from them
# (``memory_words_withheld``): each field, and what stands in its place.
WITHHELD_FIELDS = {"content": "", "value": None, "content_hash": ""}


def memory_words_withheld(memory: Memory) -> bool:
    """Whether agents are answered ``memory`` without what it says (``WITHHELD_FIELDS``): a
    write that was never in use (``Memory.admitted``): one waiting for a reviewer, one a
    reviewer rejected, and one revoked or expired while it waited. Until a reviewer approves
    it, a sensitive write must not influence an action, and reading it from the memory list
    would (retrieval never uses it); a rejected one is kept as evidence for reviewers. Agents
    learn the outcome (its id, status and fields), never its words; the reviewers' API and
    the subject's own portal pages show them. Its status alone would not do: a waiting write
    that an agent revoked, or whose task an agent closed, was answered with its words to
    every agent of the tenant."""
    return not memory.admitted


def memory_message_id_withheld(memory: Memory) -> bool:
    """Whether agents are answered ``memory`` without its ``source.message_id``: a sentence
    (it holds whitespace, or an invisible character a reading reads as a space:
    ``normalize.holds_space``, as admission tells one), which the sensitive categories read
    as they read the content (stop 47: "User has HIV." as a message's id), of a memory whose
    words are withheld (``memory_words_withheld``). An identifier ("m-9") says nothing and
    stays. Its words joined by zero-width spaces, admission sent it to a reviewer and the
    list answered it to every agent (stop 59's review of its admission fixes)."""
    message_id = memory.source_message_id or ""
    return memory_words_withheld(memory) and holds_space(message_id)


# The key of an event's ``details`` that keeps a person's or a writer's free text (a
# correction's, a revocation's, a consent withdrawal's, a reviewer's rejection), and the key
# that records the sensitivity the sensitive categories read in it when it was stored
# (``services.writes._retire``): absent, the reason is no more sensitive than its memory.
EVENT_REASON_KEY = "reason"
EVENT_REASON_SENSITIVITY_KEY = "reason_sensitivity"


def memory_get(*, principal, memory_id) -> Memory:
    """Return the memory ``memory_id`` if ``principal`` may see it; NotFound otherwise."""
    memory = (
        Memory.objects.visible_to(principal).select_related("subject").filter(pk=memory_id).first()
    )
    if memory is None:
        raise NotFound("No memory with this id.")
    return memory


def _as_uuid(value) -> uuid.UUID | None:
    """Return ``value`` (a UUID, or a string of one) as a UUID; None for anything else."""
    if value is None:
        return None
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


def _wanted(ids) -> list[uuid.UUID]:
    return sorted({pk for pk in map(_as_uuid, ids) if pk is not None})


def memory_in_bulk(*, principal, ids) -> dict[uuid.UUID, Memory]:
    """Return the memories of ``ids`` that ``principal`` may see, by id, each as ``memory_get``
    would answer it: one the principal may not see is left out, as ``memory_get`` answers
    NotFound. One query (none for no ids)."""
    wanted = _wanted(ids)
    if not wanted:
        return {}
    rows = (
        Memory.objects.visible_to(principal).select_related("subject").filter(pk__in_array=wanted)
    )
    return {row.pk: row for row in rows}


def memory_visible_values(*, principal, ids) -> dict[uuid.UUID, object]:
    """Return those of ``ids`` that ``principal`` may see, each with its ``value`` as stored:
    one query (none for no ids). jsonb keeps a number as written in full (``1e+20`` as
    ``100000000000000000000``), which is what every later read of the memory answers."""
    wanted = _wanted(ids)
    if not wanted:
        return {}
    visible = Memory.objects.visible_to(principal).filter(pk__in_array=wanted)
    return dict(visible.values_list("pk", "value"))


def memory_visible_ids(*, principal, ids) -> frozenset[uuid.UUID]:
    """Return those of ``ids`` that ``principal`` may see: one query, ids only (none for no
    ids)."""
    wanted = _wanted(ids)
    if not wanted:
        return frozenset()
    visible = Memory.objects.visible_to(principal).filter(pk__in_array=wanted)
    return frozenset(visible.values_list("pk", flat=True))


# The keys of an event's ``details`` that name another memory of the chain (or of the
# conflict): ids only, which ``deletion.stores.EVENT_ID_KEYS`` keeps after a deletion too.
EVENT_MEMORY_KEYS = ("successor", "supersedes", "winner", "copy_of")
# The key of a deletion's events (``deletion_requested``, ``deleted``) that names its
# operation, which the caller may not see: another's that deleted memories outside its grant.
EVENT_OPERATION_KEY = "operation"


@dataclass(frozen=True)
class VisibleMemoryIds:
    """The ids of other memories (and of deletion operations) an answer may name: those its
    caller may see.

    An answer that names another memory (a memory's ``supersedes``, an event's ``successor``,
    ``supersedes`` or ``winner``) names it only when the caller may see it, under the rules
    every other read applies (``Memory.objects.visible_to``): an id outside them is a 404
    everywhere, and naming it would tell of a version, a conflict's winner or another agent's
    private memory the caller may not know of. So for an event's ``operation``: another's
    deletion that also took memories outside the caller's grant is a 404 to it. The output
    serializers read it from their context; without one they name nothing (deny by default).
    """

    ids: frozenset[uuid.UUID] = frozenset()
    # The deletion operations an event may name (``details.operation``): those the caller may
    # see (``deletion_scope``), whose id ``GET /api/v1/deletions/{id}`` answers it.
    operations: frozenset[uuid.UUID] = frozenset()
    # The memories whose events' reasons the answer may show (``EVENT_REASON_KEY``): those it
    # renders whose words it answers too (``memory_words_withheld``). A waiting write's reason
    # says what its withheld content says (stop 47: it sends the write to a reviewer).
    spoken: frozenset[uuid.UUID] = frozenset()
    # The sensitivities the caller may read (an agent's grant): a reason more sensitive
    # (``EVENT_REASON_SENSITIVITY_KEY``) is left out. None: every one (a person, a reviewer).
    readable: frozenset[str] | None = None
    # The deleted memories the answer renders: their events are answered as the deletion's
    # events step leaves them (ids and rule codes), before it has run. The request makes the
    # row a tombstone at once, and its events still answered a revocation's reason and a
    # task's id until a worker ran the step (stop 54's audit of reads).
    deleted: frozenset[uuid.UUID] = frozenset()

    def shows(self, value) -> bool:
        """Return whether the answer may name the memory ``value`` (a UUID or its string)."""
        pk = _as_uuid(value)
        return pk is not None and pk in self.ids

    def _names(self, key, value) -> bool:
        if key == EVENT_OPERATION_KEY:
            pk = _as_uuid(value)
            return pk is not None and pk in self.operations
        return key not in EVENT_MEMORY_KEYS or value in ("", None) or self.shows(value)

    def _reads_reason(self, details: dict, memory_id) -> bool:
        if _as_uuid(memory_id) not in self.spoken:
            return False
        sensitivity = details.get(EVENT_REASON_SENSITIVITY_KEY)
        return sensitivity is None or self.readable is None or sensitivity in self.readable

    def event_details(self, details, *, memory_id=None) -> dict:
        """Return the ``details`` of an event of ``memory_id`` without the keys that name a
        memory or a deletion operation the caller may not see, and without its reason unless
        the caller may read it (``spoken``, ``readable``). An empty value (a conflict
        resolved with no winner) names no memory and stays."""
        if not isinstance(details, dict):
            return {}
        if _as_uuid(memory_id) in self.deleted:
            from memory_core.deletion.stores import event_details_left

            details = event_details_left(details)
        reads_reason = self._reads_reason(details, memory_id)
        return {
            key: value
            for key, value in details.items()
            if self._names(key, value) and (key != EVENT_REASON_KEY or reads_reason)
        }


def memory_references(*, memories=(), events=()) -> set[uuid.UUID]:
    """Return the ids of other memories that ``memories`` (their ``supersedes``) and
    ``events`` (their details' ``EVENT_MEMORY_KEYS``) name."""
    found = {memory.supersedes_id for memory in memories if memory is not None}
    for event in events:
        details = event.details if isinstance(event.details, dict) else {}
        found.update(_as_uuid(details.get(key)) for key in EVENT_MEMORY_KEYS if details.get(key))
    found.discard(None)
    return found


def memory_visible_references(*, principal, memories=(), events=(), shown=()) -> VisibleMemoryIds:
    """Return which of the memories that ``memories`` and ``events`` name ``principal`` may
    see: one query for the whole answer however many rows and events it holds (none when
    they name nothing, or only rows of ``shown``); and which of the deletion operations the
    events name it may see (one more query, none when they name none).

    ``shown`` are rows the caller already read through ``visible_to`` (a list's page, a
    detail's visible chain): they are visible, so a reference to one needs no query. Never
    pass a row read any other way (a write's new memory: its writer may write a type it may
    not read).
    """
    references = memory_references(memories=memories, events=events)
    known = {row.pk for row in shown if row is not None}
    unknown = references - known
    visible = memory_visible_ids(principal=principal, ids=unknown)
    operations = deletion_visible_ids(principal=principal, ids=event_operations(events))
    return VisibleMemoryIds(
        ids=frozenset(references & known) | visible,
        operations=operations,
        spoken=frozenset(
            row.pk for row in memories if row is not None and not memory_words_withheld(row)
        ),
        readable=readable_sensitivities(principal),
        deleted=frozenset(
            row.pk for row in memories if row is not None and row.status == Status.DELETED
        ),
    )


def readable_sensitivities(principal) -> frozenset[str] | None:
    """Return the sensitivities ``principal`` may read (an agent's, up to its maximum), or
    None for one whose reads no sensitivity limits (a person, a reviewer)."""
    ceiling = getattr(principal, "max_sensitivity", None)
    if ceiling is None:
        return None
    return frozenset(sensitivities_up_to(ceiling))


def event_operations(events) -> set[str]:
    """Return the deletion operations ``events`` name (their details' ``operation``)."""
    found = set()
    for event in events:
        details = event.details if isinstance(event.details, dict) else {}
        if details.get(EVENT_OPERATION_KEY):
            found.add(details[EVENT_OPERATION_KEY])
    return found


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
    external id, type, status and memory_key (each optional).

    An agent bound to a subject token's subject asking for another subject, or for none while
    it holds no token, is refused (``subject_not_granted``), as retrieval and a task's close
    refuse it: an empty list read as "nothing is remembered" when the token was missing.
    """
    if getattr(principal, "any_subject", True) is False and (
        not principal.bound_user_id or (subject and not principal.may_act_for(subject))
    ):
        raise PermissionDenied(
            "This agent may list only the memories of the subject named by its subject token "
            "(X-Memledger-Subject-Token).",
            code="subject_not_granted",
        )
    queryset = Memory.objects.visible_to(principal).select_related("subject")
    if subject:
        # The subject's id as a value (a scalar subquery: an external id is unique in its
        # tenant), not a join: then a page is a range of ``memory_subject_newest``, where a
        # join on the external id sorted all a big subject's rows for one page.
        subject_id = Subject.objects.filter(tenant_id=principal.tenant_id, external_id=subject)
        queryset = queryset.filter(subject_id=Subquery(subject_id.order_by().values("pk")[:1]))
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

    def just_newer(self) -> "ListPosition":
        """Return the position right before this one (its id one more, as PostgreSQL orders
        UUIDs by their bytes): what is older than it starts at this position's own row."""
        return ListPosition(self.created_at, uuid.UUID(int=min(self.pk.int + 1, (1 << 128) - 1)))

    def just_older(self) -> "ListPosition":
        """Return the position right after this one (its id one less): what is newer than it
        starts at this position's own row."""
        return ListPosition(self.created_at, uuid.UUID(int=max(self.pk.int - 1, 0)))


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
