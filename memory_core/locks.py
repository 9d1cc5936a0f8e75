"""Transaction-scoped advisory locks: where two transactions must take turns.

- ``lock_memory_keys``: writes, corrections, approvals and conflict resolutions on one
  (subject, memory_key).
- ``subject_deletion_lock`` (exclusive) against the retrievals of the subject (shared, taken
  in the read path's first query with ``SUBJECT_LOCK_PREFIX``), its exports
  (``subject_shared_lock``) and the writes about it (``with_subject_shared_lock``).

Each is held until the transaction ends; each key is hashed to PostgreSQL's 64-bit lock space
(a collision only makes two unrelated transactions take turns).

The order every path takes its locks in, so that no two wait for each other in a cycle:

- a write or a correction: the key's lock, the subjects' locks shared, then memory rows in id
  order (the heads it reads), then the key's open conflict at its place (``conflict_open``);
- an approval (a rejection: its pending row, then its item): the key's lock, the subject's
  lock shared, its pending row, then its review item and the key's open conflicts in id order
  (a revoke of the pending write locks the row, then closes the item; a deletion run's events
  step locks the items citing a deleted memory in id order), then the key's head;
- a conflict's resolution: the key's lock, then its review item, then its candidates' rows in
  id order (a write of lower authority holds the key's head and then locks the item: without
  the key's lock the two deadlocked);
- a deletion run's database phase: the review items it purges in id order (events step),
  then the traces it deletes (in the table's order; the retention sweep's ``traces_expire``
  skips the traces anyone holds, ``SKIP LOCKED``: it never waits for a run);
- a replay after a restore (``replay._restore_operation``): the subjects' locks (a whole
  tenant: its rows and its tenant row, as its request takes them below), the operation's
  memory rows in id order, then their scrub (one UPDATE, which on its own takes them in the
  table's order: a conflict's resolution holding a candidate of a smaller id deadlocked with
  it);
- a deletion request: the subject's row (``FOR NO KEY UPDATE``, whole-subject requests only),
  the subject's lock, then its memory rows in id order;
- a whole tenant's request: its memory rows in id order, then the tenant row (``FOR UPDATE``,
  which the key-share lock of every insert of the tenant waits for), then, without waiting,
  the rows again: one committed in between and held by another path is waited for with the
  tenant row let go (a savepoint), since that path takes the tenant row's key-share lock
  last (at its insert, or at commit for its events' foreign keys); after
  ``TENANT_LOCK_ROUNDS`` such rounds the request gives up (``tenant_busy``).

- a task's close (``services.tasks.task_close``): the subject's lock shared, then the task's
  memory rows in id order;
- a revoke (or consent withdrawal): its memory row, then its pending write's review item,
  then the conflicts citing it (``SKIP LOCKED``: it never waits for a resolution).

No deletion takes a key's lock, so a write holding one never waits for a deletion that waits
for it. Retrievals and exports hold only the subject's lock, shared; the rows they and writes
insert take the subject row's key-share lock, which ``FOR NO KEY UPDATE`` does not block.
``tests/deletion/test_concurrency.py`` runs them all at once on one subject.
"""

from django.db import connection
from django.db.models import TextField
from django.db.models.expressions import RawSQL


def lock_memory_keys(tenant_id, keys) -> None:
    """Hold, until the transaction ends, the lock of each (subject external id, memory_key).

    Whatever reads a key's head and then writes on the key (a write, a correction, an
    approval) takes it first, in sorted order: two writes on one key then run one after the
    other, so the second supersedes the first instead of failing or starting a second chain.
    """
    names = sorted({f"{tenant_id}/{subject}/{key}" for subject, key in keys if key})
    if not names:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_advisory_xact_lock(hashtextextended(name, 0))) "
            "FROM (SELECT name FROM unnest(%s::text[]) AS name ORDER BY name) AS keys",
            [names],
        )


# The lock a retrieval holds shared on its subject (memory_core.retrieval.pipeline,
# _LOOKUP_SQL) and a deletion request takes exclusive. Keep both in step.
SUBJECT_LOCK_PREFIX = "memledger.subject:"


def subject_shared_lock(subject_id) -> None:
    """Hold the subject's lock shared until the transaction ends: a deletion request of the
    subject waits for this transaction (an export being written) to commit first, so its
    steps then find what it wrote. Retrievals take the same lock in their first query."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock_shared(hashtextextended(%s, 0))",
            [f"{SUBJECT_LOCK_PREFIX}{subject_id}"],
        )


def subject_deletion_lock(subject_id) -> None:
    """Wait until the subject's in-flight retrievals have committed; hold it until commit.

    A retrieval that read a memory before its deletion commits would otherwise write a trace
    citing it after the traces step had verified there was none. Taken exclusive here, before
    any row lock, and shared by every retrieval of the subject for its whole transaction.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"{SUBJECT_LOCK_PREFIX}{subject_id}"],
        )


def with_subject_shared_lock(subjects):
    """Return the Subject queryset ``subjects`` taking each row's lock shared as it is read.

    Writes and corrections read their subjects this way (no extra query): a deletion request
    of a subject (or of one of its keys) then waits for the write to commit and reads the rows
    it inserted, so a new version of a chain the deletion takes is deleted with it. Without
    the lock the deletion read the subject's rows before the write committed and waited only
    for the head's row lock: the new version survived, the active head of a deleted chain.
    Held until the transaction ends; shared locks never wait for each other, and a deletion
    holds one subject's lock only, so the order they are taken in does not matter.
    """
    return subjects.annotate(
        subject_shared_lock=RawSQL(
            "pg_advisory_xact_lock_shared(hashtextextended(%s || memory_core_subject.id::text, 0))"
            "::text",
            [SUBJECT_LOCK_PREFIX],
            output_field=TextField(),
        )
    )
