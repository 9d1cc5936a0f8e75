"""API keys and their agents: keys issued once in plain text, stored as a SHA-256 hash,
revocable, optionally expiring; agents made, deactivated (every key refused) and reactivated.

Keys carry 256 bits of randomness, so a fast hash is enough: there is nothing to brute-force.
The prefix (public) finds the row; the hash is compared in constant time.

A key's revocation, an agent's deactivation, an agent's grant and a key's expiry set are
journaled as they commit (the deletion journal, ``deletion.ledger``): a restore from an older
backup would let the key or the agent in again, or with a grant narrowed since wide again,
and ``replay_deletions`` applies them again. An append that fails is made by the deletion
sweep.
"""

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import cache, partial, reduce
from operator import or_
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, transaction
from django.db.models import F, Q, QuerySet
from django.db.models.functions import Now
from django.utils import timezone

from memory_core.admission.normalize import is_blank
from memory_core.commit_hooks import after_commit
from memory_core.deletion.ledger import (
    GRANT_FIELDS,
    agent_deactivation_entry,
    agent_grant_entry,
    backups_cutoff,
    check_grant,
    key_expiry_entry,
    key_revocation_entry,
    ledger_appended,
    ledger_catch_up,
)
from memory_core.exceptions import ValidationFailed
from memory_core.models import Agent, ApiKey, Tenant
from memory_core.text import BIDI_CONTROLS, BIDI_CONTROLS_MESSAGE, identifier

KEY_PREFIX = "mlk"
# What api_key_create issues, and has since the first release: mlk_<12 hex>_<43 URL-safe base64
# characters>. Anything else is refused before a query sees it (a NUL byte made PostgreSQL
# raise), a key cut short or lengthened when copied too, as docs/api.md says (its shape had
# some slack, and such a key was looked up and answered "unknown or revoked": stop 52's audit).
_KEY_SHAPE = re.compile(rf"{KEY_PREFIX}_([0-9a-f]{{12}})_[A-Za-z0-9_-]{{43}}", re.ASCII)
# What a SlugField holds (django.core.validators.slug_re).
_SLUG = re.compile(r"[-a-zA-Z0-9_]+", re.ASCII)


def _hash(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


@transaction.atomic
def api_key_create(*, agent: Agent, name: str = "", expires_at=None) -> tuple[ApiKey, str]:
    """Create a key for ``agent``; return the row and the raw key (shown once, never stored)."""
    _check_length(name, ApiKey, "name", "The key's name")
    prefix = secrets.token_hex(6)
    raw_key = f"{KEY_PREFIX}_{prefix}_{secrets.token_urlsafe(32)}"
    key = ApiKey.objects.create(
        agent=agent, name=name, prefix=prefix, hashed_key=_hash(raw_key), expires_at=expires_at
    )
    return key, raw_key


def api_key_revoke(*, key: ApiKey) -> ApiKey:
    """Revoke ``key`` at once; later requests with it are refused.

    The revocation is journaled as it commits (``ledger.key_revocation_entry``): a backup
    taken before it would bring the key back usable, and ``replay_deletions`` revokes it
    again after the restore. An append that fails is made by the deletion sweep
    (``revocations_journal``).
    """
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
        after_commit(partial(_journal_revocation, key.pk))
    return key


def _journal_revocation(key_id) -> bool:
    """Append a committed revocation's journal line and record it; return whether it was.
    A failure is logged, never raised (the key is revoked; the sweep appends it later)."""
    key = ApiKey.objects.select_related("agent").get(pk=key_id)
    entry = key_revocation_entry(
        key_id=key.pk, tenant_id=key.agent.tenant_id, revoked_at=key.revoked_at
    )
    if not ledger_appended(entry, f"API key {key.pk}", "revocation"):
        return False
    ApiKey.objects.filter(pk=key.pk, revocation_journaled_at=None).update(
        revocation_journaled_at=timezone.now()
    )
    return True


def revocations_journal(*, older_than: float = 0, limit: int = 500) -> int:
    """Append the journal lines of the keys revoked more than ``older_than`` seconds ago whose
    line is not recorded (an append that failed, or a key revoked before revocations were
    journaled), at most ``limit``; return how many were appended. Raise LedgerAppendFailed
    if the journal cannot be written. Platform work: keys of every tenant, one read, one
    write (one fsync) and one UPDATE. A key revoked before the oldest backup kept
    (``ledger.backups_cutoff``) needs no line: it is left unrecorded."""
    before = Now() - timedelta(seconds=older_than)  # the database's clock (stop 66)
    pending = list(
        ApiKey.objects.filter(
            revoked_at__gte=backups_cutoff(), revoked_at__lte=before, revocation_journaled_at=None
        ).values_list("pk", "agent__tenant_id", "revoked_at")[:limit]
    )
    if not pending:
        return 0
    ledger_catch_up(
        [
            key_revocation_entry(key_id=pk, tenant_id=tenant_id, revoked_at=revoked_at)
            for pk, tenant_id, revoked_at in pending
        ]
    )
    ApiKey.objects.filter(pk__in=[pk for pk, _, _ in pending], revocation_journaled_at=None).update(
        revocation_journaled_at=timezone.now()
    )
    return len(pending)


@transaction.atomic
def agent_deactivate(*, agent: Agent) -> Agent:
    """Deactivate ``agent`` at once: every key of it is refused from its next request
    (``api_key_resolve``), its keys left as they are for a reactivation.

    The deactivation is journaled as it commits (``ledger.agent_deactivation_entry``): a
    backup taken before it would bring the agent back working, and ``replay_deletions``
    deactivates it again after the restore. An append that fails is made by the deletion
    sweep (``deactivations_journal``).
    """
    row = Agent.objects.select_for_update().get(pk=agent.pk)
    if row.is_active:
        row.is_active = False
        row.deactivated_at = timezone.now()
        row.deactivation_journaled_at = None
        row.save(update_fields=_ACTIVATION_FIELDS)
        after_commit(partial(_journal_deactivation, row.pk))
    return _refreshed(agent, row)


@transaction.atomic
def agent_reactivate(*, agent: Agent) -> Agent:
    """Let ``agent`` act again with its keys (those neither revoked nor expired).

    Not journaled: a restore from a backup taken before the reactivation brings the agent
    back inactive, and its replay of the deactivation's line deactivates it again; both err
    on the safe side, and an administrator reactivates it again. Raise ValidationFailed for
    an agent of a deleted tenant: its keys are refused anyway, and the deletion's
    ``identities`` step verifies that the tenant has no active agent.
    """
    row = Agent.objects.select_for_update(of=("self",)).select_related("tenant").get(pk=agent.pk)
    if row.tenant.deleted_at is not None:
        raise ValidationFailed(
            f"Agent {row.name!r} belongs to the deleted tenant {row.tenant.slug!r}: it stays "
            "deactivated."
        )
    if not row.is_active:
        row.is_active = True
        row.deactivated_at = row.deactivation_journaled_at = None
        row.save(update_fields=_ACTIVATION_FIELDS)
    return _refreshed(agent, row)


_ACTIVATION_FIELDS = ["is_active", "deactivated_at", "deactivation_journaled_at"]


def _refreshed(instance, row, fields=_ACTIVATION_FIELDS):
    """Give the caller's ``instance`` the ``fields`` of ``row`` (its locked copy)."""
    for name in fields:
        setattr(instance, name, getattr(row, name))
    return instance


def _journal_deactivation(agent_id) -> bool:
    """Append a committed deactivation's journal line and record it; return whether it was.
    A failure is logged, never raised (the agent is inactive; the sweep appends it later).
    An agent reactivated since has nothing to journal."""
    agent = Agent.objects.filter(pk=agent_id, is_active=False).first()
    if agent is None:
        return False
    if not ledger_appended(_deactivation_entry(agent), f"agent {agent.pk}", "deactivation"):
        return False
    _deactivations_record([agent])
    return True


def _deactivation_entry(agent: Agent) -> dict:
    return agent_deactivation_entry(
        agent_id=agent.pk,
        tenant_id=agent.tenant_id,
        # Deactivated before migration 0027, or by its tenant's deletion: when is not known.
        deactivated_at=agent.deactivated_at or timezone.now(),
    )


def _deactivations_record(agents: list[Agent]) -> None:
    """Record the lines of ``agents`` as journaled (one UPDATE). Only the deactivation each
    line names: one made since (reactivated and deactivated again while the line was
    written) has its own line to append, by the sweep if need be."""
    _recorded(agents, "deactivated_at", "deactivation_journaled_at", is_active=False)


def _recorded(rows: list, moment: str, journaled: str, **where) -> None:
    """Record the lines of ``rows`` (agents or keys) as journaled: ``journaled`` set, in one
    UPDATE, on each row whose ``moment`` is still the one its line names (an action made
    since has its own line to append, by the sweep if need be)."""
    named = reduce(or_, (Q(pk=row.pk, **{moment: getattr(row, moment)}) for row in rows))
    type(rows[0]).objects.filter(named, **where, **{journaled: None}).update(
        **{journaled: timezone.now()}
    )


def deactivations_journal(*, older_than: float = 0, limit: int = 500) -> int:
    """Append the journal lines of the inactive agents whose line is not recorded (an append
    that failed more than ``older_than`` seconds ago, or an agent deactivated before
    deactivations were journaled: migration 0027), at most ``limit``; return how many were
    appended. Raise LedgerAppendFailed if the journal cannot be written. One read, one
    write (one fsync) and one UPDATE. An agent deactivated before the oldest backup kept
    (``ledger.backups_cutoff``) needs no line: it is left unrecorded (one with no
    ``deactivated_at`` is journaled: when is not known)."""
    before = Now() - timedelta(seconds=older_than)  # the database's clock (stop 66)
    agents = list(
        Agent.objects.filter(is_active=False, deactivation_journaled_at=None)
        .filter(
            Q(deactivated_at__gte=backups_cutoff(), deactivated_at__lte=before)
            | Q(deactivated_at=None)
        )
        .only("pk", "tenant_id", "deactivated_at")[:limit]
    )
    if not agents:
        return 0
    ledger_catch_up([_deactivation_entry(agent) for agent in agents])
    _deactivations_record(agents)
    return len(agents)


@dataclass(frozen=True)
class _Setting:
    """A setting of a row journaled for a restore's replay (an agent's grant, a key's
    expiry): its line is appended as it commits, and by the deletion sweep if that failed."""

    rows: Callable[[], QuerySet]  # the rows, as their lines are made from them
    entry: Callable[[Any], dict]  # a row's line
    fields: tuple[str, ...]  # what the line reads of a row, but its pk and moment
    moment: str  # the field: when it was set last
    journaled: str  # the field: when that setting's line was recorded
    label: str  # how the log names a row ("agent", "API key")
    action: str  # and the setting ("grant", "expiry")


_TICK = timedelta(microseconds=1)


def _stamp(setting: _Setting, row, values: dict) -> None:
    """Save ``values`` on ``row`` (locked), stamped now and unrecorded, and append its line as
    the transaction commits."""
    for name, value in values.items():
        setattr(row, name, value)
    # Later than the row's last setting, whatever this host's clock says: the replay applies
    # each row's newest line, and a skewed clock must not make the later setting the older.
    now, last = timezone.now(), getattr(row, setting.moment)
    setattr(row, setting.moment, now if last is None or now > last else last + _TICK)
    setattr(row, setting.journaled, None)
    row.save(update_fields=[*values, setting.moment, setting.journaled])
    after_commit(partial(_setting_journal, setting, row.pk))


def _setting_journal(setting: _Setting, row_id) -> bool:
    """Append a committed setting's journal line and record it; return whether it was. A
    failure is logged, never raised (the setting is made; the sweep appends it later). The
    line holds what the row has now: a setting made since is newer, and the replay applies
    the newest line of a row alone."""
    row = setting.rows().filter(pk=row_id).exclude(**{setting.moment: None}).first()
    if row is None:
        return False
    if not ledger_appended(setting.entry(row), f"{setting.label} {row.pk}", setting.action):
        return False
    _recorded([row], setting.moment, setting.journaled)
    return True


def _settings_catch_up(setting: _Setting, *, older_than: float, limit: int) -> int:
    """Append the lines of the settings made more than ``older_than`` seconds ago and after
    the oldest backup kept whose line is not recorded, at most ``limit``, oldest first; return
    how many (``grants_journal``, ``expiries_journal``)."""
    before = Now() - timedelta(seconds=older_than)  # the database's clock (stop 66)
    moment = setting.moment
    rows = list(
        setting.rows()
        .filter(
            **{f"{moment}__gte": backups_cutoff(), f"{moment}__lte": before},
            **{setting.journaled: None},
        )
        .order_by(moment)
        .only("pk", moment, *setting.fields)[:limit]
    )
    if not rows:
        return 0
    ledger_catch_up([setting.entry(row) for row in rows])
    _recorded(rows, moment, setting.journaled)
    return len(rows)


_TYPE_FIELDS = ("write_types", "read_types")


def _grant_entry(agent: Agent) -> dict:
    return agent_grant_entry(
        agent_id=agent.pk,
        tenant_id=agent.tenant_id,
        changed_at=agent.grant_changed_at,
        grant={name: getattr(agent, name) for name in GRANT_FIELDS},
    )


_GRANT = _Setting(
    rows=Agent.objects.all,
    entry=_grant_entry,
    fields=("tenant_id", *GRANT_FIELDS),
    moment="grant_changed_at",
    journaled="grant_journaled_at",
    label="agent",
    action="grant",
)


@transaction.atomic
def agent_grant_set(*, agent: Agent, **grant) -> Agent:
    """Set any of ``agent``'s grant fields (``write_types``, ``read_types``,
    ``max_sensitivity``, ``any_subject``, ``issues_subject_tokens``; the others kept), from
    its next request on. Nothing is written when the grant stays the same (the types compared
    as sets).

    The grant is journaled as it commits (``ledger.agent_grant_entry``: the agent's id and the
    grant's values): a backup taken before it holds the grant as it was, a grant narrowed
    since wide again, and ``replay_deletions`` sets it again after the restore. An append that
    fails is made by the deletion sweep (``grants_journal``). Raise ValidationFailed, before
    writing anything, for another field, a type or a sensitivity that is none, or an issuer
    of subject tokens that does not act for any subject.
    """
    unknown = sorted(set(grant) - set(GRANT_FIELDS))
    if unknown:
        raise ValidationFailed(f"No grant field {', '.join(unknown)}: {', '.join(GRANT_FIELDS)}.")
    row = Agent.objects.select_for_update(of=("self",)).get(pk=agent.pk)
    new = {name: grant.get(name, getattr(row, name)) for name in GRANT_FIELDS}
    for name in _TYPE_FIELDS:
        new[name] = sorted(set(new[name]))
    try:
        check_grant(new)
    except ValueError as exc:
        raise ValidationFailed(f"Agent {row.name!r}: {exc}.") from exc
    old = {name: getattr(row, name) for name in GRANT_FIELDS}
    for name in _TYPE_FIELDS:
        old[name] = sorted(set(old[name]))
    if new != old:
        _stamp(_GRANT, row, new)
    return _refreshed(agent, row, [*GRANT_FIELDS, _GRANT.moment, _GRANT.journaled])


def grants_journal(*, older_than: float = 0, limit: int = 500) -> int:
    """Append the journal lines of the grants set more than ``older_than`` seconds ago whose
    line is not recorded (an append that failed), at most ``limit``, oldest first; return how
    many were appended. Raise LedgerAppendFailed if the journal cannot be written. One read,
    one write (one fsync) and one UPDATE. A grant set before the oldest backup kept
    (``ledger.backups_cutoff``) needs no line: it is left unrecorded."""
    return _settings_catch_up(_GRANT, older_than=older_than, limit=limit)


def _expiry_entry(key: ApiKey) -> dict:
    return key_expiry_entry(
        key_id=key.pk,
        tenant_id=key.tenant_id,
        changed_at=key.expiry_changed_at,
        expires_at=key.expires_at,
    )


_EXPIRY = _Setting(
    # With their agent's tenant (``tenant_id``), which their lines name.
    rows=lambda: ApiKey.objects.annotate(tenant_id=F("agent__tenant_id")),
    entry=_expiry_entry,
    fields=("expires_at",),
    moment="expiry_changed_at",
    journaled="expiry_journaled_at",
    label="API key",
    action="expiry",
)


@transaction.atomic
def api_key_expiry_set(*, key: ApiKey, expires_at) -> ApiKey:
    """Set when ``key`` expires (None: never); it is refused from then on
    (``api_key_resolve``). Nothing is written when it stays the same.

    The expiry is journaled as it commits (``ledger.key_expiry_entry``: the key's id and the
    new ``expires_at``): a backup taken before it holds the key without it, usable past the
    expiry set, and ``replay_deletions`` sets it again after the restore. An append that
    fails is made by the deletion sweep (``expiries_journal``). Raise ValidationFailed for a
    time without a time zone.
    """
    if expires_at is not None and timezone.is_naive(expires_at):
        raise ValidationFailed("A key's expiry needs a time zone.")
    row = ApiKey.objects.select_for_update().get(pk=key.pk)
    if row.expires_at != expires_at:
        _stamp(_EXPIRY, row, {"expires_at": expires_at})
    return _refreshed(key, row, ["expires_at", _EXPIRY.moment, _EXPIRY.journaled])


def expiries_journal(*, older_than: float = 0, limit: int = 500) -> int:
    """Append the journal lines of the keys' expiries set more than ``older_than`` seconds ago
    whose line is not recorded (an append that failed), at most ``limit``, oldest first;
    return how many were appended. Raise LedgerAppendFailed if the journal cannot be written.
    One read, one write (one fsync) and one UPDATE. One set before the oldest backup kept
    (``ledger.backups_cutoff``) needs no line: it is left unrecorded."""
    return _settings_catch_up(_EXPIRY, older_than=older_than, limit=limit)


def api_key_shaped(raw_key: str) -> bool:
    """Whether ``raw_key`` is shaped like a key ``api_key_create`` issues (no query)."""
    return _KEY_SHAPE.fullmatch(raw_key) is not None


@cache
def _resolve_statement() -> str:
    """Return the statement ``api_key_resolve`` reads a key and its agent by: every column of
    both, as the ORM would select them (``from_db`` builds the rows)."""
    key_columns = [f"k.{field.column}" for field in ApiKey._meta.concrete_fields]
    agent_columns = [f"a.{field.column}" for field in Agent._meta.concrete_fields]
    # Only the models' own table and column names are interpolated.
    return (
        f"SELECT {', '.join(key_columns + agent_columns)} FROM {ApiKey._meta.db_table} k "  # noqa: S608
        f"JOIN {Agent._meta.db_table} a ON a.id = k.agent_id "
        f"JOIN {Tenant._meta.db_table} t ON t.id = a.tenant_id "
        "WHERE k.prefix = %s AND a.is_active AND t.deleted_at IS NULL"
    )


def api_key_resolve(raw_key: str) -> ApiKey | None:
    """Return the usable key matching ``raw_key``, with its agent, or None (unknown, revoked
    or expired, its agent inactive or its tenant deleted, or not shaped like a key at all:
    checked before any query).

    Every API request authenticates here, so the key is read by one fixed statement (which
    the connection prepares once it has run it a few times) rather than the ORM's query:
    0.97 against 0.28 ms at the median (docs/performance.md, section 20). The prefix is
    unique, so at most one row comes back.
    """
    shape = _KEY_SHAPE.fullmatch(raw_key)
    if shape is None:
        return None
    with connection.cursor() as cursor:
        cursor.execute(_resolve_statement(), [shape.group(1)])
        row = cursor.fetchone()
    if row is None:
        return None
    key_fields = ApiKey._meta.concrete_fields
    key = ApiKey.from_db(DEFAULT_DB_ALIAS, [f.attname for f in key_fields], row[: len(key_fields)])
    if not hmac.compare_digest(key.hashed_key, _hash(raw_key)) or not key.is_usable():
        return None
    agent_fields = Agent._meta.concrete_fields
    key.agent = Agent.from_db(
        DEFAULT_DB_ALIAS, [f.attname for f in agent_fields], row[len(key_fields) :]
    )
    return key


# How stale a key's ``last_used_at`` may get: a request records its use when the recorded one
# is older, so a key in steady use costs one UPDATE a minute, not one a request.
LAST_USED_EVERY = timedelta(minutes=1)

# The key's row when its last use is stale and no other request is recording one now
# (SKIP LOCKED: a request never waits for another's transaction to record the same minute).
_LAST_USED_SQL = f"""
    UPDATE {ApiKey._meta.db_table} SET last_used_at = %(now)s
    WHERE id = (SELECT id FROM {ApiKey._meta.db_table}
                WHERE id = %(id)s AND (last_used_at IS NULL OR last_used_at < %(stale)s)
                FOR UPDATE SKIP LOCKED)
"""  # noqa: S608 - the model's own table name


def api_key_used(key: ApiKey, *, now=None) -> None:
    """Record that ``key`` was just used, to the minute (``LAST_USED_EVERY``): the admin's
    "last used", which a rotation watches stop before revoking the old key (docs/operations.md).
    Nothing ever wrote it, so every key read as never used (stop 47's audit). In the
    request's transaction: a request that fails records nothing."""
    now = now or timezone.now()
    if key.last_used_at is not None and now - key.last_used_at < LAST_USED_EVERY:
        return
    with connection.cursor() as cursor:
        cursor.execute(_LAST_USED_SQL, {"now": now, "id": key.pk, "stale": now - LAST_USED_EVERY})
    key.last_used_at = now


def _check_length(value: str, model, field: str, what: str) -> None:
    """Raise ValidationFailed if ``value`` does not fit the column ``model.field``."""
    limit = model._meta.get_field(field).max_length
    if len(value) > limit:
        raise ValidationFailed(f"{what} must be at most {limit} characters ({len(value)} given).")


@transaction.atomic
def agent_ensure(*, tenant_slug: str, agent_name: str) -> Agent:
    """Return the agent ``agent_name`` of tenant ``tenant_slug``, creating both if missing.

    The name is read as ids are (``text.identifier``: trimmed, in NFC, so "José" from a macOS
    shell is the agent typed elsewhere), and one holding a bidirectional control is refused.
    Raise ValidationFailed (before writing anything) for an empty slug or name, one longer
    than its column, a slug that is not a slug, or a deleted tenant: its keys are refused
    (``api_key_resolve``), so an agent made for it could never act, and its deletion's
    ``identities`` step has already verified that it has no active agent.
    """
    from memory_core.services.policy import policy_ensure

    agent_name = identifier(agent_name)  # as every path reads a name: NFC, trimmed
    if not tenant_slug or not agent_name:
        raise ValidationFailed("The tenant slug and the agent name must not be empty.")
    if BIDI_CONTROLS.search(agent_name):
        raise ValidationFailed(f"The agent name: {BIDI_CONTROLS_MESSAGE}")
    if is_blank(agent_name):
        # As the admin's form and a subject token's request refuse it: no token could be
        # asked for such an agent (stop 54's audit of the commands).
        raise ValidationFailed(
            "The agent name shows nothing (only invisible characters): name the agent."
        )
    _check_length(tenant_slug, Tenant, "slug", "The tenant slug")
    _check_length(agent_name, Agent, "name", "The agent name")
    if not _SLUG.fullmatch(tenant_slug):
        # The admin's form would refuse it (SlugField); a command must not store it either.
        raise ValidationFailed(
            f"The tenant slug {tenant_slug!r} may hold only letters, digits, '-' and '_'."
        )
    tenant, _ = Tenant.objects.get_or_create(slug=tenant_slug, defaults={"name": tenant_slug})
    if tenant.deleted_at is not None:
        raise ValidationFailed(
            f"Tenant {tenant_slug!r} was deleted ({tenant.deleted_at:%Y-%m-%d %H:%M} UTC): "
            "it takes no new agent or key, and its keys are refused."
        )
    policy_ensure(tenant=tenant)
    agent, _ = Agent.objects.get_or_create(tenant=tenant, name=agent_name)
    return agent
