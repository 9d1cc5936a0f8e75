"""The registry of derived stores a deletion must reach, each with a purge and a verification.

Every store answers two questions for one operation:

- ``purge(ctx)``: remove what the store holds about the operation's memories. Idempotent: a
  second run finds nothing to do and changes nothing (a worker killed half-way re-runs it).
- ``verify(ctx)``: a query (or file scan) that proves there is no residue; it returns
  ``(ok, evidence)`` and the evidence is stored on the DeletionStep and shown to the user
  and to agents: counts, never a path (``OPERATOR_DETAIL`` goes to the step's last_error),
  and not the figures of a store every tenant shares (``Store.withheld``).

An operation completes only when every step's verification passed.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import json
import logging
import os
import re
import stat
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import connections, transaction
from django.db.models import F, Q
from django.utils import timezone

from memory_core import retrieval_cache
from memory_core.evaluation.dataset import case_memory_ids, dataset_entries
from memory_core.exports import (
    ExportPathRefused,
    export_delete,
    export_dir,
    export_file,
    export_remove_memories,
)
from memory_core.files import being_written
from memory_core.json_types import json_loads
from memory_core.locks import subject_deletion_lock, unknown_users_deletion_lock
from memory_core.models import (
    DeletionOperation,
    DeletionStep,
    Export,
    Memory,
    RetrievalTrace,
    Status,
    Subject,
    Tenant,
    Tombstone,
)
from memory_core.models.lookups import uuid_array
from memory_core.retrieval.traces import user_id_digest
from memory_core.rls import platform_scope, tenant_atomic
from memory_core.services.conflicts import conflicts_close_settled
from memory_core.text import content_hash, normalize_text

logger = logging.getLogger(__name__)

UUID_PATTERN = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
CODE_PATTERN = "^[a-z0-9_.:-]{1,64}$"
# The same test as _dirty() below, with the vector and full-text counts, in one statement.
ROW_STATS_SQL = """
    SELECT count(*),
           count(*) FILTER (WHERE status <> 'deleted' OR content <> '' OR value IS NOT NULL
                            OR embedding IS NOT NULL OR memory_key <> '' OR scope_ref <> ''
                            OR session_id <> '' OR task_id <> '' OR source_conversation_id <> ''
                            OR source_message_id <> '' OR source_tool <> ''
                            OR environment <> '' OR task_closed_sha256 <> ''),
           count(*) FILTER (WHERE embedding IS NOT NULL),
           count(*) FILTER (WHERE search_vector <> ''::tsvector)
    FROM memory_core_memory WHERE id = ANY(%s::uuid[])
"""
# The key of a verification's evidence that says what is wrong in the operator's terms (a
# folder's or a file's path): the runner moves it to the step's ``last_error`` and stores
# the rest, which API clients are answered, so that holds counts and no path.
OPERATOR_DETAIL = "operator_detail"
# The hash of empty content: it would match every empty string of a file.
EMPTY_HASH = content_hash("")
# The keys an event's details may keep after a deletion: ids, never content.
EVENT_ID_KEYS = [
    "operation",
    "successor",
    "supersedes",
    "winner",
    "copy_of",
    "review_item",
    "decision",
    "trace",
]
# ...and the admission's rule codes (an array of codes, never text the user wrote).
EVENT_CODE_KEYS = ["rule_codes"]
_UUID = re.compile(UUID_PATTERN)
_CODE = re.compile(CODE_PATTERN)


def event_details_left(details: dict) -> dict:
    """Return what the events step leaves of an event's ``details`` (``EventsStore``'s
    ``_ID_ONLY``, in Python): its ids and its rule codes. A deleted memory's events are
    answered so before that step has run (``selectors.memories.VisibleMemoryIds``)."""
    return {
        key: value
        for key, value in details.items()
        if (key in EVENT_ID_KEYS and isinstance(value, str) and _UUID.match(value))
        or (
            key in EVENT_CODE_KEYS
            and isinstance(value, list)
            and all(isinstance(code, str) and _CODE.match(code) for code in value)
        )
    }


@dataclass
class DeletionContext:
    """What a store needs to know about one operation."""

    operation: DeletionOperation
    memory_ids: list[uuid.UUID]
    subject_ids: list[uuid.UUID]
    id_strings: list[str] = field(default_factory=list)

    def __post_init__(self):
        self.id_strings = [str(memory_id) for memory_id in self.memory_ids]
        # The ids as one array literal, for raw statements (``%s::uuid[]``): cheaper to bind
        # than the list (memory_core.models.lookups).
        self.ids_array = uuid_array(self.memory_ids)
        self._row_stats: dict | None = None
        self._content_hashes: set[str] | None = None
        self._case_owners: CaseOwners | None = None
        self._purges: dict[str, dict] = {}

    def residue(self, *, content: bool = False) -> Residue:
        """Return the test for what names the memories in a file (and, with ``content``, what
        copies their content, by the ledger's content hashes, in a case that is not another
        tenant's: ``CaseOwners``)."""
        if not content:
            return Residue(self.memory_ids, set())
        return Residue(self.memory_ids, self.content_hashes(), self.case_owners())

    def case_owners(self) -> CaseOwners:
        """Return whose cases a copy of the content may be removed from (kept for the run:
        the purge and the verification must judge each case alike)."""
        if self._case_owners is None:
            self._case_owners = CaseOwners(self.operation.tenant_id)
        return self._case_owners

    def content_hashes(self) -> set[str]:
        """Return the content hashes of the operation's memories (the ledger keeps them)."""
        if self._content_hashes is None:
            self._content_hashes = set(
                Tombstone.objects.filter(memory_id__in_array=self.memory_ids)
                .exclude(content_hash__in=["", EMPTY_HASH])
                .values_list("content_hash", flat=True)
            )
        return self._content_hashes

    def purge_done(self, store: str, purged: dict) -> None:
        """Record what ``store``'s purge did in this run, for its verification."""
        self._purges[store] = purged

    def purges_undone(self, stores) -> None:
        """Forget what the purges of ``stores`` recorded in this run (their phase rolled back):
        ``last_purge`` reads the step's stored record again."""
        for store in stores:
            self._purges.pop(store, None)

    def last_purge(self, store: str) -> dict:
        """Return what ``store``'s purge did: in this run (``purge_done``) or, for a
        verification run on its own (``verify_all``: the benchmark's residue check, a probe),
        in the step's last run, as stored with its evidence; {} when no purge is recorded."""
        if store not in self._purges:
            evidence = (
                DeletionStep.objects.filter(operation=self.operation, store=store)
                .values_list("evidence", flat=True)
                .first()
            )
            self._purges[store] = (evidence or {}).get("purged") or {}
        return self._purges[store]

    def row_stats(self) -> dict:
        """Return what the operation's rows still hold (one query, kept until rows change)."""
        if self._row_stats is None:
            with connections["default"].cursor() as cursor:
                cursor.execute(ROW_STATS_SQL, [self.ids_array])
                rows, dirty, vectors, texts = cursor.fetchone()
            self._row_stats = {
                "rows": rows,
                "rows_with_content": dirty,
                "vectors": vectors,
                "non_empty_search_vectors": texts,
            }
        return self._row_stats

    def rows_changed(self) -> None:
        self._row_stats = None

    @property
    def whole_subject(self) -> bool:
        """Every subject in ``subject_ids`` goes whole (a subject's or a tenant's deletion)."""
        return self.operation.target in (
            DeletionOperation.Target.SUBJECT,
            DeletionOperation.Target.TENANT,
        )

    @property
    def whole_tenant(self) -> bool:
        """The tenant goes whole: also what belongs to no subject (traces of unknown users)."""
        return self.operation.target == DeletionOperation.Target.TENANT


class Store:
    """One derived store. Subclasses set ``name`` and implement purge and verify."""

    name = ""
    description = ""
    # Steps of one phase run in one transaction (runner.py): the database and cache steps
    # together, the file steps (exports, evaluation) after them.
    phase = "database"
    # The operation targets (DeletionOperation.Target) the store has a step in; None: all.
    targets: frozenset[str] | None = None
    # The keys of the step's evidence API clients are not answered (``selectors.step_evidence``)
    # and the admin and the stored step keep: a store every tenant shares leaves out the
    # figures that move with what other tenants' data held.
    withheld: frozenset[str] = frozenset()
    # The keys of the step's ``purged`` evidence that are the store's record for its
    # verification and its next purge, of what a committed purge made unfindable (ids of rows
    # whose owner it deleted): a run that fails to write the step's evidence afresh (its
    # phase rolled back, the store raised) keeps them from the step's last record
    # (``runner._run_phase``), where ``purged`` was written ``{}`` and the record lost (stop
    # 69's review). API clients are not answered them (``selectors.step_evidence``).
    recorded: frozenset[str] = frozenset()

    def applies(self) -> bool:
        """Return whether the store exists in this deployment (replicas may not)."""
        return True

    def purge(self, ctx: DeletionContext) -> dict:
        raise NotImplementedError

    def verify(self, ctx: DeletionContext) -> tuple[bool, dict]:
        raise NotImplementedError


# --- primary rows, embeddings, full text --------------------------------------------------

# What a deleted row may still hold: ids, type, class, version, chain link and content hash.
SCRUBBED = {
    "status": Status.DELETED,
    "content": "",
    "value": None,
    "embedding": None,
    "embedding_model": "",
    "memory_key": "",
    "scope_kind": "global",
    "scope_ref": "",
    "session_id": "",
    "task_id": "",
    # The writer's name for where it ran ("acme-corp:ana-laptop"), as free as a task id.
    "environment": "",
    "source_conversation_id": "",
    "source_message_id": "",
    "source_tool": "",
    # The close of a task that named the row replaced: its digest names the task too.
    "task_closed_at": None,
    "task_closed_sha256": "",
}


def _dirty() -> Q:
    return (
        ~Q(status=Status.DELETED)
        | ~Q(content="")
        | Q(value__isnull=False)
        | Q(embedding__isnull=False)
        | ~Q(memory_key="")
        | ~Q(scope_ref="")
        | ~Q(session_id="")
        | ~Q(task_id="")
        | ~Q(source_conversation_id="")
        | ~Q(source_message_id="")
        | ~Q(source_tool="")
        | ~Q(environment="")
        | ~Q(task_closed_sha256="")
    )


def scrub_memories(memory_ids) -> int:
    """Turn the rows into content-free tombstone rows; return how many changed. Idempotent."""
    return (
        Memory.objects.filter(pk__in_array=memory_ids)
        .filter(_dirty())
        .update(**SCRUBBED, updated_at=timezone.now())
    )


class PrimaryStore(Store):
    name = "primary"
    description = (
        "memory rows: kept as content-free tombstone rows (status deleted; content, value, "
        "key, scope, session, task, environment and source cleared) so supersession links "
        "and audit ids stay valid"
    )

    def purge(self, ctx):
        scrubbed = 0
        if ctx.row_stats()["rows_with_content"]:
            scrubbed = scrub_memories(ctx.memory_ids)
            ctx.rows_changed()
        return {"scrubbed": scrubbed}

    def verify(self, ctx):
        stats = ctx.row_stats()
        return stats["rows_with_content"] == 0, {
            "rows": stats["rows"],
            "rows_with_content": stats["rows_with_content"],
            "kept_as": "content-free tombstone rows",
        }


class EventsStore(Store):
    """The audit trail and the review items that mention the operation's memories.

    Events keep ids and reason codes only: the events of the memories, those of the rejected
    writes about them (a correction of one, a write on its key while it was the head: their
    decision's ``target_memory_id``) and, for a whole subject, those of every write of the
    subject that admission rejected (no memory row: keyed by the AdmissionDecision's id;
    their details may hold the writer's free-text reason).
    Review items:

    - an item about a deleted memory (its own ``memory_id``, e.g. the sensitive write being
      deleted) loses its free-text reason and, if open, is closed (resolution ``deleted``);
    - an item that only cites a deleted memory in ``candidate_ids`` (a pending write citing
      the head it would supersede, a conflict between several chains) loses the deleted ids
      and its reason (a reviewer's words may quote the deleted memory) but keeps its state:
      a pending write stays reviewable (approved, it finds the key's current head again);
    - an open conflict left with fewer than two candidates has nothing left to resolve and
      is closed (resolution ``deleted``);
    - labels go with what they name: the key, and a conflict's place (its candidates' scope,
      "user:dana", and environment), of an item of a deleted memory or subject, and of a
      conflict all of whose candidates are deleted.

    Verification: no event of the memories (or, for a subject, of its rejected writes) has
    free text, no item of a deleted memory is open or has a reason or a label, no item of a
    deleted subject has a reason or a label, and no item cites a deleted id in
    ``candidate_ids``.
    """

    name = "events"
    description = (
        "the audit trail: events keep ids and reason codes only (details reduced to id keys), "
        "also those of rejected corrections of the memory; for a subject those of all its "
        "rejected writes; review items of the memory "
        "lose their free-text reason and are closed; other items stop citing it"
    )

    # An event is clean when every key of its details is an id key holding a UUID string.
    _ID_ONLY = (
        "((d.key = ANY(%(keys)s) AND jsonb_typeof(d.value) = 'string' "
        "AND (d.value #>> '{}') ~ %(pattern)s) "
        "OR (d.key = ANY(%(code_keys)s) AND jsonb_typeof(d.value) = 'array' "
        "AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(d.value) AS c(v) "
        "WHERE jsonb_typeof(c.v) <> 'string' OR (c.v #>> '{}') !~ %(code_pattern)s)))"
    )
    # A write admission rejected has no memory row: its event is keyed by the decision's id.
    # A whole subject's deletion reaches those of the subject's decisions (none otherwise).
    # Those made before the request (``requested``, None for every one): a write refused
    # since, while the run went on, is not the operation's, as the subject's review items made
    # since are not (its event failed the step's check).
    _DECISIONS = (
        "SELECT a.id FROM memory_core_admissiondecision a"
        " WHERE (a.subject_id = ANY(%(subjects)s::uuid[])"
        " AND (%(requested)s::timestamptz IS NULL OR a.created_at <= %(requested)s))"
        " OR a.tenant_id = %(tenant)s::uuid"
    )
    # ...and a rejected write's decision names the memory it was about (the one a correction
    # corrected, or the key's head it would have superseded): any deletion of that memory
    # reaches the write's event too (partial index admission_target, migration 0034).
    _ABOUT = (
        "memory_id IN (SELECT a.id FROM memory_core_admissiondecision a"
        " WHERE a.target_memory_id = ANY(%(ids)s::uuid[]))"
    )
    # The events are locked in id order first (the CTE's sort, under its FOR UPDATE), then
    # updated: on its own the UPDATE took them in its plan's order (the table's, or a
    # synchronised scan's, which starts where another scan of the table is). Two deletions of
    # one subject reach the same events (a memory's reaches the rejected writes about it, the
    # subject's every rejected write), and two orders could deadlock, rolling a phase back
    # (stop 68's audit of deletion's tasks). ``tests/deletion/test_purge_lock_order_stop69.py``.
    _PURGE_SQL = (
        "WITH locked AS MATERIALIZED ("  # noqa: S608 (constants)
        " SELECT id FROM memory_core_memoryevent"
        " WHERE (memory_id = ANY(%(ids)s::uuid[]) OR memory_id IN (" + _DECISIONS + ")"
        " OR " + _ABOUT + ") "
        " AND EXISTS ("
        "  SELECT 1 FROM jsonb_each(details) AS d(key, value) WHERE NOT (" + _ID_ONLY + "))"
        " ORDER BY id FOR UPDATE OF memory_core_memoryevent) "
        "UPDATE memory_core_memoryevent e SET details = COALESCE(("
        " SELECT jsonb_object_agg(d.key, d.value) FROM jsonb_each(e.details) AS d(key, value)"
        " WHERE " + _ID_ONLY + "), '{}'::jsonb) "
        "FROM locked WHERE e.id = locked.id"
    )
    # Closed: open items of a deleted memory, and open conflicts left with < 2 candidates.
    _CLOSES = (
        "r.state = 'open' AND (r.memory_id = ANY(%(ids)s::uuid[]) OR (r.kind = 'conflict' "
        "AND cardinality(ARRAY(SELECT c FROM unnest(r.candidate_ids) AS c "
        "WHERE c <> ALL(%(ids)s::uuid[]))) < 2))"
    )
    # An item names what it is about by its key and, for a conflict, the place (scope and
    # environment) of its candidates.
    _LABELLED = (
        "r.memory_key <> '' OR r.scope_kind <> '' OR r.scope_ref <> '' OR r.environment <> ''"
    )
    # Items that lose their labels: those of a deleted memory or subject, and conflicts every
    # candidate of which is deleted (a deletion of a whole key leaves no "health.notes").
    # A subject's items made after the request are not the operation's: a user who goes on
    # writing makes new conflicts, which keep their key (stripped, the next write on the key
    # opened a second item, and a resolution of the first took no key lock).
    _OF_SUBJECT = "(r.subject_id = ANY(%(subjects)s::uuid[]) AND r.created_at <= %(requested)s)"
    # So too a conflict made before the request that the user's new memories joined since (a
    # write or a retrieval at its place): it stays open, citing live rows only, and keeps the
    # key they hold (stripped, it read as a keyless conflict, and the next conflict on the key
    # opened a second item for the same rows: stop 54's audit of the reviewer's side).
    _STAYS_OPEN = "(r.kind = 'conflict' AND r.state = 'open' AND NOT (" + _CLOSES + "))"
    _UNLABEL = (
        "r.memory_id = ANY(%(ids)s::uuid[]) OR ("
        + _OF_SUBJECT
        + " AND NOT "
        + _STAYS_OPEN
        + ") OR (r.kind = 'conflict' AND r.candidate_ids <@ %(ids)s::uuid[])"
    )
    # The items the purge changes: those citing a deleted id, and those of a deleted memory
    # (or of a deleted subject) with a reason, a label or still open.
    _REVIEW_WHERE = (
        "r.candidate_ids && %(ids)s::uuid[] OR ((r.memory_id = ANY(%(ids)s::uuid[])"
        " OR " + _OF_SUBJECT + ")"
        " AND (r.reason <> '' OR r.state = 'open' OR " + _LABELLED + "))"
    )
    # Locked in id order before the update, which takes them in the table's order: an
    # approval holds its item, then locks the key's open conflict (both in id order too,
    # ``reviews._lock_item_and_conflict``); the update holding the conflict and waiting for
    # the item deadlocked with it (the phase rolled back, the operation left partial).
    _REVIEW_LOCK_SQL = (
        "SELECT r.id FROM memory_core_reviewitem r WHERE "  # noqa: S608 (constants)
        + _REVIEW_WHERE
        + " ORDER BY r.id FOR UPDATE"
    )
    _REVIEW_PURGE_SQL = (
        "UPDATE memory_core_reviewitem r SET"  # noqa: S608 (constants)
        " candidate_ids = ARRAY(SELECT c FROM unnest(r.candidate_ids) WITH ORDINALITY AS u(c, n)"
        "  WHERE c <> ALL(%(ids)s::uuid[]) ORDER BY n),"
        " reason = '',"
        # The key names what the deleted write was about ("health.notes"), as the memory's
        # own memory_key did (the primary step clears that one), and a conflict's place its
        # scope ("user:dana") and environment, as the memory's own did. A whole subject (or
        # tenant) loses every item's labels: a conflict item has no memory_id, only labels.
        " memory_key = CASE WHEN " + _UNLABEL + " THEN '' ELSE r.memory_key END,"
        " scope_kind = CASE WHEN " + _UNLABEL + " THEN '' ELSE r.scope_kind END,"
        " scope_ref = CASE WHEN " + _UNLABEL + " THEN '' ELSE r.scope_ref END,"
        " environment = CASE WHEN " + _UNLABEL + " THEN '' ELSE r.environment END,"
        " resolution = CASE WHEN " + _CLOSES + " THEN 'deleted' ELSE r.resolution END,"
        " resolved_at = CASE WHEN " + _CLOSES + " THEN %(now)s ELSE r.resolved_at END,"
        " state = CASE WHEN " + _CLOSES + " THEN 'resolved' ELSE r.state END "
        "WHERE " + _REVIEW_WHERE
    )
    # After the purge: a conflict still citing two rows, none deleted (``_STAYS_OPEN``'s, which
    # a reviewer may have resolved since, with a reason).
    _LIVE_CONFLICT = "(r.kind = 'conflict' AND cardinality(r.candidate_ids) > 1)"
    _VERIFY_SQL = (
        "SELECT count(*), count(*) FILTER (WHERE EXISTS ("  # noqa: S608 (constants)
        " SELECT 1 FROM jsonb_each(details) AS d(key, value) WHERE NOT (" + _ID_ONLY + "))), "
        " count(*) FILTER (WHERE memory_id <> ALL(%(ids)s::uuid[])), "
        " (SELECT count(*) FROM memory_core_reviewitem r WHERE r.memory_id = ANY(%(ids)s::uuid[])),"
        " (SELECT count(*) FROM memory_core_reviewitem r WHERE r.memory_id = ANY(%(ids)s::uuid[])"
        "  AND (r.reason <> '' OR r.state = 'open' OR " + _LABELLED + ")), "
        " (SELECT count(*) FROM memory_core_reviewitem r WHERE r.candidate_ids && %(ids)s::uuid[]),"
        " (SELECT count(*) FROM memory_core_reviewitem r"
        "  WHERE "
        + _OF_SUBJECT
        + " AND NOT "
        + _LIVE_CONFLICT
        + "  AND (r.reason <> '' OR "
        + _LABELLED
        + ")) "
        "FROM memory_core_memoryevent WHERE memory_id = ANY(%(ids)s::uuid[])"
        " OR memory_id IN (" + _DECISIONS + ") OR " + _ABOUT
    )

    # What a whole subject's operation would still find to scrub here once its memories are
    # all deleted: an event of a rejected write with more than ids and codes (the writer's
    # reason), or a review item of the subject with a reason or a label.
    _SUBJECT_LEFT_SQL = (
        "SELECT EXISTS (SELECT 1 FROM memory_core_memoryevent"  # noqa: S608 (constants)
        " WHERE memory_id IN (" + _DECISIONS + ") AND EXISTS ("
        "  SELECT 1 FROM jsonb_each(details) AS d(key, value) WHERE NOT (" + _ID_ONLY + ")))"
        " OR EXISTS (SELECT 1 FROM memory_core_reviewitem r"
        "  WHERE r.subject_id = ANY(%(subjects)s::uuid[])"
        "  AND (r.reason <> '' OR " + _LABELLED + "))"
    )

    @classmethod
    def subject_has_content(cls, subject) -> bool:
        """Whether a whole-subject operation of ``subject`` would scrub something here that
        is not a memory's: what a rejected write or a review of it left since the last one."""
        params = {
            "keys": EVENT_ID_KEYS,
            "pattern": UUID_PATTERN,
            "code_keys": EVENT_CODE_KEYS,
            "code_pattern": CODE_PATTERN,
            "subjects": [str(subject.id)],
            "tenant": None,
            "requested": None,
        }
        with connections["default"].cursor() as cursor:
            cursor.execute(cls._SUBJECT_LEFT_SQL, params)
            return cursor.fetchone()[0]

    def _params(self, ctx):
        return {
            "keys": EVENT_ID_KEYS,
            "pattern": UUID_PATTERN,
            "code_keys": EVENT_CODE_KEYS,
            "code_pattern": CODE_PATTERN,
            "ids": ctx.ids_array,
            "subjects": [str(s) for s in ctx.subject_ids] if ctx.whole_subject else [],
            # A whole tenant: its decisions that name no subject too.
            "tenant": str(ctx.operation.tenant_id) if ctx.whole_tenant else None,
            # On the database's clock, as the decisions' and items' ``created_at`` (stop 65).
            "requested": ctx.operation.requested_at,
        }

    def purge(self, ctx):
        params = self._params(ctx)
        with connections["default"].cursor() as cursor:
            cursor.execute(self._PURGE_SQL, params)
            events = cursor.rowcount
            cursor.execute(self._REVIEW_LOCK_SQL, params)
            locked = [row[0] for row in cursor.fetchall()]
            now = timezone.now()
            cursor.execute(self._REVIEW_PURGE_SQL, {**params, "now": now})
            reviews = cursor.rowcount
        # A conflict left with candidates of which fewer than two are in use (one revoked
        # before, or past its end) has nothing left to choose either, as a revoke closes it:
        # counting the ids left, the purge kept it open, with one memory to "choose" (stop 55's
        # audit of conflicts).
        conflicts_close_settled(
            tenant_id=ctx.operation.tenant_id, item_ids=locked, reason_code="deleted", now=now
        )
        return {"events_scrubbed": events, "review_items_scrubbed": reviews}

    def verify(self, ctx):
        with connections["default"].cursor() as cursor:
            cursor.execute(self._VERIFY_SQL, self._params(ctx))
            events, dirty, rejected, reviews, open_or_text, citing, subjects_text = (
                cursor.fetchone()
            )
        ok = dirty == 0 and open_or_text == 0 and citing == 0 and subjects_text == 0
        return ok, {
            "events": events,
            "events_with_content": dirty,
            "rejected_write_events": rejected,
            "review_items": reviews,
            "review_items_with_content_or_open": open_or_text,
            "review_items_citing_in_candidates": citing,
            "subjects_review_items_with_key_or_text": subjects_text,
        }


class EmbeddingsStore(Store):
    name = "embeddings"
    description = "the 384-d vectors (in the row only: the table has no vector index)"

    def purge(self, ctx):
        cleared = 0
        if ctx.row_stats()["vectors"]:
            cleared = Memory.objects.filter(
                pk__in_array=ctx.memory_ids, embedding__isnull=False
            ).update(embedding=None, embedding_model="")
            ctx.rows_changed()
        return {"vectors_cleared": cleared}

    def verify(self, ctx):
        vectors = ctx.row_stats()["vectors"]
        # The vector lives only in the row: the table has no vector index to hold a copy
        # (migration 0007), and the old row version is vacuumed away.
        return vectors == 0, {"vectors": vectors}


class FullTextStore(Store):
    name = "full_text"
    description = "the generated search_vector (follows content, which is cleared)"

    def purge(self, ctx):
        cleared = 0
        if ctx.row_stats()["non_empty_search_vectors"]:
            cleared = (
                Memory.objects.filter(pk__in_array=ctx.memory_ids)
                .exclude(content="")
                .update(content="")
            )
            ctx.rows_changed()
        return {"contents_cleared": cleared}

    def verify(self, ctx):
        texts = ctx.row_stats()["non_empty_search_vectors"]
        return texts == 0, {"non_empty_search_vectors": texts}


# --- caches -------------------------------------------------------------------------------


class _CacheStore(Store):
    """A cache of per-subject entries (``memory_core.retrieval_cache``): the subjects'
    generations are bumped, or for a tenant's deletion the tenant's, once (a bump a subject
    took ~45 s a store for a tenant of 66,000 subjects, and would have passed the task's time
    limit past ~200,000; stop 48's audit).

    The verification checks that the generations the purge wrote (kept in its ``purged``
    evidence under ``generations``, by subject id or ``TENANT``), or later ones, are in place:
    what the purge did, in the cache's own values. It compared them with the operation's
    ``requested_at`` until stop 63: the worker's clock against the web host's, and a worker
    a second behind left both cache steps failed, retried until its clock passed the
    request's moment (dead-lettered after 8 runs with minutes of skew; stop 63's audit of
    failure behaviour).
    """

    namespace = ""
    TENANT = "tenant"  # the key of a tenant's generation among ``generations``

    def purge(self, ctx):
        if ctx.whole_tenant:
            evidence = retrieval_cache.tenant_invalidate(
                tenant_id=ctx.operation.tenant_id, namespace=self.namespace
            )
            purged = {"tenant": True, "generations": {self.TENANT: evidence["generation"]}}
        else:
            generations = {}
            for subject_id in ctx.subject_ids:
                evidence = retrieval_cache.subject_invalidate(
                    tenant_id=ctx.operation.tenant_id,
                    subject_id=subject_id,
                    namespace=self.namespace,
                )
                generations[str(subject_id)] = evidence["generation"]
            purged = {"subjects": len(generations), "generations": generations}
        ctx.purge_done(self.name, purged)
        return purged

    def verify(self, ctx):
        # No generation recorded (no purge of this step yet): not verified.
        written = ctx.last_purge(self.name).get("generations") or {}
        if ctx.whole_tenant:
            done = self.TENANT in written and retrieval_cache.tenant_invalidated(
                tenant_id=ctx.operation.tenant_id,
                generation=written[self.TENANT],
                namespace=self.namespace,
            )
            return done, {
                "namespace": self.namespace,
                "tenant_invalidated_after_request": done,
                "reads_check_tombstones": True,
            }
        stale = [
            str(subject_id)
            for subject_id in ctx.subject_ids
            if str(subject_id) not in written
            or not retrieval_cache.subject_invalidated(
                tenant_id=ctx.operation.tenant_id,
                subject_id=subject_id,
                generation=written[str(subject_id)],
                namespace=self.namespace,
            )
        ]
        return not stale, {
            "namespace": self.namespace,
            "subjects": len(ctx.subject_ids),
            "invalidated_after_request": len(ctx.subject_ids) - len(stale),
            "reads_check_tombstones": True,
        }


class RetrievalCacheStore(_CacheStore):
    # Nothing writes the retrieval cache yet (only bench_deletion seeds it): bumped anyway,
    # so a cache added later is covered from its first entry (memory_core/retrieval_cache.py).
    name = "retrieval_cache"
    namespace = "retrieval"
    description = "cached retrieval packages: the subject's cache generation is bumped"


class SummariesStore(_CacheStore):
    name = "summaries"
    namespace = "summary"
    description = (
        "cached per-subject summaries (memledger stores no model-written summaries; the only "
        "summaries are cached digests in the 'summary' cache namespace): generation bumped"
    )


# --- exports ------------------------------------------------------------------------------


def _export_cites(path: Path, residue: Residue) -> bool:
    """Whether the export file ``path`` still holds a deleted memory: its record, a record
    naming it as the version it supersedes, or a copy of its content. A kept memory's event
    may name it (a reason's words), as the event in the database does."""
    try:
        document = json_loads(path.read_bytes().decode())
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return residue.in_file(path)
    records = document.get("memories") if isinstance(document, dict) else None
    named = {
        str(record.get(name)).lower()
        for record in (records if isinstance(records, list) else [])
        if isinstance(record, dict)
        for name in ("id", "supersedes")
        if record.get(name)
    }
    return bool(named & residue.form_set) or residue.copies(document)


def _made_before(ctx):
    """When a whole subject's deletion began: what the subject's derived stores held then is
    the deletion's; what was made since is not (the traces and exports steps).

    Both sides on the database's clock (``memory_core.clock``): the run's start and a row's
    ``created_at``. Until stop 65 the start was the worker's clock and the row's the web
    host's, and on a worker seconds behind a trace or an export made just before "delete
    everything" read as made during the run and was kept (stop 64's audit of deletion)."""
    return ctx.operation.started_at or ctx.operation.requested_at


class ExportsStore(Store):
    # A phase, and so a transaction, of its own: a whole subject's purge holds the subject's
    # lock until it commits (``purge``), and the evaluation step's scan need not hold it.
    phase = "exports"
    name = "exports"
    description = "subjects' JSON exports: rewritten without the memory (removed for a subject)"

    def _citing(self, ctx):
        exports = Export.objects.filter(tenant_id=ctx.operation.tenant_id)
        if ctx.whole_tenant:
            return exports
        query = Q(memory_ids__overlap_array=ctx.memory_ids)
        if ctx.whole_subject:
            query |= Q(subject_id__in_array=ctx.subject_ids, created_at__lte=_made_before(ctx))
        return exports.filter(query)

    def _removed_whole(self, ctx, export: Export) -> bool:
        """Whether the deletion removes ``export`` whole: a tenant's takes every export, a
        subject's those made before its first run, as the traces step bounds its own. One made
        since holds what the subject was given after the deletion (a replay after a restore
        runs the steps again, and removed it: stop 54 left it open); it is rewritten without
        the deletion's memories if it names any, as a memory's deletion rewrites an export."""
        if ctx.whole_tenant:
            return True
        return (
            ctx.whole_subject
            and export.subject_id in ctx.subject_ids
            and export.created_at <= _made_before(ctx)
        )

    def _described(self, ctx) -> set[Path]:
        """The files of the subjects' exports the deletion keeps (rewritten by their rows):
        every one for a memory's or a key's, those made since a whole subject's began."""
        if ctx.whole_tenant:
            return set()
        kept = Export.objects.filter(
            tenant_id=ctx.operation.tenant_id, subject_id__in_array=ctx.subject_ids
        )
        if ctx.whole_subject:
            kept = kept.filter(created_at__gt=_made_before(ctx))
        described = set()
        for relative in kept.values_list("path", flat=True):
            with contextlib.suppress(ExportPathRefused):  # the verification names its row
                described.add(export_file(relative))
        return described

    def _refused(self, ctx) -> list:
        """The ids of the citing exports whose path names no file inside the export folder
        (``export_file``): nothing of theirs is read or removed, and the step fails."""
        refused = []
        for export_id, relative in self._citing(ctx).values_list("id", "path"):
            try:
                export_file(relative)
            except ExportPathRefused:
                refused.append(str(export_id))
        return refused

    def _files(self, ctx) -> list[Path]:
        tenant_folder = export_dir() / str(ctx.operation.tenant_id)
        if ctx.whole_tenant:
            # Every file of the tenant, whatever its name (an `export.json.bak` kept a memory:
            # stop 55's audit of a tenant's deletion), a subject's folder that no subject row
            # names included.
            return [p for p in tenant_folder.rglob("*") if p.is_file()]
        files = []
        for subject_id in ctx.subject_ids:
            folder = tenant_folder / str(subject_id)
            if folder.is_dir():
                # Every file, as a tenant's: an `export.json.bak` kept the memory (stop 55's
                # review of the tenant's fix).
                files.extend(p for p in folder.iterdir() if p.is_file())
        return files

    def purge(self, ctx):
        rewritten = removed = 0
        if not ctx.whole_tenant:
            # An export of the subject being written (it holds the subject's lock shared until
            # it commits) is waited for: its files were unlinked under it, between its write
            # and its row (an Export naming no file) or while it wrote (its rename failed),
            # and the person's export page answered 500 (stop 50's audit); a memory's
            # deletion rewrote it, and the export saved the rewrite over its own (stop 55's
            # review). Once committed, its row is found below, and a new file left in the
            # folder is a dead process's. A tenant's deletion closed the tenant to new rows.
            for subject_id in sorted(map(str, ctx.subject_ids)):
                subject_deletion_lock(subject_id)
        # Row locks, in id order, serialize concurrent rewrites of one export: a second
        # operation reads the file only after the first one's rewrite committed, so neither
        # puts back what the other removed (a lost update seen with two worker processes).
        for export in self._citing(ctx).select_for_update().order_by("id"):
            try:
                if self._removed_whole(ctx, export):
                    export_delete(export=export)
                    removed += 1
                elif export_remove_memories(export=export, memory_ids=ctx.id_strings):
                    rewritten += 1
            except ExportPathRefused as error:
                # A row naming a file outside the export folder (restored or edited): neither
                # that file nor the row is touched, and the verification fails naming it
                # (until stop 69 the file was unlinked or rewritten wherever it was).
                logger.error("deletion exports: export %s: %s", export.id, error)
                continue
            except (OSError, ValueError):
                # Its file is not UTF-8 text (an operator gzipped it in place) or not JSON: it
                # stopped the step here, the other exports never scrubbed and the error naming
                # no file (stop 57's audit of deletion). Left to the files below, as one no row
                # describes is: text is scrubbed as text (the row follows it at the next run),
                # and a file that is not UTF-8 text fails the verification, which names it.
                continue
        # Files no row describes (a crash between the write and the row): scrub them too. A
        # file a row describes was rewritten by its records above: the evaluation files' rule
        # removed a kept memory's record too when an event's reason named a deleted id (an
        # agent's "replaced by memory <id>", as the event in the database keeps it: stop 55's
        # audit of deletion). Only a copy of the content left in it takes that rule.
        described = self._described(ctx)
        residue = ctx.residue()
        for path in sorted(self._files(ctx)):
            if ctx.whole_tenant and _still_written(path):
                # An export of the tenant being written (a tenant's deletion takes no subject's
                # lock): unlinked under it, its rename failed and its page answered 500 (stop
                # 53's audit of exports). Left to the verification, which fails while the file
                # is there, and to the next run, which removes what it became.
                continue
            if _links_outside(path):
                # A link out of the export folder: rewritten, the file it names would be
                # replaced wherever it is (``replacing`` follows links). Left, with the row
                # naming it, for an operator: the verification names both.
                continue
            try:
                if path in described:
                    if _export_cites(path, residue):
                        lock_file(path)
                        rewritten += _rewrite_file(path, residue)
                elif ctx.whole_subject:
                    path.unlink(missing_ok=True)
                    removed += 1
                elif residue.in_file(path):
                    lock_file(path)
                    rewritten += _rewrite_file(path, residue)
            except (OSError, UnicodeDecodeError):
                # Not readable as UTF-8 text (a gzipped copy, say): the others are scrubbed,
                # and the verification names it (it stopped the step at that file, the error
                # naming none: stop 55's review).
                continue
        return {"rewritten": rewritten, "removed": removed}

    def verify(self, ctx):
        rows = self._citing(ctx).count()
        files = self._files(ctx)
        residue = ctx.residue()
        described = self._described(ctx)
        citing, unreadable = [], []
        refused = self._refused(ctx)
        outside = [str(path) for path in files if _links_outside(path)]
        for path in files:
            if str(path) in outside:
                continue
            try:
                if (
                    _export_cites(path, residue)
                    if path in described
                    else ctx.whole_subject or residue.in_file(path)
                ):
                    citing.append(path)
            except (OSError, UnicodeDecodeError):
                unreadable.append(str(path))
        evidence = {
            "rows_citing": rows,
            "files_scanned": len(files),
            "files_citing": len(citing),
            "files_unreadable": len(unreadable),
        }
        if unreadable:
            # Counts only in the evidence answered to clients; the paths to ``last_error``.
            evidence["problem"] = (
                f"{len(unreadable)} file(s) in the export folders cannot be read as UTF-8 "
                "text, so nothing says they do not hold the memory: an operator must deal "
                "with them, then retry"
            )
            evidence[OPERATOR_DETAIL] = (
                f"the export folders hold {', '.join(map(repr, unreadable[:5]))}, which the "
                "worker cannot read as UTF-8 text: remove them (or make them readable), then "
                "retry"
            )
        if refused or outside:
            # Never read, rewritten or removed (``export_file``): a row restored or edited to
            # name /etc/passwd or ../x, or a link out of the folder (stop 69).
            evidence["rows_outside"], evidence["files_outside"] = len(refused), len(outside)
            problem = (
                f"{len(refused)} export row(s) and {len(outside)} file(s) of the export "
                "folders name a file outside them (an absolute path, '..' or a link), which "
                "the step neither reads nor removes: an operator must deal with them, then retry"
            )
            detail = (
                f"the exports {', '.join(refused[:5]) or 'none'} and the links "
                f"{', '.join(map(repr, outside[:5])) or 'none'} name files outside "
                "MEMLEDGER_EXPORT_DIR: correct the rows' paths or remove them (and the links), "
                "then retry"
            )
            for key, text in (("problem", problem), (OPERATOR_DETAIL, detail)):
                evidence[key] = f"{evidence[key]}; {text}" if key in evidence else text
        ok = rows == 0 and not citing and not unreadable and not refused and not outside
        return ok, evidence


# --- traces and evaluation data -----------------------------------------------------------


# The traces citing the memories are locked in id order first (the CTE's sort, under its FOR
# UPDATE), then updated: on its own the UPDATE took them in its plan's order (the table's, or
# a synchronised scan's, which starts where another scan of the table is), and two deletions
# whose memories one trace cites (two of one subject's, say) could deadlock, rolling a phase
# back (stop 68's audit of deletion's tasks). Every id a trace names is in its ``cited_ids``
# (migration 0055's trigger), so the GIN alone finds them.
_TRACES_SCRUB_SQL = """
WITH locked AS MATERIALIZED (
    SELECT id FROM memory_core_retrievaltrace
    WHERE tenant_id = %(tenant)s AND cited_ids && %(ids)s::uuid[]
    ORDER BY id FOR UPDATE
)
UPDATE memory_core_retrievaltrace AS t SET
    -- The counts stay the retrieval's; deleted_since says how many of its memories went.
    -- The prompt's tokens go (null, in the document too): with the package's other items,
    -- which the agent still reads, they told the deleted memory's length to a token, the
    -- figure ``traces._as_the_agent_sees_it`` nulls for a memory it lost sight of (stop 62's
    -- audit of traces). Nulled in the statement that removes the id, so no trace that stops
    -- citing the memory keeps the figure that counted it. So are the selected items' scores
    -- and redundancy penalties (``memory_core_trace_unscored``, migration 0056), measured
    -- against the items ranked above, the deleted memory perhaps among them: the API stopped
    -- answering them (``traces._unscored``, stop 68), the stored row, which the Django admin
    -- shows, kept them until stop 69's review.
    stages = memory_core_trace_unscored(memory_core_trace_without(t.stages, %(gone)s::text[]))
        || jsonb_build_object(
        'deleted_since', COALESCE((t.stages->>'deleted_since')::int, 0)
                         + cardinality(ARRAY(SELECT unnest(t.cited_ids)
                                             INTERSECT SELECT unnest(%(ids)s::uuid[]))))
        || CASE WHEN jsonb_typeof(t.stages->'tokens') = 'object' THEN jsonb_build_object(
               'tokens', (t.stages->'tokens') || jsonb_build_object('prompt_tokens', NULL))
           ELSE '{}'::jsonb END,
    prompt_tokens = NULL,
    usage = memory_core_usage_without(t.usage, %(gone)s::text[]),
    cited_ids = ARRAY(SELECT i FROM unnest(t.cited_ids) WITH ORDINALITY AS a(i, n)
                      WHERE i <> ALL(%(ids)s::uuid[]) ORDER BY n),
    selected_ids = ARRAY(SELECT i FROM unnest(t.selected_ids) WITH ORDINALITY AS a(i, n)
                         WHERE i <> ALL(%(ids)s::uuid[]) ORDER BY n),
    used_ids = ARRAY(SELECT i FROM unnest(t.used_ids) WITH ORDINALITY AS a(i, n)
                     WHERE i <> ALL(%(ids)s::uuid[]) ORDER BY n)
FROM locked WHERE t.id = locked.id
RETURNING t.id
"""

# The text of the traces a scrub touched that still cite a memory, a batch at a time: what a
# trace holds beyond the lists the scrub knows, in which it may still name a deleted id.
_TRACES_TEXT_SQL = """
SELECT id, stages::text || usage::text FROM memory_core_retrievaltrace
WHERE id = ANY(%(touched)s::uuid[]) AND cardinality(cited_ids) > 0
"""
# Traces read at once by ``_traces_naming`` (a trace's text is a few kB).
TRACES_READ_AT_ONCE = 1_000

_TRACES_LEFT_SQL = """
DELETE FROM memory_core_retrievaltrace
WHERE id = ANY(%(touched)s::uuid[])
  AND (cardinality(cited_ids) = 0 OR id = ANY(%(naming)s::uuid[]))
"""


def _links_outside(path: Path) -> bool:
    """Whether ``path``, a file found in the export folders, is reached through a link that
    leads out of them."""
    try:
        return not path.resolve().is_relative_to(export_dir().resolve())
    except (OSError, RuntimeError):
        return True


def _still_written(path: Path) -> bool:
    """Whether ``path`` is a new file ``files.replacing`` is writing now."""
    try:
        return being_written(path, path.stat().st_mtime)
    except FileNotFoundError:
        return False


def _traces_naming(cursor, touched: list, residue: Residue) -> list:
    """Return those of the traces ``touched`` that still cite a memory and name a deleted one
    in their text (any letter case, hyphenated or as ``uuid.hex``: ``Residue.names``).

    Looked for here, not by PostgreSQL: one regular expression of every form
    (``lower(stages::text || usage::text) ~ 'form|form|...'``) was refused past ~800 ids
    ("invalid memory alloc request size", "regular expression is too complex"), so the phase
    rolled back at every retry and a retention sweep of a subject's task state, or a key's
    deletion of many memories, never completed. Batches of such expressions took 34 s for 200
    ids over 2,000 traces, and a set lookup in SQL 2.4 s; ``Residue.names``, 0.3 s.
    """
    naming = []
    for start in range(0, len(touched), TRACES_READ_AT_ONCE):
        batch = touched[start : start + TRACES_READ_AT_ONCE]
        cursor.execute(_TRACES_TEXT_SQL, {"touched": uuid_array(batch)})
        naming.extend(trace_id for trace_id, text in cursor.fetchall() if residue.names(text))
    return naming


def _user_id_digests(ctx) -> list[str]:
    """The digests (``traces.user_id_digest``) of the ids the operation's subjects are known
    by: the traces of retrievals for them made before they were known have no subject and
    name them so (a subject's deletion keeps its external id). With the digest a replayed
    operation keeps (``DeletionOperation.user_id_sha256``): the row the replay made back is
    named by its own id, and by it alone the step neither waited for a retrieval for the
    person still open nor deleted its trace (stop 64's review of the unknown users' lock)."""
    external_ids = Subject.objects.filter(pk__in=ctx.subject_ids).values_list(
        "external_id", flat=True
    )
    digests = [user_id_digest(external_id) for external_id in external_ids]
    if ctx.operation.user_id_sha256:
        digests.append(ctx.operation.user_id_sha256)
    return digests


def _delete_in_id_order(traces) -> int:
    """Delete ``traces`` (a queryset of one table, with no row another refers to), locked in
    id order first; return how many went. A DELETE on its own takes its rows in its plan's
    order (``_TRACES_SCRUB_SQL``), and a whole subject's traces step meeting a memory's
    deletion of the same subject, which scrubs some of those traces, could deadlock."""
    sql, params = (
        traces.order_by("pk").values("pk").select_for_update(of=("self",)).query.sql_with_params()
    )
    with connections["default"].cursor() as cursor:
        cursor.execute(
            f"WITH locked(id) AS MATERIALIZED ({sql}) "  # noqa: S608 (Django's own SQL)
            "DELETE FROM memory_core_retrievaltrace t USING locked WHERE t.id = locked.id",
            params,
        )
        return cursor.rowcount


class TracesStore(Store):
    name = "traces"
    description = (
        "retrieval traces naming the memory (cited_ids, GIN, which holds every id a trace "
        "names: migration 0055): its entries removed and the "
        "trace kept for the other memories it cites (deleted once it cites none); a "
        "subject's or a tenant's traces are deleted"
    )
    # A subject's traces are every agent's retrievals for them: what the purge removed, and
    # how long it took, told the agent that asked how many retrievals the others made for the
    # person (stop 67's review). The stored step keeps them.
    withheld = frozenset({"purged", "ms"})

    def _citing(self, ctx):
        traces = RetrievalTrace.objects.filter(tenant_id=ctx.operation.tenant_id)
        if ctx.whole_tenant:
            return traces  # the retrievals for users without a subject too
        # Every id a trace names, in any of its lists or its document, is in ``cited_ids``
        # (migration 0055's trigger keeps it so, whatever writes the row): the GIN finds every
        # trace naming the memories, and nothing else need be read. Until stop 69 this also
        # read ``selected_ids`` (no index: every trace of the tenant was read) and no other
        # place, so an id put back by hand in ``used_ids``, a usage report or ``stages``
        # alone verified (stop 68's audit of deletion's tasks).
        query = Q(cited_ids__overlap_array=ctx.memory_ids)
        if ctx.whole_subject:
            # The subject's retrievals made before the operation's first run: those made while
            # it was queued name the subject too (``+subject_deletion_queued``, and "the queued
            # request deletes it with the rest": docs/retrieval.md). One made since cites none
            # of its memories (deleted) and is not the operation's: counted, it failed the
            # step's check while the person's agent went on asking between purge and check.
            query |= Q(subject_id__in_array=ctx.subject_ids, created_at__lte=_made_before(ctx))
            # Those made for them before they were known name them by their id's digest, each
            # the operation's whenever made: a retrieval names them so only while it holds the
            # lock ``purge`` waits for, taken before a subject named them, so none is made
            # after. Bounded as above, the trace of one that began before the subject was
            # created and inserted it once the run had begun was left, naming the person.
            query |= Q(subject__isnull=True, user_id_sha256__in=_user_id_digests(ctx))
        return traces.filter(query)

    def purge(self, ctx):
        if not ctx.memory_ids and not ctx.whole_subject:
            return {"deleted": 0, "scrubbed": 0}
        if ctx.whole_subject:
            if not ctx.whole_tenant:
                # A retrieval for the person begun before they were known commits its trace
                # first, which the statement below, reading after the lock, then deletes.
                # A tenant's deletes every trace, and one lock a subject would overrun
                # PostgreSQL's lock table.
                unknown_users_deletion_lock(ctx.operation.tenant_id, _user_id_digests(ctx))
            return {"deleted": _delete_in_id_order(self._citing(ctx)), "scrubbed": 0}
        # A trace names a memory only in lists whose ids it also keeps in ``cited_ids``
        # (``pipeline._cited_ids``), so once no trace cites the memory none names it. The
        # other memories' uses of a retrieval stay counted (the portal's "used" figures).
        # In SQL, one statement for every citing trace (migration 0025 mirrors
        # ``traces._stages_without``): row by row, a memory cited by 20,000 traces took 66 s.
        params = {
            "tenant": ctx.operation.tenant_id,
            "ids": ctx.ids_array,
            "gone": ctx.id_strings,
        }
        with connections["default"].cursor() as cursor:
            cursor.execute(_TRACES_SCRUB_SQL, params)
            touched = [row[0] for row in cursor.fetchall()]
            if not touched:
                return {"deleted": 0, "scrubbed": 0}
            # Deleted: a trace left citing none, or still naming an id (any case, or as hex)
            # in a list the scrub does not know.
            naming = _traces_naming(cursor, touched, ctx.residue())
            cursor.execute(
                _TRACES_LEFT_SQL, {"touched": uuid_array(touched), "naming": uuid_array(naming)}
            )
            deleted = cursor.rowcount
        return {"deleted": deleted, "scrubbed": len(touched) - deleted}

    def verify(self, ctx):
        residue = self._citing(ctx).count() if ctx.memory_ids or ctx.whole_subject else 0
        return residue == 0, {"traces_citing": residue}


def lock_file(path: Path) -> None:
    """Hold a transaction-scoped advisory lock on ``path`` until the phase commits.

    Read-modify-write of a shared file by two operations at once would lose one removal;
    callers lock files in sorted order (no deadlock) and read the file after the lock.
    """
    with connections["default"].cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"memledger.file:{Path(path).resolve()}"],
        )


def eval_dirs_missing() -> list[str]:
    """Return the folders of MEMLEDGER_EVAL_DATA_DIRS that are not folders: a configuration
    error, never "nothing to delete" (the data may be where the setting does not point).

    A folder inside MEMLEDGER_DATA_DIR (the default ``.data/eval``) is memledger's own: if it
    does not exist, nothing has been written there yet. Something there that is not a folder
    (a dataset's file named in its folder's place) is an error too: exempted, it was neither
    scanned nor reported, and the step verified (stop 55's audit of deletion).
    """
    own = Path(settings.DATA_DIR).resolve()
    return [
        folder
        for folder in settings.MEMLEDGER_EVAL_DATA_DIRS
        if not Path(folder).is_dir()
        and (Path(folder).exists() or not Path(folder).resolve().is_relative_to(own))
    ]


# The evaluation files the step rewrites case by case: one JSON document, one per line, or
# one per record of a table (its delimiter by the suffix).
JSON_SUFFIXES = frozenset({".json"})
LINES_SUFFIXES = frozenset({".jsonl", ".ndjson"})
TABLE_DELIMITERS = {".csv": ",", ".tsv": "\t"}


def _file_kind(path: Path) -> str:
    """Return how a file is read: ``json``, ``lines`` (JSONL, NDJSON), ``table`` (CSV, TSV)
    or ``text`` (any other file: a report), by its suffix in any letter case (``golden.JSON``
    is JSON)."""
    suffix = path.suffix.lower()
    if suffix in JSON_SUFFIXES:
        return "json"
    if suffix in LINES_SUFFIXES:
        return "lines"
    if suffix in TABLE_DELIMITERS:
        return "table"
    return "text"


def _text_kind(path: Path, text: str) -> str:
    """``_file_kind`` of ``path`` holding ``text``: a ``.json`` file that is no JSON document
    but one JSON value a line is JSON Lines (what HuggingFace's ``to_json`` and many tools
    write under ``.json``). Read as a report, a copy of the content in a line's JSON string
    was not found, and the step verified with the words in the file (stop 55's audit of
    deletion)."""
    kind = _file_kind(path)
    if kind != "json" or _parses(text):
        return kind
    lines = [line for line in jsonl_lines(text) if line.strip()]
    return "lines" if len(lines) > 1 and all(map(_parses, lines)) else kind


def _parses(text: str) -> bool:
    try:
        json_loads(text)
    except ValueError:
        return False
    return True


def _read_text(path: Path) -> str | None:
    """Return the text of ``path`` (UTF-8, a byte order mark dropped), or None if it is gone.

    A file that cannot be read (permissions) or is not UTF-8 text (a spreadsheet, an archive)
    raises OSError or UnicodeDecodeError: nothing can say it does not hold the memory.
    """
    try:
        return path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        return None


def _eval_files(*, leave_new: bool = False) -> tuple[list[Path], list[str]]:
    """Return every regular file under MEMLEDGER_EVAL_DATA_DIRS, whatever its name, and the
    places there that could not be listed or looked at; with ``leave_new`` (the purge), not
    the new files another deletion's rewrite is writing (``files.being_written``).

    The purge leaves them: read as datasets of their own, another deletion rewrote one and put
    it back beside the dataset it had become (stop 49's audit). The verification reads them:
    written under the dataset's lock, one made after this purge holds none of its words, and
    one left by a process that died mid-write may hold them (it fails the step until, past
    ``files.ABANDONED_SECONDS``, a purge reads it as any file).

    Subfolders that are symbolic links (shared storage mounted there) are followed; each real
    folder is walked once (a link back up the tree ends there) and each real file is returned
    once, by its real path, so a rewrite replaces the file itself, not a link to it. Before,
    only ``*.json`` and ``*.jsonl`` in lower case were looked at and linked folders were not
    entered: a ``golden.JSON``, a ``.ndjson``, a CSV report or a dataset on a linked mount
    naming a deleted memory was never scrubbed, and the step verified.
    """
    files: set[str] = set()
    unreadable: list[str] = []
    walked: set[str] = set()

    def failed(error: OSError) -> None:
        unreadable.append(str(error.filename or error))

    for folder in settings.MEMLEDGER_EVAL_DATA_DIRS:
        if not Path(folder).is_dir():
            continue  # eval_dirs_missing() says whether that is a problem
        for current, folders, names in os.walk(folder, onerror=failed, followlinks=True):
            real = os.path.realpath(current)
            if real in walked:
                folders[:] = []
                continue
            walked.add(real)
            for name in names:
                path = os.path.join(current, name)
                try:
                    found = os.stat(path)
                except FileNotFoundError:
                    # A link to nothing is storage that cannot be reached now (a mount down):
                    # it may hold the memory, so it fails the step, until it is back or the
                    # link is removed (skipped, the step verified while a linked dataset
                    # folder was unmounted: stop 54's audit of deletion). A file removed
                    # since the listing holds nothing.
                    if os.path.islink(path):
                        unreadable.append(path)
                    continue
                except OSError:
                    unreadable.append(path)
                    continue
                # Not a FIFO or a device: reading one could block the worker forever.
                if not stat.S_ISREG(found.st_mode):
                    continue
                if leave_new and being_written(Path(name), found.st_mtime):
                    continue
                files.add(os.path.realpath(path))
    return [Path(path) for path in sorted(files)], unreadable


# Up to this many forms (ids twice: hyphenated and hex), ``Residue.names`` looks for each
# with ``in``; past it, for the runs of id characters in one pass.
FEW_FORMS = 64
_ID_RUN = re.compile(r"[0-9a-f-]{32,}")


def jsonl_lines(text: str) -> list[str]:
    """Return the lines of a JSON Lines file: split at ``\\n`` only, a ``\\r`` before it dropped.

    Not ``str.splitlines``, which also splits at U+2028, U+2029 and U+0085 (and a few control
    characters): JSON holds them unescaped inside a string (``json.dumps(...,
    ensure_ascii=False)`` of text pasted from a web page or a PDF). A case cut there was not
    found by a copy of the content it held, and a rewrite wrote its pieces back as two lines,
    neither of them JSON. A ``\\r`` alone is no line end either: JSON allows it between tokens.
    """
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines[-1] == "":
        lines.pop()  # what follows the last line's end is no line
    return lines


def text_lines(text: str) -> list[str]:
    """Return the lines of any other text file (a CSV, a report) as a text-mode read splits
    them: at ``\\n``, ``\\r\\n`` and ``\\r`` (a spreadsheet may end its rows with ``\\r``), not
    at the characters ``str.splitlines`` also takes for line ends (``jsonl_lines``)."""
    return jsonl_lines(text.replace("\r\n", "\n").replace("\r", "\n"))


# The keys an evaluation case names its tenant under, in any letter case (FORMAT.md: a
# memory's ``tenant``, a case's ``context.tenant_id``); in a CSV or TSV file, the column a
# header so names.
TENANT_KEYS = frozenset({"tenant", "tenant_id", "tenant_slug"})
# The name a structure gives a field (a JSON key, a cell of a table's header): a token without
# spaces. Only such a name is exempt from the content hashes: any other key or header cell is
# text (a label map's key, a dataset keyed by a memory's words), read for a copy as a value is.
_FIELD_NAME = re.compile(r"[A-Za-z_][\w.-]{0,63}")
# A name written for people: a table's column ("Expected Answer", "Notes (v2)") or a dataset's
# ("Golden set"). A letter, then at most five words of letters, digits and ``_ # % ( ) / . -``,
# one space apart; no sentence's or question's mark (``_is_label`` refuses a final full stop).
_LABEL = re.compile(r"[A-Za-z][\w#%()/.-]*(?: [\w#%()/.-]+){0,4}")
# An id in a case, in text already lowered: hyphenated, or as ``uuid.hex``.
_ANY_ID = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])"
)


def _is_field_name(text: str) -> bool:
    """Return whether ``text`` (a JSON key, a header cell) is a field's name (``_FIELD_NAME``)."""
    return _FIELD_NAME.fullmatch(text.strip()) is not None


def _is_label(text: str) -> bool:
    """Return whether ``text`` reads as a name written for people (``_LABEL``): at most 64
    characters, no final full stop, no id. A sentence, a question, a number is a value."""
    text = text.strip()
    return (
        len(text) <= 64
        and not text.endswith(".")
        and _LABEL.fullmatch(text) is not None
        and _ANY_ID.fullmatch(text.lower()) is None
    )


def _ids_in(text: str) -> set[str]:
    """Return the ids ``text`` holds, each as ``uuid.hex``."""
    return {uuid.UUID(found).hex for found in _ANY_ID.findall(text.lower())}


def _tenant_values(node) -> set[str]:
    """Return the strings the JSON value ``node`` holds under a tenant key (``TENANT_KEYS``),
    alone or in a list: the slugs (or ids) its cases name their tenant by."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if isinstance(key, str) and key.strip().lower() in TENANT_KEYS:
                    values = value if isinstance(value, list) else [value]
                    found.update(v.strip() for v in values if isinstance(v, str))
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    # A slug is at most 64 characters (Tenant.slug): a longer string names no tenant.
    return {value for value in found if 0 < len(value) <= 64}


# A physical line with its end (``\r\n``, ``\n`` or ``\r``), or the last one without.
_PHYSICAL_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def table_records(path: Path, text: str) -> list[tuple[str, list[str]]] | None:
    """Return the records of the text of a CSV or TSV file, each as its text (the physical
    lines it spans, their ends kept: a quoted field may hold a line end) and its fields; or
    None when the text is not such a table (``csv.Error``: a NUL, a field past the size limit).

    Written back, the records kept give the file as it was, byte for byte, without the rest.
    """
    lines = _PHYSICAL_LINE.findall(text)
    reader = csv.reader(iter(lines), delimiter=TABLE_DELIMITERS[path.suffix.lower()])
    records, start = [], 0
    try:
        for fields in reader:
            records.append(("".join(lines[start : reader.line_num]), fields))
            start = reader.line_num
    except csv.Error:
        return None
    return records


def _cells(line: str, delimiter: str) -> list[str]:
    """Return the fields of one line of a table as the csv module reads it alone (none when
    it cannot: a NUL, say)."""
    try:
        return next(csv.reader([line], delimiter=delimiter), [])
    except csv.Error:
        return []


def table_header(
    path: Path, records: list[tuple[str, list[str]]], residue: Residue | None = None
) -> int | None:
    """Return the index of the header among the records of the CSV or TSV file ``path``
    (``table_records``), or None when it has none.

    The header is the first record that is neither blank nor a comment (``#``), when its first
    line looks like one: a cell names the tenant column (``TENANT_KEYS``), or every cell is a
    field's name (``_is_field_name``) or an id (a column per memory; else whether a header
    naming the memory took the table whole hung on its id's first digit), or it is a row of
    labels that the rest of the file shows heads it (``_heads_the_table``) and whose line is
    not, whole, a deleted memory's words (``residue``: ``Residue.copies_line``), nor any of
    its cells a deleted memory's words of two words or more (``Residue.copies_words_cell``).
    A leading blank or comment line made the header the second record, judged as data: a
    deletion of the memory "query" took another tenant's header; and a first record taken for
    a header whatever it held kept the words of a table without one (stop 65's review of its
    audit of deletion).

    A column's name that a memory equals is one word ("query", "answer"); a headerless
    table's first case of short words (``User prefers Vim,yes``) over rows of sentences looks
    like a row of labels, and exempt as the header it kept the memory "User prefers Vim"
    while the step verified (stop 66's review). So a cell of two or more words equal to a
    deleted memory's makes the row a case, a header ``Query,Expected Answer`` too when the
    memory "expected answer" is deleted: a memory of a few words is a real one, and deleting
    the row is the safe side.
    """
    delimiter = TABLE_DELIMITERS[path.suffix.lower()]
    for index, (raw, _) in enumerate(records):
        if _blank_or_comment(raw):
            continue
        first = text_lines(raw)[0].strip()
        names = [cell.strip() for cell in _cells(first, delimiter) if cell.strip()]
        if any(name.lower() in TENANT_KEYS for name in names):
            return index
        if names and all(map(_is_column_name, names)):
            return index
        if residue is not None and residue.copies_line(first):
            return None  # column names are never a memory's words as a line: a case
        if residue is not None and residue.copies_words_cell(first, delimiter):
            return None  # nor, in a cell, a memory's words of two or more: a case
        return index if _heads_the_table(records, index) else None
    return None


def _blank_or_comment(raw: str) -> bool:
    """Return whether a table's record ``raw`` is blank or a comment line (``#``)."""
    return not raw.strip() or text_lines(raw)[0].strip().startswith("#")


def _heads_the_table(records: list[tuple[str, list[str]]], index: int) -> bool:
    """Return whether the record ``index`` of a table, its first neither blank nor a comment,
    is a row of column labels (``_is_label_row``: ``Query,Expected Answer``) that the rest of
    the file shows is its header: every other record is as wide, and no value below it is a
    label (each is a question, a sentence, a number or an id; an empty cell tells nothing).

    A people's header has names with spaces: read as a record, its cell "Query" was the
    deleting tenant's copy of the memory "query" (its table names no tenant), and the deletion
    took the header (stop 65's "Left open"). The rest of the file decides, never the first
    record alone: a case of short words ("query,Blue binder") is a row of labels too, and
    exempt as a header in a table whose real header comes later, or that has none, it kept
    the deleted words. So the first record heads the table only when it differs in kind from
    every value under it; a column of short words (a category, an answer "Vim") leaves it a
    case, as before: where the file does not tell, the safe side.
    """
    raw, labels = records[index]
    if len(text_lines(raw)) != 1 or not _is_label_row(labels):
        return False
    rows = [fields for raw, fields in records[index + 1 :] if not _blank_or_comment(raw)]
    if any(len(fields) != len(labels) for fields in rows):
        return False
    values = [cell for fields in rows for cell in map(str.strip, fields) if cell]
    return bool(values) and not any(map(_is_label, values))


def _is_label_row(fields: list[str]) -> bool:
    """Return whether a record's ``fields`` are two or more distinct labels (``_is_label``),
    empty cells aside: a column without a name (``pandas.DataFrame.to_csv`` names its index
    column so, ``,Query,Expected Answer``: until stop 66's review its empty cell made the row
    a case, and a deletion of the memory "query" took it)."""
    names = [field.strip() for field in fields if field.strip()]
    distinct = {name.casefold() for name in names}
    return len(names) >= 2 and len(distinct) == len(names) and all(map(_is_label, names))


def _is_column_name(cell: str) -> bool:
    """Return whether a cell of a table's first line names a column: a field's name or an id."""
    return _is_field_name(cell) or _ANY_ID.fullmatch(cell.lower()) is not None


def _tenant_column_of(header: str, delimiter: str) -> tuple[str, int] | None:
    """Return the delimiter and the index of the column the first line of a table's header
    record ``header`` names its rows' tenant in (``TENANT_KEYS``), or None."""
    names = [cell.strip().lower() for cell in _cells(text_lines(header)[0], delimiter)]
    index = next((i for i, name in enumerate(names) if name in TENANT_KEYS), None)
    return None if index is None else (delimiter, index)


def _tenant_column(header: str) -> tuple[str, int] | None:
    """Return the delimiter and the index of the column a CSV or TSV header names its rows'
    tenant in (``TENANT_KEYS``), or None."""
    for delimiter in (",", "\t"):
        if delimiter not in header:
            continue
        try:
            names = next(csv.reader([header], delimiter=delimiter), [])
        except csv.Error:
            continue
        for index, name in enumerate(names):
            if name.strip().lower() in TENANT_KEYS:
                return delimiter, index
    return None


def _column_value(line: str, column: tuple[str, int] | None) -> str:
    """Return the field of ``line`` in the tenant column ``column`` (``_tenant_column``)."""
    if column is None:
        return ""
    return _column_value_of(_cells(line, column[0]), column)


def _column_value_of(fields: list[str], column: tuple[str, int] | None) -> str:
    """Return the field of a row's ``fields`` in the tenant column ``column``."""
    if column is None or column[1] >= len(fields):
        return ""
    return fields[column[1]].strip()


class CaseOwners:
    """Whose an evaluation case is, as one operation's tenant judges a copy of its words.

    The evaluation folders (MEMLEDGER_EVAL_DATA_DIRS) are the platform's: a file there holds
    cases built from every tenant's memories, and two tenants' memories may hold the same
    words. A case names a tenant by its id (anywhere in the case: any letter case, hyphenated
    or as hex) or by its slug under a tenant key (``TENANT_KEYS``; in a CSV or TSV file, the
    column so headed), or through a memory it names by id, of any tenant: they are looked
    up in platform mode, since the worker acts for the operation's tenant and row-level
    security hides the other tenants' rows. A copy of a deleted memory's words (a string of
    its content hash) in a case that names none of its ids is then:

    - the deleted memory's when the case names the operation's tenant, itself or through
      one of its memories (whatever else it names: a case of that tenant holding the words
      goes, so deletion stays complete), or names no tenant and no memory at all (a bare
      copy of the words: nothing says whose);
    - not when the tenants it names, itself or through their memories, are others only:
      the case is another's, and stays.

    Before, every copy was taken for the deleted memory's: tenant A's agent, writing and
    deleting a guessed sentence, removed tenant B's cases holding it, and the step's
    evidence told it whether one had.
    """

    def __init__(self, tenant_id):
        self.tenant_id = uuid.UUID(str(tenant_id))
        # What is known so far: an id's hex to the tenant it names (the tenant's own id, or a
        # memory's tenant) or None (nothing), and a slug to its tenant's id or None.
        self._ids: dict[str, uuid.UUID | None] = {}
        self._slugs: dict[str, uuid.UUID | None] = {}
        # The last two outermost holders ``named_above`` read, by id, each kept (so no other
        # object takes its id while it is known) with the tenants it names.
        self._above: dict[int, tuple[object, set[uuid.UUID]]] = {}

    def ours(self, node, *held_by) -> bool:
        """Return whether a copy of the words in the case ``node`` (a JSON value) is the
        operation's; ``held_by`` are the own fields of the objects holding it (``_prune``)."""
        return self._owns(self.named(node) | self.named_above(held_by))

    def named_above(self, held_by: tuple) -> set[uuid.UUID]:
        """Return the tenants the objects holding a case name (``held_by``, from the
        document down: ``_prune``), computed once for all the cases under them.

        The first holds the others (an object's own fields are those of the objects inside
        it too, ``_own_fields``), and it is the same for every case of the document: read
        again for each case, and for each dataset's name, a document of thousands of
        datasets took minutes (stop 66's review).
        """
        if not held_by:
            return set()
        outermost = held_by[0]
        known = self._above.get(id(outermost))
        if known is None or known[0] is not outermost:
            if len(self._above) >= 2:  # a document's and its own fields', then the next's
                self._above.clear()
            known = self._above[id(outermost)] = (outermost, self.named(outermost))
        return known[1]

    def ours_text(self, line: str, *tenants: str) -> bool:
        """Return whether a copy of the words in a line of text (a CSV row, a report's line)
        is the operation's; ``tenants`` are its fields in a column headed as a tenant's (a
        record's, and that of the line holding the copy: ``Residue.records_about``)."""
        return self._ours(_ids_in(line), {tenant for tenant in tenants if tenant})

    def named(self, node) -> set[uuid.UUID]:
        """Return the tenants the JSON value ``node`` names: by id anywhere, by slug under a
        tenant key, or through memories it names by id."""
        return self._named(_ids_in(json.dumps(node)), _tenant_values(node))

    def declared(self, node) -> set[uuid.UUID]:
        """Return the tenants the JSON value ``node`` names under a tenant key
        (``TENANT_KEYS``), by slug or id: whose the file says it is, not what a lookup of the
        memories it cites infers."""
        values = _tenant_values(node)
        return self._named(set().union(*map(_ids_in, values)), values)

    def _ours(self, ids: set[str], slugs: set[str]) -> bool:
        return self._owns(self._named(ids, slugs))

    def _owns(self, named: set[uuid.UUID]) -> bool:
        """Return whether a copy in a case naming the tenants ``named`` is the operation's."""
        if self.tenant_id in named:
            return True
        return not named  # only other tenants, themselves or through their memories

    def _named(self, ids: set[str], slugs: set[str]) -> set[uuid.UUID]:
        self._look_up(ids, slugs)
        named = {self._ids[i] for i in ids} | {self._slugs[s] for s in slugs}
        named.discard(None)
        return named

    def _look_up(self, ids: set[str], slugs: set[str]) -> None:
        """Learn which tenant the ids and slugs not seen yet name: a tenant itself (tenants
        are outside row-level security) or, for an id, a memory's tenant (a platform read of
        those ids: a case naming another of the operation's tenant's memories is its own, and
        its copy of the words goes)."""
        ids = {i for i in ids if i not in self._ids}
        slugs = {s for s in slugs if s not in self._slugs}
        if not ids and not slugs:
            return
        self._ids.update(dict.fromkeys(ids))
        self._slugs.update(dict.fromkeys(slugs))
        tenants = Tenant.objects.filter(Q(pk__in_array=sorted(ids)) | Q(slug__in=sorted(slugs)))
        for pk, slug in tenants.values_list("pk", "slug"):
            if pk.hex in ids:
                self._ids[pk.hex] = pk
            if slug in slugs:
                self._slugs[slug] = pk
        rest = sorted(i for i in ids if self._ids[i] is None)
        if rest:
            with platform_scope("deletion: whose memories an evaluation case names"):
                memories = Memory.objects.filter(pk__in_array=rest).values_list("pk", "tenant_id")
                self._ids.update((pk.hex, tenant_id) for pk, tenant_id in memories)


class Residue:
    """What marks a file, a line or a JSON value as being about the deleted memories.

    - an id, in any letter case, with hyphens or as ``uuid.hex`` (32 hex digits);
    - with content hashes (the ledger's): a JSON string (a value, or a key that is no
      field's name) whose normalized text is a deleted memory's content
      (``memory_core.text.content_hash``), so a verbatim copy is found without the id and
      without the content itself, which is gone from the database. A copy inside a longer
      string has no hash to match: the id is what finds it. With ``owners`` (``CaseOwners``),
      a copy counts only in a case that is not another tenant's; without, every copy does.

    A JSON key, or a cell of the first line of a table's header (``table_header``), that is a
    field's name (``_is_field_name``: a token without spaces) is marked by an id only, never by
    equalling a memory's words (stop 65's audit of deletion: any agent that wrote and deleted
    the memory "query" or "cases" removed every shared table with a ``query`` column, and
    every dataset under a ``cases`` key that held one case of its tenant, whole, other
    tenants' cases with them). Any other key is text, a label map's or a dataset keyed by the
    words: exempting every key kept those words while the step verified (stop 65's review).
    """

    def __init__(self, memory_ids, hashes: set[str], owners: CaseOwners | None = None):
        self.forms = [f for u in memory_ids for f in (str(u).lower(), uuid.UUID(str(u)).hex)]
        self.form_set = frozenset(self.forms)
        self.hashes = hashes
        self.owners = owners

    def names(self, text: str) -> bool:
        """Return whether ``text`` holds one of the ids."""
        lowered = text.lower()
        if len(self.forms) <= FEW_FORMS:
            return any(form in lowered for form in self.forms)
        # Many ids (a subject's): one pass over the text instead of one per id (10,000 ids
        # and a 4 MB evaluation file took 29 s). A form is 36 characters of hex digits and
        # hyphens or 32 hex digits, so any occurrence lies inside a run of such characters at
        # least that long: every window of either length of every such run is looked up.
        for run in _ID_RUN.findall(lowered):
            for size in (36, 32):
                for start in range(len(run) - size + 1):
                    if run[start : start + size] in self.form_set:
                        return True
        return False

    def copies(self, node) -> bool:
        """Return whether a string in the JSON value ``node`` is a deleted memory's content: a
        value, or a key that is no field's name (``_is_field_name``)."""
        if not self.hashes:
            return False
        stack = [node]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                if content_hash(item) in self.hashes:
                    return True
            elif isinstance(item, dict):
                stack.extend(key for key in item if not _is_field_name(key))
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
        return False

    def copies_ours(self, node, held_by: tuple = ()) -> bool:
        """Return whether the case ``node`` holds a copy of a deleted memory's content that is
        the memory's: neither the case nor ``held_by`` (what holds it) is another tenant's."""
        if not self.copies(node):
            return False
        return self.owners is None or self.owners.ours(node, *held_by)

    def in_node(self, node, held_by: tuple = ()) -> bool:
        """Return whether the case ``node`` is about the memories: it names one, or holds a
        copy of the content that is theirs (``copies_ours``)."""
        return self.names(json.dumps(node)) or self.copies_ours(node, held_by)

    def line_copies(self, line: str, column: tuple[str, int] | None = None) -> bool:
        """Return whether a line of text copies the content (``copies_text``) and is not
        another tenant's: by the ids it holds and its field in the tenant column ``column``."""
        if not self.copies_text(line):
            return False
        return self.owners is None or self.owners.ours_text(line, _column_value(line, column))

    def copies_line(self, line: str) -> bool:
        """Return whether ``line``, whole, is a deleted memory's content."""
        return content_hash(line) in self.hashes

    def copies_words_cell(self, line: str, delimiter: str) -> bool:
        """Return whether a cell of the table's line ``line`` is a deleted memory's content of
        two or more words: split at ``delimiter`` or read by the csv module, as a record's line
        is read (``_line_copies``). A one-word copy may be a column's name ("query")."""
        cells = [*line.split(delimiter), *_cells(line, delimiter)]
        return any(
            content_hash(cell) in self.hashes and " " in normalize_text(cell) for cell in cells
        )

    def copies_text(self, line: str) -> bool:
        """Return whether the line of text, or one of its fields as CSV or TSV, is a deleted
        memory's content (a report's line, a spreadsheet's cell)."""
        if not self.hashes:
            return False
        strings = [line]
        for delimiter in (",", "\t"):
            if delimiter in line:
                try:
                    strings.extend(next(csv.reader([line], delimiter=delimiter), []))
                except csv.Error:  # not CSV after all: the line is the string
                    continue
        return any(content_hash(string) in self.hashes for string in strings)

    def records_about(self, path: Path, records: list[tuple[str, list[str]]]) -> list[bool]:
        """Return, for each record of the CSV or TSV file ``path`` (``table_records``),
        whether it is about the memories: it names one, or holds a copy of the content in a
        case that is not another tenant's (``_record_copies``).

        The header (``table_header``) is the columns' names: only an id makes it about the
        memories (and the table goes whole, ``_rewrite_file``), or a copy in a line an open
        quotation mark of its made part of it (``_header_copies``). A column named as a
        memory's words is no copy of them: the header's tenant cell ("tenant") names no
        tenant, so the copy was nobody's, taken for the deleting tenant's, and a deletion of
        the memory "query" removed every table with a ``query`` column, other tenants' records
        with it (stop 65's audit of deletion). A table without a header has none exempt.
        """
        delimiter = TABLE_DELIMITERS[path.suffix.lower()]
        header = table_header(path, records, self)
        column = None if header is None else _tenant_column_of(records[header][0], delimiter)
        return [
            self.names(raw)
            or (
                self._header_copies(raw, column, delimiter)
                if number == header
                else self._record_copies(raw, fields, column, delimiter)
            )
            for number, (raw, fields) in enumerate(records)
        ]

    def _record_copies(
        self, raw: str, fields: list[str], column: tuple[str, int] | None, delimiter: str
    ) -> bool:
        """Return whether the record ``raw`` of a table (its fields ``fields``) holds a copy
        of the content that is not another tenant's, by the ids it holds and its field in the
        tenant column ``column``.

        A copy is the record, a field of it, or one of its lines (``_line_copies``).
        """
        if not self.hashes:
            return False
        tenant = _column_value_of(fields, column)
        if self._hashes_any([raw, *fields]) and self._ours_text(raw, tenant):
            return True
        return any(
            self._line_copies(line, raw, tenant, column, delimiter) for line in text_lines(raw)
        )

    def _header_copies(self, raw: str, column: tuple[str, int] | None, delimiter: str) -> bool:
        """Return whether the header record ``raw`` of a table holds a copy of the content
        that is not another tenant's in a line after its first: a quotation mark the header
        opens and never closes makes the csv module read the lines after it, every record of
        the file, into the header, and until stop 65's review they were all exempt with it."""
        if not self.hashes:
            return False
        return any(
            self._line_copies(line, line, "", column, delimiter) for line in text_lines(raw)[1:]
        )

    def _line_copies(
        self, line: str, text: str, tenant: str, column: tuple[str, int] | None, delimiter: str
    ) -> bool:
        """Return whether the physical ``line`` of a table's record holds a copy of the
        content that is not another tenant's, by the ids ``text`` (the record) holds, the
        record's ``tenant`` and the line's own field in the tenant column ``column``.

        A copy is the line or one of its cells, split at the delimiter without the csv
        module's quoting rules or read by it from the line alone: a hand-written TSV whose
        cell begins with a quotation mark is read by the csv module as one field up to the
        next quotation mark, lines and cells after it included, and a cell whose text starts
        with a quoted word loses its quotes (stop 50's review); a line so swallowed whose copy
        is a quoted cell (a CSV writer quotes words holding a comma) is found by reading the
        line alone (stop 65's review). A copy in a line is judged by that line's own tenant
        field too: a line swallowed by another tenant's record is still its own tenant's, and
        a copy there of the deleting tenant goes, with the record holding it (judged by the
        other tenant's field alone, it stayed while the step verified: stop 65's audit of
        deletion).
        """
        strings = [line, *line.split(delimiter), *_cells(line, delimiter)]
        return self._hashes_any(strings) and self._ours_text(
            text, tenant, _column_value(line, column)
        )

    def _hashes_any(self, strings: list[str]) -> bool:
        return any(content_hash(string) in self.hashes for string in strings)

    def _ours_text(self, text: str, *tenants: str) -> bool:
        return self.owners is None or self.owners.ours_text(text, *tenants)

    def line_about(self, line: str) -> bool:
        """Return whether a JSONL line is about the memories: it names one, or holds a copy
        of the content (in a JSON string; a line that is not JSON, as text) in a case that is
        not another tenant's."""
        if self.names(line):
            return True
        try:
            document = json_loads(line)
        except ValueError:
            return self.line_copies(line)
        return self.copies_ours(document)

    def in_text(self, path: Path, text: str) -> tuple[bool, bool]:
        """Return (names an id, copies content) for the text of the file ``path``: a JSON
        document's strings, a JSONL line's, or the lines (and CSV fields) of any other text.

        A copy counts as the purge judges it, case by case (``_prune``, ``line_about``): a
        verification that counted another tenant's case the purge leaves would never pass.
        """
        if self.names(text):
            return True, False
        if not self.hashes:
            return False, False
        kind = _text_kind(path, text)
        if kind == "lines":
            return False, any(self.line_about(line) for line in jsonl_lines(text))
        if kind == "json":
            try:
                document = json_loads(text)
            except ValueError:  # not JSON: read as text
                pass
            else:
                return False, self.copies(document) and _prune(document, self) != document
        records = table_records(path, text) if kind == "table" else None
        if records is not None:
            return False, any(self.records_about(path, records))
        lines = text_lines(text)
        column = _tenant_column(lines[0]) if lines else None
        # A first line naming a tenant column is a header: its cells are names, no copy.
        rows = lines[1:] if column else lines
        return False, any(self.line_copies(line, column) for line in rows)

    def in_file(self, path: Path) -> bool:
        text = _read_text(path)
        return text is not None and any(self.in_text(path, text))


_DROP = object()


def _prune(node, residue: Residue, held_by: tuple = (), document=None, among_datasets: bool = True):
    """Return ``node`` without the cases that are about the deleted memories, or ``_DROP``.

    A case is an element of the outermost list of objects on the way down from the document.
    The whole case goes when it names an id or copies content anywhere inside it (its query,
    its expected answer, a nested memory): its answer may hold the content inside a longer
    string, which no content hash finds. Objects above that list only lead to it; a mention
    in one of them that is in no case (a key, ``_key_about``; a scalar, an id in a list of
    ids, an element of a list that is not an object) makes the whole document the case:
    ``_DROP`` (before, only such an id was taken out of its list, and a document that was one
    case kept its query and answer). Cases held by name in an object
    (``{"c1": {...}, "c2": {...}}``) are not told apart from one case whose fields are objects
    alike (``{"input": {"text", "memory_id"}, "expected": {"text", "memory_id"}}``, whose
    answer holds the content without the id), so such a document goes whole: deleting too
    much of an evaluation file is the safe side.

    Whose a copy of the content is (``CaseOwners``) is read from the case and the fields of
    the objects holding it, their lists (the other cases) left out (``_own_fields``): a
    dataset's own ``tenant`` names its cases' tenant. A copy in no case is judged by the
    whole document, which then is the case. A dataset of the project's own format then loses
    what cites the memories it lost (``_uncited``). ``among_datasets`` says whether each
    object above ``node`` holds nothing but objects and names (``_holds_datasets``).
    """
    if document is None:
        return _uncited(node, _prune(node, residue, held_by, node))
    if isinstance(node, list):
        kept = []
        for item in node:
            if isinstance(item, dict):
                if not residue.in_node(item, held_by):
                    kept.append(item)
            elif residue.in_node(item, (document,)):
                return _DROP  # an id in a list of ids, say: no case of its own
            else:
                kept.append(item)
        return kept
    if isinstance(node, dict):
        held_by = (*held_by, _own_fields(node))
        below_datasets = among_datasets and _holds_datasets(node)
        pruned = {}
        for key, value in node.items():
            if _key_about(key, residue, document):
                return _DROP
            if _dataset_label(node, key, value, residue, held_by, among_datasets, node is document):
                pruned[key] = value  # the dataset's name, no tenant's copy
                continue
            value = _prune(value, residue, held_by, document, below_datasets)
            if value is _DROP:
                return _DROP
            pruned[key] = value
        return pruned
    return _DROP if residue.in_node(node, (document,)) else node


def _key_about(key: str, residue: Residue, document) -> bool:
    """Return whether the key ``key`` of an object above the cases of ``document`` is about
    the memories: it names one, or it is no field's name (``_is_field_name``) and copies the
    content in a document that is not another tenant's (``{"<the words>": [...]}``, a label
    map: until stop 65's review such a key was never read for a copy, and the file kept it)."""
    if _is_field_name(key):
        return residue.names(key)
    return residue.in_node(key, (document,))


def _uncited(document, pruned):
    """Return ``pruned`` (``_prune`` of ``document``) without what cites a memory entry it
    lost, nor the older versions such an entry supersedes, when ``document`` is a dataset of
    the project's own format (a list of ``memories``, ../shared/eval/FORMAT.md).

    There a case names a memory by the file's own id (``case_memory_ids``), which neither the
    deleted memory's id nor its content finds: the entry went, the cases citing it stayed,
    and ``eval_retrieval`` refused the whole file ("names 'm1', which no memory of the file
    has": stop 59's audit of eval). Each such case is about the memory and goes whole. The
    entries a gone one ``supersedes``, down its chain, go too, with the cases citing them, as
    a deletion takes a memory and the older versions it supersedes (docs/api.md): left, the
    oldest lost its successor and loaded in use again beside the newest (stop 59's audit of
    eval). An entry that ``supersedes`` one gone loses only that link: it holds none of
    the deleted words (a copy went with its case above), and a deletion leaves a deleted
    memory's newer version in use; without the link it is a chain's first memory, and the
    file loads. So nothing is left citing an entry gone.
    """
    in_the_format = isinstance(document, dict) and isinstance(document.get("memories"), list)
    if not (in_the_format and isinstance(pruned, dict)):
        return pruned
    entries = dataset_entries(document)
    gone = entries.keys() - dataset_entries(pruned).keys()
    if not gone:
        return pruned
    older = list(gone)
    while older:  # down each gone entry's chain
        target = entries[older.pop()].get("supersedes")
        if target is not None and (target := str(target)) in entries and target not in gone:
            gone.add(target)
            older.append(target)
    if isinstance(pruned.get("cases"), list):
        pruned["cases"] = [
            case
            for case in pruned["cases"]
            if not isinstance(case, dict)
            or not any(str(i) in gone for _, ids in case_memory_ids(case) for i in ids)
        ]
    pruned["memories"] = [
        {key: value for key, value in entry.items() if key != "supersedes"}
        if isinstance(entry, dict)
        and entry.get("supersedes") is not None
        and str(entry["supersedes"]) in gone
        else entry
        for entry in pruned["memories"]
        if not (
            isinstance(entry, dict) and entry.get("id") is not None and str(entry["id"]) in gone
        )
    ]
    return pruned


# The keys a dataset names itself under, in any letter case: ``{"name": "golden", "cases":
# [...]}``. A case's own fields (``query``, ``expected``) are never a dataset's name.
DATASET_LABEL_KEYS = frozenset({"name", "title", "dataset", "dataset_name", "split", "version"})
# The key a dataset holds its cases under (FORMAT.md, ``eval_retrieval``), in any letter case.
CASES_KEY = "cases"
# Other keys a dataset holds its cases under, in any letter case (``{"version", "data"}`` as
# SQuAD writes it, ``examples`` or ``samples`` as other harnesses do). A case may hold a list
# of its own under one (its few-shot ``examples``, its ``items``), so they hold a dataset's
# cases only in an object that is nothing but a dataset (``_dataset_cases``).
OTHER_CASES_KEYS = frozenset({"examples", "data", "items", "samples", "tests"})
# What an object that is nothing but a dataset holds: its names and its lists of cases.
_DATASET_ONLY_KEYS = DATASET_LABEL_KEYS | OTHER_CASES_KEYS | {CASES_KEY}


def _dataset_label(
    node: dict,
    key: str,
    value,
    residue: Residue,
    held_by: tuple,
    among_datasets: bool,
    whole_document: bool,
) -> bool:
    """Return whether ``value``, the field ``key`` of the object ``node`` above the cases, is
    the name of a dataset of other tenants' cases too, and so no copy of the deleted words:
    a label (``_is_label``) under a name's key (``DATASET_LABEL_KEYS``) of an object holding
    its cases (``_dataset_cases``: under ``cases`` in a document of datasets,
    ``among_datasets``, or under another key of a dataset's when it is the document,
    ``whole_document``), that neither it nor an object above it says
    is a tenant's (``held_by``: their own fields), and one of whose cases is another
    tenant's, as the purge judges a case (``CaseOwners.ours``), and says so under a tenant
    key (``CaseOwners.declared``).

    A scalar above the cases is in no case, so it was judged by the whole document, and one
    case of the deleting tenant made the dataset's name "golden" that tenant's copy of the
    memory "golden": the mixed-tenant dataset went whole, the other tenants' cases with it
    (stop 65's "Left open"). The deleting tenant's cases holding the words still go
    (``_prune``). Where the file does not say the dataset is shared (its cases name no other
    tenant, or name them only through memories they cite), or says whose it is, or the value
    is no name (a sentence; a case's own field beside a list of its context), the value is
    judged as before: the safe side.

    Stop 66's review: any list of objects was the cases, and any case naming another tenant
    made the dataset shared. A document that is one case of the deleting tenant, its context
    a list of objects naming two tenants (``{"name": ..., "context": [...]}``), and a dataset
    whose every case is the deleting tenant's, one naming another tenant besides (a
    cross-tenant case), kept the words as their name.

    Until stop 67 only ``cases`` held a dataset's cases: a shared dataset under ``examples``
    or ``data`` went whole when its name was a deleted memory's words (stop 66's "Left open").
    """
    owners = residue.owners
    if owners is None or not isinstance(value, str) or key.lower() not in DATASET_LABEL_KEYS:
        return False
    if not _is_label(value) or residue.names(value) or not residue.copies(value):
        return False
    cases = _dataset_cases(node, among_datasets, whole_document)
    if not cases or owners.named_above(held_by):
        return False
    # Nothing above names a tenant, so a case is judged by what it names alone.
    return any(owners.declared(case) and not owners.ours(case) for case in cases)


def _dataset_cases(node: dict, among_datasets: bool, whole_document: bool) -> list[dict]:
    """Return the cases the object ``node`` holds as a dataset, in a document of datasets
    (``among_datasets``: each object above it holds nothing but objects and names,
    ``_holds_datasets``): the objects in its lists under ``cases`` (``CASES_KEY``), and under
    ``OTHER_CASES_KEYS`` too when it is the document (``whole_document``) and nothing but a
    dataset (every field of it a name, a string or a number, or a list of cases,
    ``_is_dataset_field``). Below a case's field none: a one-case document
    ``{"query", "context": {"name", "cases": [...]}}`` of the deleting tenant kept the
    deleted words as that object's name, and the step verified (stop 67's fix found it).

    A case's own list is no dataset's: ``{"name", "query", "examples": [...]}`` is one case
    with its few-shot examples, and its name one of its fields, judged with the document, and
    so is ``{"query", "context": {"name", "items": [...]}}`` (stop 66's review: a one-case
    document of the deleting tenant whose context named two tenants kept the words as its
    name). A dataset under such a key with any other field (a ``description``) is not told
    from such a case: its name is judged as before, and the file goes whole when the name is
    the deleted words, the safe side.

    Stop 67's review: below the document, an object of a name and such a list in a document
    of datasets by name (``{"set-a": {...}, "mine": {...}}``) is not told from a field of one
    case whose fields are objects (``{"input": {"name", "examples"}, "expected": {...}}``),
    and a one-case document of the deleting tenant kept the words as its input's name; and a
    name's key holding an object (``{"name", "dataset": {"query", ...}, "examples"}``) made
    one case look like nothing but a dataset. Both kept the words while the step verified.
    """
    if not among_datasets:
        return []
    holders = {CASES_KEY}
    if whole_document and all(_is_dataset_field(name, held) for name, held in node.items()):
        holders |= OTHER_CASES_KEYS
    return [
        item
        for name, held in node.items()
        if name.lower() in holders and isinstance(held, list)
        for item in held
        if isinstance(item, dict)
    ]


def _is_dataset_field(name: str, value) -> bool:
    """Return whether the field ``name`` of an object holding ``value`` is one a dataset that
    is nothing but a dataset has (``_DATASET_ONLY_KEYS``): a list under a key of its cases,
    anything else a name (a string or a number: an object or a list there is no name)."""
    if name.lower() not in _DATASET_ONLY_KEYS:
        return False
    return isinstance(value, list) or (
        name.lower() in DATASET_LABEL_KEYS and not isinstance(value, dict | list)
    )


def _holds_datasets(node: dict) -> bool:
    """Return whether the object ``node`` holds nothing but objects and names (a document of
    datasets by name, ``{"set-a": {...}, "set-b": {...}}``): no case's field, no list."""
    return all(
        isinstance(value, dict) or name.lower() in DATASET_LABEL_KEYS
        for name, value in node.items()
    )


def _own_fields(node: dict) -> dict:
    """Return the fields of an object that are its own: all but its lists (the cases it
    holds are in them), in the objects it holds too."""
    return {
        key: _own_fields(value) if isinstance(value, dict) else value
        for key, value in node.items()
        if not isinstance(value, list)
    }


def _rewrite_file(path: Path, residue: Residue) -> int:
    """Rewrite a JSON, JSONL, CSV or TSV file without the cases about the memories (a table's
    are its records); return 1 if changed.

    A JSON file that cannot be parsed, or whose mention is in no case, is removed; so is a
    table that cannot be parsed or whose header is about the memories (``records_about``),
    and any other file (a report: it has no cases to tell apart).

    What a table or a JSON document keeps is judged again, until nothing more goes: whether
    a table's first row of labels is its header hangs on the rows under it
    (``_heads_the_table``), and whether a dataset's name is its own on the cases beside it
    (``_dataset_label``). Once those went, the verification, which reads what was kept, found
    the words there, and the step failed until a second run (stop 66's review).
    """
    from memory_core.exports import write_json_atomic, write_text_atomic

    text = _read_text(path)
    if text is None:
        return 0
    kind = _text_kind(path, text)
    records = table_records(path, text) if kind == "table" else None
    if records:
        kept = _records_kept(path, records, residue)
        if kept is not None:  # the header stays, and the records not about
            with path.open("rb") as original:  # a spreadsheet's "CSV UTF-8" keeps its mark
                mark = "\ufeff" if original.read(3) == codecs.BOM_UTF8 else ""
            write_text_atomic(path, mark + "".join(raw for raw, _ in kept))
            return 1
    if kind in ("table", "text"):
        path.unlink(missing_ok=True)
        return 1
    if kind == "lines":
        kept = [line for line in jsonl_lines(text) if not residue.line_about(line)]
        # Never truncated in place: a worker killed mid-write left the dataset empty, and
        # the next run verified the empty file.
        write_text_atomic(path, "\n".join(kept) + ("\n" if kept else ""))
        return 1
    try:
        document = json_loads(text)
    except ValueError:
        document = _DROP
    while document is not _DROP and (pruned := _prune(document, residue)) != document:
        document = pruned
    if document is _DROP:
        path.unlink(missing_ok=True)
        return 1
    write_json_atomic(path, document)
    return 1


def _records_kept(path: Path, records: list[tuple[str, list[str]]], residue: Residue):
    """Return the records of a table that are not about the memories, judged again until none
    more goes (``_rewrite_file``); or None when the header is about them: the table goes."""
    while True:
        about = residue.records_about(path, records)
        header = table_header(path, records, residue)
        if header is not None and about[header]:
            return None
        kept = [record for record, gone in zip(records, about, strict=True) if not gone]
        if len(kept) == len(records):
            return kept
        records = kept


def _runs_holding(ctx: DeletionContext, hashes: set[str]) -> list[uuid.UUID]:
    """Return the evaluation runs' tenants (``Tenant.evaluation_run``) holding a memory whose
    content hash is one of ``hashes``: a run kept with ``eval_retrieval --keep`` (or one that
    crashed before its cleanup) copied a dataset's words into a tenant of its own. Read in
    platform mode: the worker acts for the operation's tenant, and the runs are others.

    Never the operation's own tenant: a deletion inside a kept run (``delete_tenant`` of it,
    a subject's) keeps its scrubbed rows' hashes, and removing the tenant took the operation,
    its steps and the tenant's record with it (stop 53's review)."""
    if not hashes:
        return []
    with platform_scope("deletion: evaluation runs holding the words"):
        runs = (
            Tenant.objects.filter(evaluation_run=True)
            .exclude(pk=ctx.operation.tenant_id)
            .values("pk")
        )
        held = Memory.objects.filter(tenant_id__in=runs, content_hash__in_array=sorted(hashes))
        return sorted(set(held.values_list("tenant_id", flat=True)))


def evaluation_runs_remove(tenant_ids) -> int:
    """Remove evaluation runs' tenants (``Tenant.evaluation_run``, never another) whole; return
    how many. A deletion's evaluation step and the runs' own cleanups (``evaluation.harness``,
    ``evaluation.locomo``) all remove them here, in one lock order (memory_core.locks): the
    tenant rows first, in id order, then the cascade. A run still going inserts traces and
    agents naming its tenant: one inserted after the cascade had read the rows failed the
    delete on a foreign key, and a cleanup deleting the rows first deadlocked against a
    removal holding the tenant row (stop 53's reviews). Locked first, the run's inserts wait,
    then fail on the tenant gone, which the run reports (``harness.RUN_REMOVED``)."""
    if not tenant_ids:
        return 0
    with platform_scope("evaluation runs removed"), transaction.atomic():
        runs = Tenant.objects.filter(pk__in=list(tenant_ids), evaluation_run=True)
        removed = len(runs.select_for_update().order_by("pk").values_list("pk", flat=True))
        runs.delete()
    return removed


def evaluation_run_reached(tenant_ids, since) -> int:
    """Remove those of an evaluation run's tenants ``tenant_ids`` that hold a memory whose
    content hash a deletion not completed before ``since`` tombstoned, whole; return how many.

    A run asks once its load has committed, ``since`` being when the load began: a deletion's
    evaluation step (``_runs_holding``) sees none of the rows of a load still in its
    transaction, so one that verified meanwhile completed, the load then committed the
    deleted words, and a kept run held them under a completed operation, which nothing
    revisits (stop 59's audit of eval). A deletion yet to reach its step counts too: the step
    would remove the run anyway. One completed before the load began does not: the files it
    scrubbed no longer hold its words, and a dataset kept elsewhere may hold the same words
    as anyone's deletion of long ago.

    ``since`` is on the database's clock (``memory_core.clock``), as ``completed_at`` is: the
    command host's against the worker's, a deletion completed during the load on a worker
    seconds behind read as completed before it (stop 65's audit of deletion)."""
    unfinished = DeletionOperation.objects.filter(
        Q(completed_at__isnull=True) | Q(completed_at__gte=since)
    )
    deleted = (
        Tombstone.objects.filter(operation__in=unfinished)
        .exclude(content_hash__in=["", EMPTY_HASH])
        .values("content_hash")
    )
    with platform_scope("evaluation run: deletions while it loaded"):
        held = Memory.objects.filter(tenant_id__in=list(tenant_ids), content_hash__in=deleted)
        reached = sorted(set(held.values_list("tenant_id", flat=True)))
    return evaluation_runs_remove(reached)


class EvaluationStore(Store):
    phase = "files"
    name = "evaluation"
    description = (
        "evaluation datasets and reports built from production memories: every file in "
        "MEMLEDGER_EVAL_DATA_DIRS (linked subfolders too); in JSON/JSONL every case naming the "
        "memory (any letter case, or as hex) or holding a copy of its content is removed, in "
        "CSV/TSV every such record, any other file naming it is removed whole; a copy in a "
        "case of another tenant (it "
        "names that tenant, or other memories, and not the memory's tenant) stays; a file "
        "that cannot be read fails the step; an evaluation run's tenant (a run kept with "
        "--keep) holding a copy of the content is removed whole, whoever's words they were"
    )
    # The folders are every tenant's: what the purge removed, how many files are left and how
    # long it took would tell an agent, sentence by sentence, whether a file held words it
    # wrote and deleted (a bare copy, whoever's it is, still goes). The stored step keeps them.
    withheld = frozenset({"purged", "files_scanned", "ms"})

    def purge(self, ctx):
        rewritten = 0
        if ctx.memory_ids:
            # A run's copy goes whatever the case names: it is an operator's inspection copy,
            # made again by running the dataset again, never anyone's own memories.
            runs = evaluation_runs_remove(_runs_holding(ctx, ctx.content_hashes()))
            residue = ctx.residue(content=True)
            files, _ = _eval_files(leave_new=True)
            for path in files:
                try:
                    about = residue.in_file(path)
                except (OSError, UnicodeDecodeError):
                    continue  # left for the verification to report
                if about:
                    lock_file(path)  # then read again: another operation may have rewritten it
                    rewritten += _rewrite_file(path, residue)
            return {"rewritten": rewritten, "runs_removed": runs}
        return {"rewritten": rewritten}

    def verify(self, ctx):
        files, unreadable = _eval_files()
        residue = ctx.residue(content=True)
        citing = with_content = 0
        for path in files:
            try:
                text = _read_text(path)
            except (OSError, UnicodeDecodeError):
                unreadable.append(str(path))
                continue
            if text is None:
                continue
            names, copies = residue.in_text(path, text)
            citing += names
            with_content += copies
        missing = eval_dirs_missing()
        # Counts only: the evidence is answered to API clients (``GET /api/v1/deletions/{id}``),
        # who are told neither the server's folders nor its files. What is wrong, by path, goes
        # to the step's ``last_error`` (``OPERATOR_DETAIL``), which reviewers and the log see.
        evidence = {
            "dirs": len(settings.MEMLEDGER_EVAL_DATA_DIRS),
            "files_scanned": len(files),
            "files_citing": citing,
            "files_with_content": with_content,
            "files_unreadable": len(unreadable),
            "content_hashes": len(residue.hashes),
            "runs_with_content": len(_runs_holding(ctx, residue.hashes)),
        }
        problems, details = [], []
        if missing:
            evidence["missing_dirs"] = len(missing)
            problems.append(
                f"{len(missing)} evaluation folder(s) configured are not folders: an operator "
                "must fix the setting (or create the folder), then retry"
            )
            details.append(
                f"MEMLEDGER_EVAL_DATA_DIRS names {', '.join(map(repr, missing))}, which is not "
                "a folder: fix the setting (or create the folder), then retry"
            )
        if unreadable:
            problems.append(
                f"{len(unreadable)} file(s) or folder(s) in the evaluation folders cannot be read "
                "as UTF-8 text, so nothing says they do not hold the memory: an operator must "
                "deal with them, then retry"
            )
            shown = ", ".join(map(repr, unreadable[:5]))
            more = f" and {len(unreadable) - 5} more" if len(unreadable) > 5 else ""
            details.append(
                f"the evaluation folders hold {shown}{more}, which the worker cannot read as "
                "UTF-8 text, so nothing says it does not hold the memory: make it readable "
                "(or convert it to UTF-8 text, or move it out), then retry"
            )
        if problems:
            evidence["problem"] = "; ".join(problems)
            evidence[OPERATOR_DETAIL] = "; ".join(details)
        ok = (
            citing == 0
            and with_content == 0
            and not evidence["runs_with_content"]
            and not missing
            and not unreadable
        )
        return ok, evidence


# --- a whole tenant's identities -----------------------------------------------------------


class IdentitiesStore(Store):
    """Who the deleted tenant's memories were about and who used them: a tenant's deletion only.

    Subjects keep their row (tombstones and operations name it) but lose the name and the id
    the tenant's agents knew them by (``external_id`` becomes the row's own id, and an
    operation's digest of a user id, which a replay records, is cleared); portal logins
    of the tenant are removed (a login that is staff keeps its user, without the membership);
    agents are deactivated and their keys revoked (the request revoked them already). The
    Django admin's history of those subjects, logins and their users names each object by its
    id instead of its text (a subject's was ``tenant:external id``, a login's its username):
    it kept them after the rows were cleared. Their change message is scrubbed too: the admin's
    JSON names a related row by its text (a membership added inline, by the username), which
    goes, its actions and fields' labels staying (``admin_change_message_scrubbed``). A
    login's entries are found by its row, which the purge deletes: the purge records their ids
    (its ``purged`` evidence, ``ADMIN_LOG_ENTRIES``), the verification checks those and a
    later purge names them again (until stop 69 it checked the subjects' entries only, and a
    username put back into a login's entry passed). The lines the tenant's logins' access
    taken away owe (``LoginAccessLine``, by their line's tenant) are dropped, appended first
    if not yet: they name each login by its username's digest, and until stop 64's review by
    the username itself, for the backups' 36 days after the tenant was gone.
    """

    name = "identities"
    description = (
        "a whole tenant only: subjects' display names cleared and external ids replaced by "
        "their row id (and the user ids' digests a replay recorded on operations cleared), "
        "the tenant's portal logins removed (and the journal lines their access taken away "
        "owed dropped), its agents deactivated and keys revoked, and the admin's history of "
        "its subjects and logins named by id, the rows its change messages name left out"
    )
    targets = frozenset({DeletionOperation.Target.TENANT})
    # The key of the purge's evidence that lists the admin history entries about the logins,
    # memberships and users it removed (LogEntry ids: the rows that said whose they were are
    # gone), for the verification and the next purge.
    ADMIN_LOG_ENTRIES = "admin_log_entries_of_logins"
    # A failed run keeps them (a purge that committed deleted the rows that found them), and
    # clients are not answered them: tens of thousands of ids for a large tenant's logins.
    recorded = frozenset({ADMIN_LOG_ENTRIES})

    _STATS_SQL = """
        SELECT
          (SELECT count(*) FROM memory_core_subject s WHERE s.tenant_id = %(tenant)s
            AND (s.display_name <> '' OR s.external_id <> s.id::text)),
          (SELECT count(*) FROM memory_core_deletionoperation o WHERE o.tenant_id = %(tenant)s
            AND o.user_id_sha256 <> ''),
          (SELECT count(*) FROM memory_core_portalmembership m WHERE m.tenant_id = %(tenant)s),
          (SELECT count(*) FROM memory_core_loginaccessline l
            WHERE l.entry ->> 'tenant_id' = %(tenant)s::uuid::text),
          (SELECT count(*) FROM memory_core_agent a WHERE a.tenant_id = %(tenant)s
            AND a.is_active),
          (SELECT count(*) FROM memory_core_apikey k JOIN memory_core_agent a ON a.id = k.agent_id
            WHERE a.tenant_id = %(tenant)s AND k.revoked_at IS NULL),
          (SELECT count(*) FROM django_admin_log l JOIN django_content_type t
             ON t.id = l.content_type_id AND t.app_label = 'memory_core' AND t.model = 'subject'
            JOIN memory_core_subject s ON s.id::text = l.object_id
            WHERE s.tenant_id = %(tenant)s AND l.object_repr <> l.object_id)
    """
    # A subject whose external id is another subject's row id (an agent wrote for the user
    # "<that subject's UUID>") holds the value the other one gets. PostgreSQL checks the
    # unique (tenant, external_id) row by row, so the one UPDATE that names every subject by
    # its own id failed while that subject still held it, and the phase rolled back at every
    # retry. So first every subject whose external id is spelt as a row id is (whether or not
    # a subject has that id) takes a random one, which the UPDATE then replaces by its own id.
    # No join finds those that block: with a tenant's fresh rows (no statistics yet) its plan
    # was a nested loop over the subjects squared, 3 minutes for 66,000.
    _UNBLOCK_SQL = """
        UPDATE memory_core_subject SET external_id = 'erasing:' || gen_random_uuid()
        WHERE tenant_id = %(tenant)s AND external_id ~ %(pattern)s AND external_id <> id::text
    """

    def _stats(self, ctx) -> dict:
        with connections["default"].cursor() as cursor:
            cursor.execute(self._STATS_SQL, {"tenant": str(ctx.operation.tenant_id)})
            subjects, digests, logins, lines, agents, keys, logged = cursor.fetchone()
        # A change message's residue is judged in Python (``admin_change_message_scrubbed``),
        # on the entries that hold one: a subject's entry named by id is counted once.
        of_subjects = _admin_log_about(
            {Subject: Subject.objects.filter(tenant_id=ctx.operation.tenant_id)}
        )
        logged += _admin_log_messages_left(of_subjects, renamed_only=True)
        of_logins = _admin_log_messages_left(_admin_log_with_ids(self._recorded_entries(ctx)))
        return {
            "subjects_with_identity": subjects,
            "operations_naming_user_ids": digests,
            "portal_logins": logins,
            "login_access_lines": lines,
            "active_agents": agents,
            "unrevoked_keys": keys,
            "admin_log_naming_subjects": logged,
            "admin_log_naming_logins": of_logins,
        }

    def _recorded_entries(self, ctx) -> list[int]:
        """Return the admin history entries about logins the step's last purge recorded."""
        return [int(pk) for pk in ctx.last_purge(self.name).get(self.ADMIN_LOG_ENTRIES) or []]

    def purge(self, ctx):
        from django.contrib.auth import get_user_model
        from django.db.models import CharField
        from django.db.models.functions import Cast

        from memory_core.deletion.ledger import ledger_catch_up
        from memory_core.models import (
            Agent,
            ApiKey,
            LoginAccessLine,
            PortalMembership,
            ReviewItem,
            Subject,
        )

        tenant_id = ctx.operation.tenant_id
        now = timezone.now()
        own_id = Cast("id", output_field=CharField())
        with connections["default"].cursor() as cursor:
            cursor.execute(self._UNBLOCK_SQL, {"tenant": str(tenant_id), "pattern": UUID_PATTERN})
        subjects = (
            Subject.objects.filter(tenant_id=tenant_id)
            .exclude(display_name="", external_id=own_id)
            .update(display_name="", external_id=own_id)
        )
        # A replay's record of a person's user id, by its digest (``ledger.user_id_named``):
        # a guessable id (an email) is found from it.
        digests = (
            DeletionOperation.objects.filter(tenant_id=tenant_id)
            .exclude(user_id_sha256="")
            .update(user_id_sha256="")
        )
        logins = PortalMembership.objects.filter(tenant_id=tenant_id)
        removed = get_user_model().objects.filter(
            memledger_membership__tenant_id=tenant_id, is_staff=False, is_superuser=False
        )
        # A login that decided another tenant's review (a reviewer an administrator moved
        # here) keeps its user, deactivated, as that tenant's audit trail names it: deleted,
        # Django cleared the decider under this tenant's row-level security, which does not
        # see the other's item, the foreign key refused, and the phase rolled back at every
        # attempt (stop 55's audit of a tenant's deletion). Its membership goes.
        with platform_scope("deletion: reviews other tenants' logins decided"):
            deciders = list(
                ReviewItem.objects.exclude(tenant_id=tenant_id)
                .filter(resolved_by__in=removed.values("pk"))
                .values_list("resolved_by_id", flat=True)
                .distinct()
            )
        get_user_model().objects.filter(pk__in=deciders).update(is_active=False)
        removed = removed.exclude(pk__in=deciders)
        # Before the rows go: afterwards nothing says which history was the tenant's. The
        # entries about logins are recorded (with those an earlier purge did, whose rows are
        # gone), for the verification and the next purge; a subject's row stays and says.
        of_logins = sorted(
            set(_admin_log_ids({PortalMembership: logins, get_user_model(): removed}))
            | set(self._recorded_entries(ctx))
        )
        # Recorded at once: a purge that raises after the rows went (its writes commit with
        # the phase) leaves the runner this record to keep (``Store.recorded``).
        ctx.purge_done(self.name, {self.ADMIN_LOG_ENTRIES: of_logins})
        logged = _admin_log_by_id(
            {Subject: Subject.objects.filter(tenant_id=tenant_id)}, entries=of_logins
        )
        users, _ = removed.delete()
        memberships, _ = logins.delete()
        # A line not appended yet (its append failed) is appended first: a staff login's, kept.
        owed = LoginAccessLine.objects.filter(entry__tenant_id=str(tenant_id))
        ledger_catch_up([line.entry for line in owed.filter(journaled_at=None)])
        lines, _ = owed.delete()
        agents = Agent.objects.filter(tenant_id=tenant_id, is_active=True).update(is_active=False)
        keys = ApiKey.objects.filter(agent__tenant_id=tenant_id, revoked_at=None).update(
            revoked_at=now
        )
        purged = {
            "subjects_cleared": subjects,
            "operation_user_ids_cleared": digests,
            "admin_log_entries_named_by_id": logged,
            self.ADMIN_LOG_ENTRIES: of_logins,
            "portal_users_removed": users,
            "memberships_removed": memberships,
            "login_access_lines_dropped": lines,
            "agents_deactivated": agents,
            "keys_revoked": keys,
        }
        ctx.purge_done(self.name, purged)
        return purged

    def verify(self, ctx):
        stats = self._stats(ctx)
        return not any(stats.values()), stats


# The keys of the admin's change message (``LogEntry.change_message``, JSON): each action
# ``{"added" | "changed" | "deleted": {"name", "object", "fields"}}``, a related row's text in
# ``object``, its model's name in ``name`` and the form's labels in ``fields``.
_ADMIN_ACTIONS = frozenset({"added", "changed", "deleted"})
_ADMIN_ACTION_KEYS = frozenset({"name", "object", "fields"})


def admin_change_message_scrubbed(message: str) -> str:
    """Return a Django admin history entry's change message without the text of any row: in
    the admin's JSON each related row's ``object`` is made ``""``, and the actions, models'
    names and fields' labels stay, so the object's history still says "Added.", "Changed
    External id." (until stop 69's review the message was cleared whole, and a deleted
    tenant's subject's history showed each entry's date and author and no action); any other
    message (free text, or JSON of another shape) is cleared. A scrubbed message is its own
    scrub (the verification's test)."""
    if not message:
        return ""
    try:
        actions = json.loads(message)
    except ValueError:
        return ""
    if not isinstance(actions, list):
        return ""
    kept = []
    for action in actions:
        if not isinstance(action, dict) or len(action) != 1:
            return ""
        ((verb, detail),) = action.items()
        if verb not in _ADMIN_ACTIONS or not isinstance(detail, dict):
            return ""
        if set(detail) - _ADMIN_ACTION_KEYS or not isinstance(detail.get("name", ""), str):
            return ""
        fields = detail.get("fields", [])
        if not isinstance(fields, list) or not all(isinstance(label, str) for label in fields):
            return ""
        kept.append({verb: {**detail, "object": ""} if "object" in detail else detail})
    return json.dumps(kept)


def _admin_log_about(rows_of: dict) -> Q:
    """Return the test for the Django admin history entries about the rows of ``rows_of``
    (model: queryset).

    The rows are named by a subquery, whatever their number: a list of their ids bound one
    parameter each, and a tenant of more than 65,535 subjects could never be deleted ("number
    of parameters must be between 0 and 65535", the phase rolled back at every retry).
    """
    from django.contrib.contenttypes.models import ContentType
    from django.db.models import TextField
    from django.db.models.functions import Cast

    about = Q(pk__in=[])  # nothing until a model is added (an empty Q() would match all)
    for model, rows in rows_of.items():
        # The history names an object by its primary key as text (LogEntry.object_id).
        ids = rows.annotate(logged_as=Cast("pk", output_field=TextField())).values("logged_as")
        about |= Q(content_type=ContentType.objects.get_for_model(model), object_id__in=ids)
    return about


def _admin_log_ids(rows_of: dict) -> list[int]:
    """Return the ids of the Django admin history entries about the rows of ``rows_of``."""
    from django.contrib.admin.models import LogEntry

    return list(LogEntry.objects.filter(_admin_log_about(rows_of)).values_list("pk", flat=True))


def _int_array(values) -> str:
    """Return integers as one PostgreSQL array literal (``%s::integer[]``): one parameter."""
    return "{" + ",".join(str(int(value)) for value in values) + "}"


def _admin_log_with_ids(entries) -> Q:
    """Return the test for the admin history entries of ids ``entries``: one array parameter,
    whatever their number (a subquery cannot name deleted rows)."""
    from django.db.models.expressions import RawSQL

    if not entries:
        return Q(pk__in=[])
    return Q(pk__in=RawSQL("SELECT unnest(%s::integer[])", [_int_array(entries)]))


def _by_id():
    """An entry's object id as its text: '' for NULL (the column allows it; a recorded entry
    edited by hand), rather than failing the NOT NULL column."""
    from django.db.models import TextField, Value
    from django.db.models.functions import Coalesce

    return Coalesce("object_id", Value(""), output_field=TextField())


def _admin_log_messages_left(about: Q, *, renamed_only: bool = False) -> int:
    """Return how many admin history entries of ``about`` still name a row: by their text
    (unless ``renamed_only``: the caller counted those) or in their change message."""
    from django.contrib.admin.models import LogEntry

    rows = (
        LogEntry.objects.filter(about)
        .annotate(by_id=_by_id())
        .filter(~Q(object_repr=F("by_id")) | ~Q(change_message=""))
        .values_list("object_repr", "by_id", "change_message")
    )
    left = 0
    for text, by_id, message in rows.iterator(chunk_size=2000):
        if text != by_id:
            left += not renamed_only
        elif admin_change_message_scrubbed(message) != message:
            left += 1
    return left


def _admin_log_by_id(rows_of: dict, *, entries=()) -> int:
    """Name by its id each Django admin history entry about the rows of ``rows_of`` (model:
    queryset), and those of ``entries`` (LogEntry ids), and scrub its change message
    (``admin_change_message_scrubbed``); return how many entries changed."""
    from django.contrib.admin.models import LogEntry

    about = _admin_log_about(rows_of) | _admin_log_with_ids(entries)
    of_them = LogEntry.objects.filter(about).annotate(by_id=_by_id())
    renamed = set(of_them.filter(~Q(object_repr=F("by_id"))).values_list("pk", flat=True))
    of_them.filter(~Q(object_repr=F("by_id"))).update(object_repr=_by_id())
    scrubbed = []
    for pk, message in of_them.exclude(change_message="").values_list("pk", "change_message"):
        left = admin_change_message_scrubbed(message)
        if left != message:
            scrubbed.append(LogEntry(pk=pk, change_message=left))
    LogEntry.objects.bulk_update(scrubbed, ["change_message"], batch_size=1000)
    return len(renamed | {entry.pk for entry in scrubbed})


# --- queued reprocessing and replicas -----------------------------------------------------


class QueuedReprocessingStore(Store):
    name = "queued_reprocessing"
    description = (
        "tasks already queued for the memory (re-embedding, ...): every memory task checks "
        "the tombstone ledger before it acts, so a queued task does nothing"
    )

    def purge(self, ctx):
        # Nothing to take out of the broker: the ledger (written with the request) is what
        # every queued task consults.
        return {}

    def verify(self, ctx):
        from memory_core.tasks import MEMORY_TASKS

        tombstones = Tombstone.objects.filter(memory_id__in_array=ctx.memory_ids).count()
        unguarded = [
            task.name for task in MEMORY_TASKS if not getattr(task, "tombstone_guarded", False)
        ]
        return tombstones == len(ctx.memory_ids) and not unguarded, {
            "tombstones": tombstones,
            "memory_tasks": sorted(task.name for task in MEMORY_TASKS),
            "unguarded_tasks": unguarded,
        }


class ReplicasStore(Store):
    phase = "replicas"
    name = "replicas"
    description = (
        "read replicas named in MEMLEDGER_REPLICA_DATABASES: the replica must hold the "
        "tombstones and no content (physical replication applies the purge; lag is retried)"
    )

    def applies(self):
        return bool(settings.MEMLEDGER_REPLICA_DATABASES)

    def purge(self, ctx):
        return {}

    def verify(self, ctx):
        replicas = {}
        ok = True
        for alias in settings.MEMLEDGER_REPLICA_DATABASES:
            # Acting for the operation's tenant on the replica's own connection: under
            # row-level security one without it sees no row, so no tombstone (the step never
            # passed) and no content (a lagging replica would have passed).
            with tenant_atomic(ctx.operation.tenant_id, using=alias):
                tombstones = (
                    Tombstone.objects.using(alias)
                    .filter(memory_id__in_array=ctx.memory_ids)
                    .count()
                )
                residue = (
                    Memory.objects.using(alias)
                    .filter(pk__in_array=ctx.memory_ids)
                    .filter(_dirty())
                    .count()
                )
            replicas[alias] = {"tombstones": tombstones, "rows_with_content": residue}
            ok = ok and residue == 0 and tombstones == len(ctx.memory_ids)
        return ok, {"replicas": replicas}


REGISTRY: dict[str, Store] = {
    store.name: store
    for store in (
        PrimaryStore(),
        EventsStore(),
        IdentitiesStore(),
        EmbeddingsStore(),
        FullTextStore(),
        TracesStore(),
        QueuedReprocessingStore(),
        RetrievalCacheStore(),
        SummariesStore(),
        ExportsStore(),
        EvaluationStore(),
        ReplicasStore(),
    )
}


def active_stores(target: str | None = None) -> list[Store]:
    """Return the stores of this deployment an operation of ``target`` has a step in, in the
    order a run visits them (without a target: those every operation has)."""
    return [
        store
        for store in REGISTRY.values()
        if store.applies() and (store.targets is None or target in store.targets)
    ]


def verify_all(ctx: DeletionContext) -> dict[str, tuple[bool, dict]]:
    """Run every active store's verification (the benchmark's and replay's residue check)."""
    return {store.name: store.verify(ctx) for store in active_stores(ctx.operation.target)}
