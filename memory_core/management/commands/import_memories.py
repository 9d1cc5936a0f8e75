"""Import memories from a JSONL file of full records (a migration path from other stores).

    python manage.py import_memories FILE [--dry-run] [--no-screen] [--lock-wait SECONDS]

A migration path: records keep the authority, status and dates they state. Every field of
every line is validated first; any error is reported with its line number and nothing is
imported. Each record is screened as admission would read it (unless ``--no-screen``, for a
file screened already): what the class or injection guards refuse, a source, authority or
consent admission's rules 6 and 7 refuse (``read_source``, as admission reads them; an
admin source is trusted), and content a reviewer must see first (the tenant's sensitive
categories) are errors, since an import has no reviewer in its path; such a record goes
through the API instead, where it waits for one. A memory deleted since an earlier import
of the same file is not brought back, after a restore and its replay too. A record's
authority, confidence and consent are kept as admission keeps a write's (``read_source``:
consent explicit for user_input, else a workflow's; an inference's confidence capped). The
format is in docs/api.md.

The file is read twice, CHUNK lines at a time (validated, then parsed again and stored in
chunks of CHUNK records), so memory holds one chunk whatever the file's size (and, when screening,
the contents of each subject's latest split_window_writes valid lines, which the split-write
guard joins a line with, as admission joins a write with the agent's latest); progress goes to
stderr after every PROGRESS_EVERY lines validated and every chunk stored. The rows are
written in one transaction: an import that fails or is stopped leaves nothing, and running it
again skips what is already present. Imports take turns (``locks.import_lock``): one that
waits for another says so on stderr, and ``--lock-wait`` bounds the wait. A line naming an
agent that would never be given its memory (deactivated, or whose grant does not read its
type or sensitivity) is an error, and so is a name no agent of the tenant bears, each judged
against the agents as they stand at most CHUNK lines before (read as each chunk of the file
is, ``_agents_read``): an agent deactivated, renamed or whose grant is narrowed while the file
is imported makes its later lines error lines, and nothing is imported, whether the file was
being validated or stored (the store then rolls back what it stored). Records in use that are
already past their class's retention period under the tenant's active policy are imported and
counted: retrieval gives them to no agent, and the next retention sweep deletes them
(docs/operations.md).
"""

import codecs
import io
import math
import os
import time
from collections import defaultdict, deque
from datetime import UTC

from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError, OperationalError, connection, transaction
from django.db.models import CharField, Exists, OuterRef
from django.db.models.functions import Cast
from django.utils import timezone

from memory_core.admission import check_content, guards, parse_candidate, read_source
from memory_core.admission.candidate import (
    FieldErrors,
    bounded,
    parse_choice,
    parse_datetime_value,
    settle_user_scopes,
)
from memory_core.admission.policy import (
    LIMIT_FIELDS,
    REFUSING,
    SOURCE_AUTHORITIES,
    EarlierWrite,
    SourceReading,
    describe,
    field_limits,
    policy_section,
    sensitivity_texts,
    split_window,
)
from memory_core.embeddings import EmbeddingError
from memory_core.exceptions import SubjectBeingDeleted, ValidationFailed, is_tenant_deleted
from memory_core.json_types import json_loads, wrong_type
from memory_core.locks import (
    IMPORT_LOCK,
    LOCK_NOT_AVAILABLE,
    import_lock,
    subjects_shared_locked,
)
from memory_core.models import (
    TYPE_CLASS,
    Agent,
    Memory,
    MemoryType,
    PolicyVersion,
    ScopeKind,
    Sensitivity,
    SourceType,
    Status,
    Subject,
    Tenant,
    Tombstone,
)
from memory_core.models.choices import sensitivities_up_to
from memory_core.models.events import IMPORT_ACTOR_PREFIX
from memory_core.policy_check import retention_cutoffs, retention_overdue
from memory_core.principals import SystemPrincipal
from memory_core.retrieval.policy import RetrievalPolicy
from memory_core.rls import platform_command
from memory_core.services.memories import (
    MemoryDraft,
    as_written,
    memory_store_many,
    subjects_ensure_locked,
)
from memory_core.text import (
    BIDI_CONTROLS,
    BIDI_CONTROLS_MESSAGE,
    content_hash,
    identifier,
    lone_surrogate,
)

IMPORT_FIELDS = ("tenant", "agent", "status", "valid_from", "created_at")
IMPORT_STATUSES = (Status.ACTIVE, Status.REVOKED, Status.EXPIRED)
CHUNK = 256
# The most characters of lines read ahead of their validation (``_records``), held as text,
# fewer than CHUNK lines when they are long: a chunk of lines of megabytes each (an error) is
# not held.
READ_AHEAD_CHARS = 8_000_000
# What an import reads of the agents its lines name (``_validate_line``, ``_check_grant``).
AGENT_FIELDS = ("tenant_id", "name", "is_active", "read_types", "max_sensitivity")
# The longest name an agent bears: a line naming a longer one is not looked up (``_named_agent``).
AGENT_NAME_MAX = Agent._meta.get_field("name").max_length
# PostgreSQL's application_name of an import's session while it runs, which another import
# waiting for it names (``_lock_holder``): the file's name only, never its folders.
APPLICATION_NAME = "memledger import_memories {}"
# Lines validated between two progress lines.
PROGRESS_EVERY = 10_000
# PostgreSQL's SQLSTATE for "out of shared memory": its lock table is full.
OUT_OF_SHARED_MEMORY = "53200"
# The longest --lock-wait: PostgreSQL's lock_timeout holds at most 2,147,483,647 ms.
LOCK_WAIT_MAX = 2_147_483


def _text_name(path: str) -> str:
    """Return ``path`` as text the database stores: a file name that is not UTF-8 reaches
    Python with its bytes as lone surrogates ("caf\\udce9"), which no UTF-8 column holds;
    such a byte is named by its escape ("caf\\xe9") instead."""
    try:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that stands for no byte of a file name
        return path.encode("utf-8", "backslashreplace").decode("utf-8")


class Command(BaseCommand):
    help = "Import memories from a JSONL file of full records; per-line errors, all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--dry-run", action="store_true", help="Validate only.")
        # One or the other: given both, the last won silently (stop 68's audit of the commands).
        screening = parser.add_mutually_exclusive_group()
        screening.add_argument(
            "--no-screen",
            dest="screen",
            action="store_false",
            help="Do not screen the records as admission would (a file screened already).",
        )
        # The default since screening became one; kept so that scripts naming it still run.
        screening.add_argument("--screen", dest="screen", action="store_true", help="The default.")
        parser.add_argument(
            "--lock-wait",
            type=float,
            default=None,
            metavar="SECONDS",
            help=(
                "wait at most SECONDS for another import to end (imports take turns), then "
                "stop, nothing imported; 0: do not wait. Without it, wait as long as it runs."
            ),
        )

    @platform_command
    def handle(self, *args, file, dry_run, screen, lock_wait=None, **options):
        if lock_wait is not None and not 0 <= lock_wait <= LOCK_WAIT_MAX:  # nan too
            raise CommandError(
                f"--lock-wait takes a number of seconds from 0 to {LOCK_WAIT_MAX:,}; nothing "
                "imported."
            )
        self.lock_wait = lock_wait
        self.file = file
        self.actor = f"{IMPORT_ACTOR_PREFIX}{_text_name(file)}"[:200]
        self.screen = screen
        # A deleted tenant takes no new rows (its deletion has verified it holds none).
        self.tenants = {t.slug: t for t in Tenant.objects.filter(deleted_at=None)}
        # By (tenant id, name), the agents the current chunk of lines names, read as it was
        # (``_agents_read``): what a line naming one is checked against.
        self.agents: dict = {}
        checked = valid = errors = 0
        for _number, record, line_errors in self._records():
            for error in line_errors:
                self.stderr.write(error)
            errors += len(line_errors)
            valid += record is not None
            checked += 1
            if checked % PROGRESS_EVERY == 0:
                self.stderr.write(f"validated {checked} records, {errors} error(s) so far")
        if errors:
            raise CommandError(f"{errors} error(s) in {file}; nothing imported.")
        if dry_run:
            self.stdout.write(f"{valid} record(s) valid; dry run, nothing imported.")
            return
        try:
            imported, skipped, deleted, overdue = self._store(valid)  # one transaction
        except EmbeddingError as exc:
            raise CommandError(f"The embedding model failed ({exc}); nothing imported.") from exc
        except IntegrityError as exc:
            if not is_tenant_deleted(exc):
                raise
            # Its deletion committed while the file was validated (minutes for a large one):
            # the trigger refused the first row, and the command ended in a traceback (stop
            # 55's audit of imports).
            raise CommandError(
                "A tenant of the file was deleted while it was imported; nothing imported."
            ) from exc
        except OperationalError as exc:
            if getattr(exc.__cause__, "sqlstate", None) != OUT_OF_SHARED_MEMORY:
                raise
            # The import holds a lock per subject it stores rows for until it commits, and
            # the server's lock table (max_locks_per_transaction a connection, shared by every
            # session) is bounded: a traceback until stop 59's audit of imports.
            raise CommandError(
                "The database server's lock table is full (out of shared memory): an import "
                "locks each existing subject it stores memories for until it commits, and this "
                "file's are more than the table holds; nothing imported. Split the file by "
                "subject and import the parts one after another, or raise the server's "
                "max_locks_per_transaction (a restart)."
            ) from exc
        since = f" and {deleted} deleted since an earlier import (not brought back)"
        self.stdout.write(
            f"Imported {imported} memories, skipped {skipped} already present"
            f"{since if deleted else ''}."
        )
        if overdue:
            self.stdout.write(
                f"{overdue} of the imported memories in use are past their retention period "
                "under their tenant's policy: no agent is given them, and the next retention "
                "sweep deletes them."
            )

    def _lines(self):
        """Yield (number, line) of the file, a line at a time, as a text-mode read splits
        them (\\n, \\r\\n, \\r): not str.splitlines, which also splits at U+2028, valid inside a
        JSON string. A byte that is not UTF-8 is a CommandError naming its line."""
        try:
            handle = open(self.file, "rb")
        except (OSError, ValueError) as exc:  # ValueError: a name holding a NUL
            raise CommandError(f"Cannot read {self.file}: {exc}") from exc
        number = 0
        with handle:
            # Binary lines end at b"\\n" only; a "\\r" or "\\r\\n" inside one is split below.
            for raw in _read_lines(handle, self.file):
                if number == 0:
                    # Editors saving "UTF-8 with BOM" put one first (RFC 8259 lets a reader
                    # ignore it; refused as invalid JSON until stop 61's review).
                    raw = raw.removeprefix(codecs.BOM_UTF8)
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    # Named by the text line the byte falls on, as every other error is (the
                    # binary line's number was another in a file of "\\r" ends: stop 59's audit
                    # of imports); a character stands in for the byte, so the last line counted
                    # is its own.
                    at = number + len(_text_lines(raw[: exc.start].decode("utf-8") + "?"))
                    raise CommandError(
                        f"{self.file} is not UTF-8 text: line {at} holds the byte "
                        f"0x{raw[exc.start]:02x}. Save the file as UTF-8; nothing imported."
                    ) from exc
                for line in _text_lines(text):
                    number += 1
                    yield number, line

    def _records(self):
        """Yield (number, record or None, errors) for every line that is not blank, read
        CHUNK lines at a time (fewer past READ_AHEAD_CHARS): the agents those lines name are
        read (one query, ``_agents_read``) before they are validated."""
        # Per (tenant id, subject), the contents of its latest valid lines, as many as the
        # tenant's split_window_writes: the split-write guard joins a line to them as
        # admission joins a write to the agent's recent ones. Built again on each read of the
        # file, so both reads find the same lines valid.
        recent: dict = {}
        for chunk in _chunks(self._lines()):
            self._agents_read(line for _, line in chunk)
            for number, line in chunk:
                yield number, *self._validate_line(number, line, recent)

    def _validate_line(self, number: int, line: str, recent: dict):
        """Return (the record, []) of a valid line, or (None, its errors); ``recent`` holds
        the contents of the earlier valid lines by (tenant id, subject), and takes this
        one's."""
        where = f"line {number}"
        try:
            # A key named twice is refused, as the write API refuses it (``malformed_json``):
            # which value wins depends on the parser (stop 58's audit of the commands).
            data = json_loads(line, as_api=True)
        except ValueError as exc:  # json.JSONDecodeError too
            return None, [f"{where}: invalid JSON ({exc.msg if hasattr(exc, 'msg') else exc})"]
        if not isinstance(data, dict):
            return None, [f"{where}: must be a JSON object"]
        extra = {key: data.pop(key) for key in IMPORT_FIELDS if key in data}
        line_errors = FieldErrors()
        slug = extra.get("tenant")
        tenant = self.tenants.get(slug) if isinstance(slug, str) else None
        if tenant is None:
            line_errors.add("tenant", "unknown_tenant", "Must be the slug of an existing tenant.")
        # With the API's codes: another JSON type is ``invalid`` (it was ``invalid_choice``,
        # stop 55's audit of imports), null ``null``; left out, active.
        status = (
            parse_choice(extra, "status", IMPORT_STATUSES, line_errors, required="status" in extra)
            or Status.ACTIVE
        )
        valid_from = parse_datetime_value(extra.get("valid_from"), line_errors, "valid_from")
        created_at = parse_datetime_value(extra.get("created_at"), line_errors, "created_at")
        if created_at is not None and created_at > timezone.now():
            # When the record was written: a moment to come is no such thing, and one near
            # the year 9999 left no date for its retention's end (the person's portal page
            # and export failed on it).
            line_errors.add(
                "created_at",
                "in_future",
                "Must not be later than the import: a record states when it was written.",
            )
        if data.get("authority") in (None, ""):
            line_errors.add("authority", "required", "Imports state their authority.")
        agent = extra.get("agent")
        if agent is not None and not isinstance(agent, str):
            line_errors.add("agent", "invalid", wrong_type("an agent's name or null", agent))
            agent = None
        # Read as every path reads a name (trimmed, NFC; migration 0040): an NFD "José" of a
        # file from macOS named no agent (stop 53's end-to-end review).
        agent = identifier(agent) if isinstance(agent, str) else agent
        owner = None
        if agent and BIDI_CONTROLS.search(agent):
            line_errors.add("agent", "bidi_controls_not_allowed", BIDI_CONTROLS_MESSAGE)
        elif agent and tenant is not None and (owner := self._agent(tenant.id, agent)) is None:
            line_errors.add("agent", "unknown_agent", "No agent of this name in the tenant.")
        elif owner is not None and status == Status.ACTIVE:
            # A revoked or expired line is given to no agent whoever it names: its agent is
            # history, as its dates are (refused as well until stop 69's review).
            if not owner.is_active:
                line_errors.add(
                    "agent",
                    "agent_deactivated",
                    f"The agent {agent!r} is deactivated: the memory, private to it, would be "
                    "given to no agent. Name an active agent, or none (shared).",
                )
        try:
            candidate = parse_candidate(data)
        except ValidationFailed as exc:
            for name, items in exc.details.items():
                line_errors.by_field.setdefault(name, []).extend(items)
            candidate = None
        if candidate is not None and tenant is not None:
            self._settle_user_scope(tenant, candidate, line_errors)
            if owner is not None and owner.is_active and status == Status.ACTIVE:
                _check_grant(owner, candidate, line_errors)
        if candidate is not None:
            # Without valid_from or created_at the memory is valid from the import.
            start = valid_from or created_at or timezone.now()
            if candidate.valid_until and candidate.valid_until <= start:
                line_errors.add(
                    "valid_until",
                    "invalid_interval",
                    "Must be after valid_from (or created_at, or the import's time when "
                    "neither is given).",
                )
            admission = self._admission(tenant)
            # The authority, confidence and consent admission would keep it with (rules 6
            # and 7); an admin source is the file's own statement, trusted as admission
            # trusts memledger's own paths.
            reading = read_source(
                candidate, admission, trusted=candidate.source_type == SourceType.ADMIN
            )
            # Rule 3's limits of the tenant's policy, as admission applies them to a write,
            # screened or not: they are the policy's, not a guard's reading. A record past
            # them is not screened, as admission reads no further than rule 3: past
            # ``MAX_LABELLED_CHARS`` the guards would read megabytes of labelled lines, and a
            # line refused for them took 12 to 20 s (stop 57's review of its own fixes).
            if (limit := field_limits(candidate, admission)) is not None:
                line_errors.add(LIMIT_FIELDS[limit], limit, describe([limit], admission))
            elif self.screen:
                texts = recent.get((tenant.pk, candidate.subject), ()) if tenant else ()
                self._screen(tenant, candidate, reading, admission, list(texts), line_errors)
        if line_errors.by_field:
            # At most 50 unknown fields named, the rest counted, as the API answers them: a
            # line of 90,000 was told in 90,000 lines.
            return None, [
                f"{where}: {name}: {item['message']} ({item['code']})"
                for name, items in bounded(line_errors.by_field).items()
                for item in items
            ]
        window = split_window(admission)
        if self.screen and window > 0:
            key = (tenant.pk, candidate.subject)
            recent.setdefault(key, deque(maxlen=window)).append(tuple(candidate.written_texts()))
        record = {
            "tenant": tenant,
            # The agent as this read judged it: stored as its own, whatever bears its name
            # when the chunk is stored.
            "agent_id": owner.pk if owner is not None else None,
            "status": status,
            "valid_from": valid_from,
            "created_at": created_at,
            "candidate": candidate,
            "reading": reading,
        }
        return record, []

    def _agent(self, tenant_id, name: str):
        """Return the agent ``name`` of the tenant as read with the current chunk of lines
        (``_agents_read``), None for no agent of that name in it."""
        return self.agents.get((tenant_id, name))

    def _agents_read(self, lines) -> None:
        """Read the agents ``lines`` (a chunk's) name (one query, none when they name none),
        which those lines are judged against: each as it stands now, deactivated, renamed or
        its grant narrowed meanwhile, as an import started now would judge them, at most CHUNK
        lines late, on either read of the file (the store's, once its turn came: after
        minutes of another import maybe).

        Read at the start only, an agent deactivated (or whose grant was narrowed) while a
        large file was imported, minutes, owned the lines after that moment all the same,
        given to no agent (stop 70's review). Then read again by id, one renamed, moved to
        another tenant or deleted still owned them, and every agent named once was read again
        every CHUNK lines to the file's end, and on its own the first time (stop 70's review
        of it); then every agent of the tenants a chunk named, 5,000 rows every 256 lines for
        a tenant of 5,000 agents (stop 70's review of the read-ahead)."""
        tenant_ids, names = set(), set()
        for slug, name in filter(None, map(_named_agent, lines)):
            if slug in self.tenants:
                tenant_ids.add(self.tenants[slug].id)
                names.add(name)
        # By tenant and name: a name another of these tenants' agents bears is read too, and
        # found by no line of the chunk. No ordering: the model's joins the tenant table.
        agents = Agent.objects.only(*AGENT_FIELDS).filter(tenant_id__in=tenant_ids, name__in=names)
        self.agents = {(a.tenant_id, a.name): a for a in agents.order_by()} if names else {}

    @staticmethod
    def _settle_user_scope(tenant, candidate, line_errors: FieldErrors) -> None:
        """Add the API's error (invalid_scope) for a ``user:<UUID>`` scope that is not the
        UUID of the record's subject (another subject's, or any other), and name the subject
        by its id in the others, as a write does (``settle_user_scopes``): retrieval would
        never reach such a memory, and one spelling keeps one chain per key."""
        if candidate.scope_kind != ScopeKind.USER or candidate.scope_ref == candidate.subject:
            return  # the subject's id already, or no user scope: nothing to look up
        subjects = {
            s.external_id: s
            for s in Subject.objects.filter(tenant=tenant, external_id=candidate.subject)
        }
        try:
            settle_user_scopes([candidate], subjects, batch=False)
        except ValidationFailed as exc:
            for name, items in exc.details.items():
                line_errors.by_field.setdefault(name, []).extend(items)

    def _admission(self, tenant) -> dict:
        """Return the ``admission`` section of ``tenant``'s active policy (the default
        policy's for no tenant or no active policy), each knob it lacks at its default."""
        policy = self._tenant(tenant)[0] if tenant is not None else None
        return policy_section(policy.document if policy is not None else None, "admission")

    def _screen(
        self,
        tenant,
        candidate,
        reading: SourceReading,
        admission: dict,
        recent_texts: list[EarlierWrite],
        line_errors: FieldErrors,
    ) -> None:
        """Add the errors admission's reading of ``candidate`` gives an import: content the
        guards refuse (an instruction split with ``recent_texts``, the earlier lines of its
        subject, too), a source, authority or consent rules 6 and 7 refuse (``reading``),
        content for a reviewer."""
        refused = [c for c in check_content(candidate, recent_texts) if c in REFUSING]
        if refused:
            line_errors.add("content", "screened", ", ".join(refused))
        if reading.refusal:
            source = candidate.source_type
            name, message = reading.refusal.split(".")[0], describe([reading.refusal], admission)
            if reading.refusal == "source.authority_not_allowed":
                allowed = ", ".join(SOURCE_AUTHORITIES[source])
                name, message = "authority", f"A {source} source may state {allowed} only."
            line_errors.add(name, reading.refusal, message)
        if tenant is None:
            return
        categories = guards.sensitive_categories(
            sensitivity_texts(candidate), list(admission.get("sensitive_categories", []))
        )
        stated = candidate.sensitivity in (Sensitivity.SENSITIVE, Sensitivity.RESTRICTED)
        if categories or stated:
            why = f"Touches {', '.join(categories)}" if categories else "Stated sensitive"
            line_errors.add(
                "content",
                "sensitivity.review_required",
                f"{why}: a reviewer sees it first, and an import has none; write it through "
                "the API (POST /api/v1/memories), where it waits for one.",
            )

    @transaction.atomic
    def _store(self, total: int) -> tuple[int, int, int, int]:
        """Parse the file again and store its records, CHUNK at a time; return (imported,
        skipped as present, skipped as deleted, imported in use past their retention). One
        transaction: a record the first pass found valid and this one does not (the file
        changed meanwhile, or an agent it names: deactivated, renamed, its grant narrowed)
        undoes the whole import, its errors on stderr."""
        imported = skipped = deleted = overdue = 0
        chunk = []
        with connection.cursor() as cursor:
            # Until the commit (``is_local``): what another import waiting names this one by.
            cursor.execute(
                "SELECT set_config('application_name', %s, true)",
                [APPLICATION_NAME.format(os.path.basename(_text_name(self.file)))],
            )
        # Before the first read of what is present: a second run of the file waits for this
        # one to commit, then skips its records as present.
        self._import_lock()

        def store() -> None:
            nonlocal imported, skipped, deleted, overdue
            stored, seen, gone, late = self._store_chunk(chunk)
            imported, skipped, deleted = imported + stored, skipped + seen, deleted + gone
            overdue += late
            since = f", {deleted} deleted since" if deleted else ""
            self.stderr.write(
                f"stored {imported + skipped + deleted}/{total} records ({skipped} already "
                f"present{since})"
            )
            chunk.clear()

        for number, record, errors in self._records():
            if errors:
                # All or nothing, as for any wrong line: the error lines an import started now
                # gives (stop 70's review committed the rest and left an agent's lines out).
                for error in errors:
                    self.stderr.write(error)
                raise CommandError(
                    f"{self.file} changed while it was imported, or an agent its lines name "
                    f"did (deactivated, renamed, or its grant narrowed): line {number} is no "
                    "longer valid (above); nothing imported. Run the import again once the "
                    "lines are fixed: it names every wrong line before it imports any."
                )
            chunk.append(record)
            if len(chunk) == CHUNK:
                store()
        if chunk:
            store()
        return imported, skipped, deleted, overdue

    def _import_lock(self) -> None:
        """Take the lock imports take turns on (``locks.import_lock``), saying on stderr that
        this import waits when another holds it, and when it goes on: it waited without a
        word for as long as the other ran, minutes for a large file (stop 68's audit of the
        commands). With ``--lock-wait``, a wait longer than that is a CommandError, nothing
        imported (``--lock-wait 0``: none at all)."""
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0))", [IMPORT_LOCK]
            )
            if cursor.fetchone()[0]:
                return
        bound = "" if self.lock_wait is None else f", at most {self.lock_wait:g} s (--lock-wait)"
        self.stderr.write(
            "waiting for another import to end: imports take turns, whatever their file or "
            f"tenant, each until it commits{bound}"
        )
        self.stderr.write(_lock_holder())
        started = time.monotonic()
        try:
            if self.lock_wait == 0:
                raise _LockWaitOver
            if self.lock_wait is None:
                import_lock()
            else:
                self._import_lock_within(self.lock_wait)
        except _LockWaitOver:
            raise CommandError(
                f"Another import still held the import lock after {self.lock_wait:g} s "
                "(--lock-wait): nothing imported. Run this one again once that import has "
                "ended, or give a longer --lock-wait."
            ) from None
        self.stderr.write(
            f"the other import ended after {time.monotonic() - started:.1f} s; importing"
        )

    @staticmethod
    def _import_lock_within(seconds: float) -> None:
        """Take the import lock, waiting at most ``seconds`` (the transaction's lock_timeout
        while it waits, its own again then); _LockWaitOver past them."""
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('lock_timeout'), set_config('lock_timeout', %s, true)",
                [f"{max(1, math.ceil(seconds * 1000))}ms"],
            )
            previous = cursor.fetchone()[0]
            try:
                import_lock()
            except OperationalError as exc:
                if getattr(exc.__cause__, "sqlstate", None) == LOCK_NOT_AVAILABLE:
                    raise _LockWaitOver from exc
                raise
            cursor.execute("SELECT set_config('lock_timeout', %s, true)", [previous])

    def _store_chunk(self, records) -> tuple[int, int, int, int]:
        """Store one chunk's records not yet present nor deleted since; return (stored,
        skipped as present, skipped as deleted, stored in use past their retention)."""
        by_tenant = defaultdict(list)
        for record in records:
            by_tenant[record["tenant"]].append(record)
        stored = skipped = gone = overdue = 0
        for tenant, items in by_tenant.items():
            policy, principal = self._tenant(tenant)
            candidates = [record["candidate"] for record in items]
            external_ids = {c.subject for c in candidates}
            # Earlier chunks' rows are in this transaction: the query finds them too.
            existing = set(
                Memory.objects.filter(
                    tenant=tenant,
                    subject__external_id__in=external_ids,
                    source_conversation_id__in={c.source_conversation_id for c in candidates},
                ).values_list(
                    "subject__external_id",
                    "source_conversation_id",
                    "source_message_id",
                    "content_hash",
                )
            )
            names = dict(
                Subject.objects.filter(tenant=tenant, external_id__in=external_ids).values_list(
                    "pk", "external_id"
                )
            )
            new, present, deleted = self._unstored(tenant, items, existing, names)
            skipped, gone = skipped + present, gone + deleted
            if not new:
                continue
            # Locked now, as writes lock them (memory_core.locks), and only the subjects of
            # the records stored: a deletion of one of them then waits for this import and
            # deletes what it stored. A record present or deleted since stores nothing and
            # needs no fence: locked too, each subject of a second run of the file held a
            # place in the server's lock table until the commit, and 24,000 of them filled
            # it (stop 59's audit of imports).
            subjects = self._subjects(tenant, [record["candidate"] for record in new])
            # Read again once the locks are held: a deletion of one of them that was running
            # has committed now, and what it deleted is not brought back.
            locked = {subject.pk: external_id for external_id, subject in subjects.items()}
            new, _, deleted = self._unstored(tenant, new, existing, locked)
            gone += deleted
            if not new:
                continue
            drafts = [self._draft(record, subjects) for record in new]
            memory_store_many(
                drafts=drafts,
                principal=principal,
                policy_version=policy.version if policy else None,
            )
            stored += len(drafts)
            overdue += self._overdue(policy, drafts)
        return stored, skipped, gone, overdue

    def _unstored(self, tenant, records, existing: set, names: dict) -> tuple[list, int, int]:
        """Return (the records of ``records`` to store, how many are present, how many were
        deleted since); ``existing`` holds the fingerprints of the rows present, ``names`` the
        external ids, by id, of the subjects whose deletions to read."""
        # A deletion scrubs the row (its source ids with it) and keeps the content's hash
        # in its ledger: a memory deleted since an earlier import is not brought back.
        deleted = {
            (names[subject_id], digest)
            for subject_id, digest in Tombstone.objects.filter(
                tenant_id=tenant.id, subject_id__in=list(names)
            ).values_list("subject_id", "content_hash")
        }
        orphaned = self._orphaned_hashes(tenant)
        seen = set(existing)
        new, present, gone = [], 0, 0
        for record in records:
            candidate = record["candidate"]
            fingerprint = (
                candidate.subject,
                candidate.source_conversation_id,
                candidate.source_message_id,
                content_hash(candidate.content),
            )
            if fingerprint in seen:
                present += 1
                continue
            if (candidate.subject, fingerprint[3]) in deleted or fingerprint[3] in orphaned:
                gone += 1
                continue
            seen.add(fingerprint)
            new.append(record)
        return new, present, gone

    @staticmethod
    def _overdue(policy, drafts) -> int:
        """Return how many of ``drafts`` in use are past their class's retention under
        ``policy`` (the tenant's active one, read as retrieval and the sweep read it)."""
        if policy is None:
            return 0
        now = timezone.now()
        cutoffs = retention_cutoffs(
            RetrievalPolicy.from_document(policy.document).retention,
            now,
            tenant_id=policy.tenant_id,
        )
        return sum(
            draft.status == Status.ACTIVE
            and bool(
                retention_overdue(
                    cutoffs,
                    memory_class=TYPE_CLASS.get(draft.memory_type, ""),
                    authority=draft.authority,
                    created_at=draft.created_at or now,
                )
            )
            for draft in drafts
        )

    def _orphaned_hashes(self, tenant) -> set[str]:
        """Return the content hashes of ``tenant``'s tombstones that name no Subject row of
        the tenant (or no subject), or one named by its own id, read once per import.

        A restore and its replay leave these: a memory deleted after the backup, of a subject
        made after it, is tombstoned under the journal's subject id, which no restored row
        holds. Importing the file again made the subject afresh under a new id, read only
        that subject's tombstones, and brought the deleted memory back (stop 56's audit of
        imports). Whose it was is not known, so any record with its text may be it: the hash
        alone matches. Only a replay writes such tombstones (a deletion names its memory's
        subject), so one read serves every chunk."""
        cache = self.__dict__.setdefault("_orphaned_cache", {})
        if tenant.pk not in cache:
            # A row named by its own id is a replay's too (a whole subject's, or a key's queued
            # line, restores the subject so: its name is not known either), and the import
            # made the subject afresh beside it (stop 56's review).
            known = Subject.objects.filter(tenant_id=tenant.pk, pk=OuterRef("subject_id")).exclude(
                external_id=Cast("id", output_field=CharField())
            )
            cache[tenant.pk] = set(
                Tombstone.objects.filter(tenant_id=tenant.pk)
                .exclude(content_hash="")
                .exclude(Exists(known))
                .values_list("content_hash", flat=True)
                .distinct()
            )
        return cache[tenant.pk]

    def _tenant(self, tenant):
        """Return (active policy, principal) of ``tenant``, looked up once."""
        cache = self.__dict__.setdefault("_tenant_cache", {})
        if tenant.pk not in cache:
            cache[tenant.pk] = (
                PolicyVersion.objects.filter(tenant=tenant, is_active=True).first(),
                SystemPrincipal(tenant_id=tenant.id, name=self.actor),
            )
        return cache[tenant.pk]

    @staticmethod
    def _subjects(tenant, candidates) -> dict:
        """Return ``{external_id: Subject}`` of ``candidates``' subjects, their locks taken
        shared (``subjects_shared_locked``), creating the missing ones (two to four queries
        for a chunk, not one per record). A subject being deleted, or whose deletion (or that
        of a key written here) is queued, stops the import: a CommandError, nothing stored.

        A missing one another transaction inserts meanwhile (a subject token issued for the
        user) is locked too (``subjects_ensure_locked``): read back without its lock, a
        deletion of the subject requested then neither waited for the import nor read its
        rows (stop 63's audit of races). One the import creates is locked by none: no deletion
        finds it before the commit."""
        external_ids = {c.subject for c in candidates}
        keys = {(c.subject, c.memory_key) for c in candidates}
        try:
            subjects = {
                s.external_id: s
                for s in subjects_shared_locked(
                    Subject.objects.filter(tenant=tenant, external_id__in=external_ids),
                    keys=keys,
                )
            }
            subjects.update(
                subjects_ensure_locked(
                    tenant_id=tenant.id, external_ids=external_ids - set(subjects), keys=keys
                )
            )
        except SubjectBeingDeleted as exc:
            raise CommandError(
                "A subject of this file is being deleted, or its deletion is queued: nothing "
                "imported. Run the import again once the deletion is done."
            ) from exc
        return subjects

    @staticmethod
    def _draft(record, subjects: dict) -> MemoryDraft:
        candidate, reading = record["candidate"], record["reading"]
        return MemoryDraft(
            subject=subjects[candidate.subject],
            **as_written(candidate),
            # As admission keeps them (rules 6 and 7): an inference's confidence capped, and
            # without a stated consent, explicit for the user's own words, else a workflow's.
            authority=reading.authority,
            agent_id=record["agent_id"],  # the agent _validate_line judged the line against
            confidence=reading.confidence,
            consent=reading.consent,
            sensitivity=_stored_sensitivity(candidate),
            valid_from=record["valid_from"],
            valid_until=candidate.valid_until,
            created_at=record["created_at"],
            status=record["status"],
        )


def _named_agent(line: str) -> tuple[str, str] | None:
    """Return (tenant slug, agent name) of a line that names both as strings, else None:
    parsed for them alone (``_validate_line`` parses it again, as the API reads it), and in a
    function of its own so that no line's parse outlives it, held beside the next's."""
    try:
        data = json_loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    # A slug of another JSON type (a list, unhashable) names no tenant: the line says so.
    slug, name = data.get("tenant"), data.get("agent")
    if not isinstance(slug, str) or not isinstance(name, str):
        return None
    name = identifier(name)
    # Looked up in the database: a name no agent bears there, too long or holding what no
    # PostgreSQL text holds (a NUL, a lone surrogate), is no agent's, and failed the query.
    if len(name) > AGENT_NAME_MAX or "\x00" in name or lone_surrogate(name) is not None:
        return None
    return slug, name


def _chunks(lines):
    """Yield the lines that are not blank of ``lines`` ((number, line) pairs), as lists of
    CHUNK, fewer past READ_AHEAD_CHARS characters (and the line past them); each is asked
    for once the one before it is validated. A CommandError reading them (a byte that is not
    UTF-8) is raised once the lines before it are yielded: their errors are told first."""
    chunk, size = [], 0
    try:
        for number, line in lines:
            if not line.strip():
                continue
            # Their text only: parsed, a line is held in up to ~25 times its characters (an
            # array of empty objects), and 256 of them of 40,000 characters held 150 MB
            # (stop 70's review of the read-ahead).
            chunk.append((number, line))
            size += len(line)
            if len(chunk) == CHUNK or size > READ_AHEAD_CHARS:
                yield chunk
                chunk, size = [], 0
    except CommandError:
        if chunk:
            yield chunk
        raise
    if chunk:
        yield chunk


def _stored_sensitivity(candidate) -> str:
    """The sensitivity a line's memory is stored with: the one it states, else personal."""
    return candidate.sensitivity or Sensitivity.PERSONAL


class _LockWaitOver(Exception):
    """Another import held the import lock longer than ``--lock-wait``."""


# The session holding the import lock, as PostgreSQL tells it: the lock's 64-bit key is split
# into classid (its high 32 bits) and objid (its low ones), objsubid 1 for a bigint key.
_HOLDER_SQL = """
    WITH lock AS (SELECT hashtextextended(%s, 0) AS key)
    SELECT a.pid, a.application_name, a.usename, host(a.client_addr), a.client_hostname,
           a.client_port, a.xact_start, extract(epoch FROM clock_timestamp() - a.xact_start)
    FROM pg_locks l
    JOIN pg_stat_activity a ON a.pid = l.pid
    CROSS JOIN lock
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.classid::bigint = (lock.key >> 32) & 4294967295
      AND l.objid::bigint = lock.key & 4294967295
    LIMIT 1
"""


def _lock_holder() -> str:
    """Return the line naming the session that holds the import lock, from what PostgreSQL
    tells (``pg_locks`` with ``pg_stat_activity``): its backend's pid, its application_name
    (an import's is ``APPLICATION_NAME``: its file's name), its role and client, and since
    when its transaction, in which it took the lock, is open. Until stop 70's review the wait
    was told without naming what it waited for."""
    with connection.cursor() as cursor:
        cursor.execute(_HOLDER_SQL, [IMPORT_LOCK])
        row = cursor.fetchone()
    if row is None:
        return (
            "the session holding the import lock could not be read: it has just ended, or "
            "this database role may not see it"
        )
    pid, application, role, address, hostname, port, began, age = row
    named = [f"application_name {application!r}" if application else "no application_name"]
    if role:
        named.append(f"role {role}")
    if address or hostname:
        named.append(f"client {' '.join(dict.fromkeys(n for n in (hostname, address) if n))}")
    elif port == -1:  # NULL when this role may not see the session's client
        named.append("client on the local socket")
    since = (
        f", its transaction open since {began.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC "
        f"({float(age):.0f} s)"
        if began is not None
        else ""
    )
    return f"the import lock is held by PostgreSQL backend pid {pid} ({', '.join(named)}){since}"


def _check_grant(owner: Agent, candidate, line_errors: FieldErrors) -> None:
    """Add an error when the agent ``owner`` a line names may not read its memory: the memory
    is private to that agent, so no agent would ever be given it (until stop 69 it was stored
    so without a word, stop 68's audit of the commands). Its write grant is not read: the
    import writes as memledger, not as the agent."""
    name, memory_type = owner.name, candidate.memory_type
    if memory_type not in owner.read_types:
        reads = ", ".join(t for t in MemoryType.values if t in owner.read_types) or "none"
        line_errors.add(
            "agent",
            "grant.type_not_readable",
            f"The agent {name!r} does not read {memory_type} memories (its grant reads: "
            f"{reads}): the memory, private to it, would be given to no agent. Name an agent "
            "that reads it, or none (shared).",
        )
    sensitivity = _stored_sensitivity(candidate)
    if sensitivity not in sensitivities_up_to(owner.max_sensitivity):
        line_errors.add(
            "agent",
            "grant.sensitivity_above_max",
            f"The agent {name!r} reads memories up to {owner.max_sensitivity} only, and this one "
            f"is {sensitivity}: the memory, private to it, would be given to no agent. Name an "
            "agent that reads it, or none (shared).",
        )


def _text_lines(text: str) -> list[str]:
    """Return the lines of ``text`` as a text-mode read splits them (\\n, \\r\\n, \\r)."""
    if "\r" not in text and text.find("\n", 0, len(text) - 1) == -1:
        # One text line (a binary line, ``_lines``' text, ends at its one \n): StringIO holds
        # 4 bytes a character, 200 MB for a line of 50 MB (stop 70's review of the read-ahead).
        # A text of two \n-lines was one line (stop 70's review of it).
        return [text] if text else []
    return io.StringIO(text, newline=None).readlines()


def _read_lines(handle, name: str):
    """Yield the binary lines of ``handle``; a read that fails (a failing disk or network
    mount) is a CommandError, not a traceback: the store reads in one transaction, so
    nothing is imported (stop 54's audit of the commands)."""
    try:
        yield from handle
    except OSError as exc:
        raise CommandError(f"Cannot read {name}: {exc}; nothing imported.") from exc
