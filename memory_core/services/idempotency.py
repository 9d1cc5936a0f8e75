"""Idempotency keys on memory writes: a retried write is answered again, never written twice.

An agent on an unreliable network retries a write whose answer it never saw. With an
``Idempotency-Key`` the first request is processed and its outcome recorded in the same
transaction as the write (``IdempotencyRecord``); a retry with the same key and the same
request gets that outcome again and writes nothing. The contract (docs/api.md):

- A key belongs to one agent of one tenant: two agents may use the same key.
- The record keeps the key's SHA-256 (the key is the agent's free text), the endpoint, a
  SHA-256 fingerprint of the request (method, path, canonical JSON body, 1.0 written as 1,
  and the subject a subject token binds the agent to), the HTTP status and the ids of what
  the write produced (admission decisions, review items): ids and hashes only, as the
  tombstone ledger keeps.
- A replay is rebuilt from those ids: the decision as it was made, the memory as it is now
  (approved, superseded, revoked, or a content-free tombstone while its deletion runs), and
  only if the agent may still see it, as ``GET /api/v1/memories/<id>`` decides (its grant may
  have narrowed since: a read type, the maximum sensitivity, ``any_subject``; a deletion of
  the subject, whole or of a key, may be queued): else the memory is left out, the decision
  and status kept.
  A retrying agent learns that its write was made (so it must not write again) and nothing
  of a memory the detail would answer 404 for.
- The same key with another request (body, path, endpoint, subject token) is refused
  (``idempotency_key_reused``).
- Only decisions are recorded (201, 202, 422 and a batch's 200): an answer that rolls back
  (400, 403, 404, 409, 503, ...) records nothing, so a retry is processed afresh.
- Concurrency: the claim is an ``INSERT ... ON CONFLICT`` on the unique (tenant, agent,
  key digest) index at the start of the request's transaction. A second request with the
  key waits in that statement until the first transaction ends: if it committed, the second
  replays it (its own next statement sees the committed row); if it rolled back, the second
  inserts and is processed afresh. No request fails because another holds the key.
- Records expire after ``MEMLEDGER_IDEMPOTENCY_TTL_HOURS`` (24): an expired key is new again
  (the claim takes the row over), and the retention sweep deletes expired rows
  (``memory_core.deletion.retention.idempotency_records_expire``).
- Deletion leaves the records (they hold nothing a deletion removes): a retry of a write whose
  memory was deleted since replays the content-free tombstone, and never writes the deleted
  memory again.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memory_core.admission import decision_message
from memory_core.admission.codes import POLICY_LIMITS
from memory_core.admission.policy import policy_section
from memory_core.exceptions import Conflict, IdempotencyKeyReused, ValidationFailed
from memory_core.models import AdmissionDecision, IdempotencyRecord, PolicyVersion, ReviewItem
from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.selectors.memories import memory_in_bulk
from memory_core.services.writes import WriteResult, already_waiting_message

MAX_KEY_CHARS = 255
# Printable ASCII (space to tilde), as a header value carries it without encoding.
KEY_PATTERN = re.compile(rf"[\x20-\x7e]{{1,{MAX_KEY_CHARS}}}")

# ON CONFLICT waits for a transaction holding the same key, then either inserts (it rolled
# back), takes over an expired row (the key is new again) or returns nothing (a live record).
_CLAIM_SQL = """
    INSERT INTO memory_core_idempotencyrecord AS r
        (id, tenant_id, agent_id, key_digest, endpoint, fingerprint, status_code, results,
         created_at, expires_at)
    VALUES (%(id)s, %(tenant)s, %(agent)s, %(key_digest)s, %(endpoint)s, %(fingerprint)s, NULL,
            '[]'::jsonb, %(now)s, %(expires)s)
    ON CONFLICT (tenant_id, agent_id, key_digest) DO UPDATE
        SET endpoint = EXCLUDED.endpoint, fingerprint = EXCLUDED.fingerprint,
            status_code = NULL, results = '[]'::jsonb,
            created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
        WHERE r.expires_at <= EXCLUDED.created_at
    RETURNING id
"""


@dataclass
class Claim:
    """The outcome of claiming a key: ``record`` is this request's (to complete) or, with
    ``replay``, the earlier request's whose answer is given again."""

    record: IdempotencyRecord
    replay: bool = False


def idempotency_key_parse(raw: str | None) -> str | None:
    """Return the key of an ``Idempotency-Key`` header value (None: no header).

    Raises ValidationFailed (``invalid_idempotency_key``) for anything but 1 to 255 printable
    ASCII characters, before anything is read or written.
    """
    if raw is None:
        return None
    if not KEY_PATTERN.fullmatch(raw):
        raise ValidationFailed(
            f"The Idempotency-Key header must be 1 to {MAX_KEY_CHARS} printable ASCII characters.",
            code="invalid_idempotency_key",
        )
    return raw


def idempotency_key_digest(key: str) -> str:
    """Return what a key is stored and looked up as: its SHA-256 (the key is the agent's free
    text, and a record outlives the deletion of what its write made)."""
    return hashlib.sha256(key.encode("ascii")).hexdigest()


def _canonical_numbers(value):
    """Return ``value`` with each whole float written as the integer it is (1.0 as 1, -0.0 as
    0), as RFC 8785's canonical JSON writes numbers: a client that re-encodes its retry with
    another JSON library sends the same request."""
    if isinstance(value, float) and value.is_integer():
        # The number the JSON text wrote, as jsonb stores it (value_stored_bytes reads a
        # float so too), not the binary float's: int(1e23) is 99999999999999991611392, another
        # number's request, replayed as this one's until stop 59's audit.
        return int(Decimal(repr(value)))
    if isinstance(value, dict):
        return {key: _canonical_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_canonical_numbers(item) for item in value]
    return value


def idempotency_fingerprint(*, method: str, path: str, body, bound_subject: str | None) -> str:
    """Return the SHA-256 of the request as the key promises it: method, path, the body as
    canonical JSON (sorted keys, no spaces, whole numbers without a fraction) and the subject
    a subject token binds the agent to (a retry under another token is another request: it
    must not see the first one's memory)."""
    canonical = json.dumps(
        [method.upper(), path, bound_subject or "", _canonical_numbers(body)],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def _expiry(now):
    return now + timedelta(hours=settings.MEMLEDGER_IDEMPOTENCY_TTL_HOURS)


def _live(*, principal, key: str, now) -> IdempotencyRecord | None:
    return IdempotencyRecord.objects.filter(
        tenant_id=principal.tenant_id,
        agent_id=principal.agent_id,
        key_digest=idempotency_key_digest(key),
        expires_at__gt=now,
    ).first()


def _check_same_request(
    record: IdempotencyRecord, *, endpoint: str, fingerprint: str, also: tuple[str, ...] = ()
) -> None:
    """Refuse (``idempotency_key_reused``) a request that is not ``record``'s: another
    endpoint, or a fingerprint that is neither ``fingerprint`` nor one of ``also`` (the same
    request as an earlier release fingerprinted it)."""
    if record.endpoint != endpoint or record.fingerprint not in (fingerprint, *also):
        raise IdempotencyKeyReused(
            "This Idempotency-Key was already used for another request; send a new key for a "
            "new request.",
        )


def idempotency_claim(
    *, principal, key: str, endpoint: str, fingerprint: str, also: tuple[str, ...] = ()
) -> Claim:
    """Claim ``key`` for this request, inside the request's transaction.

    Return a fresh claim (process the request, then ``idempotency_complete``) or a replay of
    the key's earlier, committed request. Waits while another transaction holds the key.
    Raises IdempotencyKeyReused when the key stood for another request: a fingerprint other
    than ``fingerprint`` and ``also`` (``_check_same_request``).
    """
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            _CLAIM_SQL,
            {
                "id": uuid.uuid4(),
                "tenant": principal.tenant_id,
                "agent": principal.agent_id,
                "key_digest": idempotency_key_digest(key),
                "endpoint": endpoint,
                "fingerprint": fingerprint,
                "now": now,
                "expires": _expiry(now),
            },
        )
        row = cursor.fetchone()
    if row is not None:
        return Claim(record=IdempotencyRecord.objects.get(pk=row[0]))
    # A live record: committed (ON CONFLICT waited for its transaction), and locked by the
    # statement above until this transaction ends, so it cannot change under the replay.
    record = _live(principal=principal, key=key, now=now)
    if record is None or record.status_code is None:  # not expected: never committed so
        raise Conflict(
            "A request with this Idempotency-Key is still in flight; retry it shortly.",
            code="idempotency_key_in_flight",
        )
    _check_same_request(record, endpoint=endpoint, fingerprint=fingerprint, also=also)
    return Claim(record=record, replay=True)


def idempotency_answered(*, principal, key: str) -> bool:
    """Return whether a committed, live record holds ``key``: a request with it then writes
    nothing, replayed (the same request) or refused (``idempotency_key_reused``). A read, no
    lock: the write quota's throttle asks it so neither spends a write."""
    record = _live(principal=principal, key=key, now=timezone.now())
    return record is not None and record.status_code is not None


def idempotency_complete(
    *, record: IdempotencyRecord, status_code: int, results: list[WriteResult]
) -> None:
    """Record what the claimed request produced: its status and the ids of its rows."""
    record.status_code = status_code
    record.results = [
        {
            "decision": str(result.admission_decision.id),
            "review_item": str(result.review_item.id) if result.review_item else None,
            # The answer told the correction was already waiting: its replay tells it too
            # (it told the decision's own message instead: stop 47's audit).
            **({"already_waiting": True} if result.already_waiting else {}),
        }
        for result in results
    ]
    record.save(update_fields=["status_code", "results"])


@dataclass
class IdempotentOutcome:
    """What an ``idempotent_write`` answers: the results, the status to answer with (None
    when the caller decides it from the results), and whether they were replayed."""

    results: list[WriteResult]
    status_code: int | None = None
    replayed: bool = False


@transaction.atomic  # a savepoint inside a request: an exception takes the claim back
def idempotent_write(
    *,
    principal,
    key: str,
    endpoint: str,
    fingerprint: str,
    write: Callable[[], list[WriteResult]],
    recorded_status: Callable[[list[WriteResult]], int | None],
    also: tuple[str, ...] = (),
) -> IdempotentOutcome:
    """Run ``write`` once per key: claim the key, then either replay the key's committed
    request or write and record what the write decided.

    ``recorded_status`` gives the HTTP status of a decision worth answering again (201, 202,
    a rejection's 422, a batch's 200), or None for an answer that records nothing: the key is
    released and a retry is processed afresh. Anything raised after the claim (a 400 from the
    body, a 404, a 409) rolls the claim back with the write.
    """
    claim = idempotency_claim(
        principal=principal, key=key, endpoint=endpoint, fingerprint=fingerprint, also=also
    )
    if claim.replay:
        return IdempotentOutcome(
            results=idempotency_results(principal=principal, record=claim.record),
            status_code=claim.record.status_code,
            replayed=True,
        )
    results = write()
    status_code = recorded_status(results)
    if status_code is None:
        idempotency_release(record=claim.record)
    else:
        idempotency_complete(record=claim.record, status_code=status_code, results=results)
    return IdempotentOutcome(results=results)


def idempotency_release(*, record: IdempotencyRecord) -> None:
    """Forget a claim whose request ended without a decision to record (its answer is not
    one a retry should get again): the key stays free."""
    IdempotencyRecord.objects.filter(pk=record.pk, status_code__isnull=True).delete()


def _admission_limits(decision: AdmissionDecision, policies: dict) -> dict | None:
    """Return the ``admission`` section of the policy ``decision`` was made under, when its
    message names a policy limit (``fields.content_too_long``, ...): the replay says the
    limit the first answer said. None when no code needs it, or the version is gone."""
    if not set(decision.rule_codes) & set(POLICY_LIMITS):
        return None
    version = decision.policy_version
    if version not in policies:
        if version is None:  # the tenant had no policy: the defaults decided
            document = DEFAULT_POLICY
        else:
            document = (
                PolicyVersion.objects.filter(tenant_id=decision.tenant_id, version=version)
                .values_list("document", flat=True)
                .first()
            )
        policies[version] = None if document is None else policy_section(document, "admission")
    return policies[version]


def idempotency_results(*, principal, record: IdempotencyRecord) -> list[WriteResult]:
    """Return the recorded request's results rebuilt from their ids: each decision as it was
    made (outcome, rule codes, message, policy version) and its memory as it is now, if
    ``principal`` may see it as the detail does (``memory_in_bulk``), else None."""
    decision_ids = [entry["decision"] for entry in record.results]
    item_ids = [entry["review_item"] for entry in record.results if entry["review_item"]]
    decisions = AdmissionDecision.objects.in_bulk(decision_ids)
    memories = memory_in_bulk(
        principal=principal, ids=[decision.memory_id for decision in decisions.values()]
    )
    items = ReviewItem.objects.in_bulk(item_ids)
    policies: dict = {}  # the admission section of each policy version, read once
    results = []
    for index, entry in enumerate(record.results):
        decision = decisions[uuid.UUID(entry["decision"])]
        item = items.get(uuid.UUID(entry["review_item"])) if entry["review_item"] else None
        waiting = bool(entry.get("already_waiting")) and item is not None
        results.append(
            WriteResult(
                decision=decision.outcome,
                rule_codes=list(decision.rule_codes),
                message=already_waiting_message(item)
                if waiting
                else decision_message(
                    decision.outcome,
                    decision.rule_codes,
                    _admission_limits(decision, policies),
                ),
                memory=memories.get(decision.memory_id),
                review_item=item,
                admission_decision=decision,
                policy_version=decision.policy_version,
                index=index,
                already_waiting=waiting,
            )
        )
    return results
