"""Load memories of an evaluation dataset (../shared/eval/FORMAT.md) into real rows.

The same loader feeds the demo (``load_demo``) and the evaluation harness. Rows are written
through the trusted storage path (no admission: the dataset states authority and status on
purpose, including stale and revoked rows), embedded with the real model in one batch.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import CharField, Exists, OuterRef, Q
from django.db.models.functions import Cast
from django.utils import timezone

from memory_core.admission.candidate import HARD_MAX_CONTENT_CHARS, HARD_MAX_ID_CHARS, bad_text
from memory_core.environments import InvalidEnvironment, normalize_environment
from memory_core.json_types import json_type
from memory_core.models import (
    PROPOSED_STATUSES,
    Agent,
    Authority,
    Consent,
    Memory,
    MemoryEvent,
    MemoryType,
    ScopeKind,
    Sensitivity,
    SourceType,
    Status,
    Subject,
    Tenant,
    Tombstone,
    parse_scope,
)
from memory_core.principals import SystemPrincipal
from memory_core.services.memories import MemoryDraft, build_memory, embed_memories
from memory_core.services.policy import policy_ensure
from memory_core.text import BIDI_CONTROLS, BIDI_CONTROLS_MESSAGE, identifier

SOURCE_FOR_AUTHORITY = {
    Authority.EXPLICIT_USER: SourceType.USER_INPUT,
    Authority.EXPLICIT_ADMIN: SourceType.ADMIN,
    Authority.CONFIRMED_SYSTEM: SourceType.VERIFIED_TOOL_OUTPUT,
    Authority.TOOL_OBSERVATION: SourceType.VERIFIED_TOOL_OUTPUT,
    Authority.MODEL_INFERENCE: SourceType.MODEL_INFERENCE,
}


TENANT_SLUG_CHARS = Tenant._meta.get_field("slug").max_length


class DatasetError(ValueError):
    """The dataset file does not follow the format; the message names the entry."""


@dataclass
class LoadedDataset:
    """The rows a dataset became: dataset ids mapped to stored ids, and back."""

    memory_ids: dict[str, uuid.UUID] = field(default_factory=dict)
    # Dataset ids left out: deleted since an earlier load (or replacing one that was).
    deleted: set[str] = field(default_factory=set)
    tenants: dict[str, Tenant] = field(default_factory=dict)  # by prefix + name
    tenant_names: dict[str, str] = field(default_factory=dict)  # slug -> prefix + name
    subjects: dict[tuple[str, str], Subject] = field(default_factory=dict)
    agents: dict[tuple[str, str], Agent] = field(default_factory=dict)
    # The tenants hold an evaluation run's copy (``Tenant.evaluation_run``), not people's own.
    evaluation_run: bool = False

    @property
    def dataset_ids(self) -> dict[uuid.UUID, str]:
        return {stored: local for local, stored in self.memory_ids.items()}


# A memory's source ids (its dataset's name, its id in the dataset) fit their columns.
SOURCE_ID_CHARS = Memory._meta.get_field("source_message_id").max_length
AGENT_NAME_CHARS = Agent._meta.get_field("name").max_length
# The most a memory's version column (a PostgreSQL integer) holds.
MAX_VERSION = 2**31 - 1
NOT_TEXT = "must be valid Unicode without NUL characters"


def _require(entry: dict, key: str, where: str):
    if key not in entry or entry[key] in (None, ""):
        raise DatasetError(f"{where}: '{key}' is required")
    return entry[key]


def _text(entry: dict, key: str, where: str, *, max_chars: int, required: bool = False) -> str:
    """Return the text field ``key`` of ``entry`` ("" when absent and not ``required``);
    DatasetError for another type, a NUL or unpaired surrogate, or a text over
    ``max_chars`` (which the table's columns would refuse with a database error)."""
    value = _require(entry, key, where) if required else entry.get(key)
    if value in (None, ""):
        return ""
    if not isinstance(value, str):
        raise DatasetError(f"{where}: {key} must be a string")
    if bad_text(value):
        raise DatasetError(f"{where}: {key} must be valid Unicode without NUL characters")
    if len(value) > max_chars:
        raise DatasetError(f"{where}: {key} is at most {max_chars} characters")
    return value


def _id(entry: dict, key: str, where: str, *, max_chars: int, required: bool = False) -> str:
    """Return the id field ``key`` of ``entry`` (a subject's, a key, a session's or a task's)
    as every request reads one (``text.identifier``: trimmed, in NFC), refusing one that holds
    a bidirectional control, as the API does: a dataset's "José" in NFD was a subject its
    cases' NFC "José" never reached (stop 51's fuzzing)."""
    value = identifier(_text(entry, key, where, max_chars=max_chars, required=required))
    if BIDI_CONTROLS.search(value):
        raise DatasetError(f"{where}: {key}: {BIDI_CONTROLS_MESSAGE}")
    if required and not value:
        raise DatasetError(f"{where}: {key} must not be blank")
    if len(value) > max_chars:  # NFC lengthens a few texts
        raise DatasetError(f"{where}: {key} is at most {max_chars} characters")
    return value


def _choice(value, allowed, key: str, where: str):
    if value not in allowed:
        raise DatasetError(f"{where}: {key} {value!r} is not one of {sorted(allowed)}")
    return value


def _optional_choice(entry: dict, key: str, allowed, where: str, *, default):
    """Return ``entry``'s ``key``, one of ``allowed``, or ``default`` when it is left out or
    null. Anything else given is refused with the entry named: read as ``entry.get(key) or
    default``, a ``false``, 0, [] or {} became the default, ``"consent": false`` the
    ``explicit`` the file denies (stop 59's audit of eval)."""
    value = entry.get(key)
    return default if value is None else _choice(value, allowed, key, where)


@transaction.atomic
def load_dataset_memories(
    data: dict, *, tenant_prefix: str = "", now=None, evaluation_run: bool = False
) -> LoadedDataset:
    """Create the tenants, subjects, agents and memories of ``data``; return the id maps.

    ``tenant_prefix`` isolates a run: tenant slugs become ``prefix + name``; with
    ``evaluation_run`` the tenants it makes are marked as a run's (``Tenant.evaluation_run``),
    which a deletion of the words they copy removes whole. Memories already
    loaded (same dataset name and id in the same tenant) are reused, so loading is idempotent.
    A memory deleted since an earlier load is not brought back (``LoadedDataset.deleted``): a
    deletion scrubs the row's source ids and keeps its content's hash in its ledger, so the
    subject's tombstones are asked, as ``import_memories`` asks them; nor is one that replaces
    it. ``make run`` loads the demo on every start, and brought back what its users deleted.
    """
    now = now or timezone.now()
    name = dataset_name(data)
    if bad_text(name):  # stored as each memory's source_conversation_id
        raise DatasetError(f"'dataset' {NOT_TEXT}")
    conversation = f"dataset:{name}"  # each memory's source_conversation_id
    if len(conversation) > SOURCE_ID_CHARS:
        raise DatasetError(
            f"'dataset' is at most {SOURCE_ID_CHARS - len('dataset:')} characters "
            f"(its memories' conversation id is dataset:<name>)"
        )
    entries = dataset_memories(data)
    loaded = LoadedDataset(evaluation_run=evaluation_run)
    seen: set[str] = set()
    deleted_hashes: dict[uuid.UUID, set[str]] = {}
    pending: list[tuple[dict, Memory]] = []
    for index, entry in enumerate(entries):
        where = f"memories[{index}]"
        if not isinstance(entry, dict):
            raise DatasetError(f"{where}: must be an object")
        local_id = _require(entry, "id", where)
        if isinstance(local_id, bool) or not isinstance(local_id, (str, int, float)):
            # A list or an object was its Python text: the memory "['m2']" (stop 54's audit
            # of the harness), as a tenant's was until stop 52.
            raise DatasetError(f"{where}: 'id' must be a string, not {json_type(local_id)}")
        local_id = str(local_id)
        if bad_text(local_id):
            raise DatasetError(f"{where}: id {NOT_TEXT}")
        if len(local_id) > SOURCE_ID_CHARS:  # stored as the memory's source_message_id
            raise DatasetError(f"{where}: id is at most {SOURCE_ID_CHARS} characters")
        where = f"memory {local_id!r}"
        if local_id in seen:
            raise DatasetError(f"{where}: duplicate id")
        seen.add(local_id)
        tenant = dataset_tenant(loaded, tenant_prefix, _tenant_name(entry, where))
        external_id = _id(entry, "subject", where, max_chars=HARD_MAX_ID_CHARS, required=True)
        subject = _subject(loaded, tenant, external_id)
        agent = _agent(loaded, tenant, _id(entry, "agent", where, max_chars=AGENT_NAME_CHARS))
        existing = Memory.objects.filter(
            tenant=tenant, source_conversation_id=conversation, source_message_id=local_id
        ).first()
        if existing:
            loaded.memory_ids[local_id] = existing.id
            continue
        memory = _draft_memory(entry, where, tenant, subject, agent, conversation, local_id, now)
        if memory.content_hash in _deleted_hashes(deleted_hashes, subject):
            loaded.deleted.add(local_id)
            continue
        pending.append((entry, memory))
        loaded.memory_ids[local_id] = memory.id
    pending = _without_replacements_of(pending, loaded)
    _link_chains(pending, loaded)
    memories = [memory for _, memory in pending]
    if memories:
        embed_memories([m for m in memories if m.status != Status.DELETED])
        Memory.objects.bulk_create(memories)
        system = SystemPrincipal(tenant_id=None, name=f"dataset:{name}")
        MemoryEvent.objects.bulk_create(
            [
                MemoryEvent(
                    tenant_id=m.tenant_id,
                    memory_id=m.id,
                    action=MemoryEvent.Action.CREATED,
                    actor_type=system.actor_type,
                    actor_id=system.actor_id,
                    reason_code="import",
                )
                for m in memories
            ]
        )
    return loaded


def dataset_memories(data: dict) -> list:
    """Return the memory entries of ``data`` (none when left out); DatasetError unless a list."""
    entries = data.get("memories") or []
    if not isinstance(entries, list):
        raise DatasetError("'memories' must be a list")
    return entries


# The lists a case names memories of its file in, by their ids (FORMAT.md), besides its
# ``ranked_before`` pairs.
ID_LISTS = ("required_memory_ids", "acceptable_memory_ids", "forbidden_memory_ids")


def case_memory_ids(case: dict) -> list[tuple[str, list]]:
    """Return the lists of memory ids ``case`` names (the file's own ids), each with the field
    that holds it: its id lists and each of its ``ranked_before`` pairs; what is no list is
    left out."""
    pairs = case.get("ranked_before")
    named = [(key, case.get(key)) for key in ID_LISTS]
    named += [("ranked_before", pair) for pair in (pairs if isinstance(pairs, list) else [])]
    return [(key, ids) for key, ids in named if isinstance(ids, list)]


def dataset_entries(data: dict) -> dict[str, dict]:
    """Return the memory entries of ``data`` by id, an id read as the loader reads it (its
    text); what is no object with an id is left out, for the loader to refuse."""
    return {
        str(entry["id"]): entry
        for entry in dataset_memories(data)
        if isinstance(entry, dict) and entry.get("id") is not None
    }


def _deleted_hashes(known: dict[uuid.UUID, set[str]], subject: Subject) -> set[str]:
    """The content hashes of ``subject``'s deleted memories (its tombstones), and of its
    tenant's tombstones that name no Subject row of the tenant, read once.

    A restore and its replay tombstone a memory deleted after the backup, of a subject made
    after it, under the journal's subject id, which no restored row holds; loading again
    makes the subject afresh under a new id, and brought the memory back (stop 56's audit of
    imports). Whose it was is not known, so any entry with its text may be it: the hash alone
    matches, as in ``import_memories``."""
    if subject.pk not in known:
        # A row named by its own id is one a replay restored, as no row is (stop 56's review).
        restored = Subject.objects.filter(
            tenant_id=subject.tenant_id, pk=OuterRef("subject_id")
        ).exclude(external_id=Cast("id", output_field=CharField()))
        known[subject.pk] = set(
            Tombstone.objects.filter(tenant_id=subject.tenant_id)
            .filter(Q(subject_id=subject.pk) | ~Exists(restored))
            .values_list("content_hash", flat=True)
        )
    return known[subject.pk]


def _without_replacements_of(
    pending: list[tuple[dict, Memory]], loaded: LoadedDataset
) -> list[tuple[dict, Memory]]:
    """Leave out each drafted memory that supersedes one left out as deleted, down its chain."""
    while dropped := {
        str(entry["id"])
        for entry, _ in pending
        if entry.get("supersedes") not in (None, "") and str(entry["supersedes"]) in loaded.deleted
    }:
        loaded.deleted |= dropped
        for local_id in dropped:
            del loaded.memory_ids[local_id]
        pending = [(entry, memory) for entry, memory in pending if str(entry["id"]) not in dropped]
    return pending


def _link_chains(pending: list[tuple[dict, Memory]], loaded: LoadedDataset) -> None:
    """Point each ``supersedes`` at its row and make every chain one the database stores.

    The format lets a file leave ``version`` (default 1) and ``status`` (default active) out,
    so a plain "B supersedes A" would be two active version-1 rows, which the chain trigger
    refuses. A successor without a ``version`` gets its predecessor's plus one (predecessors
    first, in whatever order the file lists them), and a predecessor that is active or
    pending is stored superseded once a successor replaces it. What no database could hold
    (an unknown id, a cycle, another tenant's or subject's memory, a given version not above
    its predecessor's, two successors of one memory, a successor of a pending correction of
    a memory still active or pending) is a DatasetError naming the entry.
    """
    drafted = {str(entry["id"]): (entry, memory) for entry, memory in pending}
    # What a memory not merely proposed supersedes: a pending correction among them is
    # stored superseded (``_link``), and counts as its own predecessor's successor.
    replaced_ids = {
        str(entry["supersedes"])
        for entry, memory in drafted.values()
        if entry.get("supersedes") not in (None, "") and memory.status not in PROPOSED_STATUSES
    }
    successors: dict[str, str] = {}
    for local_id, (entry, memory) in drafted.items():
        target = entry.get("supersedes")
        replaced = memory.status == Status.PENDING_APPROVAL and local_id in replaced_ids
        if target in (None, "") or (memory.status in PROPOSED_STATUSES and not replaced):
            continue  # a proposed correction replaces nothing yet
        if (other := successors.setdefault(str(target), local_id)) != local_id:
            raise DatasetError(
                f"memory {local_id!r}: {other!r} already supersedes {str(target)!r} (a memory "
                "has one successor; a proposed one is pending_approval or rejected)"
            )
    settled: set[str] = set()
    for start in drafted:
        # Up the chain to its first memory, one already settled, or one stored before.
        chain = [start]
        while (target := drafted[chain[-1]][0].get("supersedes")) not in (None, ""):
            target = str(target)
            if target in chain:
                raise DatasetError(
                    f"memory {chain[-1]!r}: supersedes {target!r}, which supersedes it back"
                )
            if target not in drafted or target in settled:
                break
            chain.append(target)
        for local_id in reversed(chain):  # then down it, predecessors first
            if local_id not in settled:
                _link(local_id, drafted, loaded)
                settled.add(local_id)


def _link(local_id: str, drafted: dict, loaded: LoadedDataset) -> None:
    """Link the drafted memory ``local_id`` to its predecessor, settled or stored before."""
    entry, memory = drafted[local_id]
    target = entry.get("supersedes")
    if target in (None, ""):
        return
    target, where = str(target), f"memory {local_id!r}"
    if target not in loaded.memory_ids:
        raise DatasetError(f"{where}: supersedes unknown id {target!r}")
    stored_before = target not in drafted  # by an earlier load of the same dataset
    predecessor = (
        Memory.objects.get(pk=loaded.memory_ids[target]) if stored_before else drafted[target][1]
    )
    if (predecessor.tenant_id, predecessor.subject_id) != (memory.tenant_id, memory.subject_id):
        raise DatasetError(f"{where}: supersedes {target!r} of another tenant or subject")
    if entry.get("version") is None:
        if predecessor.version >= MAX_VERSION:
            raise DatasetError(
                f"{where}: supersedes {target!r}, whose version {predecessor.version} is the "
                "highest a version can be; give the chain lower versions"
            )
        memory.version = predecessor.version + 1
    elif memory.version <= predecessor.version:
        raise DatasetError(
            f"{where}: version {memory.version} must be above the version of {target!r} that "
            f"it supersedes ({predecessor.version})"
        )
    memory.supersedes_id = predecessor.id
    replaced = predecessor.status in (Status.ACTIVE, Status.PENDING_APPROVAL)
    if replaced and memory.status not in PROPOSED_STATUSES:
        if predecessor.status == Status.PENDING_APPROVAL and predecessor.supersedes_id:
            # Stored superseded, the proposed correction counts as its own predecessor's
            # successor (a second successor is a fork, ``_link_chains``). A predecessor still
            # active or pending stays so, which the chain trigger refused at the commit in an
            # IntegrityError traceback (stop 59's audit of eval); one out of use (superseded,
            # revoked) makes a chain the database holds, which loads as before that audit.
            earlier = next(
                (m for _, m in drafted.values() if m.id == predecessor.supersedes_id), None
            ) or Memory.objects.get(pk=predecessor.supersedes_id)
            if earlier.status in (Status.ACTIVE, Status.PENDING_APPROVAL):
                raise DatasetError(
                    f"{where}: supersedes {target!r}, a correction still pending_approval of "
                    f"a memory still {earlier.status}; a chain goes on from an approved "
                    "memory (give it a status other than pending_approval)"
                )
        # A superseded memory is one that was in use (memory_admitted_matches_status): a
        # pending one the file replaces is stored admitted, or the insert failed on that
        # check in a traceback (stop 56's audit of the harness).
        predecessor.status, predecessor.admitted = Status.SUPERSEDED, True
        if stored_before:
            Memory.objects.filter(pk=predecessor.id).update(status=Status.SUPERSEDED, admitted=True)


def dataset_environment(entry: dict, where: str) -> str:
    """Return the stored form of ``entry``'s optional ``environment`` (a memory's, or a case
    context's: the active one); raise DatasetError naming ``where`` for a bad name."""
    try:
        return normalize_environment(entry.get("environment"))
    except InvalidEnvironment as exc:
        raise DatasetError(f"{where}: environment: {exc.message}") from exc


def dataset_name(data: dict) -> str:
    """Return the dataset's name ("dataset" without one), refused unless it is a string (a
    list was its Python text, the report's and every memory's conversation: stop 54's audit
    of the harness)."""
    name = data.get("dataset") or "dataset"
    if not isinstance(name, str):
        raise DatasetError(f"'dataset' must be a string, not {json_type(name)}")
    return name


def _tenant_name(entry: dict, where: str) -> str:
    """Return ``entry``'s tenant name (a number is its text), refused as other ids are. A list
    or an object was its Python text: the memory landed in tenant "['t']" (stop 52's audit)."""
    value = _require(entry, "tenant", where)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise DatasetError(f"{where}: 'tenant' must be a string, not {json_type(value)}")
    name = str(value)
    return _text({"tenant": name}, "tenant", where, max_chars=HARD_MAX_ID_CHARS, required=True)


def tenant_slug(name: str) -> str:
    """Return the slug of the dataset tenant ``name`` (run prefix included).

    A name that fits the slug column is its own slug, as before. A longer one keeps its first
    characters and ends in a hash of the whole name: cutting it to the column's 64 characters
    made two names that share their first 64 one tenant, and an evaluation run read across
    the tenants it was meant to keep apart.
    """
    if len(name) <= TENANT_SLUG_CHARS:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{name[: TENANT_SLUG_CHARS - len(digest) - 1]}-{digest}"


def dataset_tenant(loaded: LoadedDataset, prefix: str, name: str) -> Tenant:
    """Return the tenant of the dataset tenant ``name`` in a run with ``prefix``, created on
    first use; the loader and the harness both find a tenant here, so they agree on it."""
    full = prefix + name
    if full not in loaded.tenants:
        slug = tenant_slug(full)
        if loaded.tenant_names.setdefault(slug, full) != full:
            raise DatasetError(
                f"tenants {loaded.tenant_names[slug]!r} and {full!r} would be stored as one "
                f"tenant {slug!r}; rename one"
            )
        tenant, _ = Tenant.objects.get_or_create(
            slug=slug,
            defaults={
                "name": full[: Tenant._meta.get_field("name").max_length],
                "evaluation_run": loaded.evaluation_run,
            },
        )
        if loaded.evaluation_run and not tenant.evaluation_run:
            # The run removes its tenants afterwards, and a deletion of their words removes
            # them whole: never a tenant of people's own memories.
            raise DatasetError(
                f"tenant {slug!r} exists and is not an evaluation run's; run with another prefix"
            )
        policy_ensure(tenant=tenant)
        loaded.tenants[full] = tenant
    return loaded.tenants[full]


def _subject(loaded: LoadedDataset, tenant: Tenant, external_id: str) -> Subject:
    key = (tenant.slug, external_id)
    if key not in loaded.subjects:
        loaded.subjects[key], _ = Subject.objects.get_or_create(
            tenant=tenant, external_id=external_id, defaults={"display_name": external_id}
        )
    return loaded.subjects[key]


def _agent(loaded: LoadedDataset, tenant: Tenant, name) -> Agent | None:
    if not name:
        return None
    key = (tenant.slug, str(name))
    if key not in loaded.agents:
        loaded.agents[key], _ = Agent.objects.get_or_create(tenant=tenant, name=str(name))
    return loaded.agents[key]


def _days(entry: dict, key: str, where: str) -> float | None:
    """Return the number of days ``key`` of ``entry`` (None when absent); DatasetError for a
    boolean, another type, or NaN or an infinity (Python's json reads NaN and Infinity)."""
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DatasetError(f"{where}: {key} must be a number, not {value!r}")
    if isinstance(value, float) and not math.isfinite(value):  # an int is finite, however long
        raise DatasetError(f"{where}: {key} must be a finite number, not {value!r}")
    return value


def _shifted(moment: datetime, where: str, key: str, value, **delta) -> datetime:
    """Return ``moment`` moved by ``delta`` (timedelta's keywords); DatasetError naming
    ``key`` and its ``value`` when no date is there (timedelta stops at 999,999,999 days,
    datetime at the years 1 and 9999)."""
    try:
        return moment + timedelta(**delta)
    except OverflowError as exc:
        raise DatasetError(
            f"{where}: {key} {value!r} is out of range (the date it gives falls outside the "
            "years 1 to 9999)"
        ) from exc


def _draft_memory(entry, where, tenant, subject, agent, conversation, local_id, now) -> Memory:
    memory_type = _choice(
        _require(entry, "memory_type", where), MemoryType.values, "memory_type", where
    )
    authority = _choice(_require(entry, "authority", where), Authority.values, "authority", where)
    scope = str(_require(entry, "scope", where))
    if bad_text(scope):
        raise DatasetError(f"{where}: scope {NOT_TEXT}")
    try:
        scope_kind, scope_ref = parse_scope(scope)
    except ValueError as exc:
        raise DatasetError(f"{where}: {exc}") from exc
    if scope_kind == ScopeKind.USER and scope_ref not in (subject.external_id, str(subject.id)):
        # As the API refuses it (``invalid_scope``): no retrieval reaches it, so the system
        # could never select it while the baseline, which has no scope gate, did, and the
        # figures blamed the pipeline (stop 52's audit).
        raise DatasetError(
            f"{where}: a user scope names the memory's own subject ({subject.external_id!r}), "
            f"not {scope_ref!r}"
        )
    if scope_kind == ScopeKind.USER:
        scope_ref = subject.external_id  # one spelling, as a write stores it
    content = _text(entry, "content", where, max_chars=HARD_MAX_CONTENT_CHARS, required=True)
    confidence = entry.get("confidence", 1.0)
    if (
        not isinstance(confidence, (int, float))
        or isinstance(confidence, bool)  # a JSON true was read as 1.0
        or not 0 <= confidence <= 1
    ):
        raise DatasetError(f"{where}: confidence must be a number in [0, 1], not {confidence!r}")
    status = _optional_choice(entry, "status", Status.values, where, default=Status.ACTIVE)
    age_days = _days(entry, "age_days", where)
    if age_days is not None and age_days < 0:
        raise DatasetError(f"{where}: age_days must be a non-negative number")
    created = _shifted(now, where, "age_days", age_days, days=-(age_days or 0))
    expires = _days(entry, "expires_in_days", where)
    valid_until = (
        None if expires is None else _shifted(now, where, "expires_in_days", expires, days=expires)
    )
    valid_from = (
        created
        if valid_until is None or valid_until > created
        else _shifted(valid_until, where, "expires_in_days", expires, seconds=-1)
    )
    source_type = _optional_choice(
        entry, "source_type", SourceType.values, where, default=SOURCE_FOR_AUTHORITY[authority]
    )
    # Left out, it is 1; a 0 or a false given is refused, not read as 1.
    version = 1 if entry.get("version") is None else entry["version"]
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= MAX_VERSION:
        raise DatasetError(
            f"{where}: version must be a whole number from 1 to {MAX_VERSION}, not {version!r}"
        )
    draft = MemoryDraft(
        subject=subject,
        memory_type=memory_type,
        content=content,
        authority=authority,
        source_type=source_type,
        scope_kind=scope_kind,
        scope_ref=scope_ref,
        memory_key=_id(entry, "memory_key", where, max_chars=HARD_MAX_ID_CHARS),
        agent_id=agent.id if agent else None,
        session_id=_id(entry, "session_id", where, max_chars=HARD_MAX_ID_CHARS),
        task_id=_id(entry, "task_id", where, max_chars=HARD_MAX_ID_CHARS),
        environment=dataset_environment(entry, where),
        source_conversation_id=conversation,
        source_message_id=local_id,
        # The tool a verified tool output came from, as an agent's write names it
        # (``source.tool``: at most 200 characters, stored trimmed); not FORMAT.md's.
        source_tool=_text(entry, "source_tool", where, max_chars=HARD_MAX_ID_CHARS).strip(),
        confidence=float(confidence),
        consent=_optional_choice(entry, "consent", Consent.values, where, default="explicit"),
        sensitivity=_optional_choice(
            entry, "sensitivity", Sensitivity.values, where, default="personal"
        ),
        valid_from=valid_from,
        valid_until=valid_until,
        created_at=created,
        status=status,
    )
    memory = build_memory(draft, version=version, policy_version=1)
    memory.id = uuid.uuid4()
    if status == Status.DELETED:
        memory.content = ""
    return memory
