"""Transaction-scoped advisory locks: where two transactions must take turns.

- ``lock_memory_keys``: writes, corrections, approvals and conflict resolutions on one
  (subject, memory_key), the subject's memories without a key counting as one key; and, with
  ``writes_of``, all the writes and corrections about one subject (the split-write rule
  reads the subject's recent writes: writes about it take turns).
- ``subject_deletion_lock`` (exclusive) against the retrievals of the subject (shared, taken
  in the read path's first query with ``SUBJECT_LOCK_PREFIX``), its exports
  (``subject_shared_lock``) and the writes about it (``subjects_shared_locked``). None
  of them waits for a deletion longer than ``MEMLEDGER_SUBJECT_LOCK_WAIT`` seconds.
- ``unknown_users_deletion_lock`` (exclusive, a whole subject's traces step) against the
  retrievals for the person made while no subject named them (shared, only tried, in the
  read path's first query with ``unknown_user_lock_name``): there is no subject row or
  subject's lock yet, so the lock is named by the tenant and the digest of the user id.

Each is held until the transaction ends; each key is hashed to PostgreSQL's 64-bit lock space
(a collision only makes two unrelated transactions take turns).

The order every path takes its locks in, so that no two wait for each other in a cycle:

- a write or a correction: the key's lock with its subjects' locks of writes (one statement,
  so in one order; a correction takes them again in ``_run``, already held), the subjects'
  locks shared, then memory rows in id order (the heads it reads), the subjects it creates
  in external id order (an insert waits for another transaction inserting the same one),
  then the locks shared of those another transaction created meanwhile
  (``services.memories.subjects_ensure_locked``; a deletion holding one is waited for at
  most ``MEMLEDGER_SUBJECT_LOCK_WAIT``, and needs no row the write holds: it read none of
  that subject's),
  then the key's open conflict at its place (``conflict_open``,
  which locks it only to add rows or to open it; a batch's in (subject, memory_key, place)
  order, ``services.writes._review_order``; a keyless one, the item citing its rows);
- an approval (a rejection: the subject's lock shared, its pending row, then its item): the
  key's lock, the subject's lock shared, its pending row, then its review item and the key's
  open conflicts in id order (a revoke of the pending write locks the row, then closes the
  item; a deletion run's events step locks the items citing a deleted memory in id order),
  then the key's head;
- a conflict's resolution: the key's lock, the subject's lock shared, then its review item,
  then its candidates' rows in id order (a write of lower authority holds the key's head and
  then locks the item: without the key's lock the two deadlocked; taken after the item, the
  subject's lock queued behind a deletion waiting for a retrieval that waited for the item);
- a deletion run's database phase: the events it scrubs, then the review items it purges,
  each in id order (events step), then, a whole subject's, the locks of the person's
  retrievals made before they were known (``unknown_users_deletion_lock``: a retrieval only
  tries it, so it waits in no cycle), then the traces it scrubs or deletes in id order (the
  events' and the traces' statements took them in their plans' orders until stop 69, and two
  runs reaching the same rows could deadlock; the retention sweep's ``traces_expire``
  skips the traces anyone holds, ``SKIP LOCKED``: it never waits for a run); its cache steps
  hold a subject's (or the tenant's) cache generation lock over one cache read and write
  (``retrieval_cache._one_bump_at_a_time``, a session's lock, so it lives there, not here):
  its holder waits for no database lock and lets it go before the phase's next statement,
  so a run waiting for it is in no cycle;
- a replay after a restore (``replay._restore_operation``): the subjects' locks (a whole
  tenant: its rows and its tenant row, as its request takes them below), the operation's
  memory rows in id order, then their scrub (one UPDATE, which on its own takes them in the
  table's order: a conflict's resolution holding a candidate of a smaller id deadlocked with
  it);
- a deletion request: the subject's row (``FOR NO KEY UPDATE``, whole-subject requests only),
  the subject's lock, then its memory rows in id order; one queued for a worker
  (``deletion.services.deletion_request_or_queue``): the subject's row, then the subject's
  lock, held while the caller's reach is checked and the mark written; the worker's run of a
  queued one (``queued_subject_deletion_run``): the subject's row, then the subject's lock,
  then its memory rows, before it reads what another deletion took meanwhile (the subject's
  row alone, ``of=("self",)``: the ordering of ``Subject`` joins the tenant row, which
  ``FOR NO KEY UPDATE`` locked too, for the whole run);
- a whole tenant's request (and its replay): the rows of its subjects whose deletion is
  queued, in id order (``deletion.services.queued_subjects_lock``: it clears their marks,
  and a queued run holds its subject's row while it waits for the memory rows), its memory
  rows in id order, then the tenant row (``FOR UPDATE``,
  which the key-share lock of every insert of the tenant waits for), then, without waiting,
  the rows again: one committed in between and held by another path is waited for with the
  tenant row let go (a savepoint), since that path takes the tenant row's key-share lock
  last (at its insert, or at commit for its events' foreign keys); after
  ``TENANT_LOCK_ROUNDS`` such rounds the request gives up (``tenant_busy``).

- a retrieval: the subject's lock shared (its first query; for a user no subject names, the
  user's lock shared, ``unknown_user_lock_name``, only tried), then the open conflict items it
  adds rows to, in (memory_key, place) order (``retrieval.pipeline._open_reviews``); an item
  that already holds every row it saw is read without a lock (``conflict_open``), and a first
  open waits for a concurrent one's transaction on the constraint
  ``review_one_open_conflict_per_place``, in the same order. Locked in the clarifications'
  score order, which depends on the query, two retrievals of one subject deadlocked;
- an evaluation run's removal (``deletion.stores.evaluation_runs_remove``: a deletion's
  evaluation step and the run's own cleanup): the run's tenant rows in id order, then their
  rows (the cascade); a run still inserting waits for the tenant row, then fails on it gone;
- a task's close (``services.tasks.task_close``): the subject's lock of writes (as a write
  takes it: one in flight commits first, so the close reads its row), the subject's lock
  shared, then the task's
  writes waiting for a reviewer in id order (an approval takes its pending row before the
  key's head), each in a savepoint that lets it go when the row no longer waits (approved
  meanwhile, it is the key's head, which the next approval locks: held, the two deadlocked),
  then its active rows in id order, then, in another statement, the new
  versions of the rows it waited for (committed meanwhile: ``services.tasks._lock_bound``),
  again in id order, then the waiting writes' review items;
- a revoke (or consent withdrawal): the subject's lock shared, its memory row, then its
  pending write's review item,
  then the conflicts citing it (``SKIP LOCKED``: it never waits for a resolution).
- a mend of the conflicts citing retired rows, after a write's or a retrieval's commit or in
  the retention sweep (``services.conflicts.conflicts_heal``): the items alone, in id order,
  ``SKIP LOCKED`` (it never waits, so it is in no cycle).

No deletion takes a key's lock, so a write holding one never waits for a deletion that waits
for it. Retrievals and exports hold only the subject's lock, shared (a retrieval also the
conflict items it adds rows to); the rows they and writes insert take the subject row's
key-share lock, which ``FOR NO KEY UPDATE`` does not block.
``tests/deletion/test_concurrency.py`` runs them all at once on one subject.
"""

from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.db.models import BooleanField
from django.db.models.expressions import RawSQL

from memory_core.exceptions import SubjectBeingDeleted

# The lock of all the writes about a subject (``lock_memory_keys``'s ``writes_of``); no key's
# lock is named so (theirs start with the tenant's id).
SPLIT_LOCK_PREFIX = "memledger.writes:"
# The lock of a subject's memories without a key (``lock_memory_keys``).
KEYLESS_PREFIX = "memledger.keyless:"


def lock_memory_keys(tenant_id, keys, *, writes_of=()) -> None:
    """Hold, until the transaction ends, the lock of each (subject external id, memory_key).

    Whatever reads a key's head and then writes on the key (a write, a correction, an
    approval) takes it first, in sorted order: two writes on one key then run one after the
    other, so the second supersedes the first instead of failing or starting a second chain.

    ``writes_of``: the external ids of subjects whose lock of writes (``SPLIT_LOCK_PREFIX``)
    to hold too, in the same statement (so in one order with the keys'). A write takes it
    for each subject it writes about, keyed or not, before it reads the subject's recent
    writes for the split-write rule (``services.writes._recent_texts``) and until it commits
    its own: two writes about one subject run one after the other, and the second reads the
    first. Without it, half of an instruction written while the other half's transaction was
    still open read no other half, and both halves were stored.

    A memory without a key takes its subject's keyless lock (``KEYLESS_PREFIX``) as a key's:
    a keyless conflict's resolution locked its item and then its rows while an approval or a
    correction of the same chain locked the head and then the item, and PostgreSQL failed
    one of them (stop 54's audit of the reviewer's side); and two opens of one keyless
    chain's conflict take turns on it (``services.conflicts._keyless_conflict_open``).
    """
    names = {
        f"{tenant_id}/{subject}/{key}" if key else f"{KEYLESS_PREFIX}{tenant_id}/{subject}"
        for subject, key in keys
    }
    names.update(f"{SPLIT_LOCK_PREFIX}{tenant_id}/{subject}" for subject in writes_of)
    _locks_in_order(names)


def _locks_in_order(names) -> None:
    """Hold, until the transaction ends, the (exclusive) lock of each of ``names``, taken in
    sorted order in one statement."""
    if not names:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_advisory_xact_lock(hashtextextended(name, 0))) "
            "FROM (SELECT name FROM unnest(%s::text[]) AS name ORDER BY name) AS keys",
            [sorted(names)],
        )


# The lock an import holds until it commits (``import_memories``): two runs of one file at
# once each read the rows already present in its own transaction, saw none of the other's,
# and stored every record twice, as two chains on each key (stop 55's audit of imports).
IMPORT_LOCK = "memledger.import"


def import_lock() -> None:
    """Hold, until the transaction ends, the lock imports take turns on."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [IMPORT_LOCK])


# The lock a portal login's exports take turns on (``portal.views.ExportView``): a double
# click's second request waits for the first's export, then answers with its file. Taken
# before the subject's lock and by nothing else, so it waits in no cycle.
EXPORT_TURN_PREFIX = "memledger.portal-export:"


def export_turn_lock(actor_id: str) -> None:
    """Hold, until the transaction ends, the lock the exports of the login ``actor_id`` take
    turns on."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"{EXPORT_TURN_PREFIX}{actor_id}"],
        )


# The lock a retrieval holds shared on its subject (memory_core.retrieval.pipeline,
# _LOOKUP_SQL) and a deletion request takes exclusive. Keep both in step.
SUBJECT_LOCK_PREFIX = "memledger.subject:"
# PostgreSQL's SQLSTATE for a lock wait that ran past lock_timeout.
LOCK_NOT_AVAILABLE = "55P03"


def subject_shared_lock(subject_id) -> None:
    """Hold the subject's lock shared until the transaction ends: a deletion request of the
    subject waits for this transaction (an export being written) to commit first, so its
    steps then find what it wrote. Retrievals take the same lock in their first query.

    A deletion holding it is waited for at most ``MEMLEDGER_SUBJECT_LOCK_WAIT`` seconds,
    then ``SubjectBeingDeleted`` (503, retry later) is raised.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_try_advisory_xact_lock_shared(hashtextextended(%s, 0))",
            [f"{SUBJECT_LOCK_PREFIX}{subject_id}"],
        )
        (granted,) = cursor.fetchone()
    if not granted and not subject_shared_lock_wait(subject_id):
        raise SubjectBeingDeleted()


def subject_shared_lock_wait(subject_id) -> bool:
    """Wait for the subject's lock shared, at most ``MEMLEDGER_SUBJECT_LOCK_WAIT`` seconds;
    return whether it is now held (until the transaction ends).

    The slow path, after a try failed: a deletion of the subject holds the lock, or waits
    for it. A small one ends within milliseconds; a whole subject of hundreds of thousands
    of memories holds it for a minute, and a web request waiting that long is killed by
    gunicorn's timeout, so every retrieval and write of the subject would take a worker
    down with it. The wait is a ``lock_timeout`` inside a savepoint: it queues behind the
    deletion as a plain wait does, and a wait that times out rolls back the savepoint only.
    Call it inside the caller's transaction, as every lock here: outside one, the lock
    ends with the statement's own.
    """
    timeout = f"{max(1, round(settings.MEMLEDGER_SUBJECT_LOCK_WAIT * 1000))}ms"
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('lock_timeout'), set_config('lock_timeout', %s, true)",
                [timeout],
            )
            (previous, _) = cursor.fetchone()
            cursor.execute(
                "SELECT pg_advisory_xact_lock_shared(hashtextextended(%s, 0))",
                [f"{SUBJECT_LOCK_PREFIX}{subject_id}"],
            )
            cursor.execute("SELECT set_config('lock_timeout', %s, true)", [previous])
    except OperationalError as error:
        if getattr(error.__cause__, "sqlstate", None) == LOCK_NOT_AVAILABLE:
            return False
        raise
    return True


def subject_deletion_lock(subject_id) -> None:
    """Wait until the subject's in-flight retrievals have committed; hold it until commit.

    A retrieval that read a memory before its deletion commits would otherwise write a trace
    citing it after the traces step had verified there was none. Taken exclusive here, before
    any memory row lock (a whole subject's request locks the subject's row first), and shared
    by every retrieval of the subject for its whole transaction.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"{SUBJECT_LOCK_PREFIX}{subject_id}"],
        )


# The lock the retrievals for a user not known yet hold shared (memory_core.retrieval.pipeline,
# _LOOKUP_SQL, when no subject has the user id) and a whole subject's deletion takes exclusive
# before it deletes the traces naming the person by their id's digest
# (deletion.stores.TracesStore). Keep both in step.
UNKNOWN_USER_LOCK_PREFIX = "memledger.unknown-user:"


def unknown_user_lock_name(tenant_id, user_id_sha256: str) -> str:
    """Return the name of the lock of the retrievals for the user of tenant ``tenant_id``
    whose id's digest (``retrieval.traces.user_id_digest``) is ``user_id_sha256``, made while
    no subject names them."""
    return f"{UNKNOWN_USER_LOCK_PREFIX}{tenant_id}/{user_id_sha256}"


def unknown_users_deletion_lock(tenant_id, user_id_sha256s) -> None:
    """Wait until the retrievals in flight for these users, begun before a subject named them,
    have committed their traces; hold the locks until commit.

    Such a retrieval writes a trace with no subject, naming the person by their id's digest,
    and holds this lock shared from its first query to its commit (it only tries it: the
    retrieval never waits). A whole subject's deletion takes it before it reads those traces,
    so it finds a trace committed meanwhile; a retrieval whose try comes after finds the
    subject (or fails its try) and names nobody. Without it the subject was created and its
    deletion run while such a retrieval was open, and its trace, committed after the
    deletion had completed, named the person (left open at stop 63, whose fix of the races
    audit found it).
    """
    _locks_in_order({unknown_user_lock_name(tenant_id, digest) for digest in user_id_sha256s})


def deletion_queued_keys(subject_ids) -> dict:
    """Return, for each subject of ``subject_ids`` whose deletion is queued for a worker
    (``Subject.deletion_queued_at``), the memory_key it deletes ("" for the whole subject).

    Read in a statement of its own, once the caller holds the subjects' locks: a deletion
    queues its mark while holding a subject's lock (``deletion_request_or_queue``), and the
    mark commits as the lock is let go, so a read made before a wait for the lock, or by the
    statement that took it (whose snapshot is older than the lock), misses it.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, deletion_queued_key FROM memory_core_subject "
            "WHERE id = ANY(%s::uuid[]) AND deletion_queued_at IS NOT NULL",
            [[str(subject_id) for subject_id in subject_ids]],
        )
        return dict(cursor.fetchall())


def subjects_shared_locked(subjects, keys=None) -> list:
    """Return the Subject rows of the queryset ``subjects``, each one's lock taken shared
    (held until the transaction ends) as it is read, in the same query.

    Writes, corrections and imports read their subjects this way, and those another
    transaction created meanwhile (``services.memories.subjects_ensure_locked``): a deletion
    request of a subject (or of one of its keys) then waits for the write to commit and reads
    the rows it inserted, so a new version of a chain the deletion takes is deleted with it.
    Without the lock the deletion read the subject's rows before the write committed and
    waited only for the head's row lock: the new version survived, the active head of a
    deleted chain. Shared locks never wait for each other, and a deletion holds one subject's
    lock only, so the order they are taken in does not matter. A subject whose deletion holds
    its lock is waited for as ``subject_shared_lock`` does (``SubjectBeingDeleted`` past the
    wait), and one whose deletion is queued for a worker (``Subject.deletion_queued_at``)
    raises ``SubjectBeingDeleted``: what a write stores now, the worker may delete. A key's
    queued deletion fences the writes on that key only, given ``keys``, the (subject external
    id, memory_key) pairs the caller writes; without them, any queued deletion of the subject
    does.

    The marks are read again once every lock is held (``deletion_queued_keys``, one more
    statement): the rows read with the locks show the marks as they were before a wait for a
    deletion that queued one meanwhile. A write that waited for it then stored a memory the
    worker deleted for a requester whose grant did not reach it, beside the chain it deletes.
    """
    rows = list(
        subjects.annotate(
            subject_lock_granted=RawSQL(
                "pg_try_advisory_xact_lock_shared("
                "hashtextextended(%s || memory_core_subject.id::text, 0))",
                [SUBJECT_LOCK_PREFIX],
                output_field=BooleanField(),
            )
        )
    )

    def fenced(subject, queued_key) -> bool:
        return queued_key is not None and (
            keys is None or not queued_key or (subject.external_id, queued_key) in keys
        )

    for subject in rows:
        if fenced(subject, subject.deletion_queued_key if subject.deletion_queued_at else None):
            raise SubjectBeingDeleted()  # queued already: no wait for its worker's run
        if not subject.subject_lock_granted and not subject_shared_lock_wait(subject.pk):
            raise SubjectBeingDeleted()
    if rows:
        queued = deletion_queued_keys([subject.pk for subject in rows])
        if any(fenced(subject, queued.get(subject.pk)) for subject in rows):
            raise SubjectBeingDeleted()
    return rows
