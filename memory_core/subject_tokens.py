"""Short-lived signed subject tokens: an agent key alone can't reach every user of its tenant.

An agent whose grant lacks ``any_subject`` acts only for the subject named by a subject
token: a value signed with the project's secret (``django.core.signing``, salted) that binds
tenant, agent and the subject's external id, and expires (``MEMLEDGER_SUBJECT_TOKEN_TTL``,
default 15 minutes). The system that knows which user the agent is serving (the product's
backend, after it authenticated that user) asks memledger for a token and passes it to the
agent; the agent sends it as ``X-Memledger-Subject-Token``. A leaked agent key without a token
reads and writes nobody; a leaked token expires and names one user of one agent.

Agents with ``any_subject`` (the default, for trusted back-office agents) need no token.
"""

from __future__ import annotations

from django.conf import settings
from django.core import signing

from memory_core.exceptions import PermissionDenied

SALT = "memledger.subject-token.v1"
HEADER = "HTTP_X_MEMLEDGER_SUBJECT_TOKEN"


def subject_token_issue(*, tenant_id, agent_id, user_id: str) -> str:
    """Return a token letting agent ``agent_id`` act for subject ``user_id`` for a while."""
    payload = {"t": str(tenant_id), "a": str(agent_id), "u": str(user_id)}
    return signing.dumps(payload, salt=SALT, compress=False)


def subject_token_verify(token: str, *, tenant_id, agent_id) -> str:
    """Return the subject external id ``token`` grants to this agent; refuse anything else."""
    ttl = getattr(settings, "MEMLEDGER_SUBJECT_TOKEN_TTL", 900)
    try:
        payload = signing.loads(token, salt=SALT, max_age=ttl)
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
    return str(payload.get("u") or "")
