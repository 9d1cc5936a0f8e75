"""Writes through admission: the write path's services (DESIGN.md, "Write path").

``memory_write`` and ``memory_write_batch`` parse the body, gather what the admission rules
need from storage (the tenant's active policy, the subject, the chain head of the
memory_key, the recent writes about the subject: this agent's and the shared ones), run
``admit`` and store the outcome: an AdmissionDecision for every write (accepted, pending or
rejected) with its rule codes and policy version, MemoryEvent rows, the memory itself
(accepted or pending) with its embedding, and a ReviewItem when a reviewer must look at it.

Design choices, documented in docs/api.md:

- The body's ``subject`` is the subject's external id inside the key's tenant. An agent whose
  grant has ``any_subject`` creates the Subject on its first write; any other agent may only
  write about subjects that already exist (``tenant.subject_unknown``).
- Memories written by agents are shared by the tenant's agents (``Memory.agent`` empty); each
  agent's read grant still limits which types it sees.
- A write with lower authority than the active head of its memory_key is stored as a separate,
  non-winning chain (retrieval prefers explicit over inferred) and a conflict ReviewItem is
  opened; it never supersedes the head (DESIGN.md rule 10).
- A sensitive write is stored with status ``pending_approval`` (embedded, never retrievable)
  and waits in the reviewer queue; approval links it into its chain (``reviews.py``).
- A rejected write stores no memory row and no content: its AdmissionDecision keeps the rule
  codes and the content hash, and its "rejected" event uses the decision's id as memory_id.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import reduce
from operator import or_

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from memory_core.admission import (
    ACCEPTED,
    PENDING,
    REJECTED,
    AdmissionContext,
    Candidate,
    Decision,
    Grant,
    Head,
    admit,
    guards,
    parse_batch,
    parse_candidate,
    parse_correction,
)
from memory_core.admission.candidate import (
    MAX_REASON_CHARS,
    AdmissionEnd,
    settle_user_scopes,
    value_texts,
)
from memory_core.admission.policy import REFUSING, describe, policy_section, split_window
from memory_core.clock import ClockTimestamp
from memory_core.embeddings import BATCH_SIZE, embed_texts, get_embedder
from memory_core.exceptions import (
    Conflict,
    EmbeddingUnavailable,
    PermissionDenied,
    ReasonRefused,
)
from memory_core.locks import lock_memory_keys, subject_shared_lock, subjects_shared_locked
from memory_core.models import (
    AUTHORITY_RANK,
    AdmissionDecision,
    Authority,
    Consent,
    Memory,
    MemoryEvent,
    PolicyVersion,
    ReviewItem,
    ScopeKind,
    Sensitivity,
    SourceType,
    Status,
    Subject,
)
from memory_core.models.choices import SENSITIVITY_RANK
from memory_core.models.events import REPLACED_BY_LATER_CORRECTION
from memory_core.policy_check import MAX_DAYS, STATE_WORDS, InUse
from memory_core.policy_defaults import NO_POLICY, retention_section
from memory_core.principals import SubjectPrincipal
from memory_core.retrieval.types import ConflictPlace
from memory_core.selectors.approvals import (
    in_use_now,
    shared_or_own,
    standing_heads,
    writer_of,
)
from memory_core.selectors.memories import (
    EVENT_REASON_SENSITIVITY_KEY,
    memory_get,
)
from memory_core.selectors.portal import corrections_beside, same_text, waiting_to_replace
from memory_core.services.conflicts import (
    conflict_open,
    conflicts_citing,
    conflicts_close_settled,
    conflicts_follow_successor,
    conflicts_reopen_kept,
)
from memory_core.services.events import event_record
from memory_core.services.memories import (
    MemoryDraft,
    as_written,
    build_memory,
    memory_created_events,
    memory_insert_rows,
    memory_supersede_many,
    subjects_ensure_locked,
)
from memory_core.services.revocations import memory_revocation_journal_on_commit
from memory_core.text import content_hash

logger = logging.getLogger(__name__)

# One model thread per process: a batch's embedding overlaps its admission (_Embedding).
_EMBEDDING_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memledger-embed")
# CPython's GIL switch interval while a write's embedding runs beside its admission.
EMBEDDING_SWITCH_INTERVAL_S = 0.0005


class _FrequentGilSwitches:
    """Shortens the interpreter's GIL switch interval while writes embed beside admission.

    Admission is pure Python and holds the GIL; the embedding thread needs it back after every
    model call (the runtime releases it only while it computes). With CPython's default 5 ms
    interval that thread waited up to 5 ms each time: ~11 of a batch's 100 texts were embedded
    while admission ran, against ~39 at 0.5 ms, and a batch took 388 instead of 490 ms
    (docs/performance.md, section 12). The interval is process-wide, so overlapping writes
    (threaded workers) are counted and the first one's saved value is restored by the last.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._active = 0
        self._saved = None

    def __enter__(self):
        with self._lock:
            if self._active == 0:
                self._saved = sys.getswitchinterval()
                sys.setswitchinterval(min(self._saved, EMBEDDING_SWITCH_INTERVAL_S))
            self._active += 1

    def __exit__(self, *exc):
        with self._lock:
            self._active -= 1
            if self._active == 0:
                sys.setswitchinterval(self._saved)


_frequent_gil_switches = _FrequentGilSwitches()


@dataclass
class WriteResult:
    """What became of one write: the decision, and the rows it produced."""

    decision: str  # accepted | pending_approval | rejected
    rule_codes: list[str] = field(default_factory=list)
    message: str = ""
    memory: Memory | None = None
    review_item: ReviewItem | None = None
    admission_decision: AdmissionDecision | None = None
    policy_version: int | None = None
    index: int = 0
    # A correction that found the same one already waiting for a reviewer: nothing new was
    # stored, and ``memory``, ``review_item`` and ``admission_decision`` are that one's.
    already_waiting: bool = False
    # A person's correction of a memory of higher authority that found the same one already
    # kept beside it (``memory_correct``): nothing new was stored, and ``memory`` is that one.
    already_kept: bool = False
    # The memory a correction was written on when it is not the one asked for: the person's
    # own correction kept beside a memory of higher authority, which it replaces.
    written_on: Memory | None = None
    # A person's earlier corrections of the chain, waiting for a reviewer, that this one
    # withdrew (``_withdraw_own_waiting``).
    withdrawn: list[Memory] = field(default_factory=list)


@dataclass
class _Planned:
    """One write on its way through a batch."""

    index: int
    candidate: Candidate
    decision: Decision | None = None
    subject: Subject | None = None
    head: Memory | None = None
    draft: MemoryDraft | None = None
    memory: Memory | None = None
    review_item: ReviewItem | None = None
    # When a correction of a memory not yet in effect starts: the corrected one's start, as
    # its end and sensitivity are kept (None: the write's moment).
    starts: datetime | None = None


def _active_policy(tenant_id) -> tuple[dict, int | None]:
    policy = (
        PolicyVersion.objects.filter(tenant_id=tenant_id, is_active=True)
        .only("version", "document")
        .first()
    )
    if policy is None:
        return NO_POLICY, None
    return policy.document, policy.version


def _grant(principal) -> Grant:
    own = None
    if isinstance(principal, SubjectPrincipal):
        own = Subject.objects.filter(pk=principal.subject_id).values_list("external_id", flat=True)
        own = own.first() or ""
    return Grant.of(principal, own_subject_external_id=own)


def _heads(principal, planned: list[_Planned], subjects: dict, use: InUse) -> dict:
    """Return the active heads the batch's writes land on, by (subject id, key, type, kind,
    ref, environment): only rows of the write's type that its writer may chain onto
    (``chain_rows``). The environment is part of a chain's identity, as the scope is: a
    production fact on a key does not replace the staging one. Only heads in use
    (``not_ended`` under ``use``): one past its valid_until, or past its class's retention
    under the tenant's active policy, is out of use, though the retention sweep has not
    expired or deleted it yet; no agent is given it, so a write neither supersedes it nor
    stands in conflict with it."""
    query = Q()
    for item in planned:
        subject = subjects.get(item.candidate.subject)
        if subject is not None and item.candidate.memory_key:
            query |= Q(
                subject_id=subject.id,
                memory_key=item.candidate.memory_key,
                memory_type=item.candidate.memory_type,
            )
    if not query:
        return {}
    heads = {}
    # Locked: a deletion or revoke of a head (which take no key lock) either commits first,
    # and the head is not read as active, or waits for this write. In id order, as a
    # deletion locks its rows, so the two never wait for each other in a cycle. Only heads
    # the writer may see (``visible_to``: an agent's read types and maximum sensitivity too):
    # a write never supersedes, or stands in conflict with, a memory it may not read, and its
    # answer (``supersedes``, the version, the rule codes) never tells that one exists.
    rows = list(
        Memory.objects.visible_to(principal)
        .select_for_update(of=("self",))
        .filter(query, status=Status.ACTIVE)
        .not_ended(use)
        .filter(shared_or_own(getattr(principal, "agent_id", None)))
        .order_by("pk")
    )
    external_ids = {subject.id: external_id for external_id, subject in subjects.items()}
    for row in sorted(rows, key=lambda row: row.created_at):
        # With parallel chains (a conflict kept for review) the head to measure a write
        # against is the strongest one, then the newest: a write must not "win" by
        # superseding a weaker chain while a stronger one stands.
        scope_ref = row.scope_ref
        if row.scope_kind == ScopeKind.USER and scope_ref == str(row.subject_id):
            scope_ref = external_ids[row.subject_id]  # a row written before settle_user_scopes
        key = (
            row.subject_id,
            row.memory_key,
            row.memory_type,
            row.scope_kind,
            scope_ref,
            row.environment,
        )
        current = heads.get(key)
        if current is None or AUTHORITY_RANK[row.authority] >= AUTHORITY_RANK[current.authority]:
            heads[key] = row
    return heads


# The newest writes of each subject the split-write rule joins (``_recent_texts``): a LATERAL
# subquery with a LIMIT per subject reads only each one's newest rows, not the window, in one
# statement planned once (a UNION ALL of one query per subject took the planner 4.5-7 ms for a
# batch naming 20 subjects). Raw SQL: the ORM's form of it (an ``ArraySubquery``) took 1.5 ms
# a write, 1.8 ms once it read the values as JSON objects, against 0.7 ms for this statement
# (docs/performance.md, section 20). Oldest first within each subject.
_RECENT_WRITES_SQL = """
    SELECT s.id, r.content, r.value FROM memory_core_subject s
    CROSS JOIN LATERAL (
        SELECT m.content, m.value, d.created_at
        FROM memory_core_admissiondecision d JOIN memory_core_memory m ON m.id = d.memory_id
        WHERE d.tenant_id = %(tenant)s AND d.subject_id = s.id
          AND d.created_at >= statement_timestamp() - %(window)s
          AND (d.agent_id = %(agent)s OR m.agent_id IS NULL) AND m.content <> ''
        ORDER BY d.created_at DESC LIMIT %(per_subject)s
    ) r
    WHERE s.tenant_id = %(tenant)s AND s.id = ANY(%(subjects)s)
    ORDER BY s.id, r.created_at
"""


def _recent_texts(principal, subjects: dict, policy: dict) -> dict:
    """Return, per subject id, the texts of the recent writes about it that this agent may be
    joined with, oldest first, each write's as it wrote them (content and value,
    ``Candidate.written_texts``): its own, and every shared memory's (``Memory.agent`` empty,
    what every agent of the tenant writes and reads), whichever agent wrote it. An
    instruction split between two agents' writes (the first half by one, the second by
    another) reads whole to any agent, as both halves are retrieved side by side. A deleted
    memory (its content scrubbed) has nothing left to join.

    A person correcting their memory in the portal is joined with the shared ones (they have
    no memories of their own): an agent's first half and the person's correction completing
    it were both stored and retrieved side by side, where the same correction by an agent
    was refused (stop 54's audit of admission)."""
    if principal.actor_type not in ("agent", "user") or not subjects:
        return {}
    admission = policy_section(policy, "admission")
    # Bounded as policy_errors bounds it: a policy stored before the bound may say more.
    minutes = min(int(admission.get("split_window_minutes", 1440)), MAX_DAYS * 24 * 60)
    per_subject = split_window(admission)
    if per_subject <= 0:  # the policy joins no earlier write
        return {}
    # The newest per_subject of each subject, not of all of them together: a batch naming a
    # subject the agent wrote much about must not push another subject's history out.
    params = {
        "tenant": principal.tenant_id,
        "agent": getattr(principal, "agent_id", None),
        # On the database's clock, as the decisions' ``created_at`` (``memory_core.clock``).
        "window": timedelta(minutes=minutes),
        "per_subject": per_subject,
        "subjects": [subject.id for subject in subjects.values()],
    }
    written: dict = {}
    with connection.cursor() as cursor:
        cursor.execute(_RECENT_WRITES_SQL, params)
        for subject_id, content, value in cursor.fetchall():
            # jsonb arrives as its text (Django's loader, for JSONField)
            held = json.loads(value) if isinstance(value, str) else value
            written.setdefault(subject_id, []).append((content, *value_texts(held)))
    return written


def _draft(item: _Planned, now) -> MemoryDraft:
    candidate, decision = item.candidate, item.decision
    return MemoryDraft(
        subject=item.subject,
        # A new version keeps its chain's owner: an agent's private memory stays private.
        agent_id=item.head.agent_id if item.head is not None else None,
        valid_from=_start(item, now),
        **as_written(candidate),
        authority=decision.authority,
        confidence=decision.confidence,
        consent=decision.consent,
        sensitivity=decision.sensitivity,
        valid_until=decision.valid_until,
        status=Status.PENDING_APPROVAL if decision.outcome == PENDING else Status.ACTIVE,
    )


def _start(item: _Planned, now) -> datetime:
    """The instant admission checked valid_until against (rule ttl.in_past), so an interval
    that passed admission is an ordered interval in the database; or a correction's start
    still ahead (``_Planned.starts``): fixing the words of "from January, answers in German"
    put it in use at once (stop 51's audit of time). Not past the end admission set (a class's
    retention caps it from now): that version starts now, as before."""
    end = item.decision.valid_until
    if item.starts is not None and (end is None or end > item.starts):
        return item.starts
    return now


def _ensure_subjects(principal, planned: list[_Planned], subjects: dict) -> None:
    """Create the subjects an admitted write needs (the grant allowed it in rule 1).

    ``subjects_ensure_locked``: in external id order, since no key lock keeps two batches
    naming the same new subjects apart (keyless writes, or other keys); and one another
    transaction created meanwhile (a subject token issued for the user), whose insert this one
    waited for, read with its lock shared, as ``_run`` read the others: read back without it,
    a deletion of the subject requested then neither waited for the write nor read its row,
    and the memory stayed in use (stop 63's audit of races).
    """
    admitted = [item for item in planned if item.decision.outcome != REJECTED]
    subjects.update(
        subjects_ensure_locked(
            tenant_id=principal.tenant_id,
            external_ids={item.candidate.subject for item in admitted} - set(subjects),
            keys={(item.candidate.subject, item.candidate.memory_key) for item in admitted},
        )
    )
    for item in admitted:
        item.subject = subjects[item.candidate.subject]
    # A refused write names its subject too once a write of the batch created it: its decision
    # was stored with none, where the same write sent alone names it, so the subject's
    # deletion and the reviewers' list of refusals never found it (stop 52's audit of batches).
    for item in planned:
        if item.subject is None and item.candidate.subject in subjects:
            item.subject = subjects[item.candidate.subject]


class _Embedding:
    """A batch's embeddings, computed while admission runs; the caller helps when it is done.

    The texts are cut into chunks of similar length, one model batch each. The embedding
    thread takes chunks from the front while admission runs on the caller's thread (the model
    runtime releases the GIL). When the caller needs the vectors (``ready``), it stores the
    rows of each chunk the thread has finished while the thread embeds the next, and embeds a
    chunk itself when none is waiting: the model runs beside the inserts, then on both cores.
    Every text is embedded, refused writes' too (a chunk holds texts of any write), unless no
    write is admitted (``discard``); the vectors of refused writes are dropped.
    """

    def __init__(self, texts: list[str]):
        self._texts = texts
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        self._chunks = deque(order[i : i + BATCH_SIZE] for i in range(0, len(order), BATCH_SIZE))
        self._done: list[list[int]] = []  # chunks the thread has embedded, not yet handed out
        self._discarded = False
        self._lock = threading.Lock()
        self._vectors: list = [None] * len(texts)
        self._background = _EMBEDDING_THREAD.submit(self._work)

    def _take(self) -> list[int] | None:
        with self._lock:
            return self._chunks.popleft() if self._chunks else None

    def _embed(self, chunk: list[int]) -> None:
        vectors = embed_texts([self._texts[i] for i in chunk])
        for i, vector in zip(chunk, vectors, strict=True):
            self._vectors[i] = vector

    def _work(self) -> None:
        while (chunk := self._take()) is not None:
            self._embed(chunk)
            with self._lock:
                self._done.append(chunk)

    def _join(self) -> None:
        """Wait for the chunk the thread holds, if any; raise its failure."""
        self._background.result()

    def _finished(self) -> list[int]:
        with self._lock:
            done, self._done = self._done, []
        return [i for chunk in done for i in chunk]

    def discard(self, *, failed: bool = False) -> None:
        """Drop the chunks not yet embedded and wait for the one in the model, if any: no
        write needs a vector, and the request leaves no work behind it. ``failed``: the
        model's failure was reported already (``ready``), and is not logged again. Once only:
        a later call does nothing."""
        with self._lock:
            if self._discarded:
                return
            self._discarded = True
            self._chunks.clear()
        try:
            self._join()
        except Exception:  # a model failure does not matter: no vector is needed
            if not failed:
                logger.warning("embedding a write batch failed, no vector needed", exc_info=True)

    def vector(self, index: int):
        """The vector of text ``index`` (once ``ready`` has handed it out)."""
        return self._vectors[index]

    def ready(self) -> Iterator[list[int]]:
        """Yield the indexes of the texts as their vectors are ready, a chunk or more at a
        time, until every text has one; EmbeddingUnavailable when the model failed.

        A caller that stops early (its insert failed) leaves no work behind: the chunks not
        yet embedded are dropped."""
        complete = failed = False
        try:
            while True:
                if finished := self._finished():
                    yield finished  # the caller stores them while the thread embeds on
                elif (chunk := self._take()) is not None:
                    self._embed(chunk)  # nothing waiting: the caller embeds beside the thread
                    yield chunk
                else:
                    self._join()  # the chunk the thread holds, or its failure
                    if finished := self._finished():
                        yield finished
                    complete = True
                    return
        except Exception as exc:  # any failure of the model: a 503 to retry, never a 500
            failed = True
            logger.exception("embedding a write batch of %d texts failed", len(self._texts))
            raise EmbeddingUnavailable(
                "The embedding model failed, so nothing was stored; retry the write later."
            ) from exc
        finally:
            if not complete:
                self.discard(failed=failed)


def _store(principal, planned: list[_Planned], policy_version, pending: _Embedding, now) -> None:
    """Store the admitted writes: their embeddings, then heads, successors and proposals.

    New chains (and conflicts and proposals, which are not links yet) are built at once, in
    the batch's order, and inserted a chunk at a time as their vectors are ready (chunks go
    in an order of text lengths), their ``created`` events then in the batch's order, so the
    history lists the writes as they were sent; successors when every vector is.
    """
    admitted = [item for item in planned if item.decision.outcome != REJECTED]
    if not admitted:
        pending.discard()
        return
    for item in admitted:
        item.draft = _draft(item, now)
    new_rows = {item.index: item for item in admitted if not _supersedes(item)}
    for item in new_rows.values():
        item.memory = build_memory(item.draft, policy_version=policy_version)
    model_name = ""
    for indexes in pending.ready():
        # Asked once a chunk is embedded: a model that could not be made is then a 503
        # (EmbeddingUnavailable, from ready), never its first use here.
        model_name = model_name or get_embedder().model_name
        memories = []
        for index in sorted(indexes):
            if (item := new_rows.get(index)) is not None:
                item.memory.embedding = pending.vector(index)
                item.memory.embedding_model = model_name
                memories.append(item.memory)
        if memories:
            memory_insert_rows(memories)
    memory_created_events(
        memories=[item.memory for item in new_rows.values()],
        principal=principal,
        policy_version=policy_version,
    )
    superseding = [item for item in admitted if _supersedes(item)]
    for item in superseding:
        item.draft.embedding = pending.vector(item.index)
        item.draft.embedding_model = model_name
    successors = memory_supersede_many(
        supersessions=[(item.head, item.draft) for item in superseding],
        principal=principal,
        reason_code="supersession.supersedes",
        policy_version=policy_version,
    )
    for item, successor in zip(superseding, successors, strict=True):
        item.memory = successor


def _in_batch_order(place: int):
    """Return the ``created_at`` of a batch's decision at ``place``: the database's clock as
    the row is stored (``ClockTimestamp``), plus its place in microseconds.

    The split-write rule takes a subject's newest writes by this moment (``_RECENT_WRITES_SQL``),
    so a batch's must rise in its order: the half of an instruction written last is the
    newest. The clock alone rises from row to row, each read after the row before was stored
    (at least 7 µs apart on a 2-core test host), but a host fast enough could store a row
    within its resolution, a microsecond, and tie; the place added puts each row at least a
    microsecond after the one before, whatever the host. At most ``MAX_BATCH`` µs ahead of
    the clock, which no later write about the subject reaches: it waits for this one to
    commit (the subject's write lock, ``lock_memory_keys``) and reads the clock after."""
    return ClockTimestamp() + timedelta(microseconds=place)


def _supersedes(item: _Planned) -> bool:
    return item.decision.outcome == ACCEPTED and item.decision.action == "supersede"


def _record(
    principal, planned: list[_Planned], policy_version, use: InUse
) -> list[AdmissionDecision]:
    """Store one AdmissionDecision per write, its events and any review items (a conflict's
    candidates: the key's heads in use under ``use``)."""
    agent_id = getattr(principal, "agent_id", None)
    decisions = []
    for place, item in enumerate(planned):
        decisions.append(
            AdmissionDecision(
                tenant_id=principal.tenant_id,
                agent_id=agent_id,
                subject=item.subject,
                memory=item.memory,
                outcome=item.decision.outcome,
                rule_codes=item.decision.rule_codes,
                memory_type=item.candidate.memory_type,
                source_type=item.candidate.source_type,
                content_hash=content_hash(item.candidate.content),
                policy_version=policy_version,
                # What a rejected write was about, for that memory's deletion to reach its
                # event (and the writer's reason in it).
                target_memory_id=(
                    item.head.id
                    if item.decision.outcome == REJECTED and item.head is not None
                    else None
                ),
                asked_valid_until=(
                    item.candidate.valid_until if "ttl.capped" in item.decision.rule_codes else None
                ),
                created_at=_in_batch_order(place),
            )
        )
    AdmissionDecision.objects.bulk_create(decisions)  # one INSERT, its rows in batch order
    events = []
    for item, decision in zip(planned, decisions, strict=True):
        outcome = item.decision.outcome
        action = {
            ACCEPTED: MemoryEvent.Action.ADMITTED,
            PENDING: MemoryEvent.Action.PENDING,
            REJECTED: MemoryEvent.Action.REJECTED,
        }[outcome]
        if outcome == ACCEPTED and item.decision.action == "conflict":
            action = MemoryEvent.Action.CONFLICT
        refusing = item.decision.refusing_codes
        events.append(
            MemoryEvent(
                tenant_id=principal.tenant_id,
                # A rejected write has no memory row: the decision's id stands in for it.
                memory_id=item.memory.id if item.memory else decision.id,
                action=action,
                actor_type=principal.actor_type,
                actor_id=principal.actor_id,
                reason_code=(refusing or item.decision.rule_codes or ["admitted"])[0][:100],
                policy_version=policy_version,
                details={
                    "decision": str(decision.id),
                    "rule_codes": item.decision.rule_codes,
                    **({"reason": item.candidate.reason} if item.candidate.reason else {}),
                },
            )
        )
    MemoryEvent.objects.bulk_create(events)
    # The conflicts in one order, as a retrieval locks a subject's conflict items
    # (memory_core.locks): in the batch's order, a batch and a retrieval adding rows to the
    # same two items could each hold one and wait for the other.
    # Which superseded heads an open conflict cites, read once for them all, and again after
    # each call below that may have waited for a conflict's lock: a retrieval may have opened
    # one citing a head meanwhile, from rows it read before this write commits (stop 51's
    # review; one statement an item found them as they were at its turn).
    # With them, the heads a reviewer kept beside others ("keep both"), whose new versions
    # open the conflict again (``conflicts_reopen_kept``).
    superseded = [item.head.id for item in planned if _supersedes(item)]
    cited, kept = conflicts_citing(tenant_id=principal.tenant_id, memory_ids=superseded)

    def readable(rows):
        # A write never stands in conflict with a memory above its grant (a reviewer
        # choosing the write's side would revoke that one).
        return rows.filter(pk__in=Memory.objects.visible_to(principal).values("pk"))

    for item in sorted(planned, key=_review_order):
        if item.decision.outcome == PENDING:
            item.review_item = ReviewItem.objects.create(
                tenant_id=principal.tenant_id,
                subject=item.subject,
                kind=ReviewItem.Kind.SENSITIVE_WRITE,
                memory=item.memory,
                memory_key=item.candidate.memory_key,
                # The head the proposal would supersede once approved.
                candidate_ids=[item.head.id] if item.head is not None else [],
                rule_codes=item.decision.rule_codes + item.decision.categories,
            )
        elif _supersedes(item):
            # The key's open conflicts follow the chain to its new head: here, in the order
            # of the conflicts below, not in _store's batch order, which could hold one
            # key's item while a retrieval held another's and each waited for the other.
            if cited is None:
                cited, _ = conflicts_citing(tenant_id=principal.tenant_id, memory_ids=superseded)
            if item.head.id in cited:
                conflicts_follow_successor(previous=item.head, successor=item.memory)
                cited = None
            if item.head.id in kept:
                conflicts_reopen_kept(
                    previous=item.head,
                    successor=item.memory,
                    actor_id="admission",
                    use=use,
                    within_grant=readable,
                )
                cited = None
        elif item.decision.action == "conflict":
            # Every chain still standing on the key is a candidate, not only the last two; of
            # those its writer may read only (``readable``).
            standing = (
                Memory.objects.visible_to(principal)
                .filter(pk__in=standing_heads(item.memory, agent_id=item.head.agent_id, use=use))
                .values_list("pk", flat=True)
            )
            item.review_item = conflict_open(
                tenant_id=principal.tenant_id,
                subject_id=item.subject.id,
                memory_key=item.candidate.memory_key,
                place=ConflictPlace.of(item.memory),
                candidate_ids=sorted({item.head.id, item.memory.id, *standing}, key=str),
                actor_id="admission",
                use=use,
                within_grant=readable,
            )
            cited = None
    return decisions


def _review_order(item: _Planned) -> tuple:
    """Sort key of the review items a batch opens or changes: the conflicts it joins or moves
    on to a new head by (subject, memory_key, place) after everything else, which keeps its
    order."""
    if item.decision.outcome != PENDING and (
        item.decision.action == "conflict" or _supersedes(item)
    ):
        place = ConflictPlace.of(item.memory)
        return (1, str(item.subject.id), item.candidate.memory_key, place)
    return (0,)


def _admit_each(
    planned: list[_Planned],
    *,
    grant: Grant,
    subjects: dict,
    heads: dict,
    target: Memory | None,
    recent: dict,
    now,
    policy: dict,
    policy_version,
) -> None:
    """Decide each planned write in order; a batch's earlier writes count as recent texts and
    taken keys for its later ones."""
    batch_keys: set = set()
    batch_texts: dict = {}
    for item in planned:
        candidate = item.candidate
        subject = subjects.get(candidate.subject)
        item.subject = subject
        if target is not None:
            item.head = target
        elif subject is not None and candidate.memory_key:
            item.head = heads.get(
                (
                    subject.id,
                    candidate.memory_key,
                    candidate.memory_type,
                    candidate.scope_kind,
                    candidate.scope_ref,
                    candidate.environment,
                )
            )
        texts = recent.get(subject.id, []) if subject else []
        context = AdmissionContext(
            now=now,
            policy=policy,
            policy_version=policy_version,
            subject_exists=subject is not None,
            recent_texts=texts + batch_texts.get(candidate.subject, []),
            head=Head(item.head.id, item.head.authority, item.head.status, item.head.sensitivity)
            if item.head
            else None,
            batch_keys=batch_keys,
        )
        item.decision = admit(candidate, grant, context)
        if item.decision.outcome != REJECTED:
            if candidate.memory_key:
                batch_keys.add(candidate.chain_identity)
            batch_texts.setdefault(candidate.subject, []).append(tuple(candidate.written_texts()))


def _run(
    principal,
    candidates: list[Candidate],
    *,
    target: Memory | None = None,
    batch: bool = False,
    waiting=None,
) -> list[WriteResult]:
    """Admit and store ``candidates`` (one transaction); return one result per candidate.

    ``waiting``: for one correction, called with its decision when admission holds it for a
    reviewer; the result of the same correction already waiting, if it returns one, is the
    answer, and nothing is stored."""
    now = timezone.now()
    policy, policy_version = _active_policy(principal.tenant_id)
    # Without an active policy nothing is limited, as retrieval and the sweep read it.
    retention = retention_section(policy) if policy_version is not None else {}
    use = InUse.of(retention, now, tenant_id=principal.tenant_id)
    grant = _grant(principal)
    # Only the subjects the writer may act for are locked and read: a write about any other
    # is refused by admission (``tenant.subject_not_granted``) as if it did not exist. Were
    # they read, one whose deletion is under way or queued would answer 503 before admission
    # ran, and an agent bound to one subject could tell which others exist.
    may_act_for = getattr(principal, "may_act_for", None)
    reachable = [c for c in candidates if may_act_for is None or may_act_for(c.subject)]
    # Before anything is read: a concurrent write on the same key may be creating the subject.
    # The subjects' locks of writes too, before their recent writes are read (the split-write
    # rule): a write about one of them committing meanwhile is read, not missed.
    keys = {(c.subject, c.memory_key) for c in reachable}
    external_ids = {c.subject for c in reachable}
    lock_memory_keys(principal.tenant_id, keys, writes_of=external_ids)
    # Read with their locks shared: a deletion of one of them waits for this write, then
    # deletes what it stored too (memory_core.locks); a queued deletion of one, or of a key
    # written here, answers 503.
    subjects = {
        s.external_id: s
        for s in subjects_shared_locked(
            Subject.objects.filter(tenant_id=principal.tenant_id, external_id__in=external_ids),
            keys=keys,
        )
    }
    if target is None:  # a correction keeps the scope of the memory it corrects
        settle_user_scopes(candidates, subjects, batch=batch)
    starts = target.valid_from if target is not None and target.valid_from > now else None
    planned = [_Planned(index=i, candidate=c, starts=starts) for i, c in enumerate(candidates)]
    # The model runs beside the reads of heads and recent texts and beside admission, until
    # _store needs the vectors.
    with _frequent_gil_switches:
        pending = _Embedding([c.content for c in candidates])
        try:
            heads = {} if target is not None else _heads(principal, planned, subjects, use)
            recent = _recent_texts(principal, subjects, policy)
            with guards.cache_scope(principal.tenant_id):  # guard results reused in the tenant
                _admit_each(
                    planned,
                    grant=grant,
                    subjects=subjects,
                    heads=heads,
                    target=target,
                    recent=recent,
                    now=now,
                    policy=policy,
                    policy_version=policy_version,
                )
            if waiting is not None and planned[0].decision.outcome == PENDING:
                twin = waiting(planned[0].decision)
                if twin is not None:
                    pending.discard()
                    return [twin]
            _ensure_subjects(principal, planned, subjects)
            _store(principal, planned, policy_version, pending, now)
        except BaseException:
            pending.discard()  # no vector is needed: the model stops after its current chunk
            raise
    decisions = _record(principal, planned, policy_version, use)
    return [
        WriteResult(
            decision=item.decision.outcome,
            rule_codes=item.decision.rule_codes,
            message=item.decision.message,
            memory=item.memory,
            review_item=item.review_item,
            admission_decision=decision,
            policy_version=policy_version,
            index=item.index,
        )
        for item, decision in zip(planned, decisions, strict=True)
    ]


@transaction.atomic
def memory_write(*, principal, data: dict) -> WriteResult:
    """Write one memory through admission; return the decision and what it stored.

    Raises ValidationFailed (field errors) when ``data`` is malformed; policy refusals are a
    result with decision "rejected", never an exception.
    """
    return _run(principal, [parse_candidate(data)])[0]


@transaction.atomic
def memory_write_batch(*, principal, items: list) -> list[WriteResult]:
    """Write up to 100 memories through admission, embedded in one model batch.

    Every item is parsed first: one malformed item refuses the batch (ValidationFailed with
    the errors keyed by item index), so a batch never half-applies because of its shape.
    """
    candidates = parse_batch(items)
    return _run(principal, candidates, batch=True)


def _writable(principal, memory_id) -> Memory:
    memory = memory_get(principal=principal, memory_id=memory_id)
    write_types = getattr(principal, "write_types", None)
    if write_types is not None and memory.memory_type not in write_types:
        raise PermissionDenied("The agent's grant does not allow writing this memory type.")
    return memory


@transaction.atomic
def memory_correct(*, principal, memory_id, data: dict) -> WriteResult:
    """Write a new version of ``memory_id`` through admission (POST .../supersede).

    Equal or higher authority supersedes it (the old row stays, superseded); lower authority
    is kept as a conflict for review; a sensitive correction waits for a reviewer. A subject
    correcting their own memory in the portal writes with authority explicit_user; of a
    memory of higher authority, their correction is kept beside it once, and a later one
    replaces their own kept there (``_correction_beside``). Saved or sent to a reviewer, a
    subject's correction withdraws their own earlier ones still waiting for a reviewer on
    the chain (``_withdraw_own_waiting``).
    """
    target = asked = _writable(principal, memory_id)
    # With the subject's lock of writes, which ``_run`` takes again: taken here in one
    # statement with the key's, so in the order every write takes them (memory_core.locks).
    lock_memory_keys(
        principal.tenant_id,
        [(target.subject.external_id, target.memory_key)],
        writes_of=[target.subject.external_id],
    )
    # The subject's lock before the row's, as every write takes them (memory_core.locks): a
    # deletion holding the subject's lock and waiting for this row would otherwise deadlock.
    # The row only, not the subject's row too: a whole subject's deletion holds that one
    # (FOR NO KEY UPDATE) while it waits for the subject's lock.
    subject_shared_lock(target.subject_id)
    target = (
        Memory.objects.select_for_update(of=("self",)).select_related("subject").get(pk=target.pk)
    )
    # In use now (``InUse``): a row past its valid_until or its class's retention stays
    # stored active until the retention sweep expires or deletes it, and superseding it put
    # its fact back in use.
    use = in_use_now(principal.tenant_id)
    state = use.state(target)
    if state != Status.ACTIVE:
        raise Conflict(
            f"Memory {target.id} is {STATE_WORDS.get(state, state)}; only the active head of a "
            "chain can be superseded.",
            code="not_chain_head",
        )
    written_on = None
    if isinstance(principal, SubjectPrincipal) and (
        AUTHORITY_RANK[target.authority] > AUTHORITY_RANK[Authority.EXPLICIT_USER]
    ):
        kept, own = _correction_beside(principal, target, data.get("content"), use=use)
        if kept is not None:
            return kept
        if own is not None:
            target = written_on = own
    default_source = None
    if isinstance(principal, SubjectPrincipal):
        # The person the memory is about speaks for themselves: explicit, from the portal.
        data = {key: value for key, value in data.items() if key not in ("source", "authority")}
        data["authority"] = Authority.EXPLICIT_USER
        default_source = {
            "type": SourceType.USER_INPUT,
            "conversation_id": "portal",
            "message_id": f"correction:{uuid.uuid4()}",
        }
    candidate = parse_correction(
        data,
        previous=target,
        default_source=default_source,
        admission_end=_admission_end(target),
    )
    asked_end = data.get("valid_until") is not None

    def waiting(decision) -> WriteResult | None:
        # Asked once admission holds the correction too: a repeat admission refuses (a
        # consent or confidence the policy refuses, business state in its reason) was
        # answered 202 "already waits" and left no refusal (stop 55's audit of writes).
        return _same_correction_waiting(
            principal, target, candidate, decision, asked_end=asked_end, use=use
        )

    result = _run(principal, [candidate], target=target, waiting=waiting)[0]
    result.written_on = written_on
    stored = result.decision != REJECTED and not result.already_waiting
    if isinstance(principal, SubjectPrincipal) and stored:
        result.withdrawn = _withdraw_own_waiting(principal, [asked, written_on], sent=result.memory)
    return result


def _withdraw_own_waiting(principal, corrected: list, *, sent: Memory) -> list[Memory]:
    """Revoke the person's own writes waiting for a reviewer whose approval would replace a
    version of the chains of ``corrected`` (``selectors.portal.waiting_to_replace``: the
    memory they corrected and, kept beside it, their own correction that this one was
    written on), but ``sent``, the correction just saved or sent to a reviewer; close their
    review items (``REPLACED_BY_LATER_CORRECTION``) and return them.

    One statement of theirs stands, as beside a memory of higher authority: an approval
    follows the chain to its newest version (``selectors.approvals.approval_head``), so
    their earlier sensitive correction, approved after a later one was saved, superseded it,
    and agents were given what the person had taken back (stop 64's audit of the portal).
    One whose head was revoked since lands, approved, on the key's memory in use now, as the
    memory's page says: read by the heads its item cites alone, it was left waiting, and
    replaced what the person said last (stop 64's review of the portal fix). Called under
    the key's lock, which every correction and approval of the chain takes first; the rows
    are read again locked: a write whose item has been decided meanwhile is no longer
    waiting.
    """
    waiting = reduce(
        or_,
        (
            waiting_to_replace(principal=principal, memory=memory)
            for memory in corrected
            if memory is not None
        ),
    )
    withdrawn = []
    for memory in waiting.exclude(pk=sent.pk).order_by("pk").select_for_update(of=("self",)):
        writer = writer_of(memory)
        if writer is None or writer.actor_type != principal.actor_type:
            continue  # an agent's write on the chain: not the person's to withdraw
        withdrawn.append(
            _retire(
                principal=principal,
                memory_id=memory.pk,
                action=MemoryEvent.Action.REVOKED,
                reason_code=REPLACED_BY_LATER_CORRECTION,
                reason="",
            )
        )
    return withdrawn


def _correction_beside(
    principal, target: Memory, content, *, use: InUse
) -> tuple[WriteResult | None, Memory | None]:
    """Return, for a person's correction with the text ``content`` of ``target`` (a memory
    of higher authority than theirs, in use), the result of the same correction already kept
    beside it, or else their newest correction kept there, which this one replaces (its next
    version: one statement of theirs stands beside ``target``); or neither.

    Their corrections beside it (``selectors.portal.corrections_beside``) in use, read and
    locked here, under the key's lock and ``target``'s row lock that every correction of it
    takes first: the portal read them before either lock, and two corrections sent at once
    (a double click, two tabs) both found none, so both were kept beside it, the same text
    twice or two of theirs contradicting each other (stop 57's audit of races). The same text
    is the same apart from its spacing (``same_text``): one differing in letter case is
    another correction (stop 55's audit of the portal).
    """
    beside = list(
        corrections_beside(principal=principal, memory=target)
        .not_ended(use)
        .select_for_update(of=("self",))
    )
    kept = next(
        (m for m in beside if isinstance(content, str) and same_text(m.content, content)), None
    )
    if kept is None:
        return None, beside[-1] if beside else None
    # As a write would: a deletion of the subject, or of the key, queued for a worker
    # answers 503 rather than an answer that the correction is kept.
    subjects_shared_locked(
        Subject.objects.filter(tenant_id=principal.tenant_id, pk=target.subject_id),
        keys={(target.subject.external_id, target.memory_key)},
    )
    answer = WriteResult(
        decision=ACCEPTED,
        message=(
            f"The same correction is already kept beside memory {target.id} (memory "
            f"{kept.id}); nothing new was stored."
        ),
        memory=kept,
        already_kept=True,
    )
    return answer, None


def _admission_end(memory: Memory) -> AdmissionEnd | None:
    """How admission set ``memory``'s valid_until, or None if it did not.

    Defaulted (rule ``ttl.defaulted``: its writer asked for no end) or capped (``ttl.capped``:
    its writer asked for a later one, ``AdmissionEnd.asked``), the end is the retention of its
    class and authority counted from its write, not an end anyone asked for. A capped one was
    copied into every correction, so asking for a longer life gave the corrected memory a
    shorter one (stop 50's audit). A memory stored without admission (an import, the demo)
    has no decision, and its end is kept as set.
    """
    if memory.valid_until is None:
        return None
    decision = (
        AdmissionDecision.objects.filter(tenant_id=memory.tenant_id, memory=memory)
        .order_by("created_at")
        .values_list("rule_codes", "asked_valid_until")
        .first()
    )
    if decision is None:
        return None
    codes, asked = decision
    if "ttl.defaulted" in codes:
        return AdmissionEnd(asked=None)
    if "ttl.capped" in codes and asked is not None:
        return AdmissionEnd(asked=asked)
    # Capped before stop 50, which kept no asked end: the cap, as then.
    return None


def _same_correction_waiting(
    principal, target: Memory, candidate, admitted, *, asked_end: bool, use: InUse
) -> WriteResult | None:
    """Return the result of the same correction of ``target`` already waiting for a reviewer,
    or None.

    The same writer's pending write, cited by an open sensitive-write item as correcting
    ``target``, with the same content (``content_hash``; a person's, the same text apart
    from its spacing), value (as jsonb compares it) and source type, the authority, consent
    and confidence admission gave this one (``admitted``), kept at least
    as sensitive as asked, and, when the correction asks an end (``asked_end``), ending then
    (admission stored the waiting one's end defaulted or capped by the retention period, so
    only an end asked for is compared, and one at or past a capped end is the same). Sent
    twice (a double click, a retry, "This is right" pressed again while the first waits), a
    sensitive correction stored two identical pending writes and two review items: the target stays
    active while one waits, so nothing else refused the second. Called under the key's lock
    and the target's row lock, which every correction of it takes first. Only one still in
    use (``use``): one past its valid_until or its class's retention can no longer be
    approved (``review_expired``), so it is not "already waiting".
    """
    writer = getattr(principal, "agent_id", None)
    pending = (
        Memory.objects.visible_to(principal)
        .filter(
            status=Status.PENDING_APPROVAL,
            content_hash=content_hash(candidate.content),
            pk__in=ReviewItem.objects.filter(
                tenant_id=principal.tenant_id,
                kind=ReviewItem.Kind.SENSITIVE_WRITE,
                state=ReviewItem.State.OPEN,
                candidate_ids__contains=[target.pk],
            ).values("memory_id"),
        )
        # The value as jsonb compares it: read back, ``1e23`` is the whole number its JSON
        # wrote, which the parsed float is not, and the same correction sent twice was stored
        # twice (stop 59's audit of writes). No value is SQL NULL, not JSON null.
        .filter(Q(value__isnull=True) if candidate.value is None else Q(value=candidate.value))
        .not_ended(use)
        .order_by("created_at", "id")
    )
    asked = SENSITIVITY_RANK[candidate.sensitivity or target.sensitivity]
    # A reason admission refuses is refused, not answered as the one waiting (stop 53's audit
    # of the write chains: "… and wire all refunds to …" as a reason got 202).
    if candidate.reason and guards.injection_codes([candidate.reason]):
        return None
    given = (candidate.source_type, admitted.authority, admitted.consent, admitted.confidence)
    for memory in pending:
        # The same source, and the authority, consent and confidence admission gave this
        # one: a user's own correction was answered as a model's inference waiting with the
        # same words, and dropped; an inference refused its authority or consent was answered
        # 202 (stop 53's audit of the write chains). The authority given, not the one asked:
        # one asking none was answered as the same words waiting with a lower authority
        # asked, and dropped (stop 59's audit of writes).
        stored = (memory.source_type, memory.authority, memory.consent, memory.confidence)
        if stored != given:
            continue
        if isinstance(principal, SubjectPrincipal) and not same_text(
            memory.content, candidate.content
        ):
            # A person's text is theirs to the letter, its spacing and Unicode form aside, as
            # the portal reads it (``selectors.portal.same_text``): the hash folds case and
            # NFKC, and a correction differing from the one waiting in letter case alone was
            # dropped as it (stop 55's audit of the portal); compared unnormalized, the same
            # NFD correction sent twice waited twice beside the NFC one stored (stop 60's
            # review). An agent's keeps the hash (docs/api.md).
            continue
        if asked > SENSITIVITY_RANK[memory.sensitivity]:
            continue  # asked to be kept more sensitive than the one waiting: another request
        decision = (
            AdmissionDecision.objects.filter(tenant_id=principal.tenant_id, memory=memory)
            .order_by("created_at")
            .first()
        )
        if decision is None or decision.agent_id != writer:
            continue
        if asked_end and candidate.valid_until != memory.valid_until:
            capped = "ttl.capped" in decision.rule_codes
            if not (capped and candidate.valid_until > memory.valid_until):
                continue  # asked to end at another time than the one waiting: another request
        item = ReviewItem.objects.filter(
            tenant_id=principal.tenant_id,
            kind=ReviewItem.Kind.SENSITIVE_WRITE,
            state=ReviewItem.State.OPEN,
            memory=memory,
        ).first()
        if item is None:
            continue  # decided since the read above (neither is locked): no longer waiting
        # As a write would: a deletion of the subject, or of the key, queued for a worker
        # answers 503 rather than an answer that the write waits.
        subjects_shared_locked(
            Subject.objects.filter(tenant_id=principal.tenant_id, pk=target.subject_id),
            keys={(target.subject.external_id, target.memory_key)},
        )
        return WriteResult(
            decision=PENDING,
            rule_codes=decision.rule_codes,
            message=already_waiting_message(item),
            memory=memory,
            review_item=item,
            admission_decision=decision,
            policy_version=decision.policy_version,
            already_waiting=True,
        )
    return None


def already_waiting_message(item) -> str:
    """The answer's message to a correction the same as one that already waits for a
    reviewer (``item``): the first answer, and its idempotent replay (``idempotency``)."""
    return (
        f"The same correction already waits for a reviewer (review item {item.id}); nothing "
        "new was stored."
    )


# What a person's confirmation raises to their own authority: what a model inferred or a tool
# observed about them.
CONFIRMABLE = frozenset({Authority.MODEL_INFERENCE, Authority.TOOL_OBSERVATION})


def memory_confirm(*, principal, memory_id) -> WriteResult:
    """The person a memory is about confirms it as right: the seed's confirmation path for
    what a model inferred ("lower authority, faster decay and a confirmation path").

    A correction with the same content and value (``memory_correct``): the new version
    carries their explicit authority, so it wins conflicts as anything they said does and
    ages by its type's half-life. Only that person confirms (``forbidden``), and only what a
    model inferred or a tool observed (``not_confirmable``: anything else is already theirs
    or an admin's).
    """
    if not isinstance(principal, SubjectPrincipal):
        raise PermissionDenied("Only the person a memory is about can confirm it.")
    target = _writable(principal, memory_id)
    if target.authority not in CONFIRMABLE:
        raise Conflict(
            f"Memory {target.id} was set with {target.authority} authority: there is nothing "
            "to confirm.",
            code="not_confirmable",
        )
    data = {"content": target.content, "reason": "Confirmed as right by the person it is about."}
    if target.value is not None:
        data["value"] = target.value
    return memory_correct(principal=principal, memory_id=memory_id, data=data)


def _retire(
    *,
    principal,
    memory_id,
    action: str,
    reason_code: str,
    reason: str,
    check: Callable[[Memory], None] | None = None,
) -> Memory:
    """Revoke ``memory_id`` with an ``action`` event; ``check`` (if given) may refuse the
    locked row with a Conflict before anything changes. The revocation is journaled as it
    commits (``revocations``): a restore from an older backup would put the memory back in
    use, and ``replay_deletions`` revokes it again."""
    memory = _writable(principal, memory_id)
    # The subject's lock before the row's, as corrections take them: a deletion of the subject
    # holding the row is waited for a bounded time (memory_core.locks), not for its whole run.
    # A deletion queued for a worker (the subject's, or this memory's key's) answers 503, as
    # a correction does: the memory is on its way out, and nothing of it is to change first.
    subjects_shared_locked(
        Subject.objects.filter(tenant_id=memory.tenant_id, pk=memory.subject_id),
        keys={(memory.subject.external_id, memory.memory_key)},
    )
    memory = Memory.objects.select_for_update().get(pk=memory.pk)
    if memory.status not in (Status.ACTIVE, Status.PENDING_APPROVAL):
        raise Conflict(f"Memory {memory.id} is {memory.status}.", code="not_active")
    if check is not None:
        check(memory)
    was_pending = memory.status == Status.PENDING_APPROVAL
    memory.status = Status.REVOKED
    memory.updated_at = timezone.now()
    memory.save(update_fields=["status", "updated_at"])
    event_record(
        memory=memory,
        action=action,
        principal=principal,
        reason_code=reason_code,
        details=_reason_details(memory.tenant_id, reason[:MAX_REASON_CHARS]),
    )
    if was_pending:
        ReviewItem.objects.filter(
            memory=memory, kind=ReviewItem.Kind.SENSITIVE_WRITE, state=ReviewItem.State.OPEN
        ).update(
            state=ReviewItem.State.RESOLVED, resolution=reason_code, resolved_at=memory.updated_at
        )
    conflicts_close_settled(
        tenant_id=memory.tenant_id,
        memory_ids=[memory.id],
        reason_code=reason_code,
        now=memory.updated_at,
    )
    memory_revocation_journal_on_commit(memory)
    return memory


def _reason_details(tenant_id, reason: str) -> dict:
    """Return the details of a revocation's event that keep its ``reason``, with the
    sensitivity the tenant's sensitive categories read in it (``reason_sensitivity``): agents
    capped below it are answered the event without the reason (``VisibleMemoryIds``). "I was
    diagnosed with diabetes" as a revocation's reason was answered to every agent that reads
    the memory; the revocation itself is never refused for it, as it is the person's own."""
    if not reason:
        return {}
    policy, _ = _active_policy(tenant_id)
    # Read as admission reads them: a document without the knob has the default categories
    # (stop 51's audit: "I was diagnosed with diabetes" went to every agent under one).
    categories = policy_section(policy, "admission")["sensitive_categories"]
    if guards.sensitive_categories([reason], list(categories)):
        return {"reason": reason, EVENT_REASON_SENSITIVITY_KEY: Sensitivity.SENSITIVE}
    return {"reason": reason}


@transaction.atomic
def memory_revoke_replayed(
    *, principal, memory_id, action: str, reason_code: str, operation_id: str
) -> Memory:
    """Revoke again, after a restore, ``memory_id`` (in use, or waiting for a reviewer) as a
    journal line of the operation ``operation_id`` records (``replay_deletions``): with the
    line's action and reason code, as the service that revoked it did, without its checks (a
    consent withdrawal replayed on the backup's earlier version of the chain, or on a version
    the backup holds still waiting for a reviewer). ``SubjectBeingDeleted`` for a memory
    whose subject (or key) has a deletion queued, as for any revoke."""
    return _retire(
        principal=principal,
        memory_id=memory_id,
        action=action,
        reason_code=reason_code,
        reason=f"Revoked again after a restore (journal line {operation_id}).",
    )


@transaction.atomic
def memory_revoke(*, principal, memory_id, reason: str = "") -> Memory:
    """Revoke ``memory_id``: it stays as evidence but is never used again.

    The reason is kept in the revocation's event, which agents read: one the injection guard
    refuses is ``ReasonRefused``, and nothing is revoked (a correction's reason is read by
    admission with its content); one naming a sensitive fact is kept, and agents capped below
    it are answered the event without it (``_reason_details``)."""
    _refuse_an_instruction(reason, nothing_done="Nothing was revoked.")
    return _retire(
        principal=principal,
        memory_id=memory_id,
        action=MemoryEvent.Action.REVOKED,
        reason_code="revoked",
        reason=reason,
        check=_revocable,
    )


def _revocable(memory: Memory) -> None:
    """Refuse a revocation of a memory no agent is given any more (``not_active``): past its
    valid_until or its class's retention, it is stored active until a sweep runs. An agent's
    revoke of one answered 200 and retired it, where the portal said "there is nothing to
    revoke" and a correction ``not_chain_head`` (stop 51). A write waiting for a reviewer is
    revoked while it waits."""
    state = in_use_now(memory.tenant_id).state(memory)
    if state not in (Status.ACTIVE, Status.PENDING_APPROVAL):
        said = STATE_WORDS.get(state, state)
        raise Conflict(
            f"Memory {memory.id} is {said}, not in use: there is nothing to revoke.",
            code="not_active",
        )


def _refuse_an_instruction(reason: str, *, nothing_done: str) -> None:
    """Raise ``ReasonRefused`` for a ``reason`` the injection guard refuses: it would be kept
    in the memory's events, which agents read. ``nothing_done`` ends the message."""
    refused = (
        [code for code in guards.injection_codes([reason]) if code in REFUSING] if reason else []
    )
    if refused:
        raise ReasonRefused(
            f"The reason was refused ({', '.join(refused)}): {describe(refused)} "
            f"It would be kept in the memory's events, which agents read. {nothing_done}",
            details={"rule_codes": refused},
        )


def consent_withdrawable(memory: Memory) -> bool:
    """Whether ``memory`` has a workflow's consent to withdraw: in use (``InUse``: past
    neither its valid_until nor its class's retention) and kept under it (the portal offers
    the action by this; ``consent_withdraw`` refuses the rest)."""
    return in_use_now(memory.tenant_id).holds(memory) and memory.consent == Consent.WORKFLOW


def _consent_withdrawable(memory: Memory) -> None:
    """Refuse a withdrawal from a memory not in use (``not_active``: one waiting for a
    reviewer was never given to an agent, and one past its valid_until or its class's
    retention is given to none now) or not kept under a workflow's consent
    (``not_workflow_consent``: the person's own consent is not withdrawn; they delete it)."""
    state = in_use_now(memory.tenant_id).state(memory)
    if state != Status.ACTIVE:
        said = STATE_WORDS.get(state, state)
        raise Conflict(
            f"Memory {memory.id} is {said}, not in use: there is no consent to withdraw.",
            code="not_active",
        )
    if memory.consent != Consent.WORKFLOW:
        raise Conflict(
            f"Memory {memory.id} was kept with {memory.consent} consent, not a workflow's: "
            "there is no workflow consent to withdraw. Delete it to stop agents using it.",
            code="not_workflow_consent",
        )


@transaction.atomic
def consent_withdraw(*, principal, memory_id, reason: str = "") -> Memory:
    """Withdraw the workflow consent ``memory_id`` was kept under: the memory stops being
    usable (revoked), with the person's ``reason`` in its events. Only an active memory kept
    under a workflow's consent has one (Conflict ``not_active`` or ``not_workflow_consent``
    otherwise, nothing changed). The reason is read as a revocation's is (``ReasonRefused``:
    unread, an instruction given as one was kept and answered to agents, stop 47's audit)."""
    _refuse_an_instruction(reason, nothing_done="The consent was not withdrawn.")
    return _retire(
        principal=principal,
        memory_id=memory_id,
        action=MemoryEvent.Action.CONSENT_WITHDRAWN,
        reason_code="consent_withdrawn",
        reason=reason,
        check=_consent_withdrawable,
    )
