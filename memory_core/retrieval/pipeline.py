"""The read path: ``retrieve(*, principal, request)`` runs the ten stages and stores a trace.

Round trips per call: one for the subject and the active policy, one candidate statement for
every store (with the savepoint that lets a failure degrade sent in the same round trip), one
insert for the trace (plus one review item lookup when candidates share a memory_key, and
review item writes only when a high-impact conflict is unresolved). The query is embedded
once. Stages 5-10 are pure functions over ``Candidate`` (see their modules).

Failure handling (DESIGN.md, "When things fail"): if the embedding model fails, or the vector
half of the statement fails or runs past ``statement_timeout``, the stores are asked again
without it (structured, task state, full-text) and the result says ``degraded``. If the
database itself is unreachable the OperationalError propagates; the API answers 503
``memory_unavailable``.
"""

from __future__ import annotations

import hashlib
import logging
import time
import unicodedata
from dataclasses import replace

from django.db import DatabaseError, InterfaceError, OperationalError, connection
from django.utils import timezone
from psycopg import pq
from psycopg.errors import LockNotAvailable, QueryCanceled

from memory_core.embeddings import embed_texts, get_embedder
from memory_core.exceptions import PermissionDenied
from memory_core.locks import (
    SUBJECT_LOCK_PREFIX,
    subject_shared_lock_wait,
    unknown_user_lock_name,
)
from memory_core.models import Memory, RetrievalTrace, Status
from memory_core.policy_check import RetentionCutoff, retention_cutoffs

from . import assembly, budget, candidates, conflicts, dedup, filters, intent, plan, rerank
from .policy import RetrievalPolicy
from .traces import user_id_digest
from .types import (
    Budget,
    Candidate,
    Clarification,
    ConflictOutcome,
    ConflictPlace,
    Merge,
    Rejection,
    RetrievalContext,
    RetrievalMode,
    RetrievalRequest,
    RetrievalResult,
)

logger = logging.getLogger(__name__)

# The subject, the active policy, and a shared lock on the
# subject held until the request's transaction ends (memory_core.locks.subject_deletion_lock):
# a deletion request of the subject waits for this retrieval to commit its trace, which the
# deletion's traces step then finds, and a retrieval that comes after it reads the rows
# already deleted (the candidate statement runs after the lock is granted: a new snapshot
# under READ COMMITTED). Without the lock a trace citing a deleted memory could be written
# after the traces step had verified. Shared locks do not wait for each other. Only tried
# here: while a deletion holds it, ``lookup_subject_and_policy`` waits a bounded time.
# For a user no subject names, the lock of their retrievals (``locks.unknown_user_lock_name``)
# instead, tried alike and never waited for: the trace names them by their id's digest only
# while it holds the lock, so a deletion of their subject created meanwhile waits for it.
_LOOKUP_SQL = (
    "SELECT s.id, p.version, p.document, "
    "CASE WHEN s.id IS NOT NULL THEN "
    "pg_try_advisory_xact_lock_shared(hashtextextended(%s || s.id::text, 0)) "
    "ELSE pg_try_advisory_xact_lock_shared(hashtextextended(%s, 0)) END "
    "FROM (SELECT 1) AS one "
    "LEFT JOIN memory_core_subject s ON s.tenant_id = %s AND s.external_id = %s "
    "LEFT JOIN memory_core_policyversion p ON p.tenant_id = %s AND p.is_active"
)
# Whether the subject's deletion is queued (the key queued: "" for the whole subject, NULL for
# none), read by a statement that starts once the lookup has taken the subject's lock: a
# deletion request queues it while holding the lock, so the lookup's own snapshot (taken
# before its try of the lock), or a read before a wait for the lock, would miss a mark that
# committed as the lock was released, and the retrieval would hand out memories the person
# had just asked to delete. Sent in the lookup's round trip (pipeline mode); after a wait
# for the lock, read again (as writes read it again: ``locks.deletion_queued_keys``).
# With it, whether a conflict of the subject's memories without a key is open, or resolved
# ``ask_user`` (stage 8's ``_keyless_conflicts`` reads their rows only then).
_QUEUED_SQL = (
    "SELECT CASE WHEN s.deletion_queued_at IS NOT NULL THEN s.deletion_queued_key END, "
    "EXISTS (SELECT 1 FROM memory_core_reviewitem r WHERE r.tenant_id = s.tenant_id "
    "AND r.subject_id = s.id AND r.kind = 'conflict' "
    "AND (r.state = 'open' OR r.resolution = 'ask_user') AND r.memory_key = '') "
    "FROM memory_core_subject s WHERE s.tenant_id = %s AND s.external_id = %s"
)


class _Clock:
    """Per-stage latency, in milliseconds."""

    def __init__(self):
        self.start = time.perf_counter()
        self.last = self.start
        self.stages: dict[str, float] = {}

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.stages[stage] = round((now - self.last) * 1000, 3)
        self.last = now

    @property
    def total(self) -> float:
        return round((time.perf_counter() - self.start) * 1000, 3)


class SubjectState:
    """Why a known subject's memories are not read (``lookup_subject_and_policy``)."""

    READABLE = ""
    # A deletion of the whole subject is queued for a worker (``Subject.deletion_queued_at``):
    # from the ask on, nothing of the subject is retrieved. A key's queued deletion fences
    # that key's memories only (``RetrievalContext.fenced_key``).
    DELETION_QUEUED = "subject_deletion_queued"
    # A deletion of the subject held its lock past MEMLEDGER_SUBJECT_LOCK_WAIT: the
    # retrieval reads nothing rather than wait (a whole subject's may take a minute).
    BEING_DELETED = "subject_being_deleted"
    # No subject named the user when the lookup read the subjects, and a deletion of the
    # one created meanwhile holds the lock of the user's retrievals (the try failed): it has
    # taken the person's traces, or is about to. Nothing of theirs was read, and the trace
    # names nobody: with their id's digest it was left for a deletion that had read already.
    KNOWN_MEANWHILE = "subject_known_meanwhile"


def lookup_subject_and_policy(*, tenant_id, user_id: str):
    """Return (subject_id or None, its SubjectState, RetrievalPolicy, fenced key, keyless
    conflicts) in one round trip. The fenced key is the memory_key whose deletion is queued
    for a worker ("" for none): its memories are not read. Keyless conflicts: whether one of
    the subject's conflicts between memories without a key is open (or resolved ``ask_user``).

    Also takes the subject's shared deletion lock until the transaction ends (see
    ``_LOOKUP_SQL``); the API runs every request in a transaction (ATOMIC_REQUESTS). When a
    deletion holds the lock, it is waited for (``locks.subject_shared_lock_wait``); if it
    still holds it after the wait, the subject comes back as None and BEING_DELETED: the
    retrieval reads none of its rows and writes no trace naming it.

    For a user no subject names, the lock of their retrievals, shared, in the same statement
    (``locks.unknown_user_lock_name``); while a deletion holds it (a subject created
    meanwhile), KNOWN_MEANWHILE.
    """
    unknown_user_lock = unknown_user_lock_name(tenant_id, user_id_digest(user_id))
    connection.ensure_connection()
    with connection.cursor() as lookup, connection.cursor() as queue:
        with connection.wrap_database_errors, connection.connection.pipeline():
            lookup.execute(
                _LOOKUP_SQL,
                [SUBJECT_LOCK_PREFIX, unknown_user_lock, tenant_id, user_id, tenant_id],
            )
            queue.execute(_QUEUED_SQL, [tenant_id, user_id])
        subject_id, version, document, granted = lookup.fetchone()
        queued = queue.fetchone()
    if isinstance(document, str):
        import json

        document = json.loads(document)
    policy = RetrievalPolicy.from_document(document, version)
    if subject_id is None:
        # Held, the lock makes a deletion of a subject created meanwhile wait for this trace,
        # named by the digest, and delete it. Named by nobody whenever ``_QUEUED_SQL`` found
        # the subject, the trace of an agent's retrieval racing its first write for the
        # person outlived their deletion, their task id in it (stop 64's review).
        if not granted:
            return None, SubjectState.KNOWN_MEANWHILE, policy, "", False
        return None, SubjectState.READABLE, policy, "", False
    queued_key, keyless = queued if queued else (None, False)
    if not granted:
        if not subject_shared_lock_wait(subject_id):
            return None, SubjectState.BEING_DELETED, policy, "", False
        # Read again: the wait may have let a mark in (as a write reads it again,
        # locks.subjects_shared_locked), or a keyless conflict whose rival the stores now read
        # (read before the wait, the rival was given beside the memory it disputes: stop
        # 54's audit of keyless conflicts).
        with connection.cursor() as again:
            again.execute(_QUEUED_SQL, [tenant_id, user_id])
            row = again.fetchone()
        queued_key, keyless = row if row else (None, False)
    if queued_key == "":  # the whole subject's deletion is queued
        return subject_id, SubjectState.DELETION_QUEUED, policy, "", False
    return subject_id, SubjectState.READABLE, policy, queued_key or "", keyless


def build_context(
    *,
    principal,
    request: RetrievalRequest,
    subject_id,
    fenced_key: str = "",
    retention_cutoffs: tuple[RetentionCutoff, ...] = (),
    policy: RetrievalPolicy | None = None,
) -> RetrievalContext:
    """Stage 1: the context from the credential (tenant, agent, grants) and the request;
    ``fenced_key``, a key of the subject whose deletion is queued (not read);
    ``retention_cutoffs``, the tenant's retention rules at the request's moment (what they
    no longer allow is not read); ``policy``, whose confidence floor and prompt sensitivity
    cap every store applies (none: neither limits)."""
    return RetrievalContext(
        tenant_id=principal.tenant_id,
        agent_id=getattr(principal, "agent_id", None),
        subject_id=subject_id,
        user_id=request.user_id,
        session_id=request.session_id,
        task_id=request.task_id,
        project_id=request.project_id,
        repository_id=request.repository_id,
        locale=request.locale,
        environment=request.environment,
        read_types=_read_types(principal),
        max_sensitivity=getattr(principal, "max_sensitivity", "sensitive"),
        fenced_key=fenced_key,
        retention_cutoffs=tuple(retention_cutoffs),
        **({} if policy is None else policy_limits(policy)),
    )


def _fence_told(principal, ctx: RetrievalContext) -> bool:
    """Whether the trace may say that the queued deletion of ``ctx.fenced_key`` left memories
    out: only when the caller's grant reaches one on the key (``scope_granted``; a principal
    without a grant reads every memory). Said to every agent, it told one whose grant reaches
    none of them that the person has memories it cannot see, and that they are being deleted
    (stop 67's audit of retrieval). One query, only while a key of the subject is queued."""
    scope_granted = getattr(principal, "scope_granted", None)
    if scope_granted is None:
        return True
    on_key = Memory.objects.filter(
        tenant_id=ctx.tenant_id, subject_id=ctx.subject_id, memory_key=ctx.fenced_key
    ).exclude(status=Status.DELETED)
    return scope_granted(on_key).exists()


def policy_limits(policy: RetrievalPolicy) -> dict:
    """The context's fields that ``policy`` sets: its confidence floor and prompt sensitivity
    cap, which every store applies (``RetrievalContext``)."""
    return {
        "confidence_floor": policy.confidence_floor,
        "max_prompt_sensitivity": policy["max_prompt_sensitivity"],
    }


def _read_types(principal) -> tuple[str, ...] | None:
    """The agent's read grant (empty reads nothing); None for a principal without one."""
    read_types = getattr(principal, "read_types", None)
    return None if read_types is None else tuple(sorted(read_types))


def effective_budget(request: RetrievalRequest, policy: RetrievalPolicy) -> Budget:
    """Return the request's budget: a whole one as given, else the policy's with the fields
    the request names (``budget_overrides``) replaced."""
    if request.budget is not None:
        return request.budget
    b = policy.budget
    return replace(
        Budget(
            max_items=int(b["max_items"]),
            max_tokens=int(b["max_tokens"]),
            max_items_per_type=int(b["max_items_per_type"]),
        ),
        **(request.budget_overrides or {}),
    )


def _token_counter():
    """Return (count_tokens, additive, degraded reason): the model's own tokenizer, or, when it
    cannot load, a count of characters (``_characters_counted``), never fewer than the tokens
    they make, so the package still fits its budget."""
    try:
        embedder = get_embedder()
        additive = getattr(embedder, "additive_token_counts", False)
        embedder.count_tokens("memory")  # loads the tokenizer now, not halfway through
    except Exception as exc:  # any failure of the model's files: count safely, never a 500
        logger.warning("the tokenizer failed, counting characters instead: %s", exc)
        return _characters_counted, False, "tokenizer_failed"
    return embedder.count_tokens, additive, ""


def _characters_counted(text: str) -> int:
    """Return the characters of ``text`` lower-cased and decomposed (NFD), as a WordPiece
    tokenizer reads it before it cuts pieces of one character at least: never fewer than its
    tokens. The raw characters were fewer for Korean (a syllable is two or three jamo, each a
    piece: "한국어" is 3 characters and 8 tokens), and a Korean package went over its
    ``max_tokens`` (stop 47's audit). An accent stripped or a space dropped only counts more."""
    return len(unicodedata.normalize("NFD", text.lower()))


def _embed_query(query: str):
    try:
        return embed_texts([query])[0], ""
    except Exception as exc:  # any failure of the model is a degraded read, never a 500
        logger.warning("query embedding failed, degrading to structured + full-text: %s", exc)
        return None, "embedding_failed"


def _generate(*, ctx, plan_, query, vector, now, policy):
    """Stage 4 with the degraded fallback; return (candidates, stores, degraded_reason).

    Each attempt drops what the one before failed on: the vector store (the structured store
    still orders by the vector), then the vector altogether (``vector_search_failed``), then
    the full-text store (``search_failed``); when nothing is left to drop the error is a real
    bug and propagates. Each statement runs in its own savepoint
    (``candidates.fetch_binary``), so a failed one leaves the request's transaction usable
    for the next and for the trace. A statement cancelled by ``statement_timeout`` degrades
    too, once: a second cancelled statement answers 503, so a request waits at most twice
    the timeout (``_statement_failed`` tells a statement's failure from the database's).
    """
    attempts: list[tuple[str, dict]] = []
    if vector is not None:
        attempts.append(("", {"query_vector": vector, "use_vector": bool(plan_.semantic_types)}))
    no_vector = "vector_search_failed" if vector is not None else ""
    attempts.append((no_vector, {"query_vector": None, "use_vector": False}))
    if plan_.semantic_types:
        attempts.append(
            ("search_failed", {"query_vector": None, "use_vector": False, "use_fulltext": False})
        )
    *fallible, (last_reason, last_options) = attempts
    timed_out = False
    for reason, options in fallible:
        try:
            found, stores = candidates.fetch_candidates(
                ctx=ctx, plan=plan_, query=query, now=now, policy=policy, **options
            )
            return found, stores, reason
        except DatabaseError as exc:
            cancelled = isinstance(exc.__cause__, QueryCanceled)
            if not _statement_failed(exc) or (cancelled and timed_out):
                raise  # the database itself (or slow whatever is asked): 503
            timed_out = timed_out or cancelled
            logger.warning("candidate statement failed, degrading: %s", exc)
    found, stores = candidates.fetch_candidates(
        ctx=ctx, plan=plan_, query=query, now=now, policy=policy, **last_options
    )
    return found, stores, last_reason


def _statement_failed(exc: DatabaseError) -> bool:
    """Whether ``exc`` is the failure of one candidate statement on a connection that still
    answers, so that a lighter statement may follow, rather than of the database.

    A statement cancelled by ``statement_timeout`` is an OperationalError too (psycopg's
    QueryCanceled), but it says the vector scan was too slow, not that the database is gone:
    the stores without the vector are asked. A lost connection, a lock wait past the
    request's ``lock_timeout`` (every store needs the same table: 503 ``busy``), or a
    transaction the savepoint could not restore is the database's failure: 503.
    """
    if isinstance(exc, InterfaceError) or isinstance(exc.__cause__, LockNotAvailable):
        return False
    pg = connection.connection
    if pg is None or pg.closed or pg.broken:
        return False
    if pg.info.transaction_status == pq.TransactionStatus.INERROR:
        return False
    if isinstance(exc, OperationalError):
        return isinstance(exc.__cause__, QueryCanceled)
    return True


def retrieve(*, principal, request: RetrievalRequest) -> RetrievalResult:
    """Run the read path for ``principal`` and return the bounded, explained memory package."""
    may_act_for = getattr(principal, "may_act_for", None)
    if may_act_for is not None and not may_act_for(request.user_id):
        # An agent without any_subject reads only the subject of its signed subject token.
        raise PermissionDenied(
            "This agent may read only the subject named by its subject token.",
            code="subject_not_granted",
        )
    clock = _Clock()
    now = timezone.now()
    subject_id, subject_state, policy, fenced_key, keyless = lookup_subject_and_policy(
        tenant_id=principal.tenant_id, user_id=request.user_id
    )
    ctx = build_context(
        principal=principal,
        request=request,
        subject_id=subject_id,
        fenced_key=fenced_key,
        # The rules the retention sweep deletes by, at this request's moment: a memory is
        # left out from the moment it is due, whatever the sweep has done yet.
        retention_cutoffs=retention_cutoffs(policy.retention, now, tenant_id=principal.tenant_id),
        policy=policy,
    )
    clock.lap("context")

    mode, gate_rule = intent.choose_mode(request.intent, request.has_complete_context)
    intent_name = intent.normalize_intent(request.intent)
    if mode != RetrievalMode.NONE and (subject_id is None or subject_state):
        gate_rule += f"+{subject_state or 'unknown_subject'}"
    elif mode != RetrievalMode.NONE and fenced_key and _fence_told(principal, ctx):
        gate_rule += "+key_deletion_queued"  # the key itself is not written to the trace
    clock.lap("intent_gate")

    plan_ = plan.build_plan(
        mode=mode, intent=intent_name, ctx=ctx, policy=policy, query=request.query
    )
    clock.lap("plan")

    found: list[Candidate] = []
    stores: list[str] = []
    degraded_reason = ""
    if mode != RetrievalMode.NONE and subject_id is not None and not subject_state:
        vector, degraded_reason = _embed_query(request.query)
        clock.lap("embed_query")
        found, stores, vector_reason = _generate(
            ctx=ctx, plan_=plan_, query=request.query, vector=vector, now=now, policy=policy
        )
        degraded_reason = degraded_reason or vector_reason
    clock.lap("candidates")
    degraded = bool(degraded_reason)
    # The stores that returned each row, for the trace: dedup gives a keeper its merged
    # copies' stores (their relevance is the fact's), which the trace must not claim.
    found_by = {c.id: sorted(c.sources) for c in found}

    eligible, rejected_filters = filters.apply_hard_filters(
        found, ctx=ctx, plan=plan_, policy=policy, now=now
    )
    clock.lap("hard_filters")
    unique, merges = dedup.deduplicate(eligible, policy=policy)
    clock.lap("dedup")
    ranked, rejected_rank = rerank.rerank(
        unique, ctx=ctx, plan=plan_, policy=policy, now=now, degraded=degraded
    )
    clock.lap("rerank")

    acknowledged, review_states, places = conflict_state(
        tenant_id=ctx.tenant_id, subject_id=ctx.subject_id, ranked=ranked
    )
    resolved, outcomes, clarifications, rejected_conflicts = conflicts.resolve_conflicts(
        ranked, policy=policy, acknowledged=acknowledged
    )
    clarifications = _open_reviews(ctx, outcomes, clarifications, review_states, places)
    resolved, rejected_keyless = (
        _keyless_conflicts(ctx, resolved, now=now, policy=policy) if keyless else (resolved, [])
    )
    rejected_conflicts += rejected_keyless
    clock.lap("conflicts")

    the_budget = effective_budget(request, policy)
    count_tokens, additive, tokenizer_reason = _token_counter()
    degraded_reason = degraded_reason or tokenizer_reason
    degraded = bool(degraded_reason)
    # The clarifications are always in the structured package; their line goes into the
    # prompt only if the package without any item still fits max_tokens with it.
    said = clarifications
    if said and count_tokens(assembly.render_prompt([], said)) > the_budget.max_tokens:
        said = []
    selected, rejected_budget, prompt_tokens = budget.select_within_budget(
        resolved,
        budget=the_budget,
        policy=policy,
        count_tokens=count_tokens,
        render=lambda items: assembly.render_prompt(items, said),
        additive=additive,
    )
    clock.lap("budget")

    items = assembly.order_items(selected)
    # The very text the budget stage counted last (render_prompt orders the items itself).
    prompt = assembly.render_prompt(items, said)
    clock.lap("assembly")

    rejections = rejected_filters + rejected_rank + rejected_conflicts + rejected_budget
    # Whether the trace names the person, by their subject or by their id's digest: one that
    # names nobody (their deletion is running) is one their deletion never finds.
    names_the_person = subject_id is not None or not subject_state
    stages = _trace_document(
        ctx=ctx,
        names_the_person=names_the_person,
        request=request,
        mode=mode,
        gate_rule=gate_rule,
        plan_=plan_,
        stores=stores,
        found=found,
        found_by=found_by,
        counts={
            "candidates": len(found),
            "after_hard_filters": len(eligible),
            "after_dedup": len(unique),
            "after_rerank": len(ranked),
            "after_conflicts": len(resolved),
            "selected": len(items),
            "clarifications": len(clarifications),
        },
        rejections=rejections,
        merges=merges,
        outcomes=outcomes,
        items=items,
        budget_=the_budget,
        prompt_tokens=prompt_tokens,
        degraded_reason=degraded_reason,
        latency=clock.stages,
        policy=policy,
    )
    cited = _cited_ids(found, merges, outcomes)
    trace = RetrievalTrace.objects.create(
        tenant_id=ctx.tenant_id,
        agent_id=ctx.agent_id,
        subject_id=ctx.subject_id,
        # A user not known yet is named by a digest: only a token for them reads the trace,
        # and their deletion finds it (it waits for the lock the lookup took). A subject being
        # deleted, or known meanwhile, is named by nothing, nor left behind for its deletion
        # to miss (docs/retrieval.md, ``+subject_being_deleted``).
        user_id_sha256=(
            user_id_digest(request.user_id) if subject_id is None and names_the_person else ""
        ),
        mode=str(mode),
        degraded=degraded,
        policy_version=policy.version,
        # A digest of the person's words: left out of a trace naming nobody, as their id's.
        query_hash=(hashlib.sha256(request.query.encode()).hexdigest() if names_the_person else ""),
        stages=stages,
        selected_ids=_handed_out_ids(items, clarifications),
        cited_ids=cited,
        prompt_tokens=prompt_tokens,
        latency_ms=clock.total,
    )
    return RetrievalResult(
        trace_id=str(trace.id),
        mode=str(mode),
        degraded=degraded,
        items=items,
        clarifications=clarifications,
        prompt=prompt,
        prompt_tokens=prompt_tokens,
        trace=stages,
    )


def conflict_state(*, tenant_id, subject_id, ranked: list[Candidate]):
    """Load the review state of the subject's groups that may conflict (one query, only if
    any). The portal's "Not settled" reads the sets reviewers kept by it too
    (``selectors.portal.given_now``).

    Return, per key: the sets of rows reviewers kept at the group's place
    (``keep_both_scoped`` acknowledges any group within the set it decided on), the review
    state there (``ConflictState``: the item there now, and the items resolved ``ask_user``),
    and the group's place: that of the rows a clarification would ask about
    (``conflicts.contested``), where a reviewer's decision holds. The narrowest rows of the
    whole group placed a weak winner's clarification at a place none of its candidates
    held, under a narrower row of a lower authority class it had outranked.
    """
    groups = conflicts.conflict_groups(ranked)
    if not groups:
        return {}, {}, {}
    from memory_core.services.conflicts import conflict_lookup

    places = {
        key: conflicts.conflict_place(conflicts.contested(members))
        for key, members in groups.items()
    }
    states = conflict_lookup(tenant_id=tenant_id, subject_id=subject_id, groups=places)
    acknowledged = {key: state.kept for key, state in states.items() if state.kept}
    return acknowledged, states, places


# The rows that each keyless conflict of the subject citing a candidate cites, with their
# authority, confidence and sensitivity (``_keyless_conflicts``): open ones, and those a
# reviewer resolved ``ask_user`` (nothing changes: agents are given what they were given
# while it was open) until a later keyless conflict holding every row of theirs still
# standing takes them over (``conflicts.ASK_USER_FOLLOWED_SQL``) and decides them, as a
# key's newest item does: read too, the ``ask_user`` item went on measuring a rival against
# the memory that the reviewer had kept beside it in the later one (stop 57's audit of
# reviews). The later items are looked up by the subject's index, and only for a subject
# with such a conflict (``lookup_subject_and_policy``). With them, the rows of those a
# reviewer resolved ``keep_both_scoped``, which measure nothing: the rows they kept stay
# given beside the memory while a later conflict holding them too is open
# (``conflicts.keyless_rivals``' ``kept``). ``{rows}``: the condition every store reads a
# row by (``candidates.owner_filter``; the portal's: the rows in use the person may see);
# the policy's rules of stage 5 are applied to what it returns (``keyless_measured``).
_KEYLESS_CITED_SQL = """
    SELECT r.id, r.resolution, m.id::text, m.authority, m.confidence, m.sensitivity
      FROM memory_core_reviewitem r
      JOIN memory_core_memory m
        ON m.id = ANY(r.candidate_ids) AND m.tenant_id = r.tenant_id
     WHERE r.tenant_id = %(tenant_id)s AND r.subject_id = %(subject_id)s
       AND r.kind = 'conflict' AND r.memory_key = '' AND r.candidate_ids && %(ids)s::uuid[]
       AND (r.state = 'open' OR (r.resolution = 'ask_user' AND NOT {followed})
            OR r.resolution = 'keep_both_scoped')
       AND {rows}
"""


def _keyless_conflicts(
    ctx: RetrievalContext, resolved: list[Candidate], *, now, policy: RetrievalPolicy
):
    """Measure the keyless candidates an open conflict (or one resolved ``ask_user`` that no
    later conflict has taken over) cites, or the candidates it cites a row stage 6 folded
    into, against the rows it cites that the caller could be given, keeping the rows a
    reviewer kept both (``conflicts.keyless_rivals``). One query, only when the subject has
    such a conflict (``lookup_subject_and_policy``) and a candidate is left."""
    # With the rows stage 6 folded into them: a conflict citing a memory off the query's
    # topic and the model's rival, folded into a copy of its words, was not read, and the
    # copy was given alone (stop 64's audit of retrieval). A keyed copy's too, which stage 6
    # keeps before the rival (``dedup.keeper_order``; stop 64's review).
    ids = [i for c in resolved for i in (c.id, *c.merged_from)]
    if ctx.subject_id is None or not ids:
        return resolved, []
    # Read as the stores read a row, whatever the intent asked for: in use (one past its
    # class's retention, kept measuring, hid its rival and agents got neither: stop 54's
    # audit of keyless conflicts), and within the caller's grant (a row above its maximum
    # sensitivity dropped its candidate, and its trace said so: stop 55's audit of isolation).
    rows, params = candidates.owner_filter(ctx, "readable", now)
    params["readable"] = list(plan.ALL_TYPES if ctx.read_types is None else ctx.read_types)
    params["ids"] = ids
    return keyless_measured(
        resolved, keyless_cited(rows, params), max_sensitivity=ctx.max_sensitivity, policy=policy
    )


def keyless_cited(rows: str, params: dict) -> list[tuple]:
    """Return (item id, resolution, memory id, authority, confidence, sensitivity) of each row
    (``m``) meeting ``rows`` that a keyless conflict of the subject citing one of
    ``params["ids"]`` cites (``_KEYLESS_CITED_SQL``). ``params``: the condition's, with
    ``tenant_id``, ``subject_id`` and ``ids``. One query."""
    with connection.cursor() as cursor:
        cursor.execute(
            _KEYLESS_CITED_SQL.format(
                rows=rows, followed=conflicts.ASK_USER_FOLLOWED_SQL.format(item="r")
            ),
            params,
        )
        return cursor.fetchall()


def keyless_measured(
    resolved: list[Candidate], found: list[tuple], *, max_sensitivity: str, policy: RetrievalPolicy
) -> tuple[list[Candidate], list[Rejection]]:
    """Return the candidates of ``resolved`` left, and the rejections, once measured against
    the rows of the keyless conflicts ``found`` (``keyless_cited``'s) that a caller whose
    grant reads up to ``max_sensitivity`` could be given, keeping the rows a reviewer kept
    both (``conflicts.keyless_rivals``).

    Stage 8's rule, by which the portal's "Not settled" says what agents are given meanwhile
    too (``selectors.portal.given_now``): by a rule of its own, it named an administrator's
    memory no prompt may hold, and not the person's that a reviewer kept beside it (stop
    64's review of the portal fix)."""
    cited: dict = {}
    kept: dict = {}
    for item_id, resolution, memory_id, authority, confidence, sensitivity in found:
        if resolution == "keep_both_scoped":
            kept.setdefault(item_id, set()).add(memory_id)
            continue
        # Nor a row the policy keeps out of every prompt (stage 5's own rule): one below the
        # confidence floor, or above the prompt's sensitivity cap, still outranked its rival,
        # and agents were given neither (stop 56's audit of retrieval).
        if filters.policy_reason(
            confidence=confidence,
            sensitivity=sensitivity,
            max_sensitivity=max_sensitivity,
            policy=policy,
        ):
            continue
        cited.setdefault(item_id, []).append((memory_id, authority))
    return conflicts.keyless_rivals(
        resolved, list(cited.values()), kept=[frozenset(rows) for rows in kept.values()]
    )


def _open_reviews(
    ctx, outcomes: list[ConflictOutcome], clarifications, review_states, places
) -> list[Clarification]:
    """Open (or reuse) a conflict review item, at its group's place, for every clarification;
    return the clarifications still standing.

    With no item open at the place, a clarification about rows an item resolved ``ask_user``
    holds points at that item (``ConflictState.asked_about``: the newest such one, whatever
    was resolved at the place since), and nothing is opened.

    The items are taken in (memory_key, place) order, not in the clarifications' score order,
    which depends on the query: ``conflict_open`` locks an item it adds rows to until the
    request commits, and two retrievals of one subject locking two keys' items in opposite
    orders deadlocked (memory_core.locks lists the order).

    A conflict settled since this retrieval read its rows (a reviewer chose a winner and
    revoked the others: ``conflict_open`` finds fewer than two still in use, or the item it
    finds open at the place, another rival's, does not hold them all) is no longer asked
    about, and none of its rows is given: as read they include the revoked loser, and the
    next retrieval gives the winner. Its outcome's rule says ``settled_since_read``.
    """
    if not clarifications:
        return []
    from memory_core.services.conflicts import conflict_open

    by_key = {o.memory_key: o for o in outcomes}
    settled = set()
    for cl in sorted(clarifications, key=lambda cl: (cl.memory_key, places[cl.memory_key])):
        ids = sorted(c.id for c in cl.candidates)
        state = review_states.get(cl.memory_key)
        known = state.current if state is not None else None
        holds_them = known is not None and {str(i) for i in known.candidate_ids}.issuperset(ids)
        asked = state.asked_about(ids) if known is not None and known.state != "open" else None
        if asked is not None:
            item = asked  # a reviewer decided the user must choose: keep pointing at it
        elif (
            holds_them
            and known.state == "open"
            and ConflictPlace.of(known) == places[cl.memory_key]
        ):
            # What conflict_open's unlocked read would find, read already with every key's
            # (conflict_lookup): it re-read it, in a savepoint, for each key (stop 50's audit).
            item = known
        else:
            item = conflict_open(
                tenant_id=ctx.tenant_id,
                subject_id=ctx.subject_id,
                memory_key=cl.memory_key,
                place=places[cl.memory_key],
                candidate_ids=ids,
            )
            if item is not None and not {str(i) for i in item.candidate_ids}.issuperset(ids):
                # It holds only rows still in use: one read here left use since, and an item
                # opened meanwhile at the place (another rival's) was found. Asked, the answer
                # named the revoked loser beside an item citing others (stop 58's review).
                item = None
        if item is None:
            by_key[cl.memory_key].clarification = False
            by_key[cl.memory_key].rule = "settled_since_read"
            settled.add(cl.memory_key)
            continue
        cl.review_item_id = str(item.id)
        by_key[cl.memory_key].review_item_id = str(item.id)
    return [cl for cl in clarifications if cl.memory_key not in settled]


def _cited_ids(found, merges: list[Merge], outcomes: list[ConflictOutcome]) -> list[str]:
    ids = {c.id for c in found}
    for m in merges:
        ids.update((m.kept, m.merged))
    for o in outcomes:
        ids.update(o.candidate_ids)
    return sorted(ids)


def _handed_out_ids(items: list[Candidate], clarifications: list[Clarification]) -> list[str]:
    """Return the ids of the memories the answer hands out, each once: its items, then its
    clarifications' candidates, whose content the answer holds too. The person's "used by
    agents" counts them (``selectors.portal.memory_usage``) and a usage report may name them;
    with the items alone, a memory whose words an agent was just given in a clarification was
    "never" used (stop 62's audit of traces)."""
    ids = [c.id for c in items]
    ids += [c.id for cl in clarifications for c in cl.candidates]
    return list(dict.fromkeys(ids))


def _traced_scopes(
    scopes: list[str], ctx: RetrievalContext, *, names_the_person: bool
) -> list[str]:
    """Return ``scopes`` as a trace keeps them: a user scope names the person
    (``user:<external id>``), so only a trace that names their subject, which a deletion of
    the subject finds and deletes, keeps one. A trace that names nobody (``+subject_being_
    deleted``, ``+subject_known_meanwhile``: the deletion running never finds it) keeps no
    scope of the request's ids at all: it kept their task, project and repository ids for
    ``trace_days`` after the person's deletion (stop 68's audit of traces); nor their
    locale, environment or query hash (``_trace_document``, ``retrieve``: stop 68's review)."""
    if not names_the_person:
        return [scope for scope in scopes if scope == "global"]
    if ctx.subject_id is not None:
        return scopes
    return [scope for scope in scopes if not scope.startswith("user:")]


def _trace_document(
    *,
    ctx,
    names_the_person: bool,
    request,
    mode,
    gate_rule,
    plan_,
    stores,
    found,
    found_by: dict[str, list[str]],
    counts,
    rejections: list[Rejection],
    merges: list[Merge],
    outcomes: list[ConflictOutcome],
    items: list[Candidate],
    budget_: Budget,
    prompt_tokens: int,
    degraded_reason: str,
    latency: dict,
    policy: RetrievalPolicy,
) -> dict:
    """Return the trace's JSON: ids, hashes, counts, reasons and scores; never content.
    ``found_by``: each candidate's stores as they returned it (before dedup)."""
    by_store: dict[str, int] = {}
    for c in found:
        for s in found_by[c.id]:
            by_store[s] = by_store.get(s, 0) + 1
    # The intent the gate knows, or "other": the plan's is the request's (free text).
    asked = intent.traced_intent(request.intent)
    return {
        "context": {
            "agent_id": str(ctx.agent_id) if ctx.agent_id else None,
            "subject_known": ctx.subject_id is not None,
            "allowed_scopes": _traced_scopes(
                [k if k == "global" else f"{k}:{r}" for k, r in ctx.allowed_scopes],
                ctx,
                names_the_person=names_the_person,
            ),
            # The person's too (docs/security.md): kept only where their deletion finds them.
            "locale": ctx.locale if names_the_person else "",
            "environment": ctx.environment if names_the_person else "",
            # The retention rules every store applied: a memory written before a rule's
            # cutoff was left out as overdue (the sweep deletes it).
            "retention_cutoffs": {
                rule.key: rule.cutoff.isoformat() for rule in ctx.retention_cutoffs
            },
        },
        "gate": {
            "mode": str(mode),
            "rule": gate_rule,
            "intent": asked,
            "has_complete_context": request.has_complete_context,
        },
        "plan": {
            **plan_.as_trace(),
            "intent": asked,
            "preferred_scopes": _traced_scopes(
                list(plan_.preferred_scopes), ctx, names_the_person=names_the_person
            ),
        },
        "stores_queried": stores,
        "candidates_by_store": by_store,
        "candidates": [
            {
                "id": c.id,
                "sources": found_by[c.id],
                "vector_rank": c.vector_rank,
                "fulltext_rank": c.fulltext_rank,
                "content_hash": c.content_hash,
            }
            for c in found
        ],
        "counts": counts,
        "rejections": [
            {"id": r.memory_id, "stage": r.stage, "reason": r.reason} for r in rejections
        ],
        "dedup_merges": [{"kept": m.kept, "merged": m.merged, "rule": m.rule} for m in merges],
        "conflicts": [
            {
                "memory_key": o.memory_key,
                "candidate_ids": o.candidate_ids,
                "winner_id": o.winner_id,
                "rule": o.rule,
                "high_impact": o.high_impact,
                "clarification": o.clarification,
                "review_item_id": o.review_item_id,
            }
            for o in outcomes
        ],
        "selected": [
            {
                "id": c.id,
                "memory_type": c.memory_type,
                "scope": c.scope,
                "authority": c.authority,
                "section": c.section,
                "score": c.score,
                "components": c.components,
                "merged_from": c.merged_from,
                "content_hash": c.content_hash,
                "reason": c.reason,
            }
            for c in items
        ],
        "tokens": {
            "prompt_tokens": prompt_tokens,
            "max_tokens": budget_.max_tokens,
            "max_items": budget_.max_items,
            "max_items_per_type": budget_.max_items_per_type,
        },
        "degraded": {"degraded": bool(degraded_reason), "reason": degraded_reason},
        "policy_version": policy.version,
        "latency_ms": latency,
        "recorded_at": timezone.now().isoformat(),
    }
