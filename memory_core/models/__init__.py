"""The memory domain's models."""

from . import lookups  # noqa: F401 (registers the array-parameter lookups)
from .choices import (
    AUTHORITY_RANK,
    SENSITIVITY_RANK,
    TYPE_CLASS,
    Authority,
    Consent,
    MemoryClass,
    MemoryType,
    ScopeKind,
    Sensitivity,
    SourceType,
    Status,
)
from .events import MemoryEvent, PolicyVersion
from .idempotency import IdempotencyRecord
from .memory import (
    EMBEDDING_DIMENSIONS,
    LIVE_STATUSES,
    MAX_SCOPE_REF_CHARS,
    PROPOSED_STATUSES,
    RETIRED_STATUSES,
    Memory,
    held_apart,
    parse_scope,
    past_end_condition,
)
from .tenancy import Agent, ApiKey, PortalMembership, Subject, Tenant
from .workflow import (
    AccessDenial,
    AdmissionDecision,
    DeletionOperation,
    DeletionStep,
    Export,
    RetrievalTrace,
    ReviewItem,
    Tombstone,
)

__all__ = [
    "AUTHORITY_RANK",
    "EMBEDDING_DIMENSIONS",
    "LIVE_STATUSES",
    "MAX_SCOPE_REF_CHARS",
    "PROPOSED_STATUSES",
    "RETIRED_STATUSES",
    "SENSITIVITY_RANK",
    "TYPE_CLASS",
    "AccessDenial",
    "AdmissionDecision",
    "Agent",
    "ApiKey",
    "Authority",
    "Consent",
    "DeletionOperation",
    "DeletionStep",
    "Export",
    "IdempotencyRecord",
    "Memory",
    "MemoryClass",
    "MemoryEvent",
    "MemoryType",
    "PolicyVersion",
    "PortalMembership",
    "RetrievalTrace",
    "ReviewItem",
    "ScopeKind",
    "Sensitivity",
    "SourceType",
    "Status",
    "Subject",
    "Tenant",
    "Tombstone",
    "held_apart",
    "parse_scope",
    "past_end_condition",
]
