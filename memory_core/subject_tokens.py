"""Short-lived signed subject tokens: an agent key alone can't reach every user of its tenant.

An agent whose grant lacks ``any_subject`` acts only for the subject named by a subject
token: a value signed with the project's secret (``django.core.signing``, salted) that binds
tenant, agent and the subject's external id, and expires (``MEMLEDGER_SUBJECT_TOKEN_TTL``,
default 15 minutes). The system that knows which user the agent is serving (the product's
backend, after it authenticated that user) asks memledger for a token
(``POST /api/v1/subject-tokens`` with the key of an agent granted ``issues_subject_tokens``,
``subject_token_grant``) and passes it to the agent; the agent sends it as
``X-Memledger-Subject-Token``. A leaked agent key without a token
reads and writes nobody; a leaked token expires and names one user of one agent.

Agents with ``any_subject`` (the default, for trusted back-office agents) need no token.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core import signing
from django.utils import timezone

from memory_core.admission.candidate import HARD_MAX_ID_CHARS, bad_text
from memory_core.admission.normalize import is_blank
from memory_core.admission.policy import describe, subject_codes
from memory_core.exceptions import NotFound, PermissionDenied, SubjectRefused, ValidationFailed
from memory_core.models import Agent, Subject
from memory_core.rls import tenant_atomic
from memory_core.text import BIDI_CONTROLS, BIDI_CONTROLS_MESSAGE, identifier

logger = logging.getLogger(__name__)

SALT = "memledger.subject-token.v1"
HEADER = "HTTP_X_MEMLEDGER_SUBJECT_TOKEN"


def subject_token_issue(*, tenant_id, agent_id, user_id: str) -> str:
    """Return a token letting agent ``agent_id`` act for subject ``user_id`` for a while.
    Signs only: the callers that issue one create the subject first (``subject_ensure``)."""
    payload = {"t": str(tenant_id), "a": str(agent_id), "u": identifier(str(user_id))}
    return signing.dumps(payload, salt=SALT, compress=False)


def subject_id_problem(user_id: str) -> str:
    """Return what is wrong with the subject id ``user_id`` (read with ``text.identifier``)
    for a token, as the end of a sentence naming it (" must not be empty…"), or "": empty or
    blank, a bidirectional control, longer than an id may be. The API's ``IdField`` refuses
    the same; ``subject_token_create`` and ``manage.py issue_subject_token`` call it."""
    if not user_id or is_blank(user_id):
        return " must not be empty: name the subject the agent serves."
    if BIDI_CONTROLS.search(user_id):
        return f": {BIDI_CONTROLS_MESSAGE}"
    if len(user_id) > HARD_MAX_ID_CHARS:
        return f" must be at most {HARD_MAX_ID_CHARS} characters ({len(user_id)} given)."
    return ""


def subject_token_create(*, tenant_id, agent_id, user_id: str) -> str:
    """Return a token letting the active agent ``agent_id`` of the tenant act for subject
    ``user_id``, created if new (``subject_ensure``): the product's backend's in-process way,
    after it has authenticated the user. ``NotFound`` for an agent that is not the tenant's or
    not active, ``SubjectRefused`` for an id a write would refuse. docs/security.md named the
    signer alone, which made no subject: the serving agent's first write about a new user
    was refused ``tenant.subject_unknown`` (stop 55's audit of access)."""
    # What the API (``IdField``) and the command refuse, before anything is written: an
    # empty id made a subject of no id, and one over the column's length, a NUL or a lone
    # surrogate, a database or encoding error (stop 55's reviews).
    if bad_text(str(user_id)):
        raise ValidationFailed(
            "The subject's id must be text without NUL characters or lone surrogates."
        )
    user_id = identifier(str(user_id))
    problem = subject_id_problem(user_id)
    if problem:
        raise ValidationFailed(f"The subject's id{problem}")
    try:
        agent_id, tenant_id = uuid.UUID(str(agent_id)), uuid.UUID(str(tenant_id))
    except ValueError:
        # A name or a slug, say: no agent or tenant has such an id.
        raise NotFound("No active agent of that id in this tenant.") from None
    agent = Agent.objects.filter(
        pk=agent_id, tenant_id=tenant_id, is_active=True, tenant__deleted_at=None
    ).first()
    if agent is None:
        raise NotFound("No active agent of that id in this tenant.")
    # One transaction acting for the tenant, as a request's: the backend calls this from its
    # own code, in or out of a transaction, and the tenant must not stay on its connection.
    with tenant_atomic(tenant_id):
        subject_ensure(tenant_id=tenant_id, user_id=user_id)
    return subject_token_issue(tenant_id=tenant_id, agent_id=agent.id, user_id=user_id)


def subject_ensure(*, tenant_id, user_id: str) -> Subject:
    """Return subject ``user_id`` of the tenant, created as the issuer's own first write about
    it would create it (an issuer acts for any subject, a database constraint): a bound agent
    may create no subject, so a new user's first write with a token was refused
    (``tenant.subject_unknown``) until the backend wrote something about them itself. Every
    way of issuing a token calls it (the API, ``manage.py issue_subject_token``). The id is
    read as every request reads one (``text.identifier``: trimmed, in NFC): an NFD "José" was
    a second subject the agent's writes, read in NFC, could not reach (stop 51's review)."""
    user_id = identifier(user_id)
    subject = Subject.objects.filter(tenant_id=tenant_id, external_id=user_id).first()
    if subject is not None:
        return subject
    # Read as that write reads it: an instruction or business state as a subject's id (its
    # display name too, which GET answers) is refused there, and was created here, with a
    # token no write could use (stop 54's audit of access).
    refused = subject_codes(user_id)
    if refused:
        raise SubjectRefused(
            f"The subject was refused ({', '.join(refused)}): {describe(refused)} A write "
            "about it would be refused too. No token was issued.",
            details={"rule_codes": refused},
        )
    subject, _ = Subject.objects.get_or_create(
        tenant_id=tenant_id, external_id=user_id, defaults={"display_name": user_id}
    )
    return subject


def subject_token_ttl() -> int:
    """Return how long a token is accepted after it was issued, in seconds."""
    return getattr(settings, "MEMLEDGER_SUBJECT_TOKEN_TTL", 900)


@dataclass(frozen=True)
class IssuedSubjectToken:
    token: str
    agent: str
    subject: str
    expires_at: datetime


def subject_token_grant(*, principal, agent_name: str, user_id: str) -> IssuedSubjectToken:
    """Issue, for the caller (an agent granted ``issues_subject_tokens``), a token letting the
    active agent ``agent_name`` of the caller's tenant act for subject ``user_id`` (created
    if new: ``subject_ensure``)."""
    if not getattr(principal, "issues_subject_tokens", False):
        raise PermissionDenied(
            "This agent may not issue subject tokens: its grant lacks issues_subject_tokens "
            "(the product backend's key has it).",
            code="subject_tokens_not_granted",
        )
    agent_name = identifier(agent_name)  # names are stored in NFC (migration 0040)
    agent = Agent.objects.filter(
        tenant_id=principal.tenant_id, name=agent_name, is_active=True
    ).first()
    if agent is None:
        raise NotFound(f"No active agent named {agent_name!r} in this tenant.")
    # Before the signature's own timestamp (whole seconds, taken as it signs): the expiry
    # announced is never later than the one the verification applies.
    subject_ensure(tenant_id=agent.tenant_id, user_id=user_id)
    issued_at = timezone.now().replace(microsecond=0)
    token = subject_token_issue(tenant_id=agent.tenant_id, agent_id=agent.id, user_id=user_id)
    # Ids only: who issued, for which agent; the subject's id is the one in the token.
    logger.info("subject token issued by agent %s to agent %s", principal.agent_id, agent.id)
    return IssuedSubjectToken(
        token=token,
        agent=agent.name,
        subject=user_id,
        expires_at=issued_at + timedelta(seconds=subject_token_ttl()),
    )


def subject_token_verify(token: str, *, tenant_id, agent_id) -> str:
    """Return the subject external id ``token`` grants to this agent; refuse anything else."""
    try:
        payload = signing.loads(token, salt=SALT, max_age=subject_token_ttl())
    except signing.SignatureExpired as exc:
        raise PermissionDenied(
            "The subject token has expired.", code="subject_token_expired"
        ) from exc
    except signing.BadSignature as exc:
        raise PermissionDenied(
            "The subject token is invalid.", code="subject_token_invalid"
        ) from exc
    if (
        not isinstance(payload, dict)
        or payload.get("t") != str(tenant_id)
        or payload.get("a") != str(agent_id)
    ):
        raise PermissionDenied(
            "The subject token was issued to another agent.", code="subject_token_invalid"
        )
    # Read as writes read their subject: a token issued in NFD before stop 51 names the subject
    # migration 0038 rewrote to NFC.
    return identifier(str(payload.get("u") or ""))
