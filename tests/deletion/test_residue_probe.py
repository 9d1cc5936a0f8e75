"""The residue scan finds residue: a probe of every store's verification.

An operation is "completed" only when every store's verification finds nothing of its
memories. A verification that always passed would complete every deletion, residue or not,
and every other deletion test would still pass (they purge first). So here a deletion is
completed and verified, then the deleted memory's content (or its id, or what stands for it)
is put back into one derived store at a time, and the verification must fail, naming that
store (and only the stores that hold it).
"""

import json
import uuid
from pathlib import Path

import pytest
from django.core.cache import cache

from memory_core import retrieval_cache
from memory_core.deletion import stores
from memory_core.deletion.runner import deletion_reset, deletion_run, operation_context
from memory_core.deletion.services import deletion_request, tenant_deletion_request
from memory_core.deletion.stores import verify_all
from memory_core.evaluation.dataset import load_dataset_memories
from memory_core.exports import export_dir
from memory_core.models import Memory, MemoryEvent, RetrievalTrace, Subject
from memory_core.text import content_hash
from tests.deletion.conftest import eval_file, seed_everywhere, unit_vector

pytestmark = pytest.mark.django_db


def failing(operation) -> set[str]:
    """The stores whose verification of ``operation`` fails now (a fresh context: nothing
    read before the plant is reused)."""
    return {name for name, (ok, _) in verify_all(operation_context(operation)).items() if not ok}


def _row(target, **values):
    Memory.objects.filter(pk=target.id).update(**values)


def _event(target, content):
    MemoryEvent.objects.create(
        tenant_id=target.tenant_id,
        memory_id=target.id,
        action=MemoryEvent.Action.CORRECTED,
        actor_type="agent",
        details={"note": content},
    )


def _trace(target, content):
    RetrievalTrace.objects.create(
        tenant_id=target.tenant_id, subject_id=target.subject_id, mode="task", cited_ids=[target.id]
    )


def _export_file(target, content):
    folder = export_dir() / str(target.tenant_id) / str(target.subject_id)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "left-behind.json").write_text(json.dumps({"memories": [{"id": str(target.id)}]}))


def _eval_with_id(target, content):
    eval_file("probe-ids.jsonl").write_text(json.dumps({"expected_ids": [str(target.id).upper()]}))


def _eval_with_content(target, content):
    # No id at all: found by the ledger's content hash.
    eval_file("probe-answers.json").write_text(json.dumps([{"expected_answer": content}]))


def _eval_csv(target, content):
    eval_file("probe-report.csv").write_text(f'case,answer\n7,"{content}"\n')


def _eval_run(target, content):
    # A run kept with ``eval_retrieval --keep``: a tenant of its own holding a copy.
    memory = {"id": "m1", "tenant": "t", "subject": "u", "memory_type": "user_preference",
              "memory_key": "k", "scope": "global", "content": content,
              "authority": "explicit_user"}  # fmt: skip
    data = {"dataset": "probe", "memories": [memory]}
    load_dataset_memories(data, tenant_prefix="eval-probe-", evaluation_run=True)


def _cache(namespace):
    def plant(target, content):
        # A generation from before the request (a cache restored from a snapshot, a bump
        # that never happened): an entry holding the content is reachable again.
        key = retrieval_cache._generation_key(namespace, target.tenant_id, target.subject_id)
        cache.set(key, 1, timeout=60)
        retrieval_cache.cache_set(
            tenant_id=target.tenant_id,
            subject_id=target.subject_id,
            key="probe",
            value={"items": [content]},
            memory_ids=[],
            namespace=namespace,
        )

    return plant


class _UnguardedTask:
    name = "memory_core.tasks.probe_unguarded"


def _unguarded_task(monkeypatch):
    from memory_core import tasks

    monkeypatch.setattr(tasks, "MEMORY_TASKS", [*tasks.MEMORY_TASKS, _UnguardedTask()])


# A deleted row can hold no content, value or vector (the check constraint
# memory_tombstone_has_no_content, probed below): what puts them back is a row that is not a
# tombstone any more (a restored backup's), which the primary step fails on by its status too.
RESTORED = "revoked"

# (what is planted, the store that must fail, the other stores the plant may fail too)
PLANTS = [
    (
        "content back in the row",
        lambda t, c: _row(t, status=RESTORED, content=c),
        "full_text",
        {"primary"},
    ),
    (
        "a value in the row",
        lambda t, c: _row(t, status=RESTORED, value={"copy": c}),
        "primary",
        set(),
    ),
    ("the key in the row", lambda t, c: _row(t, memory_key="style.answers"), "primary", set()),
    ("the source in the row", lambda t, c: _row(t, source_message_id="m-9"), "primary", set()),
    (
        "a vector in the row",
        lambda t, c: _row(t, status=RESTORED, embedding=unit_vector(0), embedding_model="test"),
        "embeddings",
        {"primary"},
    ),
    ("content in an event", _event, "events", set()),
    ("a trace citing it", _trace, "traces", set()),
    ("an export file naming it", _export_file, "exports", set()),
    ("an evaluation file naming it", _eval_with_id, "evaluation", set()),
    ("an evaluation file copying it", _eval_with_content, "evaluation", set()),
    ("a CSV report copying it", _eval_csv, "evaluation", set()),
    ("a kept evaluation run copying it", _eval_run, "evaluation", set()),
    ("a retrieval cache left reachable", _cache("retrieval"), "retrieval_cache", set()),
    ("a summary cache left reachable", _cache("summary"), "summaries", set()),
]


@pytest.fixture
def deleted(owner, owner_principal, memories, settings, tmp_path):
    """The first memory, seeded in every store, deleted and verified; (the operation, the
    memory as it was, its content)."""
    settings.MEMLEDGER_EVAL_DATA_DIRS = [str(tmp_path / "eval")]
    target = memories[0]
    content = f"Probe canary {uuid.uuid4().hex}: the user prefers teal dashboards."
    _row(target, content=content, content_hash=content_hash(content))
    target.refresh_from_db()
    seed_everywhere(owner, memories)
    operation = deletion_request(principal=owner_principal, memory_id=target.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    assert failing(operation) == set()
    return operation, target, content


@pytest.mark.parametrize(("planted", "plant", "store", "also"), PLANTS, ids=[p[0] for p in PLANTS])
def test_residue_put_back_in_one_store_fails_that_stores_verification(
    deleted, planted, plant, store, also
):
    operation, target, content = deleted
    plant(target, content)
    found = failing(operation)
    assert store in found, f"{planted}: not found by {store} ({found})"
    assert found <= {store, *also}, found


def test_a_task_that_would_act_on_the_memory_unchecked_fails_queued_reprocessing(
    deleted, monkeypatch
):
    operation, _, _ = deleted
    _unguarded_task(monkeypatch)
    assert failing(operation) == {"queued_reprocessing"}


def test_a_replica_still_holding_the_content_fails_the_replica_step(deleted, settings):
    # The primary stands in for the replica (as in test_stores_extra): the step's queries.
    operation, target, content = deleted
    settings.MEMLEDGER_REPLICA_DATABASES = ["default"]
    assert failing(operation) == set()
    _row(target, memory_key="style.answers")
    assert failing(operation) == {"primary", "replicas"}


@pytest.mark.parametrize(
    "values",
    [{"content": "x"}, {"value": {"copy": "x"}}, {"embedding": unit_vector(1)}],
    ids=["content", "value", "vector"],
)
def test_the_database_refuses_content_in_a_tombstone_row(deleted, values):
    from django.db import IntegrityError, transaction

    _, target, _ = deleted
    with pytest.raises(IntegrityError, match="memory_tombstone_has_no_content"):
        with transaction.atomic():
            _row(target, **values)


def test_residue_fails_the_run_too_until_it_is_purged(deleted):
    """The runner goes by the same verifications: a step whose residue is back (and which its
    purge cannot take out: a file it cannot read) is not verified, and names the store."""
    operation, target, _ = deleted
    opaque = Path(eval_file("probe.xlsx"))
    opaque.write_bytes(b"PK\x03\x04\xff\xfe\x00" + str(target.id).encode())
    deletion_reset(operation=operation)
    assert deletion_run(operation_id=operation.id) == "partial"
    unverified = operation.steps.exclude(status="verified").values_list("store", flat=True)
    assert list(unverified) == ["evaluation"]
    opaque.unlink()
    assert deletion_run(operation_id=operation.id) == "completed"


def test_a_tenants_identities_put_back_fail_the_identities_step(tenant, owner, memories):
    operation = tenant_deletion_request(tenant_id=tenant.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    assert failing(operation) == set()
    Subject.objects.filter(pk=owner.pk).update(display_name="Alice Example")
    assert failing(operation) == {"identities"}


def test_every_store_is_probed():
    """A store added later gets a probe here too."""
    probed = {store for _, _, store, _ in PLANTS} | {"queued_reprocessing", "replicas"}
    assert set(stores.REGISTRY) == probed | {"identities"}
