"""Storing memory rows and moving them along their supersession chain.

These are the storage primitives. Agents' writes reach them only through admission
(``memory_core.admission``); the trusted paths (imports, the demo, evaluation loaders) call
them directly with a SystemPrincipal.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from memory_core.embeddings import embed_texts, get_embedder
from memory_core.exceptions import Conflict
from memory_core.locks import subjects_shared_locked
from memory_core.models import (
    PROPOSED_STATUSES,
    TYPE_CLASS,
    Memory,
    MemoryEvent,
    ReviewItem,
    ScopeKind,
    Status,
    Subject,
)
from memory_core.services.conflicts import conflicts_heal_on_commit
from memory_core.services.events import event_build
from memory_core.text import content_hash


@dataclass
class MemoryDraft:
    """The fields of a memory to store; defaults are the record's own."""

    subject: Subject
    memory_type: str
    content: str
    authority: str
    source_type: str
    scope_kind: str = ScopeKind.GLOBAL
    scope_ref: str = ""
    memory_key: str = ""
    agent_id: object = None
    value: object = None
    session_id: str = ""
    task_id: str = ""
    environment: str = ""  # empty: every environment (memory_core.environments)
    source_conversation_id: str = ""
    source_message_id: str = ""
    source_tool: str = ""
    confidence: float = 1.0
    consent: str = "explicit"
    sensitivity: str = "personal"
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    created_at: datetime | None = None
    status: str = Status.ACTIVE
    # A vector computed beforehand (a batch embeds all its items in one model call).
    embedding: list[float] | None = None
    embedding_model: str = ""


# What a draft takes from an admission Candidate as it stands; authority, confidence, consent,
# sensitivity and validity are the writer's to decide (admission's decision, or an import's
# record).
_AS_WRITTEN = (
    "memory_type", "content", "source_type", "scope_kind", "scope_ref", "memory_key", "value",
    "session_id", "task_id", "environment", "source_conversation_id", "source_message_id",
    "source_tool",
)  # fmt: skip


def as_written(candidate) -> dict:
    """The fields of ``candidate`` (``memory_core.admission.Candidate``) a MemoryDraft keeps
    as the writer sent them."""
    return {name: getattr(candidate, name) for name in _AS_WRITTEN}


def build_memory(
    draft: MemoryDraft,
    *,
    version: int = 1,
    supersedes: Memory | None = None,
    policy_version: int | None = None,
) -> Memory:
    now = timezone.now()
    created = draft.created_at or now
    # In NFC, as ids are (``text.identifier``): the same text a person sees, but a macOS
    # client's NFD "ü" ("u" + U+0308) split the word in the full-text index and a query typed
    # in NFC never matched it (stop 60's audit of retrieval).
    content = unicodedata.normalize("NFC", draft.content)
    return Memory(
        tenant_id=draft.subject.tenant_id,
        subject=draft.subject,
        agent_id=draft.agent_id,
        memory_class=TYPE_CLASS[draft.memory_type],
        memory_type=draft.memory_type,
        memory_key=draft.memory_key,
        scope_kind=draft.scope_kind,
        scope_ref=draft.scope_ref,
        session_id=draft.session_id,
        task_id=draft.task_id,
        environment=draft.environment,
        content=content,
        value=draft.value,
        source_type=draft.source_type,
        source_conversation_id=draft.source_conversation_id,
        source_message_id=draft.source_message_id,
        source_tool=draft.source_tool,
        authority=draft.authority,
        confidence=draft.confidence,
        consent=draft.consent,
        sensitivity=draft.sensitivity,
        valid_from=draft.valid_from or created,
        valid_until=draft.valid_until,
        created_at=created,
        updated_at=created,
        status=draft.status,
        admitted=draft.status not in PROPOSED_STATUSES,  # a waiting write is not yet in use
        version=version,
        supersedes=supersedes,
        policy_version=policy_version,
        content_hash=content_hash(content),
        embedding=draft.embedding,
        embedding_model=draft.embedding_model if draft.embedding is not None else "",
    )


def embed_memories(memories: list[Memory]) -> None:
    """Fill ``embedding`` and ``embedding_model`` of unsaved rows, in one model batch.

    Rows that already carry a vector (computed beforehand) are left as they are.
    """
    memories = [memory for memory in memories if memory.embedding is None]
    if not memories:
        return
    embedder = get_embedder()
    vectors = embed_texts([memory.content for memory in memories], embedder=embedder)
    for memory, vector in zip(memories, vectors, strict=True):
        memory.embedding = vector
        memory.embedding_model = embedder.model_name


def subjects_ensure_locked(*, tenant_id, external_ids, keys) -> dict:
    """Return ``{external_id: Subject}`` of the tenant's subjects ``external_ids``, creating
    the missing ones; each one this transaction did not insert is read with its lock taken
    shared, as writes read their subjects (``locks.subjects_shared_locked``, given ``keys``:
    ``SubjectBeingDeleted`` for one whose deletion holds the lock past the wait, or is queued
    for a worker, for the subject or for a key of ``keys``).

    For the subjects a write or an import did not find as it read (and locked) its subjects.
    One another transaction inserts meanwhile (a subject token issued for the new user) is
    waited for by the insert and then read back: without its lock, a deletion of the subject
    requested now neither waited for the write nor read its rows, and completed while the
    memory the write committed after it stayed in use (stop 63's audit of races). One this
    transaction inserts is not locked: no deletion finds it before the commit, and an import
    of a file of new users takes no place in the server's lock table for them (docs/api.md).
    Called inside the caller's transaction, which holds the locks until it ends.

    Inserted in external id order, not the caller's: an insert of a subject another
    transaction has inserted waits for that transaction (the unique external id), so two
    batches naming the same new subjects in opposite orders each held one and waited for the
    other (deadlock detected, a 503).
    """
    names = sorted(external_ids)
    if not names:
        return {}
    built = [Subject(tenant_id=tenant_id, external_id=name, display_name=name) for name in names]
    # A subject that exists (committed meanwhile, or inserted by another transaction, whose
    # end the insert waited for) is skipped: its row holds an id other than the one built here.
    Subject.objects.bulk_create(built, ignore_conflicts=True)
    subjects = {subject.external_id: subject for subject in built}
    others = subjects_shared_locked(
        Subject.objects.filter(tenant_id=tenant_id, external_id__in=names).exclude(
            pk__in=[subject.pk for subject in built]
        ),
        keys=keys,
    )
    subjects.update((subject.external_id, subject) for subject in others)
    return subjects


@transaction.atomic
def memory_store_many(
    *,
    drafts: list[MemoryDraft],
    principal,
    policy_version: int | None = None,
    embed: bool = True,
) -> list[Memory]:
    """Store new chain heads (version 1) for ``drafts``, embedded in one batch."""
    memories = [build_memory(draft, policy_version=policy_version) for draft in drafts]
    if embed and memories:
        embed_memories(memories)
    memory_insert_many(memories=memories, principal=principal, policy_version=policy_version)
    return memories


@transaction.atomic
def memory_insert_many(
    *, memories: list[Memory], principal, policy_version: int | None = None
) -> None:
    """Insert ``memories`` (built by ``build_memory``, their vectors set) with their
    ``created`` events."""
    memory_insert_rows(memories)
    memory_created_events(memories=memories, principal=principal, policy_version=policy_version)


def memory_insert_rows(memories: list[Memory]) -> None:
    """Insert ``memories`` (built by ``build_memory``, their vectors set), without events:
    a batch inserts its rows a chunk at a time, then their events (``writes._store``)."""
    Memory.objects.bulk_create(memories)


def memory_created_events(
    *, memories: list[Memory], principal, policy_version: int | None = None
) -> None:
    """Record the ``created`` event of each of ``memories`` (inserted), in their order."""
    MemoryEvent.objects.bulk_create(
        [
            MemoryEvent(
                tenant_id=memory.tenant_id,
                memory_id=memory.id,
                action=MemoryEvent.Action.CREATED,
                actor_type=principal.actor_type,
                actor_id=principal.actor_id,
                policy_version=policy_version,
            )
            for memory in memories
        ]
    )


def memory_supersede(
    *,
    previous: Memory,
    draft: MemoryDraft,
    principal,
    reason_code: str = "correction",
    policy_version: int | None = None,
) -> Memory:
    """Write ``draft`` as the next version of ``previous``; keep ``previous`` as superseded."""
    return memory_supersede_many(
        supersessions=[(previous, draft)],
        principal=principal,
        reason_code=reason_code,
        policy_version=policy_version,
    )[0]


def memory_supersede_many(
    *,
    supersessions: list[tuple[Memory, MemoryDraft]],
    principal,
    reason_code: str = "correction",
    policy_version: int | None = None,
) -> list[Memory]:
    """Write each (previous, draft)'s draft as the next version of its previous; keep the
    previous ones as superseded. Return the new versions, in the same order.

    The chains are locked while they move (in id order, as everything locks memory rows), so
    two concurrent corrections cannot both succeed: the database's one-successor constraint
    would refuse the second in any case. A batch's moves take one statement each for the
    locks, the retired heads, the new rows and their events, however many there are (stop 51:
    one at a time they took about 8 queries each).
    """
    if not supersessions:
        return []
    with transaction.atomic():
        return _supersede(supersessions, principal, reason_code, policy_version)


def _supersede(supersessions, principal, reason_code, policy_version) -> list[Memory]:
    """``memory_supersede_many``'s work, in its transaction (none for an empty list)."""
    locked = {
        row.pk: row
        for row in Memory.objects.select_for_update()
        .filter(pk__in_array=[previous.pk for previous, _ in supersessions])
        .order_by("pk")
    }
    for previous, _ in supersessions:
        row = locked.get(previous.pk)
        if row is None or row.status != Status.ACTIVE:
            raise Conflict(
                f"Memory {previous.id} is {row.status if row else Status.DELETED}; only the "
                "active head of a chain can be superseded.",
                code="not_chain_head",
            )
    successors = [
        build_memory(
            draft,
            version=locked[previous.pk].version + 1,
            supersedes=locked[previous.pk],
            policy_version=policy_version,
        )
        for previous, draft in supersessions
    ]
    embed_memories(successors)
    now = timezone.now()
    Memory.objects.filter(pk__in_array=list(locked)).update(
        status=Status.SUPERSEDED, updated_at=now
    )
    memory_insert_rows(successors)
    events = []
    for successor in successors:
        previous = successor.supersedes
        previous.status, previous.updated_at = Status.SUPERSEDED, now
        events += [
            event_build(
                memory=previous,
                action=MemoryEvent.Action.SUPERSEDED,
                principal=principal,
                reason_code=reason_code,
                # The policy the correction ran under, not the one the old version was
                # written under.
                policy_version=successor.policy_version,
                details={"successor": str(successor.id)},
            ),
            event_build(
                memory=successor,
                action=MemoryEvent.Action.CORRECTED,
                principal=principal,
                reason_code=reason_code,
                details={"supersedes": str(previous.id)},
            ),
        ]
    MemoryEvent.objects.bulk_create(events)
    # A retrieval may cite a retired head in a conflict it commits after the caller's read of
    # the conflicts citing them: looked at again once this commits.
    tenant_id = next(iter(locked.values())).tenant_id
    conflicts_heal_on_commit(tenant_id=tenant_id, memory_ids=list(locked))
    return successors


@dataclass
class ReembedResult:
    model_name: str
    stale: int = 0  # rows found under another model (or with no vector), at the start
    reembedded: int = 0
    skipped: int = 0  # deleted (or their content changed) while their batch was embedded


def memories_stale_for_model(model_name: str):
    """Stored memories with content whose vector is missing or was made by another model."""
    return (
        Memory.objects.exclude(status=Status.DELETED)
        .exclude(content="")
        .exclude(embedding_model=model_name, embedding__isnull=False)
    )


def memories_reembed(*, batch_size: int = 256, progress=None) -> ReembedResult:
    """Re-embed every memory whose vector another model made (a model or precision change).

    Batches in primary-key order, one transaction each; each row goes through
    ``_store_vectors``. Run in platform mode (every tenant's rows). ``progress(done, total)``
    is called after each batch.
    """
    embedder = get_embedder()
    stale = memories_stale_for_model(embedder.model_name)
    result = ReembedResult(model_name=embedder.model_name, stale=stale.count())
    last_id = None
    while True:
        page = stale.order_by("pk")
        if last_id is not None:
            page = page.filter(pk__gt=last_id)
        rows = list(page.values_list("pk", "content", "content_hash")[:batch_size])
        if not rows:
            return result
        last_id = rows[-1][0]
        vectors = embed_texts([content for _, content, _ in rows], embedder=embedder)
        written = _store_vectors(
            [(pk, digest) for pk, _, digest in rows], vectors, embedder.model_name
        )
        result.reembedded += written
        result.skipped += len(rows) - written
        if progress is not None:
            progress(result.reembedded + result.skipped, result.stale)


def memory_reembed(memory_id) -> str:
    """Re-embed one memory with the configured model: "reembedded", "nothing" (no such
    stored memory, or no content) or "deleted" (deleted while it was embedded)."""
    row = (
        Memory.objects.filter(pk=memory_id)
        .exclude(status=Status.DELETED)
        .values_list("content", "content_hash")
        .first()
    )
    if row is None or not row[0]:
        return "nothing"
    embedder = get_embedder()
    vector = embed_texts([row[0]], embedder=embedder)[0]
    written = _store_vectors([(memory_id, row[1])], [vector], embedder.model_name)
    return "reembedded" if written else "deleted"


def _store_vectors(rows: list[tuple], vectors: list, model_name: str) -> int:
    """Write each (pk, content_hash) row's new vector in one transaction; return how many.

    A row is written only if it is still not deleted and still holds the content that was
    embedded (``content_hash``; a correction writes a new row, so only a deletion changes it):
    a deletion committed meanwhile wins.
    """
    written = 0
    with transaction.atomic():
        for (pk, digest), vector in zip(rows, vectors, strict=True):
            written += (
                Memory.objects.filter(pk=pk, content_hash=digest)
                .exclude(status=Status.DELETED)
                .update(embedding=vector, embedding_model=model_name)
            )
    return written


def memories_mark_expired(
    rows: list[tuple],
    *,
    reason_code: str,
    actor: tuple[str, str],
    now,
    details: dict | None = None,
    journaled: bool = False,
) -> list:
    """Expire the locked memory rows ``rows`` (``(pk, tenant_id, policy_version)``): status
    ``expired``, the open review items of those waiting for a reviewer resolved with
    ``reason_code``, and an ``expired`` event each (by ``actor``: its type and id, with
    ``details``). ``journaled``: no journal line is owed (``revocation_journaled_at`` set: a
    restored row holds its end, and the expiry sweep expires it again). Return the ids.

    The one way both the expiry sweep and a task's close expire memories, so that the two stay
    in step (stop 50's review found them written twice)."""
    ids = [pk for pk, _, _ in rows]
    marked = {"revocation_journaled_at": now} if journaled else {}
    Memory.objects.filter(pk__in=ids).update(status=Status.EXPIRED, updated_at=now, **marked)
    # The rows before their items, as an approval and a revoke take them.
    ReviewItem.objects.filter(
        memory_id__in=ids, kind=ReviewItem.Kind.SENSITIVE_WRITE, state=ReviewItem.State.OPEN
    ).update(state=ReviewItem.State.RESOLVED, resolution=reason_code, resolved_at=now)
    actor_type, actor_id = actor
    MemoryEvent.objects.bulk_create(
        [
            MemoryEvent(
                tenant_id=tenant_id,
                memory_id=pk,
                action=MemoryEvent.Action.EXPIRED,
                actor_type=actor_type,
                actor_id=actor_id,
                reason_code=reason_code,
                policy_version=policy_version,
                details=details or {},
                created_at=now,
            )
            for pk, tenant_id, policy_version in rows
        ]
    )
    return ids
