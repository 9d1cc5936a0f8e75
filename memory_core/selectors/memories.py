"""Reads of memory rows. Every selector takes the caller's principal and scopes through it."""

from memory_core.exceptions import NotFound
from memory_core.models import PROPOSED_STATUSES, Memory


def memory_get(*, principal, memory_id) -> Memory:
    """Return the memory ``memory_id`` if ``principal`` may see it; NotFound otherwise."""
    memory = Memory.objects.visible_to(principal).filter(pk=memory_id).first()
    if memory is None:
        raise NotFound("No memory with this id.")
    return memory


def memory_chain(memory: Memory) -> list[Memory]:
    """Return the whole supersession chain containing ``memory``, oldest first, as stored."""
    root = Memory.objects.get(pk=memory.pk)
    older = []
    while root.supersedes_id:
        root = Memory.objects.get(pk=root.supersedes_id)
        older.append(root)
    chain = older[::-1] + [Memory.objects.get(pk=memory.pk)]
    while True:
        successor = (
            Memory.objects.filter(supersedes_id=chain[-1].id)
            .exclude(status__in=PROPOSED_STATUSES)
            .first()
        )
        if successor is None:
            return chain
        chain.append(successor)
