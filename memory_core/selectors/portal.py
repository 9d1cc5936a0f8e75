"""Reads behind the portal's pages: a login's principal, a subject's memories with their
provenance and retrieval usage, a memory's history, and the reviewer queues.

Every selector takes the caller's principal and starts from its tenant (and, for an end user,
its subject). An id outside that scope raises NotFound, the same answer as a missing id.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection
from django.db.models import (
    Case,
    Count,
    DateTimeField,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.functions import Coalesce, Least
from django.utils import timezone

from memory_core.deletion.selectors import (
    deletion_dead_letters,
    deletion_list,
    deletion_visible_ids,
    queued_deletions,
)
from memory_core.deletion.stores import event_details_left
from memory_core.models import (
    AUTHORITY_RANK,
    LIVE_STATUSES,
    AdmissionDecision,
    Authority,
    DeletionOperation,
    Memory,
    MemoryClass,
    MemoryEvent,
    PortalMembership,
    RetrievalTrace,
    ReviewItem,
    Sensitivity,
    Status,
    Tombstone,
    held_apart,
    out_of_use_condition,
    past_end_condition,
    reviewer_decided_condition,
)
from memory_core.models.events import REPLACED_BY_LATER_CORRECTION
from memory_core.policy_check import InUse, memory_expiry
from memory_core.principals import ReviewerPrincipal, SubjectPrincipal, require_reviewer
from memory_core.retrieval.candidates import candidates_by_id
from memory_core.retrieval.conflicts import resolve_conflicts
from memory_core.retrieval.filters import policy_reason
from memory_core.retrieval.pipeline import conflict_state, keyless_cited, keyless_measured
from memory_core.retrieval.policy import RetrievalPolicy
from memory_core.selectors.approvals import (
    CONFLICT_LOST,
    approval_heads,
    chains_lost,
    in_use_now,
    open_writes,
    writer_grant_refusals,
    written_on_newest,
)
from memory_core.selectors.memories import memory_chain_ids, memory_get, memory_visible_chain
from memory_core.selectors.policy import active_retrieval_policy
from memory_core.selectors.writers import memory_writers

# Order in which the "what is remembered" page lists classes.
CLASS_ORDER = [MemoryClass.PREFERENCE, MemoryClass.EPISODIC, MemoryClass.WORKING]
# The codes admission gives a write measured against the key's head (rule 10), which its
# review item keeps: a write made while its key had none has neither.
WRITTEN_ON_A_HEAD = frozenset({"supersession.supersedes", "supersession.conflict_lower_authority"})


def portal_principal(*, user) -> SubjectPrincipal | ReviewerPrincipal | None:
    """Return the principal of a portal login from its membership; None without one."""
    if user is None or not user.is_authenticated:
        return None
    # A deleted tenant's logins act for nobody (its identities step removes them).
    membership = PortalMembership.objects.filter(user_id=user.pk, tenant__deleted_at=None).first()
    if membership is None:
        return None
    if membership.role == PortalMembership.Role.END_USER and membership.subject_id:
        return SubjectPrincipal(
            tenant_id=membership.tenant_id, subject_id=membership.subject_id, user_id=user.pk
        )
    if membership.role == PortalMembership.Role.REVIEWER:
        return ReviewerPrincipal(tenant_id=membership.tenant_id, user_id=user.pk)
    return None


@dataclass(frozen=True)
class Usage:
    """How often a memory was selected by retrieval, and when last; and in how many of those
    retrievals the agent reported that an answer or a tool call used it."""

    count: int = 0
    last_used: datetime | None = None
    reported_used: int = 0


def memory_usage(*, principal, memory_ids) -> dict:
    """Return ``{memory_id: Usage}`` from the retrieval traces that selected each memory.

    The GIN index on ``cited_ids`` (every id a trace mentions) narrows the traces first;
    ``selected_ids`` then counts only the retrievals that actually handed the memory out (as
    an item, or as a clarification's candidate, whose content the answer holds too), and
    ``used_ids`` those whose agent reported an answer or tool call using it.
    """
    ids = [str(memory_id) for memory_id in memory_ids]
    if not ids:
        return {}
    table = RetrievalTrace._meta.db_table
    sql = f"""
        SELECT used.id, count(*), max(t.created_at),
               count(*) FILTER (WHERE used.id = ANY(t.used_ids))
        FROM {table} AS t
        CROSS JOIN LATERAL unnest(t.selected_ids) AS used(id)
        WHERE t.tenant_id = %s
          AND t.cited_ids && %s::uuid[]
          AND used.id = ANY(%s::uuid[])
        GROUP BY used.id
    """  # noqa: S608 - the table name is ours; every value is a parameter
    with connection.cursor() as cursor:
        cursor.execute(sql, [principal.tenant_id, ids, ids])
        return {
            row[0]: Usage(count=row[1], last_used=row[2], reported_used=row[3])
            for row in cursor.fetchall()
        }


@dataclass
class MemoryGroup:
    """The memories of one class on one page, split by type, for the "what is remembered"
    page; ``total`` counts the class's memories on every page."""

    memory_class: str
    types: dict = field(default_factory=dict)
    total: int = 0

    @property
    def count(self) -> int:
        return sum(len(rows) for rows in self.types.values())


# Rows per page of the portal's long lists: a subject may have tens of thousands of
# memories, and a tenant as many writes waiting for a reviewer.
PAGE_SIZE = 50


@dataclass
class Page:
    """Where one page lies in a list of ``total`` rows (``number`` counts from 1)."""

    total: int
    number: int = 1
    page_size: int = PAGE_SIZE
    items: list = field(default_factory=list)

    @classmethod
    def at(cls, *, total: int, number: int, page_size: int = PAGE_SIZE):
        """Return the page ``number`` of ``total`` rows; a page past the last is the last."""
        page = cls(total=total, page_size=page_size)
        page.number = min(max(1, number), page.pages)
        return page

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.page_size))

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.page_size

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def has_next(self) -> bool:
        return self.number < self.pages

    @property
    def first_index(self) -> int:
        """The position (1-based) of the page's first row among all of them."""
        return self.offset + 1 if self.total else 0

    @property
    def last_index(self) -> int:
        return min(self.number * self.page_size, self.total)


@dataclass
class MemoryPage(Page):
    """One page of a subject's active memories, grouped by class then type."""

    groups: list[MemoryGroup] = field(default_factory=list)


def _filtered(
    memories: QuerySet,
    *,
    query: str = "",
    memory_class: str = "",
    memory_type: str = "",
    authority: str = "",
    scope_kind: str = "",
) -> QuerySet:
    """Return ``memories`` narrowed by the page's search (text or key) and filters. The search
    is read in NFC, as content is stored: an "é" typed decomposed finds it too."""
    if query:
        query = unicodedata.normalize("NFC", query)
        memories = memories.filter(Q(content__icontains=query) | Q(memory_key__icontains=query))
    if memory_class:
        memories = memories.filter(memory_class=memory_class)
    if memory_type:
        memories = memories.filter(memory_type=memory_type)
    if authority:
        memories = memories.filter(authority=authority)
    if scope_kind:
        memories = memories.filter(scope_kind=scope_kind)
    return memories


def subject_memories(
    *,
    principal,
    query: str = "",
    memory_class: str = "",
    memory_type: str = "",
    authority: str = "",
    scope_kind: str = "",
    page: int = 1,
    page_size: int = PAGE_SIZE,
    use: InUse | None = None,
) -> MemoryPage:
    """Return one page of the active memories visible to ``principal``, grouped by class
    (CLASS_ORDER) then type, newest first within a type.

    Those whose ``valid_from`` is still ahead (an import may hold one) are listed too: no
    agent is given them yet, but they are remembered, and were in no list of the page (the
    template says "Not yet in effect", ``portal_tags.not_yet_in_effect``). Past its
    ``valid_until`` or its class's retention under the tenant's policy (``InUse``: no agent
    is given it, and the sweep marks it only later), one is listed by
    ``subject_memories_not_in_use`` instead.

    Each row carries ``usage`` (a Usage). Filters narrow by text (content or key), class,
    type, authority and scope kind. A page past the last is the last. ``use``: what is in use
    now (``in_use_now``, read when not given). Each row carries ``writer`` too, who wrote it
    (``selectors.writers.Writer``, or None: not recorded). Four queries whatever the subject
    holds: the counts per class, the page's rows, their usage, their writers.
    """
    use = use or in_use_now(principal.tenant_id)
    memories = _filtered(
        Memory.objects.visible_to(principal).filter(status=Status.ACTIVE).not_ended(use),
        query=query,
        memory_class=memory_class,
        memory_type=memory_type,
        authority=authority,
        scope_kind=scope_kind,
    )
    totals = {
        row["memory_class"]: row["n"]
        for row in memories.order_by().values("memory_class").annotate(n=Count("pk"))
    }
    result = MemoryPage.at(total=sum(totals.values()), number=page, page_size=page_size)
    if not result.total:
        return result
    rank = Case(
        *[When(memory_class=name, then=Value(i)) for i, name in enumerate(CLASS_ORDER)],
        default=Value(len(CLASS_ORDER)),
        output_field=IntegerField(),
    )
    rows = list(
        memories.select_related("agent")
        .annotate(class_rank=rank)
        .order_by("class_rank", "memory_type", "-created_at", "-id")[
            result.offset : result.offset + page_size
        ]
    )
    ids = [row.id for row in rows]
    usage = memory_usage(principal=principal, memory_ids=ids)
    writers = memory_writers(tenant_id=principal.tenant_id, memory_ids=ids)
    _with_expiry(rows, retention=use.retention)
    groups = {
        memory_class: MemoryGroup(memory_class=memory_class, total=totals.get(memory_class, 0))
        for memory_class in CLASS_ORDER
    }
    for row in rows:
        row.usage = usage.get(row.id, Usage())
        row.writer = writers.get(row.id)
        groups[row.memory_class].types.setdefault(row.memory_type, []).append(row)
    result.groups = [group for group in groups.values() if group.count]
    return result


def _with_expiry(rows, *, retention) -> None:
    """Give each row ``expires_at``, when it stops being used, and ``expires_by_retention``.

    The earlier of its ``valid_until`` and the day the retention sweep deletes it (its
    class's or, inferred, ``inferred_days`` after it was written, by the tenant's active
    policy as the sweep reads it): a row stored without admission's cap (a demo, an import),
    or written before a policy shortened its period, showed "when you revoke it" and was
    deleted minutes later (``policy_check.memory_expiry``, as the export says it).
    ``retention``: the tenant's active policy's section (``active_retention``).
    """
    for row in rows:
        expiry = memory_expiry(row, retention)
        row.expires_at, row.expires_by_retention = expiry.at, expiry.by_retention


# The most each short list of the page shows; its count says how many there are.
PENDING_LIMIT = 50


def subject_memories_pending(
    *, principal, use: InUse | None = None, **filters: str
) -> tuple[list[Memory], int]:
    """Return (the newest, how many) of the visible writes still awaiting a reviewer, narrowed
    by the page's search and filters (``subject_memories``'s).

    One past its ``valid_until`` or its class's retention is not awaiting anyone (approval
    refuses it, the retention sweep expires or deletes it): it is listed by
    ``subject_memories_not_in_use``.
    """
    rows = _filtered(
        Memory.objects.visible_to(principal)
        .filter(status=Status.PENDING_APPROVAL)
        .not_ended(use or in_use_now(principal.tenant_id)),
        **filters,
    ).order_by("-created_at", "-id")
    shown = list(rows[: PENDING_LIMIT + 1])
    count = len(shown) if len(shown) <= PENDING_LIMIT else rows.count()
    return mark_only_rejected(shown[:PENDING_LIMIT]), count


def memory_pending_replacements(*, principal, memory: Memory) -> list[Memory]:
    """Return the visible writes waiting for a reviewer that would replace ``memory`` (their
    review item cites a version of its chain, ``memory_chain_ids``, or their approval lands
    on one, ``_landing_on_chain``), oldest first. Deleting ``memory`` leaves them waiting: a
    person may correct a memory and then delete the old version, so the delete page names
    them.

    Any version of the chain, not ``memory`` alone: a write waits on the version in use when
    it was written, and its approval follows the chain to its newest version
    (``selectors.approvals.approval_head``); once the person had corrected that version, the
    write showed on no page of the chain. Not one past its valid_until or its class's
    retention, which approval refuses (``subject_memories_pending`` leaves it out too: the
    memory's page said a reviewer would look at it first). A few queries, whatever the
    number of writes.
    """
    return mark_only_rejected(
        waiting_to_replace(principal=principal, memory=memory)
        .not_ended(in_use_now(principal.tenant_id))
        .exclude(pk=memory.pk)
        .order_by("created_at", "id")
    )


def waiting_to_replace(*, principal, memory: Memory) -> QuerySet:
    """Return the visible writes waiting for a reviewer whose approval would replace a
    version of ``memory``'s chain: their review item cites one (``memory_chain_ids``), or
    their approval lands on one (``_landing_on_chain``).

    The one rule of the writes a memory's page names as waiting to replace it
    (``memory_pending_replacements``) and of those a person's correction of it withdraws
    (``services.writes._withdraw_own_waiting``): read by citations alone, the withdrawal
    left waiting a write whose head was revoked since, which the page named, and its
    approval replaced the person's latest statement (stop 64's review of the portal fix).
    """
    chain = memory_chain_ids(memory)
    citing = open_writes(principal.tenant_id, candidate_ids__overlap=chain).values("memory_id")
    return (
        Memory.objects.visible_to(principal)
        .filter(status=Status.PENDING_APPROVAL)
        .filter(Q(pk__in=citing) | Q(pk__in=_landing_on_chain(memory, chain)))
    )


def _landing_on_chain(memory: Memory, chain: list) -> list:
    """Return the ids of the writes on ``memory``'s key waiting for a reviewer whose item
    cites no version of its chain (``chain``) and whose approval lands on one now, found as
    the reviewers' queue finds it (``approval_heads``, unlocked).

    A write made while its key had none (its item cites no head), or on a head deleted or
    retired since, lands on the key's memory in use now, and the queue says it becomes its
    next version; that memory's page, and its delete page, named no write waiting to replace
    it (stop 62's audit of reviewer flows). None for a memory without a key: a keyless write
    lands only on the chain its item cites. A few queries, whatever the number of writes."""
    if not memory.memory_key:
        return []
    items = list(
        open_writes(
            memory.tenant_id,
            subject_id=memory.subject_id,
            memory_key=memory.memory_key,
            memory__status=Status.PENDING_APPROVAL,
        )
        .exclude(candidate_ids__overlap=chain)
        .select_related("memory", "memory__subject")
    )
    heads = approval_heads(items)
    return [
        item.memory_id
        for item in items
        if heads.get(item.pk) is not None and heads[item.pk].pk in chain
    ]


def mark_only_rejected(rows) -> list[Memory]:
    """Return ``rows`` (writes waiting for a reviewer) as a list, each with
    ``only_rejected``: why a reviewer can only reject it now, or "". The rule code with
    which its agent's grant refuses it (``selectors.approvals.writer_grant_refuses``:
    narrowed, or the agent deactivated, while it waited; ``review_grant_narrowed``), or
    ``CONFLICT_LOST``: it corrects a memory a reviewer's choice of another in a conflict
    revoked while it waited (``chains_lost``; ``review_conflict_lost``).

    An approval of either is refused, and the person's pages said of such a write that it
    becomes what is remembered once a reviewer approves it (stop 61's review; stop 62's
    audit of conflicts). Read as the reviewers' queue reads it (``approval_heads``,
    ``writer_grant_refusals``, ``chains_lost``): a few queries, whatever the number of rows,
    none without a waiting write.
    """
    rows = list(rows)
    waiting = [row.pk for row in rows if row.status == Status.PENDING_APPROVAL]
    items = []
    if waiting:
        items = list(
            open_writes(rows[0].tenant_id, memory_id__in_array=waiting).select_related(
                "memory", "memory__subject"
            )
        )
    newest = written_on_newest(items)
    heads = approval_heads(items, newest=newest)
    refusals = writer_grant_refusals(items, heads)
    lost = set()
    if items:
        lost = chains_lost(rows[0].tenant_id, _maybe_lost(items, heads), newest=newest)
    why = {
        item.memory_id: refusals.get(item.pk, "") or (CONFLICT_LOST if item.pk in lost else "")
        for item in items
    }
    for row in rows:
        row.only_rejected = why.get(row.pk, "")
    return rows


def _maybe_lost(items, heads: dict) -> list:
    """Return the writes of ``items`` whose chain may have lost a conflict while they waited:
    those ``chains_lost`` reads, as the approval does. Not one landing on the very memory it
    was written on (``heads``, ``approval_heads``'), in use, so never revoked: reading its
    chain again took the queue a query more for a page of writes on memories in use."""
    return [
        item
        for item in items
        if CONFLICT_LOST in item.rule_codes
        or heads.get(item.pk) is None
        or item.candidate_ids[:1] != [heads[item.pk].pk]
    ]


def same_text(a: str, b: str) -> bool:
    """Return whether two texts differ at most in whitespace (spaces, line breaks): a
    person's correction that changes anything else, letter case too, is another text.

    Compared in NFC, as content is stored (``services.memories.build_memory``): a macOS
    client's NFD "ü" is the same letter, yet its unchanged text saved an identical version
    and its correction sent twice was stored twice (stop 60's review)."""
    return unicodedata.normalize("NFC", a).split() == unicodedata.normalize("NFC", b).split()


def correction_saved_as(*, principal, memory: Memory, content: str) -> Memory | None:
    """Return the version that superseded ``memory`` when it is the person's correction with
    the text ``content`` (``explicit_user``, as the portal writes), or None: the same
    correction sent twice (a second click while the first was saved) finds its memory
    superseded by the first (stop 54's audit in a browser). One query.

    The same text apart from its spacing (``same_text``), not the same ``content_hash``,
    which folds case and NFKC: a tab opened on the old version whose text differed from the
    saved one in letter case alone was told "this same correction is already saved", and
    its text was thrown away (stop 55's audit of the portal).

    Only while that version is still in use: corrected again since (back to the first
    wording, say) or revoked, the person was told their text was saved as a version no agent
    is given, and it was thrown away (stop 61's audit of corrections).

    Only a version without a structured value, as a portal correction saves one: the same
    text is how a person drops a wrong value, and after "This is right" in another tab made
    version 2 with the text *and* the value, saving the text was told "already saved as
    version 2", which kept the value (stop 65's audit of the portal)."""
    successor = (
        Memory.objects.visible_to(principal)
        .filter(
            supersedes_id=memory.pk,
            authority=Authority.EXPLICIT_USER,
            status=Status.ACTIVE,
            value__isnull=True,  # no value is SQL NULL, not JSON null
        )
        .not_ended(in_use_now(principal.tenant_id))
        .first()
    )
    if successor is not None and same_text(successor.content, content):
        return successor
    return None


def corrections_beside(*, principal, memory: Memory):
    """Return the person's corrections kept beside ``memory``, oldest first: memories of the
    same key and place, in use, stated by the person (``explicit_user``, as the portal
    writes). A correction of a memory of higher authority (an administrator's) is kept
    beside it. For a keyless memory only those its conflicts cite: every keyless memory of
    the subject has the same empty key, and a correction of another incident in the same
    words was answered "already kept beside" and never saved (stop 54's audit of keyless
    conflicts). Any state of the conflict: resolved (``ask_user``, ``keep_both_scoped``), the
    correction still stands beside it (the stop's review)."""
    rivals = Memory.objects.visible_to(principal)
    if not memory.memory_key:
        cited = ReviewItem.objects.filter(
            tenant_id=memory.tenant_id,
            kind=ReviewItem.Kind.CONFLICT,
            memory_key="",
            candidate_ids__contains=[memory.pk],
        ).values_list("candidate_ids", flat=True)
        rivals = rivals.filter(pk__in=[pk for ids in cited for pk in ids])
    return (
        rivals.filter(
            subject_id=memory.subject_id,
            memory_key=memory.memory_key,
            memory_type=memory.memory_type,
            scope_kind=memory.scope_kind,
            scope_ref=memory.scope_ref,
            environment=memory.environment,
            status=Status.ACTIVE,
            authority=Authority.EXPLICIT_USER,
            # The owner a correction kept beside ``memory`` gets (its chain's, ``_draft``): an
            # agent's private memory on the key is none of the person's corrections, and a
            # correction sent to it became private to that agent (stop 56's review).
            agent_id=memory.agent_id,
        )
        .exclude(pk=memory.pk)
        .order_by("created_at", "id")
    )


def memory_deleted_by(*, principal, memory: Memory):
    """Return the id of the deletion operation that deleted ``memory`` (its tombstone's), or
    None: none recorded, or one ``principal`` may not see (``deletion_visible_ids``, as a
    request asked again answers it). The delete page of a memory already deleted (Back after
    deleting it) sends the person there instead of asking to delete it again. Two queries."""
    operation_id = (
        Tombstone.objects.filter(tenant_id=principal.tenant_id, memory_id=memory.pk)
        .values_list("operation_id", flat=True)
        .first()
    )
    if operation_id is None or not deletion_visible_ids(principal=principal, ids=[operation_id]):
        return None
    return operation_id


NOT_IN_USE_LIMIT = 50  # the most the list shows; the count says how many there are


def _retention_day(use: InUse):
    """Return, as SQL, the day the tenant's retention ends a row (``memory_expiry``'s
    ``_deletion_day``): ``created_at`` plus the shortest period of the class rules it
    matches, NULL when none limits it. ``use.now - cutoff`` is each rule's period."""
    days = [
        Case(
            When(**{rule.column: rule.value}, then=F("created_at") + (use.now - rule.cutoff)),
            output_field=DateTimeField(),
        )
        for rule in use.cutoffs
    ]
    if not days:
        return Value(None, output_field=DateTimeField())
    return days[0] if len(days) == 1 else Least(*days)  # PostgreSQL's LEAST skips NULLs


def _left_use_at(use: InUse):
    """Return, as SQL, when a row of the "Not in use" list left use, for the list to show
    and sort by: the rule of the memory's own page (``portal_tags.not_in_use_since``), and
    for a live row past its class's retention the day the retention ran out (its page's
    "Expires", ``memory_expiry``).

    A row stored expired left at the earlier of its ``valid_until`` and its marking (a
    task's close expires one before its end; the sweep marks one some time after it); a
    live one past its end at its ``valid_until``; anything else when it last changed (the
    revoke, the reviewer's refusal). The list dated every row by ``updated_at``: "expired ·
    1 month ago" for one whose end passed a minute ago, whose page said "Expired" then.
    """
    return Case(
        When(status=Status.EXPIRED, then=Least("valid_until", "updated_at")),
        When(past_end_condition(use.now), then=F("valid_until")),
        # Live and not past its end: in the list only past its class's retention.
        When(status__in=LIVE_STATUSES, then=Coalesce(_retention_day(use), "updated_at")),
        default=F("updated_at"),
        output_field=DateTimeField(),
    )


def _replaced_by_own() -> Exists:
    """Return, as SQL, whether a memory was withdrawn by its person's later correction (its
    revoke's reason ``REPLACED_BY_LATER_CORRECTION``): the list called it "revoked", as of a
    memory the person took back, where its page says "replaced by a later correction of
    yours"."""
    return Exists(
        MemoryEvent.objects.filter(
            tenant_id=OuterRef("tenant_id"),
            memory_id=OuterRef("pk"),
            action=MemoryEvent.Action.REVOKED,
            reason_code=REPLACED_BY_LATER_CORRECTION,
        )
    )


def subject_memories_not_in_use(
    *, principal, use: InUse | None = None, **filters: str
) -> tuple[list[Memory], int]:
    """Return (the newest rows, how many) of the memories about the subject that are kept
    with their content but not in use (any more): revoked, refused by a reviewer, or expired,
    and the live ones (active or waiting for a reviewer) the retention sweep has not reached
    yet that are past their ``valid_until`` or their class's retention under the tenant's
    policy (``out_of_use_condition``: retrieval gives them to no agent).

    A superseded version is not listed: it shows in its chain's history. Narrowed by the
    page's search and filters (``subject_memories``'s). The latest to leave use first: each
    row carries ``left_use_at`` (``_left_use_at``), ``not_in_use`` ("revoked",
    "rejected", "expired" or "past_retention": ``InUse.state``), and ``replaced_by_own``
    (``_replaced_by_own``), in the rows' own query.
    """
    use = use or in_use_now(principal.tenant_id)
    rows = (
        _filtered(
            Memory.objects.visible_to(principal).filter(
                Q(status__in=[Status.REVOKED, Status.REJECTED, Status.EXPIRED])
                | out_of_use_condition(use)
            ),
            **filters,
        )
        .annotate(left_use_at=_left_use_at(use), replaced_by_own=_replaced_by_own())
        .order_by("-left_use_at", "-id")
    )
    shown = list(rows[: NOT_IN_USE_LIMIT + 1])
    for row in shown:
        row.not_in_use = use.state(row)
    count = len(shown) if len(shown) <= NOT_IN_USE_LIMIT else rows.count()
    return shown[:NOT_IN_USE_LIMIT], count


def deletions_page(*, principal, page: int = 1, page_size: int = PAGE_SIZE) -> Page:
    """Return a page of the deletion operations ``principal`` may see, newest first (each
    with ``memory_count``, without its ids or its steps: ``deletion_list``). Two queries."""
    operations = deletion_list(principal=principal, steps=False)
    result = Page.at(total=operations.count(), number=page, page_size=page_size)
    result.items = list(operations[result.offset : result.offset + page_size])
    return result


# The most deletions in progress ``subject_deletions_in_progress`` names (a subject has few).
IN_PROGRESS_LIMIT = 10


def subject_deletions_in_progress(*, principal) -> list[DeletionOperation]:
    """Return the deletions of the subject's memories not finished: the one queued for a
    worker (``queued_deletions``, not made yet) first, then the operations pending, running
    or partial (not dead-lettered: those wait for a reviewer), newest first, each with
    ``memory_count`` and without its ids or steps. Two queries."""
    state = DeletionOperation.State
    made = (
        deletion_list(principal=principal, steps=False)
        .filter(status__in=[state.PENDING, state.RUNNING, state.PARTIAL])
        .filter(dead_lettered_at__isnull=True)
    )
    queued = queued_deletions(principal=principal)
    return [*queued, *made[: IN_PROGRESS_LIMIT - len(queued)]]


def dead_letters_page(*, principal, page: int = 1, page_size: int = PAGE_SIZE) -> Page:
    """Return a page of the tenant's dead-lettered (or failed) deletion operations, the most
    recent first, each with its steps and subject (``deletion_dead_letters``): a broken
    store dead-letters every deletion that meets it, and the page listed them all. Three
    queries: the count, the page, its steps."""
    operations = deletion_dead_letters(principal=principal)
    result = Page.at(total=operations.count(), number=page, page_size=page_size)
    result.items = list(operations[result.offset : result.offset + page_size])
    return result


@dataclass
class MemoryHistory:
    """A memory with its whole supersession chain and every event of the chain."""

    memory: Memory
    chain: list
    events: list
    usage: dict

    @property
    def head(self) -> Memory:
        return self.chain[-1]


def memory_history(*, principal, memory_id) -> MemoryHistory:
    """Return the chain (oldest first) and events of a memory ``principal`` may see.

    The memory and each link carry ``state_now``: their status now (``InUse.state``), as the
    lists say it: one past its ``valid_until`` is expired, one past its class's retention
    ``past_retention``, though its stored status stays "active" until the retention sweep
    (the page said "Active" beside "Expired", and "Active" of a row the list called past its
    retention). The memory carries ``writer`` (``selectors.writers.Writer``, or None) and
    ``replaced_by_own``, as the list's rows do.
    """
    memory = memory_get(principal=principal, memory_id=memory_id)
    chain = memory_visible_chain(principal=principal, memory=memory)
    ids = [link.pk for link in chain]
    events = list(
        MemoryEvent.objects.filter(tenant_id=principal.tenant_id, memory_id__in_array=ids).order_by(
            "created_at", "id"
        )
    )
    usage = memory_usage(principal=principal, memory_ids=ids)
    for link in chain:
        link.usage = usage.get(link.pk, Usage())
    # Each event names its version here: looked up in the template, a long chain's events
    # table took every event times every link.
    versions = {link.pk: link.version for link in chain}
    deleted = {link.pk for link in chain if link.status == Status.DELETED}
    for event in events:
        event.version = versions.get(event.memory_id)
        if event.memory_id in deleted and isinstance(event.details, dict):
            # As the deletion's events step leaves them, before it has run (a revocation's
            # reason showed until then: stop 54's audit of reads).
            event.details = event_details_left(event.details)
    memory.usage = usage.get(memory.pk, Usage())
    memory.writer = memory_writers(tenant_id=principal.tenant_id, memory_ids=[memory.pk]).get(
        memory.pk
    )
    memory.replaced_by_own = any(
        event.memory_id == memory.pk
        and event.action == MemoryEvent.Action.REVOKED
        and event.reason_code == REPLACED_BY_LATER_CORRECTION
        for event in events
    )
    use = in_use_now(principal.tenant_id)
    for row in [memory, *chain]:
        row.state_now = use.state(row)
    _with_expiry([memory, *chain], retention=use.retention)
    return MemoryHistory(memory=memory, chain=chain, events=events, usage=usage)


@dataclass
class Unsettled:
    """A conflict citing a memory that is not settled (``memory_unsettled``): open for a
    reviewer, or resolved ``ask_user``, asking the person which one is right."""

    item: ReviewItem
    # The other candidates in use the person may see, oldest first.
    others: list
    # The candidates an agent asking without other limits is given now (``given_now``);
    # none while it asks which holds (``clarified``), or while the better match for each
    # request is given.
    given: list
    clarified: bool
    # Whether they hold in different scopes or environments: ``given`` is what agents are
    # given where all of them apply.
    apart: bool
    # Whether a candidate was stated with more authority than the person's (an
    # administrator's): a correction of theirs stands beside it, it does not replace it.
    above_theirs: bool

    @property
    def asking(self) -> bool:
        """Whether a reviewer asks the person which one is right (resolved ``ask_user``),
        rather than deciding it (open)."""
        return self.item.state == ReviewItem.State.RESOLVED

    @property
    def withheld(self) -> int:
        """How many of the candidates the person may see are not ``given``."""
        return len(self.others) + 1 - len(self.given)


def memory_unsettled(*, principal, memory: Memory) -> list[Unsettled]:
    """Return the conflicts citing ``memory`` (in use) that are not settled, oldest first:
    open, or resolved ``ask_user`` and not taken over by a later conflict of the subject on
    the key sharing a row with it (``ASK_USER_FOLLOWED_SQL``'s rule, for a key too), each
    with another candidate in use the person may see.

    A reviewer's "Ask the user" told the person, in the memory's events, that they were
    asked which one is right, and no page named the other one, what agents are given
    meanwhile or how to answer (stop 64's audit of the portal). Three queries; with a
    conflict to show, two more, and one for those without a key or one for each of a key's.
    """
    use = in_use_now(principal.tenant_id)
    if use.state(memory) != Status.ACTIVE:
        return []
    later = ReviewItem.objects.filter(
        tenant_id=OuterRef("tenant_id"),
        subject_id=OuterRef("subject_id"),
        kind=ReviewItem.Kind.CONFLICT,
        memory_key=OuterRef("memory_key"),
        created_at__gt=OuterRef("created_at"),
        candidate_ids__overlap=OuterRef("candidate_ids"),
    )
    items = list(
        ReviewItem.objects.filter(
            tenant_id=principal.tenant_id,
            subject_id=memory.subject_id,
            kind=ReviewItem.Kind.CONFLICT,
            candidate_ids__contains=[memory.pk],
        )
        .alias(taken_over=Exists(later))
        .filter(
            Q(state=ReviewItem.State.OPEN)
            | Q(state=ReviewItem.State.RESOLVED, resolution="ask_user", taken_over=False)
        )
        .order_by("created_at", "id")
    )
    rows = {
        row.pk: row
        for row in Memory.objects.visible_to(principal)
        .filter(pk__in_array=sorted({pk for item in items for pk in item.candidate_ids}))
        .order_by("created_at", "id")
        if use.state(row) == Status.ACTIVE and row.valid_from <= use.now
    }
    shown = [(item, [rows[pk] for pk in rows if pk in item.candidate_ids]) for item in items]
    shown = [(item, standing) for item, standing in shown if len(standing) >= 2]
    if not shown:
        return []
    policy = active_retrieval_policy(principal.tenant_id)
    ids = sorted({str(row.pk) for _, standing in shown for row in standing})
    # Of memories without a key, the rows of the subject's conflicts citing them as stage 8
    # reads them (open, asked and not taken over, kept both by a reviewer), of those in use
    # the person may see.
    found = (
        []
        if memory.memory_key
        else keyless_cited(
            "m.id = ANY(%(ids)s::uuid[])",
            {"tenant_id": principal.tenant_id, "subject_id": memory.subject_id, "ids": ids},
        )
    )
    candidates = {candidate.id: candidate for candidate in candidates_by_id(ids)}
    unsettled = []
    for item, standing in shown:
        given, clarified = given_now(standing, candidates=candidates, found=found, policy=policy)
        unsettled.append(
            Unsettled(
                item=item,
                others=[row for row in standing if row.pk != memory.pk],
                given=given,
                clarified=clarified,
                apart=len({(r.scope_kind, r.scope_ref, r.environment) for r in standing}) > 1,
                above_theirs=any(
                    AUTHORITY_RANK[row.authority] > AUTHORITY_RANK[Authority.EXPLICIT_USER]
                    for row in standing
                ),
            )
        )
    return unsettled


def given_now(
    rows: list[Memory], *, candidates: dict, found: list, policy: RetrievalPolicy
) -> tuple[list[Memory], bool]:
    """Return which of ``rows`` (the candidates in use of one conflict) an agent asking
    without other limits is given where they all apply, by the tenant's rules, and whether
    it asks which one holds instead, given none of them.

    Retrieval's own steps: the policy's rules of stage 5 (``filters.policy_reason``, its
    confidence floor and prompt sensitivity limit), then stage 8's with the sets reviewers
    kept both: of a key's, ``resolve_conflicts`` with those at its place
    (``pipeline.conflict_state``), none while the better match for each request is given
    (``best_score_low_impact``); of memories without a key, ``pipeline.keyless_measured``
    against the conflicts' rows ``found`` (``keyless_cited``'s). ``candidates``: ``rows``
    as a store makes them (``candidates_by_id``), by id. By rules of its own, the page said
    agents were given an administrator's memory above the prompt's limit, which no agent
    is, and not the person's a reviewer kept beside it, which retrieval gives (stop 64's
    review of the portal fix). What a request narrows (the agent's grant, scope and
    environment, what matches its query) is not known here, and the page does not say it.
    """
    prompted = [
        candidate
        for candidate in (candidates.get(str(row.pk)) for row in rows)
        if candidate is not None
        and not policy_reason(
            confidence=candidate.confidence,
            sensitivity=candidate.sensitivity,
            max_sensitivity=Sensitivity.RESTRICTED,
            policy=policy,
        )
    ]
    clarified = False
    if rows[0].memory_key:
        acknowledged, _, _ = conflict_state(
            tenant_id=rows[0].tenant_id, subject_id=rows[0].subject_id, ranked=prompted
        )
        left, outcomes, clarifications, _ = resolve_conflicts(
            prompted, policy=policy, acknowledged=acknowledged
        )
        if any(outcome.rule == "best_score_low_impact" for outcome in outcomes):
            left = []
        clarified = bool(clarifications)
    else:
        left, _ = keyless_measured(
            prompted, found, max_sensitivity=Sensitivity.RESTRICTED, policy=policy
        )
    given = {candidate.id for candidate in left}
    return [row for row in rows if str(row.pk) in given], clarified


# --- Reviewer queues ------------------------------------------------------------------------


def _reviewer_items(principal) -> QuerySet:
    require_reviewer(principal, message="No review queue for this login.")
    return ReviewItem.objects.filter(tenant_id=principal.tenant_id)


def _open_queue(principal, kind):
    """The open items of ``kind`` a reviewer's queue pages through (``review_queue``,
    ``conflict_queue``), oldest first once ordered by ``(created_at, id)``. Not a write
    deleted since (by its subject, or with its subject): nothing is left to decide, and its
    deletion's worker closes the item (resolution "deleted")."""
    queue = _reviewer_items(principal).filter(kind=kind, state=ReviewItem.State.OPEN)
    if kind == ReviewItem.Kind.SENSITIVE_WRITE:
        queue = queue.exclude(memory__status=Status.DELETED)
    return queue


def queue_page_of(*, principal, item_id, kind, page_size: int = PAGE_SIZE) -> int | None:
    """Return the page of its queue the open item ``item_id`` of ``kind`` is on now, or None
    if it is not open (decided, resolved or withdrawn). A form refused on an item another
    reviewer's decision has moved onto an earlier page was answered as if the item were gone
    (stop 55's audit of the reviewer pages)."""
    queue = _open_queue(principal, kind)
    item = queue.filter(pk=item_id).values("created_at", "id").first()
    if item is None:
        return None
    before = queue.filter(
        Q(created_at__lt=item["created_at"]) | Q(created_at=item["created_at"], id__lt=item["id"])
    ).count()
    return before // page_size + 1


def review_queue(*, principal, page: int = 1, page_size: int = PAGE_SIZE) -> Page:
    """Return a page of the open sensitive writes of the reviewer's tenant still to decide,
    oldest first.

    Each item carries ``writer``: the name of the agent whose write it is (from its admission
    decision), or "" when a person or the system wrote it; ``replaces``: the memory it was
    written on (the key's head then), or None; ``lands_on``: the head an approval would land
    on now (``selectors.approvals.approval_head``, as the approval finds it: that memory, its
    chain's newest version, or the key's current head: for a write made while its key had
    none, the one written since), or None; and ``supersedes``: whether approving it makes it
    that head's next version (else it stands beside it in a conflict); ``on_deleted``:
    whether it was written on a head whose deletion has taken it out of the item since (its
    rule codes, ``WRITTEN_ON_A_HEAD``, say it was written on one); ``ended``: the write's
    state when it went out of use while it waited (``expired``, ``past_retention``: it can
    only be rejected, ``review_expired``), else ""; ``grant_narrowed``: the admission rule
    code with which its agent's grant, narrowed while it waited, refuses it now (it can only
    be rejected, ``review_grant_narrowed``), else ""; ``conflict_lost``: whether it corrects
    a memory that a reviewer's choice of another in a conflict revoked while it waited (it
    can only be rejected, ``review_conflict_lost``). Some dozen queries whatever
    the page holds (``approval_heads``, ``chains_lost``: one more for each version a chain
    written on has moved on by since).
    """
    queue = _open_queue(principal, ReviewItem.Kind.SENSITIVE_WRITE)
    result = Page.at(total=queue.count(), number=page, page_size=page_size)
    items = list(
        queue.select_related("memory", "memory__agent", "memory__subject", "subject").order_by(
            "created_at", "id"
        )[result.offset : result.offset + page_size]
    )
    writers = memory_writers(
        tenant_id=principal.tenant_id,
        memory_ids=[item.memory_id for item in items if item.memory_id],
    )
    # The memory each write would replace (the key's head when it was written): a reviewer
    # approved a health statement as the next version of a language preference unseen.
    heads = {
        memory.pk: memory
        for memory in Memory.objects.filter(
            tenant_id=principal.tenant_id,
            pk__in_array=[item.candidate_ids[0] for item in items if item.candidate_ids],
        )
    }
    for item in items:
        item.writer = getattr(writers.get(item.memory_id), "agent", None) or ""
        item.replaces = heads.get(item.candidate_ids[0]) if item.candidate_ids else None
        # Written on a head deleted since: the deletion's worker takes the head's id out of
        # the item (no id of a deleted memory is kept), and the card said the write was
        # made while the key had none (stop 60's audit of reviewers). Its rule codes say it.
        item.on_deleted = item.replaces is None and not WRITTEN_ON_A_HEAD.isdisjoint(
            item.rule_codes
        )
    # Where the approval lands now, found as the approval finds it: the queue said "becomes
    # the next version of" the head written on while its chain had moved on to a version of
    # higher authority, beside which the approval opened a conflict. Read for the whole page
    # at once: one approval_head per write made 261 queries for a page of 50. Every write,
    # not only those written on a head: one written while its key had none lands on the
    # key's head written since, and the queue said nothing of the memory it supersedes.
    newest = written_on_newest(items)
    lands_on = approval_heads(items, newest=newest)
    narrowed = writer_grant_refusals(items, lands_on)
    # A correction of a memory that lost a conflict: approved, it stood alone beside the
    # winner (stop 62's audit of conflicts), or on a key superseded it (stop 65's), so it is
    # refused.
    lost = chains_lost(principal.tenant_id, _maybe_lost(items, lands_on), newest=newest)
    use = in_use_now(principal.tenant_id)
    for item in items:
        # Out of use while it waited (past its valid_until or its class's retention), or
        # refused by its agent's grant narrowed since: an approval is refused
        # (``review_expired``, ``review_grant_narrowed``), and the card promised what it
        # would do.
        item.ended = use.state(item.memory)
        if item.ended == Status.PENDING_APPROVAL:
            item.ended = ""
        item.grant_narrowed = narrowed.get(item.pk, "")
        item.conflict_lost = item.pk in lost
        approvable = not (item.ended or item.grant_narrowed or item.conflict_lost)
        item.lands_on = lands_on.get(item.pk) if approvable else None
        # As an approval decides (services.reviews): a write of lower authority than the
        # head stands beside it in a conflict, it does not replace it.
        item.supersedes = item.lands_on is not None and (
            AUTHORITY_RANK[item.memory.authority] >= AUTHORITY_RANK[item.lands_on.authority]
        )
    result.items = items
    return result


def conflict_queue(*, principal, page: int = 1, page_size: int = PAGE_SIZE) -> Page:
    """Return a page of the open conflicts of the reviewer's tenant, oldest first, each with
    ``candidates`` loaded.

    Each candidate carries ``state_now``, its state now (``InUse.state``: "expired" past its
    valid_until, "past_retention" past its class's retention), and each item
    ``active_count``: how many candidates are still in use and already in effect (only those
    can be chosen as the winner), and ``held_apart``: whether those may all stay in use
    (``models.held_apart``).
    Four queries whatever the queue holds (the tenant's active policy one of them).
    """
    queue = _open_queue(principal, ReviewItem.Kind.CONFLICT)
    result = Page.at(total=queue.count(), number=page, page_size=page_size)
    items = list(
        queue.select_related("subject", "memory").order_by("created_at", "id")[
            result.offset : result.offset + page_size
        ]
    )
    wanted = {candidate for item in items for candidate in item.candidate_ids}
    for item in items:
        if item.memory_id:
            wanted.add(item.memory_id)
    by_id = {
        memory.pk: memory
        for memory in Memory.objects.filter(
            tenant_id=principal.tenant_id, pk__in_array=wanted
        ).select_related("agent")
    }
    now = timezone.now()
    use = in_use_now(principal.tenant_id, now)
    for item in items:
        ids = list(item.candidate_ids) or ([item.memory_id] if item.memory_id else [])
        item.candidates = [by_id[candidate] for candidate in ids if candidate in by_id]
        # As conflict_resolve decides (``InUse``): one past its valid_until or its class's
        # retention is no longer in use, though its status stays "active" until the retention
        # sweep; offered, it won and revoked the live one (past its end), or was refused
        # (past its retention: stop 52's audit).
        for memory in item.candidates:
            memory.state_now = use.state(memory)
        # Only those already in effect, as the page offers them (``not_yet_in_effect``): one
        # whose valid_from is ahead is given to no agent until then and cannot win. Counted,
        # the page left out its "Only one candidate is still in use" (stop 56's audit of the
        # portal in a browser).
        in_use = [
            m for m in item.candidates if m.state_now == Status.ACTIVE and m.valid_from <= now
        ]
        item.active_count = len(in_use)
        item.held_apart = held_apart(in_use, now)
    result.items = items
    return result


def review_recent(*, principal, limit: int = 20) -> list[ReviewItem]:
    """Return the items of the reviewer's tenant a reviewer decided most recently
    (``reviewer_decided_condition``: the health page's decisions).

    Not every closed item: those the system closed (a deletion's worker, a revoke, the
    retention sweep) filled the list and pushed the reviewers' decisions out of it.
    """
    return list(
        _reviewer_items(principal)
        .exclude(state=ReviewItem.State.OPEN)  # the partial index's condition
        .filter(reviewer_decided_condition())
        .select_related("resolved_by", "subject")
        .order_by("-resolved_at", "-created_at")[:limit]
    )


@dataclass
class RuleGroup:
    """The rejected writes that one rule code refused."""

    rule_code: str
    count: int
    last_at: datetime | None
    decisions: list


NO_RULE_CODE = "(no rule code)"

# Every rejected decision of the tenant once per rule code it carries (a decision without
# codes under NO_RULE_CODE), counted and ranked in the database: no row cap.
_REJECTED_CODES_SQL = """
    SELECT DISTINCT d.id, d.created_at, c.code
    FROM {table} AS d
    CROSS JOIN LATERAL unnest(
        CASE WHEN cardinality(d.rule_codes) > 0 THEN d.rule_codes
             ELSE ARRAY[%(none)s]::varchar[] END
    ) AS c(code)
    WHERE d.tenant_id = %(tenant)s AND d.outcome = %(outcome)s
"""
_REJECTED_BY_RULE_SQL = """
    WITH codes AS ({codes}),
    ranked AS (
        SELECT code, id, created_at,
               count(*) OVER (PARTITION BY code) AS total,
               max(created_at) OVER (PARTITION BY code) AS last_at,
               row_number() OVER (PARTITION BY code ORDER BY created_at DESC, id DESC) AS n
        FROM codes
    )
    SELECT code, total, last_at, id FROM ranked WHERE n <= %(limit)s
    ORDER BY total DESC, code, n
"""


def rejected_by_rule(*, principal, limit_per_rule: int = 5) -> list[RuleGroup]:
    """Return the tenant's rejected writes grouped by rule code, most frequent first.

    Counts cover every rejected decision of the tenant (one SQL query with ``unnest`` and
    window functions); each group carries its latest ``limit_per_rule`` decisions.
    """
    require_reviewer(principal, message="No review queue for this login.")
    table = AdmissionDecision._meta.db_table
    sql = _REJECTED_BY_RULE_SQL.format(codes=_REJECTED_CODES_SQL.format(table=table))
    params = {
        "none": NO_RULE_CODE,
        "tenant": principal.tenant_id,
        "outcome": AdmissionDecision.Outcome.REJECTED,
        "limit": limit_per_rule,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    decisions = AdmissionDecision.objects.select_related("agent", "subject").in_bulk(
        {row[3] for row in rows}
    )
    groups: dict[str, RuleGroup] = {}
    for code, total, last_at, decision_id in rows:
        group = groups.get(code)
        if group is None:
            group = groups[code] = RuleGroup(code, total, last_at, [])
        group.decisions.append(decisions[decision_id])
    return sorted(groups.values(), key=lambda group: (-group.count, group.rule_code))
