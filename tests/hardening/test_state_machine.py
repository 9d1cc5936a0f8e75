"""A hypothesis state machine over write, supersede, revoke, retrieve and delete (a memory, a
key, a whole subject).

Two sibling tenants (the same subject external id, the same memory keys) are driven through
the real services; after every step the invariants are checked:

- one active head per chain (no active row with a successor; at most one active row per chain);
- nothing deleted is retrievable (and a deleted row keeps no content);
- nothing of tenant B is visible to tenant A (retrieval and by-id reads), and vice versa.
"""

import uuid

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import override_settings
from hypothesis import HealthCheck
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.exceptions import DomainError, NotFound
from memory_core.models import Memory, Status, Tombstone
from memory_core.principals import AgentPrincipal
from memory_core.retrieval.pipeline import retrieve
from memory_core.retrieval.types import RetrievalRequest
from memory_core.selectors.memories import memory_get
from memory_core.services.api_keys import agent_ensure
from memory_core.services.writes import memory_correct, memory_revoke, memory_write

KEYS = ["style.answers", "project.backend_language", "editor.indentation"]
CONTENTS = [
    "User prefers concise technical answers.",
    "User prefers detailed answers with examples.",
    "The backend is written in Go.",
    "The backend is written in Python.",
    "User indents with four spaces.",
    "User indents with tabs.",
]
QUERIES = ["How should answers be written?", "Which backend language?", "Indentation style?"]
SOURCE = {"type": "user_input", "conversation_id": "c-1", "message_id": "m-1"}
MEMOIZING = {
    **settings.MEMLEDGER_EMBEDDER,
    "BACKEND": "memory_core.security.leak_hunt.MemoizingEmbedder",
}

ACTIVE_HEADS_SQL = """
WITH RECURSIVE chain(id, root) AS (
    SELECT id, id FROM memory_core_memory WHERE supersedes_id IS NULL AND tenant_id = ANY(%s)
  UNION ALL
    SELECT m.id, c.root FROM memory_core_memory m JOIN chain c ON m.supersedes_id = c.id
     WHERE m.status NOT IN ('pending_approval', 'rejected')
)
SELECT (SELECT count(*) FROM (
          SELECT c.root FROM chain c JOIN memory_core_memory m ON m.id = c.id
           WHERE m.status = 'active' GROUP BY c.root HAVING count(*) > 1) AS forks),
       (SELECT count(*) FROM memory_core_memory m
         WHERE m.tenant_id = ANY(%s) AND m.status = 'active' AND EXISTS (
               SELECT 1 FROM memory_core_memory s WHERE s.supersedes_id = m.id
                  AND s.status NOT IN ('pending_approval', 'rejected')))
"""


class MemoryLifecycle(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        run = uuid.uuid4().hex[:8]
        self.principals = {}
        for side in ("a", "b"):
            agent = agent_ensure(tenant_slug=f"sm-{run}-{side}", agent_name="agent")
            self.principals[side] = AgentPrincipal.from_agent(agent)
        self.ids = {"a": [], "b": []}
        self.deleted: set[str] = set()

    def _tenant_ids(self):
        return [str(p.tenant_id) for p in self.principals.values()]

    @rule(side=st.sampled_from("ab"), key=st.sampled_from(KEYS), content=st.sampled_from(CONTENTS))
    def write(self, side, key, content):
        result = memory_write(
            principal=self.principals[side],
            data={
                "subject": "user-1",
                "memory_type": "user_preference",
                "memory_key": key,
                "scope": "global",
                "content": content,
                "source": SOURCE,
            },
        )
        if result.memory is not None:
            self.ids[side].append(str(result.memory.id))

    @rule(side=st.sampled_from("ab"), pick=st.integers(0, 50), content=st.sampled_from(CONTENTS))
    def supersede(self, side, pick, content):
        if not self.ids[side]:
            return
        target = self.ids[side][pick % len(self.ids[side])]
        try:
            result = memory_correct(
                principal=self.principals[side],
                memory_id=target,
                data={"content": content, "source": SOURCE},
            )
        except DomainError:  # not the head any more, deleted, revoked: refused, not broken
            return
        if result.memory is not None:
            self.ids[side].append(str(result.memory.id))

    @rule(side=st.sampled_from("ab"), pick=st.integers(0, 50))
    def revoke(self, side, pick):
        if not self.ids[side]:
            return
        try:
            memory_revoke(
                principal=self.principals[side],
                memory_id=self.ids[side][pick % len(self.ids[side])],
            )
        except DomainError:
            return

    @rule(side=st.sampled_from("ab"), pick=st.integers(0, 50))
    def delete(self, side, pick):
        if not self.ids[side]:
            return
        self._delete(side, memory_id=self.ids[side][pick % len(self.ids[side])])

    @rule(side=st.sampled_from("ab"), key=st.sampled_from(KEYS))
    def delete_key(self, side, key):
        """Every chain on the key at once: the scrub the chain trigger skips (0020)."""
        self._delete(side, subject_external_id="user-1", memory_key=key)

    @rule(side=st.sampled_from("ab"))
    def delete_subject(self, side):
        self._delete(side, subject_external_id="user-1")

    def _delete(self, side, **target):
        try:
            operation = deletion_request(principal=self.principals[side], **target)
        except DomainError:  # nothing left on the key, or nothing written yet
            return
        assert deletion_run(operation_id=operation.id) == "completed"
        self.deleted |= {
            str(i)
            for i in Tombstone.objects.filter(operation=operation).values_list(
                "memory_id", flat=True
            )
        }

    @rule(side=st.sampled_from("ab"), query=st.sampled_from(QUERIES))
    def retrieve_and_check(self, side, query):
        principal = self.principals[side]
        result = retrieve(
            principal=principal, request=RetrievalRequest(query=query, user_id="user-1")
        )
        returned = {str(item.id) for item in result.items}
        assert not returned & self.deleted, "a deleted memory was retrieved"
        for item in result.items:
            assert str(item.tenant_id) == str(principal.tenant_id), "another tenant's memory"
        other = "b" if side == "a" else "a"
        assert not returned & set(self.ids[other])

    @invariant()
    def one_active_head_per_chain(self):
        tenants = self._tenant_ids()
        with connection.cursor() as cursor:
            cursor.execute(ACTIVE_HEADS_SQL, [tenants, tenants])
            forks, active_with_successor = cursor.fetchone()
        assert forks == 0 and active_with_successor == 0

    @invariant()
    def deleted_rows_keep_nothing(self):
        if not self.deleted:
            return
        rows = Memory.objects.filter(pk__in=self.deleted)
        assert all(m.status == Status.DELETED and m.content == "" for m in rows)

    @invariant()
    def no_cross_tenant_reads(self):
        for side, other in (("a", "b"), ("b", "a")):
            for memory_id in self.ids[other][-3:]:
                with pytest.raises(NotFound):
                    memory_get(principal=self.principals[side], memory_id=memory_id)


MemoryLifecycle.TestCase.settings = hsettings(
    max_examples=10,
    stateful_step_count=12,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@pytest.mark.django_db
def test_memory_lifecycle_state_machine():
    with override_settings(MEMLEDGER_EMBEDDER=MEMOIZING):
        MemoryLifecycle.TestCase().runTest()
