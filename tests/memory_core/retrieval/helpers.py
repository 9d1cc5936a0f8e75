"""Builders for pure-stage tests: candidates, contexts, plans and policies without a database."""

import uuid
from datetime import timedelta

from django.utils import timezone

from memory_core.retrieval.policy import RetrievalPolicy
from memory_core.retrieval.types import Candidate, RetrievalContext, RetrievalMode, RetrievalPlan

NOW = timezone.now()
TENANT = uuid.uuid4()
SUBJECT = uuid.uuid4()
AGENT = uuid.uuid4()


def ctx(**overrides) -> RetrievalContext:
    values = {
        "tenant_id": TENANT,
        "agent_id": AGENT,
        "subject_id": SUBJECT,
        "user_id": "user-1",
        "project_id": "atlas",
        "repository_id": "atlas-api",
    }
    values.update(overrides)
    return RetrievalContext(**values)


def plan(**overrides) -> RetrievalPlan:
    values = {
        "mode": RetrievalMode.HYBRID,
        "intent": "",
        "structured_types": ("user_preference", "project_constraint", "repository_rule"),
        "semantic_types": ("incident", "episode", "previous_decision", "successful_procedure"),
    }
    values.update(overrides)
    return RetrievalPlan(**values)


def policy(**retrieval) -> RetrievalPolicy:
    return RetrievalPolicy.from_document({"retrieval": retrieval}, version=1)


def cand(name: str, **overrides) -> Candidate:
    """Return a candidate named ``name`` (its id), an active explicit global preference."""
    values = {
        "id": name,
        "memory_type": "user_preference",
        "memory_key": "",
        "scope_kind": "global",
        "scope_ref": "",
        "content": f"content of {name}",
        "content_hash": f"hash-{name}",
        "authority": "explicit_user",
        "confidence": 1.0,
        "sensitivity": "personal",
        "status": "active",
        "created_at": NOW - timedelta(days=1),
        "updated_at": NOW - timedelta(days=1),
        "tenant_id": str(TENANT),
        "subject_id": str(SUBJECT),
        "semantic": 0.5,
        "sources": {"structured"},
    }
    values.update(overrides)
    return Candidate(**values)
