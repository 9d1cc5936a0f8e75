"""The resolved identities that every service and selector takes as an argument.

A principal is built from a credential (an API key, a portal login), never from a request
body: tenant, agent and subject come from here.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from django.db.models import Q, QuerySet, Subquery, TextField, Value
from django.db.models.functions import Cast, Concat

from memory_core.exceptions import NotFound
from memory_core.models.choices import sensitivities_up_to


def _fence_key(subject, key) -> Concat:
    """``"<subject id>:<key>"``, one text for a (subject, key) pair: a UUID never holds ":"."""
    return Concat(Cast(subject, TextField()), Value(":"), key, output_field=TextField())


@dataclass(frozen=True)
class AgentPrincipal:
    """An agent authenticated by an API key, with the grants of its Agent row."""

    tenant_id: uuid.UUID
    agent_id: uuid.UUID
    agent_name: str
    write_types: frozenset[str] = field(default_factory=frozenset)
    read_types: frozenset[str] = field(default_factory=frozenset)
    max_sensitivity: str = "sensitive"
    any_subject: bool = True
    issues_subject_tokens: bool = False
    api_key_id: uuid.UUID | None = None
    # The subject a signed subject token names (memory_core/subject_tokens.py); without
    # ``any_subject`` the agent acts for this subject only, and for nobody without a token.
    bound_user_id: str | None = None

    actor_type = "agent"

    @property
    def actor_id(self) -> str:
        return str(self.agent_id)

    @classmethod
    def from_agent(cls, agent, api_key_id=None, bound_user_id=None) -> AgentPrincipal:
        """Return the principal of ``agent`` (an Agent row)."""
        return cls(
            tenant_id=agent.tenant_id,
            agent_id=agent.id,
            agent_name=agent.name,
            write_types=frozenset(agent.write_types),
            read_types=frozenset(agent.read_types),
            max_sensitivity=agent.max_sensitivity,
            any_subject=agent.any_subject,
            issues_subject_tokens=agent.issues_subject_tokens,
            api_key_id=api_key_id,
            bound_user_id=bound_user_id,
        )

    def may_act_for(self, user_id: str) -> bool:
        """Return whether this agent may read or write memories of subject ``user_id``."""
        return self.any_subject or (bool(self.bound_user_id) and user_id == self.bound_user_id)

    def may_act_for_digest(self, user_id_sha256: str) -> bool:
        """Return whether this agent may act for the person whose user id's digest
        (``retrieval.traces.user_id_digest``) is ``user_id_sha256``: ``may_act_for``'s rule
        for a person only that digest names (the erasure of one known from traces makes their
        subject named by its own id: ``deletion.services.traced_subject_deletion_request``)."""
        from memory_core.retrieval.traces import user_id_digest

        return self.any_subject or (
            bool(self.bound_user_id) and user_id_sha256 == user_id_digest(self.bound_user_id)
        )

    def scope_memories(self, queryset: QuerySet) -> QuerySet:
        """Limit a tenant's memories to what this agent may read: what its grant reaches
        (``scope_granted``), and none whose deletion is queued for a worker, the whole
        subject's or their key's (as retrieval reads none: from the ask on, no agent is given
        them)."""
        # NOT IN over the few queued subjects and keys (a hashed subplan, evaluated once),
        # not a NOT EXISTS per row: the planner took that anti-join for one row and sorted a
        # whole subject's memories for one page instead of reading memory_subject_newest in
        # order. Neither side is ever NULL (ids; keys default to ""), so NOT IN is exact.
        from memory_core.models import Subject

        queued = Subject.objects.filter(tenant_id=self.tenant_id, deletion_queued_at__isnull=False)
        keys = (
            queued.exclude(deletion_queued_key="")
            .annotate(fenced=_fence_key("pk", "deletion_queued_key"))
            .values("fenced")
        )
        return (
            self.scope_granted(queryset)
            .alias(queued_fence=_fence_key("subject_id", "memory_key"))
            .exclude(subject_id__in=queued.filter(deletion_queued_key="").values("pk"))
            .exclude(queued_fence__in=keys)
        )

    def scope_granted(self, queryset: QuerySet) -> QuerySet:
        """Limit a tenant's memories to what this agent's grant reaches: shared or its own,
        of its read types, up to its maximum sensitivity (as retrieval's hard filters), of
        the subjects it may act for. Without the queued-deletion fence of ``scope_memories``:
        only for deciding what the grant reaches (``deletion.services._grant_scope``), never
        to read memories."""
        queryset = queryset.filter(
            Q(agent_id__isnull=True) | Q(agent_id=self.agent_id),
            memory_type__in=sorted(self.read_types),
            sensitivity__in=sensitivities_up_to(self.max_sensitivity),
        )
        return self.scope_subject(queryset)

    def grant_reaches(self, memory) -> bool:
        """Return whether this agent's grant reaches ``memory`` (a Memory read already):
        ``scope_granted``'s rule on one row, without its subject's part (for a memory of a
        subject the caller knows the agent may act for, or compares with another's)."""
        return (
            memory.agent_id in (None, self.agent_id)
            and memory.memory_type in self.read_types
            and memory.sensitivity in sensitivities_up_to(self.max_sensitivity)
        )

    def scope_subjects(self, subjects: QuerySet) -> QuerySet:
        """Limit Subject rows to the subjects this agent may act for (``scope_subject``'s
        rule, on the subjects themselves)."""
        if self.any_subject:
            return subjects
        if not self.bound_user_id:
            return subjects.none()
        return subjects.filter(external_id=self.bound_user_id)

    def scope_subject(self, queryset: QuerySet) -> QuerySet:
        """Limit rows that belong to a subject (memories, traces, deletions) to the subjects
        this agent may act for: all of them with ``any_subject``, else its token's."""
        if self.any_subject:
            return queryset
        if not self.bound_user_id:
            # Not subject__external_id=None: that matched rows of no subject (a tenant's
            # deletion operations) and of a subject whose name a deletion removed.
            return queryset.none()
        # The subject's id as a value (its external id is unique in the tenant), not a join:
        # a page of one subject's rows is then a range of its index (memory_subject_newest).
        from memory_core.models import Subject

        bound = Subject.objects.filter(tenant_id=self.tenant_id, external_id=self.bound_user_id)
        return queryset.filter(subject_id=Subquery(bound.order_by().values("pk")[:1]))


@dataclass(frozen=True)
class SubjectPrincipal:
    """A portal end user: sees and changes only the memories about their own subject."""

    tenant_id: uuid.UUID
    subject_id: uuid.UUID
    user_id: int

    actor_type = "user"

    @property
    def actor_id(self) -> str:
        return str(self.user_id)

    def scope_memories(self, queryset: QuerySet) -> QuerySet:
        return queryset.filter(subject_id=self.subject_id)


@dataclass(frozen=True)
class ReviewerPrincipal:
    """A portal reviewer: sees the memories of one tenant."""

    tenant_id: uuid.UUID
    user_id: int

    actor_type = "reviewer"

    @property
    def actor_id(self) -> str:
        return str(self.user_id)

    def scope_memories(self, queryset: QuerySet) -> QuerySet:
        return queryset


@dataclass(frozen=True)
class QueuedRequester:
    """Who asked for a queued deletion (a portal login or an agent), as the worker makes the
    request for them: the subject whole, or its key whole, since what they may reach was
    checked when they asked (``deletion.services.deletion_request_or_queue``)."""

    tenant_id: uuid.UUID
    subject_id: uuid.UUID
    actor_type: str
    actor_id: str

    def scope_memories(self, queryset: QuerySet) -> QuerySet:
        return queryset.filter(subject_id=self.subject_id)


@dataclass(frozen=True)
class SystemPrincipal:
    """Memledger itself (retention sweeps, imports, the demo loader) acting in one tenant."""

    tenant_id: uuid.UUID
    name: str = "system"

    actor_type = "system"

    @property
    def actor_id(self) -> str:
        return self.name

    def scope_memories(self, queryset: QuerySet) -> QuerySet:
        return queryset


def require_reviewer(principal, *, message: str, or_system: bool = False) -> None:
    """Refuse any principal but a reviewer (with ``or_system``, memledger itself too) with
    NotFound(``message``): what only reviewers see does not exist for anyone else, as an id
    outside a caller's scope does not (a 404, never a 403 that says it is there).

    Every reviewer-only selector and service checks here. The surfaces refuse before it: the
    reviewer API answers 403 ``forbidden`` to a request without a reviewer's session
    (``api.reviews.IsReviewer``), the portal sends another login to its own pages.
    """
    allowed = (ReviewerPrincipal, SystemPrincipal) if or_system else (ReviewerPrincipal,)
    if not isinstance(principal, allowed):
        raise NotFound(message)
