"""What an approval of a write waiting for a reviewer lands on, read by the approval (locked)
and by the review queue (unlocked, to say what an approval would do), and the chains a write
may join: selectors, so that the portal's queue reads them without importing a service."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db.models import BooleanField, CharField, Q, Value
from django.db.models.expressions import RawSQL
from django.utils import timezone

from memory_core.models import (
    AUTHORITY_RANK,
    PROPOSED_STATUSES,
    SENSITIVITY_RANK,
    Agent,
    Memory,
    MemoryEvent,
    ReviewItem,
    Status,
)
from memory_core.policy_check import InUse
from memory_core.principals import AgentPrincipal
from memory_core.retrieval.conflicts import ASK_USER_FOLLOWED_SQL
from memory_core.retrieval.filters import policy_reason
from memory_core.retrieval.policy import RetrievalPolicy
from memory_core.selectors.policy import active_retention


def open_writes(tenant_id, **filters):
    """Return the tenant's review items of sensitive writes still waiting for a reviewer,
    narrowed by ``filters`` (a subject, a key, the memories they hold, the heads they cite)."""
    return ReviewItem.objects.filter(
        tenant_id=tenant_id,
        kind=ReviewItem.Kind.SENSITIVE_WRITE,
        state=ReviewItem.State.OPEN,
        **filters,
    )


def shared_or_own(agent_id) -> Q:
    """The memories shared by a tenant's agents, and those private to ``agent_id``."""
    return Q(agent_id__isnull=True) | Q(agent_id=agent_id)


def agents_reaching(tenant_id, memories, *, policy: RetrievalPolicy) -> dict:
    """Return, by id, the tenant's active agents whose grant reaches each of ``memories``
    (``AgentPrincipal.grant_reaches``: shared or its own, of a type it reads, up to its
    maximum sensitivity) and to whom the tenant's ``policy`` lets it be given, as principals
    sorted by name: the agents that may be given it. Whom an agent may act for is left out:
    memories of one subject are compared, which an agent may act for for all of them or
    none. One query, whatever the number of agents.

    The policy by retrieval's own rule (``filters.policy_reason``: its confidence floor and
    prompt sensitivity cap, which every store applies): measured by grants alone, a winner
    the policy gives no agent reached every agent, and choosing it revoked a candidate they
    were all given (stop 60's review)."""
    agents = Agent.objects.filter(tenant_id=tenant_id, is_active=True).order_by("name", "pk")
    grants = [AgentPrincipal.from_agent(agent) for agent in agents]
    return {
        memory.pk: [
            grant
            for grant in grants
            if grant.grant_reaches(memory)
            and not policy_reason(
                confidence=memory.confidence,
                sensitivity=memory.sensitivity,
                max_sensitivity=grant.max_sensitivity,
                policy=policy,
            )
        ]
        for memory in memories
    }


def chain_rows(queryset, *, memory_type: str, agent_id):
    """Limit ``queryset`` to the rows a write of ``memory_type`` by ``agent_id`` may chain onto.

    A chain holds one memory type and one owner: a write never supersedes, or stands in
    conflict with, a memory of another type or another agent's private memory (rows its
    writer may not see). ``agent_id`` None (a portal user, memledger itself) reaches the
    shared rows only.
    """
    return queryset.filter(shared_or_own(agent_id), memory_type=memory_type)


def in_use_now(tenant_id, now=None) -> InUse:
    """Return what "in use" means for the tenant now (``policy_check.InUse``): under its
    active policy's retention, as retrieval and the sweep read it. One query."""
    return InUse.of(active_retention(tenant_id), now or timezone.now(), tenant_id=tenant_id)


def heads_on_key(memory: Memory, *, agent_id, use: InUse | None = None):
    """Return the active heads of every chain on ``memory``'s key, in its scope and its
    environment, of its type and reachable by ``agent_id`` (``chain_rows``), in use under
    ``use`` (``not_ended``, the tenant's now without it: one past its valid_until or its
    class's retention is out of use, though the retention sweep has not marked it so yet,
    and no agent is given it; as ``writes._heads`` reads them).

    None for a memory without a key: keyless memories share no key, and no chain stands
    beside one but its own. Read on ``memory_key = ''`` they were every keyless memory of the
    subject, and a conflict about one incident took in the others, which a reviewer's choice
    of a winner revoked (stop 53's audit of the reviewer's side)."""
    if not memory.memory_key:
        return Memory.objects.none()
    return chain_rows(
        Memory.objects.filter(
            tenant_id=memory.tenant_id,
            subject_id=memory.subject_id,
            memory_key=memory.memory_key,
            scope_kind=memory.scope_kind,
            scope_ref=memory.scope_ref,
            environment=memory.environment,
            status=Status.ACTIVE,
        ).not_ended(use or in_use_now(memory.tenant_id)),
        memory_type=memory.memory_type,
        agent_id=agent_id,
    )


def standing_heads(memory: Memory, *, agent_id, use: InUse | None = None) -> list:
    """Return the ids of ``heads_on_key``: the candidates of a conflict on the key."""
    return list(heads_on_key(memory, agent_id=agent_id, use=use).values_list("id", flat=True))


def keyless_rivals_standing(*, tenant_id, subject_id, memory_ids, use: InUse | None = None) -> list:
    """Return the ids of the rows still standing (active, and in use under ``use`` as
    ``heads_on_key`` reads them) that the subject's keyless conflicts resolved ``ask_user``
    or ``keep_both_scoped`` and citing a row of ``memory_ids`` cite: the rivals a keyless
    chain still stands beside after a reviewer asked the user or kept both. Retrieval
    measures the rows of an ``ask_user`` item as an open item's (``retrieval.conflicts.
    keyless_rivals``: nothing changes) until a later keyless conflict holding them takes them
    over (``ASK_USER_FOLLOWED_SQL``), so a new conflict of the chain holds them, as a key's
    holds every head (``heads_on_key``), and one taken over is read no more here either: its
    rivals are the later one's to decide. The rows kept both are taken in too: left out, the
    new item held the memory and the new rival only, and choosing the rival revoked the
    memory and left the rival kept beside it given beside the winner (stop 62's audit of
    conflicts); while it is open, retrieval keeps giving them (``keyless_rivals``' ``kept``).
    Two queries."""
    followed = ASK_USER_FOLLOWED_SQL.format(item=ReviewItem._meta.db_table)
    cited = (
        ReviewItem.objects.filter(
            tenant_id=tenant_id,
            subject_id=subject_id,
            kind=ReviewItem.Kind.CONFLICT,
            state=ReviewItem.State.RESOLVED,
            resolution__in=["ask_user", "keep_both_scoped"],
            memory_key="",
            candidate_ids__overlap_array=list(memory_ids),
        )
        .alias(followed=RawSQL(followed, (), output_field=BooleanField()))  # noqa: S611 - a constant
        .filter(followed=False)
        .values_list("candidate_ids", flat=True)
    )
    rows = {memory_id for ids in cited for memory_id in ids}
    if not rows:
        return []
    standing = Memory.objects.filter(
        tenant_id=tenant_id, subject_id=subject_id, pk__in=rows, status=Status.ACTIVE
    ).not_ended(use or in_use_now(tenant_id))
    return [str(pk) for pk in standing.values_list("pk", flat=True)]


def approval_head(
    memory: Memory, item: ReviewItem, *, lock: bool = True, use: InUse | None = None
) -> Memory | None:
    """Return the head an approval of the pending ``memory`` (``item``'s write) lands on now,
    or None: the memory it was written on, or its chain's newest version, or else the key's
    current head (``current_head``). Approved, ``memory`` becomes its next version, or, of
    lower authority, stands beside it in a conflict.

    Locked (the rows the approval changes) unless ``lock`` is false: the review queue says
    with it what an approval would do, and said "becomes the next version" of a head that
    had moved on to a stronger version, beside which the approval opened a conflict.

    ``use``: what is in use (``in_use_now`` without it): a head past its valid_until or its
    class's retention is never superseded, as a write never measures itself against one.
    """
    use = use or in_use_now(memory.tenant_id)
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
    if head is None or not use.holds(head):
        # The head moved on (or its valid_until or its class's retention passed) while the
        # write waited, or the key had none then: take the key's current head, if any, as a
        # write would now (``writes._heads``).
        head = current_head(memory, lock=lock, use=use) if memory.memory_key else None
    return head


def current_head(memory: Memory, *, lock: bool = True, use: InUse | None = None) -> Memory | None:
    """Return the head the approved ``memory`` lands on now: among the active heads on its
    key that its writer may read, the strongest, then the newest (locked).

    As a write measures itself (``writes._heads``): not the newest alone, which let an
    approval supersede a weaker chain while a stronger one stood (two heads of explicit
    authority left on the key), nor a head the writing agent may not read (a restricted
    memory its grant does not reach), which a write never supersedes or conflicts with.
    """
    heads = writer_reaches(memory, heads_on_key(memory, agent_id=memory.agent_id, use=use))
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
    writers = {} if writer is None else {memory.pk: writer}
    return _reaches(memory, queryset, writers, _agents_of(memory.tenant_id, writers.values()))


def kept_sensitivity(memory: Memory, head: Memory | None) -> str:
    """Return the sensitivity the approved ``memory`` is kept at, landing on ``head``: at
    least the head's, as admission keeps a write (``sensitivity.kept_from_head``). The head
    may have been raised while the write waited: an approval lowered the chain until stop
    53's audits."""
    if (
        head is not None
        and SENSITIVITY_RANK[memory.sensitivity] < SENSITIVITY_RANK[head.sensitivity]
    ):
        return head.sensitivity
    return memory.sensitivity


# ``writer_grant_refuses``' answer for a write whose agent was deactivated while it waited.
WRITER_DEACTIVATED = "agent.deactivated"


def writer_grant_refuses(memory: Memory, head: Memory | None) -> str:
    """Return the admission rule code with which the grant of the agent that wrote the pending
    ``memory`` refuses it now, landed on ``head`` (``approval_head``), or "" when the grant
    allows it, or a person or memledger wrote it.

    An administrator may narrow the grant while the write waits (``agent_grant_set``):
    admission then refuses the very same write, for its type (rule 2,
    ``grant.type_not_allowed``) or its sensitivity as kept on the head (rule 8,
    ``sensitivity.above_agent_max``), and an approval stored it active all the same: a
    shared "sensitive" memory its writer may no longer write (stop 61's audit of
    reviewers). A deactivated agent writes nothing (``WRITER_DEACTIVATED``)."""
    writer = writer_of(memory)
    writers = {} if writer is None else {memory.pk: writer}
    agents = _agents_of(memory.tenant_id, writers.values())
    return _grant_refusal(memory, head, writers, agents)


def writer_grant_refusals(items, heads: dict) -> dict:
    """Return ``{item.pk: code}``: ``writer_grant_refuses`` for each open sensitive-write item
    of ``items`` (each with ``memory`` loaded), landed on its head of ``heads``
    (``approval_heads``), read for all of them at once: two queries."""
    items = [item for item in items if item.memory is not None]
    if not items:
        return {}
    tenant_id = items[0].memory.tenant_id
    writers = _writers_of(tenant_id, [item.memory.pk for item in items])
    agents = _agents_of(tenant_id, writers.values())
    return {
        item.pk: _grant_refusal(item.memory, heads.get(item.pk), writers, agents) for item in items
    }


def _grant_refusal(memory: Memory, head: Memory | None, writers: dict, agents: dict) -> str:
    """``writer_grant_refuses(memory, head)`` with the writers (by memory id) and their agents
    (``_agents_of``) read beforehand."""
    writer = writers.get(memory.pk)
    if writer is None or writer.actor_type != AgentPrincipal.actor_type:
        return ""
    agent = agents.get(str(writer.actor_id))
    if agent is None:
        return ""  # no agent of that id: agents are deactivated, never deleted
    if not agent.is_active:
        # Its keys are refused: admission reads none of its writes (stop 61's review).
        return WRITER_DEACTIVATED
    if memory.memory_type not in agent.write_types:
        return "grant.type_not_allowed"
    sensitivity = kept_sensitivity(memory, head)
    if SENSITIVITY_RANK[sensitivity] > SENSITIVITY_RANK[agent.max_sensitivity]:
        return "sensitivity.above_agent_max"
    return ""


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


def approval_heads(items, *, newest: dict | None = None) -> dict:
    """Return ``{item.pk: head}`` for open sensitive-write ``items`` (each with ``memory``
    loaded, with its ``subject``): what ``approval_head(item.memory, item, lock=False)``
    returns for each, read for all of them at once. ``newest``: the newest versions of the
    chains they were written on (``written_on_newest``), when the caller has read them.

    For the review queue, which says what approving each write of a page does: one
    ``approval_head`` per write took three to five queries (the head, its writer's event,
    the writer's agent, the grant's check, the key's heads again), 261 for a page of 50.
    Here the heads, their newer versions (one query per version the chains moved on by,
    not per write), the writers, their agents, the grants' check and the keys' heads are
    each one query for the page; the rules are ``approval_head``'s own (``writer_reaches``'s
    grant applied in SQL to each write's rows, combined with UNION ALL).
    """
    items = [item for item in items if item.memory is not None]
    if not items:
        return {}
    tenant_id = items[0].memory.tenant_id
    # The head each write was written on, followed to its chain's newest version.
    first = {item.pk: item.candidate_ids[0] for item in items if item.candidate_ids}
    newest = written_on_newest(items) if newest is None else newest
    writers = _writers_of(tenant_id, [item.memory.pk for item in items])
    agents = _agents_of(tenant_id, writers.values())
    heads = {}
    checks = []
    for item in items:
        head = newest.get(first.get(item.pk)) if item.pk in first else None
        heads[item.pk] = head
        if head is not None:
            reach = _reaches(item.memory, Memory.objects.filter(pk=head.pk), writers, agents)
            checks.append(_tagged(reach, item.pk))
    passed = {tag for (tag,) in _union(checks, "tag")}
    wanted = []
    use = in_use_now(tenant_id)
    for item in items:
        head = heads[item.pk]
        if head is not None and item.pk in passed and use.holds(head):
            continue
        # None, a head its writer may not read (never superseded by it), or one moved on
        # to no active version: the key's current head, as ``current_head`` finds it.
        heads[item.pk] = None
        memory = item.memory
        if memory.memory_key:
            on_key = heads_on_key(memory, agent_id=memory.agent_id, use=use).exclude(pk=memory.pk)
            wanted.append(_tagged(_reaches(memory, on_key, writers, agents), item.pk))
    on_keys: dict = {}
    for tag, pk in _union(wanted, "tag", "pk"):
        on_keys.setdefault(tag, []).append(pk)
    if on_keys:
        by_pk = Memory.objects.in_bulk(sorted({pk for pks in on_keys.values() for pk in pks}))
        for tag, pks in on_keys.items():
            # As ``current_head``: the strongest, then the newest, the first in id order of
            # equals.
            candidates = [by_pk[pk] for pk in sorted(pks) if pk in by_pk]
            if candidates:
                heads[tag] = max(
                    candidates, key=lambda row: (AUTHORITY_RANK[row.authority], row.created_at)
                )
    return heads


def written_on_newest(items) -> dict:
    """Return ``newest_versions`` of the memories the writes of ``items`` (sensitive-write
    items) were written on: read once, a page's ``approval_heads`` and ``chains_lost`` share
    it. No query for no such memory."""
    written_on = [item.candidate_ids[0] for item in items if item.candidate_ids]
    return newest_versions(written_on) if written_on else {}


def newest_versions(memory_ids) -> dict:
    """Return ``{memory_id: the newest version of its chain}`` for the rows of ``memory_ids``,
    as ``newest_version`` follows each (unlocked): one query, and one more for each version a
    chain has moved on by, not for each row."""
    rows = {row.pk: row for row in Memory.objects.filter(pk__in_array=sorted(set(memory_ids)))}
    newest = dict(rows)
    moved = {pk for pk, row in rows.items() if row.status == Status.SUPERSEDED}
    at = {pk: pk for pk in moved}  # each moved row: the version reached so far
    while at:
        successors = {
            row.supersedes_id: row
            for row in Memory.objects.filter(supersedes_id__in=sorted(set(at.values()))).exclude(
                status__in=PROPOSED_STATUSES
            )
        }
        reached = {}
        for start, current in at.items():
            successor = successors.get(current)
            if successor is not None:
                newest[start] = successor
                reached[start] = successor.pk
        at = reached
    return newest


# The rule code a write's review item is given when the memory it corrects loses a
# conflict while it waits (``services.conflicts``' choice of another): the item keeps it when
# that memory is deleted since, whose deletion's worker takes its id out of the item.
CONFLICT_LOST = "conflict_lost"


def chains_lost(tenant_id, items, *, newest: dict | None = None) -> set:
    """Return the ids of ``items`` (open sensitive-write items) that correct a memory a
    reviewer's resolution of a conflict revoked, another candidate chosen: the item carries
    ``CONFLICT_LOST``, or the newest version of the chain it cites was revoked so (reason
    ``conflict_lost``), and perhaps deleted since (its events keep the reason). Two queries,
    and one more for each version a chain has moved on by; none when every item carries the
    code; one when ``newest`` (``written_on_newest``) is read already.

    Approved, a correction of such a chain undid the reviewer's choice: without a key it
    landed on no head (``approval_head``: it has no key to find the winner by) and stood
    active alone beside the memory the reviewer chose, with no conflict (stop 62's audit of
    conflicts); on a key it landed on the key's head, the winner, and superseded it unless of
    lower authority (stop 65's audit of conflicts). Its approval is refused
    (``review_conflict_lost``), and the review queue says it can only be rejected. By the
    code too: once the person deleted the revoked memory, its status was "deleted" and the
    deletion's worker took its id out of the item, and the approval went through (stop 62's
    audit of reviewer flows). Migration 0049 applies the same rule in SQL to the keyless
    items waiting from before then: change them together."""
    lost = {item.pk for item in items if CONFLICT_LOST in item.rule_codes}
    written_on = {
        item.pk: item.candidate_ids[0]
        for item in items
        if item.candidate_ids and item.pk not in lost
    }
    if not written_on:
        return lost
    newest = newest_versions(written_on.values()) if newest is None else newest
    ends = [newest[memory_id] for memory_id in written_on.values() if memory_id in newest]
    retired = [row.pk for row in ends if row.status in (Status.REVOKED, Status.DELETED)]
    if not retired:
        return lost
    revoked = set(
        MemoryEvent.objects.filter(
            tenant_id=tenant_id,
            memory_id__in=retired,
            action=MemoryEvent.Action.REVOKED,
            reason_code="conflict_lost",
        ).values_list("memory_id", flat=True)
    )
    return lost | {
        key
        for key, memory_id in written_on.items()
        if memory_id in newest and newest[memory_id].pk in revoked
    }


def _tagged(queryset, tag):
    """``queryset``'s rows with ``tag`` (a review item's id) beside each, unordered."""
    return queryset.order_by().annotate(tag=Value(str(tag), output_field=CharField()))


def _union(querysets: list, *fields) -> list:
    """Return ``fields`` of the rows of every queryset of ``querysets`` (UNION ALL, one
    query; none when every one is empty), the tag (first) as the review item's UUID."""
    parts = [queryset.values_list(*fields) for queryset in querysets if not _empty(queryset)]
    if not parts:
        return []
    rows = parts[0].union(*parts[1:], all=True) if len(parts) > 1 else parts[0]
    return [(uuid.UUID(row[0]), *row[1:]) for row in rows]


def _empty(queryset) -> bool:
    return queryset.query.is_empty()


def _writers_of(tenant_id, memory_ids) -> dict:
    """``writer_of`` for each of ``memory_ids``: ``{memory_id: Actor}``, one query."""
    events = (
        MemoryEvent.objects.filter(
            tenant_id=tenant_id,
            memory_id__in_array=sorted(set(memory_ids)),
            action=MemoryEvent.Action.PENDING,
        )
        .order_by("memory_id", "created_at")
        .distinct("memory_id")
        .values_list("memory_id", "actor_type", "actor_id")
    )
    return {memory_id: Actor(actor_type, actor_id) for memory_id, actor_type, actor_id in events}


def _agents_of(tenant_id, writers) -> dict:
    """The agents among ``writers`` (Actors), by their actor id: one query, none for none.
    An id that is not an agent's UUID names no agent (its writer reads nothing)."""
    ids = set()
    for writer in writers:
        if writer.actor_type == AgentPrincipal.actor_type:
            try:
                ids.add(uuid.UUID(str(writer.actor_id)))
            except ValueError:
                continue
    if not ids:
        return {}
    return {str(agent.pk): agent for agent in Agent.objects.filter(tenant_id=tenant_id, pk__in=ids)}


def _reaches(memory: Memory, queryset, writers: dict, agents: dict):
    """``writer_reaches(memory, queryset)`` with the writers (by memory id) and their agents
    (``_agents_of``) read beforehand."""
    writer = writers.get(memory.pk)
    if writer is None or writer.actor_type != AgentPrincipal.actor_type:
        return queryset
    agent = agents.get(str(writer.actor_id))
    if agent is None:
        return queryset.none()  # a writer no longer known reads nothing
    grant = AgentPrincipal.from_agent(agent, bound_user_id=memory.subject.external_id)
    return grant.scope_granted(queryset)
