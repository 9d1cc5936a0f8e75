"""Reads of memory rows. Every selector takes the caller's principal and scopes through it."""

from dataclasses import dataclass

from memory_core.exceptions import NotFound
from memory_core.models import PROPOSED_STATUSES, AdmissionDecision, Memory, MemoryEvent

MAX_LIST_LIMIT = 100


def memory_get(*, principal, memory_id) -> Memory:
    """Return the memory ``memory_id`` if ``principal`` may see it; NotFound otherwise."""
    memory = (
        Memory.objects.visible_to(principal).select_related("subject").filter(pk=memory_id).first()
    )
    if memory is None:
        raise NotFound("No memory with this id.")
    return memory


def memory_chain(memory: Memory) -> list[Memory]:
    """Return the whole supersession chain containing ``memory``, oldest first, as stored.

    The caller has scoped ``memory``; the chain never leaves its tenant (a database trigger
    keeps chains within one owner), and every lookup says so explicitly as well.
    """
    rows = Memory.objects.filter(tenant_id=memory.tenant_id)
    root = rows.get(pk=memory.pk)
    older = []
    while root.supersedes_id:
        root = rows.get(pk=root.supersedes_id)
        older.append(root)
    chain = older[::-1] + [rows.get(pk=memory.pk)]
    while True:
        successor = (
            rows.filter(supersedes_id=chain[-1].id).exclude(status__in=PROPOSED_STATUSES).first()
        )
        if successor is None:
            return chain
        chain.append(successor)


def memory_visible_chain(*, principal, memory: Memory) -> list[Memory]:
    """Return ``memory``'s chain as ``principal`` may see it, oldest first.

    A version the principal may not see on its own (another type, another agent's, above its
    sensitivity; a chain never crosses tenant or subject) is left out here too.
    """
    chain = memory_chain(memory)
    visible = set(
        Memory.objects.visible_to(principal)
        .filter(pk__in=[link.pk for link in chain])
        .values_list("pk", flat=True)
    )
    return [link for link in chain if link.pk in visible]


def memory_list(
    *, principal, subject: str = "", memory_type: str = "", status: str = "", key: str = ""
):
    """Return the memories ``principal`` may see, newest first, filtered by the subject's
    external id, type, status and memory_key (each optional)."""
    queryset = Memory.objects.visible_to(principal).select_related("subject")
    if subject:
        queryset = queryset.filter(subject__external_id=subject)
    if memory_type:
        queryset = queryset.filter(memory_type=memory_type)
    if status:
        queryset = queryset.filter(status=status)
    if key:
        queryset = queryset.filter(memory_key=key)
    return queryset.order_by("-created_at", "-id")


@dataclass
class MemoryDetail:
    """A memory with its provenance: admission decision, whole chain, and every event."""

    memory: Memory
    chain: list[Memory]
    events: list[MemoryEvent]
    decision: AdmissionDecision | None


def memory_detail(*, principal, memory_id) -> MemoryDetail:
    """Return ``memory_id`` with its chain, events and admission decision; NotFound if the
    principal may not see it."""
    memory = memory_get(principal=principal, memory_id=memory_id)
    chain = memory_visible_chain(principal=principal, memory=memory)
    ids = [m.id for m in chain]
    events = list(MemoryEvent.objects.filter(tenant_id=memory.tenant_id, memory_id__in=ids))
    decision = (
        AdmissionDecision.objects.filter(tenant_id=memory.tenant_id, memory_id=memory.id)
        .order_by("-created_at")
        .first()
    )
    return MemoryDetail(memory=memory, chain=chain, events=events, decision=decision)
