"""Replicas (when configured), the beat schedule, export scoping, and evaluation files."""

import json
import os

import pytest
from django.conf import settings

from config.celery_app import app
from memory_core.deletion.runner import deletion_run, operation_context
from memory_core.deletion.services import deletion_request
from memory_core.deletion.stores import REGISTRY
from memory_core.exceptions import NotFound
from memory_core.exports import export_create, export_path
from memory_core.models import Memory
from memory_core.principals import SubjectPrincipal, SystemPrincipal
from memory_core.services.writes import memory_correct, memory_revoke
from tests.deletion.conftest import eval_file
from tests.factories import MemoryFactory, SubjectFactory
from tests.threads import in_thread

pytestmark = pytest.mark.django_db


def test_no_replica_step_when_none_is_configured(owner_principal, memories):
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    assert not operation.steps.filter(store="replicas").exists()


def test_a_configured_replica_is_verified(owner_principal, memories, settings):
    # The primary stands in for a replica here (no streaming replica in the test setup):
    # this checks the step's queries and verdicts, not replication itself.
    settings.MEMLEDGER_REPLICA_DATABASES = ["default"]
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    assert operation.steps.filter(store="replicas").exists()
    assert deletion_run(operation_id=operation.id) == "completed"
    step = operation.steps.get(store="replicas")
    assert step.status == "verified"
    assert step.evidence["replicas"]["default"] == {"tombstones": 1, "rows_with_content": 0}
    # A replica still holding content (lag) fails the verification.
    Memory.objects.filter(pk=memories[0].id).update(memory_key="lagging")
    ok, evidence = REGISTRY["replicas"].verify(operation_context(operation))
    assert not ok and evidence["replicas"]["default"]["rows_with_content"] == 1


@pytest.mark.django_db(transaction=True, databases=["default", "replica"])
def test_a_replica_is_read_acting_for_the_operations_tenant(settings):
    """Under row-level security a connection acting for no tenant sees no row: the step
    found no tombstone on a replica (a connection of its own, which the worker's tenant_scope
    does not set), so it never passed (and would not see content left). The test settings'
    ``replica`` alias is a second connection to the test database."""
    from memory_core.rls import tenant_scope
    from memory_core.services.policy import policy_ensure
    from tests.factories import TenantFactory

    settings.MEMLEDGER_REPLICA_DATABASES = ["replica"]
    tenant = TenantFactory()
    policy_ensure(tenant=tenant)
    owner = SubjectFactory(tenant=tenant)
    memory = MemoryFactory(subject=owner)
    principal = SubjectPrincipal(tenant_id=tenant.id, subject_id=owner.id, user_id=1)
    operation = deletion_request(principal=principal, memory_id=memory.id)

    def worker():  # as the task runs it; the test thread's own connections see every tenant
        with tenant_scope(tenant.id):
            return deletion_run(operation_id=operation.id)

    assert in_thread(worker).outcome() == "completed"
    step = operation.steps.get(store="replicas")
    assert step.evidence["replicas"]["replica"] == {"tombstones": 1, "rows_with_content": 0}


def test_beat_schedule_names_registered_tasks():
    import memory_core.tasks  # noqa: F401  (registers the tasks)

    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in app.tasks, entry["task"]


def test_export_is_scoped_to_its_subject(owner, owner_principal, tenant, other_tenant):
    mine = MemoryFactory(subject=owner)
    neighbour = SubjectFactory(tenant=tenant)
    MemoryFactory(subject=neighbour, content="The neighbour's secret")
    export = export_create(principal=owner_principal)
    document = json.loads(export_path(export).read_text())
    assert [m["id"] for m in document["memories"]] == [str(mine.id)]
    with pytest.raises(NotFound):
        export_create(principal=owner_principal, subject_id=neighbour.id)
    # Another tenant's reviewer or system, naming this subject: as if it did not exist.
    with pytest.raises(NotFound):
        export_create(principal=SystemPrincipal(tenant_id=other_tenant.id), subject_id=owner.id)


def test_subject_deletion_removes_the_subjects_exports(owner, owner_principal, memories):
    export = export_create(principal=owner_principal)
    operation = deletion_request(principal=owner_principal, subject_id=owner.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    assert not export_path(export).exists()
    assert operation.steps.get(store="exports").evidence["files_scanned"] == 0


def _run(owner_principal, memory):
    operation = deletion_request(principal=owner_principal, memory_id=memory.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    return operation


def test_an_evaluation_case_naming_the_memory_goes_whole(owner_principal, memories):
    target, kept = memories[0], memories[1]
    path = eval_file(f"cases-{target.id}.json")
    path.write_text(
        json.dumps(
            {
                "dataset": "prod-sample",
                "cases": [
                    {
                        "query": "What does the user prefer?",
                        "expected_ids": [str(target.id)],
                        "expected_answer": target.content,
                    },
                    {"memory": {"id": str(target.id)}, "text": target.content},
                    {"query": "kept", "expected_ids": [str(kept.id)], "answer": kept.content},
                ],
            }
        )
    )
    operation = _run(owner_principal, target)
    document = json.loads(path.read_text())
    assert document == {
        "dataset": "prod-sample",
        "cases": [{"query": "kept", "expected_ids": [str(kept.id)], "answer": kept.content}],
    }
    evidence = operation.steps.get(store="evaluation").evidence
    assert (evidence["files_citing"], evidence["files_with_content"]) == (0, 0)
    path.unlink()


def test_evaluation_ids_are_matched_in_any_case_and_as_hex(owner_principal, memories):
    target, kept = memories[0], memories[1]
    path = eval_file(f"lines-{target.id}.jsonl")
    lines = [
        {"id": str(target.id).upper(), "text": "a"},
        {"ref": target.id.hex, "text": "b"},
        {"ref": target.id.hex.upper(), "text": "c"},
        {"text": target.content},  # a copy of the content, no id
        {"id": str(kept.id), "text": "kept"},
    ]
    path.write_text("# not JSON\n" + "".join(json.dumps(line) + "\n" for line in lines))
    nested = eval_file(f"nested-{target.id}.json")
    nested.write_text(json.dumps({"suite": {"cases": [{"ids": [target.id.hex.upper()]}, {}]}}))
    whole = eval_file(f"one-case-{target.id}.json")
    whole.write_text(json.dumps({"memory_id": str(target.id).upper(), "note": "x"}))

    _run(owner_principal, target)
    assert path.read_text().splitlines() == ["# not JSON", json.dumps(lines[-1])]
    assert json.loads(nested.read_text()) == {"suite": {"cases": [{}]}}
    # The id sits in no list of cases: the file is the case, and goes.
    assert not whole.exists()
    path.unlink()
    nested.unlink()


def test_evaluation_verification_finds_the_content_without_the_id(owner_principal, memories):
    target = memories[0]
    operation = _run(owner_principal, target)
    ctx = operation_context(operation)
    assert REGISTRY["evaluation"].verify(ctx)[0]
    # A copy of the deleted content (trivially different: case, spaces) and no id.
    path = eval_file(f"copy-{target.id}.json")
    path.write_text(json.dumps([{"answer": "  " + target.content.upper() + " "}, {"q": "k"}]))
    ok, evidence = REGISTRY["evaluation"].verify(ctx)
    assert not ok and evidence["files_with_content"] == 1
    # ...and the purge takes it out.
    REGISTRY["evaluation"].purge(ctx)
    assert json.loads(path.read_text()) == [{"q": "k"}]
    assert REGISTRY["evaluation"].verify(ctx)[0]
    path.unlink()


def test_an_evaluation_folder_that_does_not_exist_fails_the_step(
    owner_principal, memories, settings, tmp_path
):
    from django.core import checks

    target = memories[0]
    present, absent = tmp_path / "eval-a", tmp_path / "eval-b"
    present.mkdir()
    (present / "cases.jsonl").write_text(json.dumps({"id": str(target.id)}) + "\n")
    settings.MEMLEDGER_EVAL_DATA_DIRS = [str(present), str(absent)]
    warnings = [m for m in checks.run_checks() if m.id == "memory_core.W001"]
    assert [str(absent) in m.msg for m in warnings] == [True]

    operation = deletion_request(principal=owner_principal, memory_id=target.id)
    assert deletion_run(operation_id=operation.id) == "partial"
    step = operation.steps.get(store="evaluation")
    assert step.status == "failed"
    assert step.evidence["missing_dirs"] == 1  # a count: the path is the operator's
    assert str(absent) not in json.dumps(step.evidence)
    assert f"MEMLEDGER_EVAL_DATA_DIRS names '{absent}', which is not a folder" in step.last_error
    assert (present / "cases.jsonl").read_text() == ""  # the folder that exists was purged

    absent.mkdir()  # the operator fixes it; the retry verifies
    assert deletion_run(operation_id=operation.id) == "completed"
    assert not [m for m in checks.run_checks() if m.id == "memory_core.W001"]


def test_a_missing_evaluation_folder_inside_the_data_dir_is_memledgers_own_and_empty(
    owner_principal, memories, settings
):
    settings.MEMLEDGER_EVAL_DATA_DIRS = [str(settings.DATA_DIR / "eval-never-written")]
    operation = _run(owner_principal, memories[0])
    assert "missing_dirs" not in operation.steps.get(store="evaluation").evidence


def test_residue_of_many_ids_finds_exactly_what_a_search_per_id_finds():
    """A subject's thousands of ids are looked for in one pass over the text (one search per
    id took 29 s for 10,000 ids and a 4 MB evaluation file); it finds the same."""
    import random
    import uuid as uuid_module

    from memory_core.deletion.stores import FEW_FORMS, Residue

    rng = random.Random(7)
    ids = [uuid_module.UUID(int=rng.getrandbits(128), version=4) for _ in range(500)]
    many = Residue(ids, set())
    assert len(many.forms) > FEW_FORMS
    wanted, other = ids[123], uuid_module.uuid4()

    def per_id(text):
        return any(form in text.lower() for form in many.forms)

    texts = [
        f'{{"expected_ids": ["{wanted}"]}}',
        f"case {str(wanted).upper()} end",
        f"as hex: {wanted.hex}.",
        f"inside a longer run: ab-{wanted.hex}-cd{'0' * 40}",
        f"sha256 {'f' * 10}{wanted.hex}{'e' * 22}",
        f"----{wanted}----",
        f"only another id: {other} and {other.hex}",
        f"a near miss: {str(wanted)[:-1]}",
        f"{'-' * 200}{'a' * 31}",
        "",
    ]
    found = [many.names(text) for text in texts]
    assert found == [per_id(text) for text in texts]
    assert found == [True, True, True, True, True, True, False, False, False, False]
    for _ in range(300):  # random texts of id characters with ids cut in
        parts = [rng.choice(["-", "a", "0", "f", " ", "x"]) * rng.randint(0, 40)]
        if rng.random() < 0.5:
            chosen = rng.choice(ids)
            parts.append(rng.choice([str(chosen), chosen.hex, str(chosen).upper()]))
        parts.append(uuid_module.uuid4().hex[: rng.randint(0, 32)])
        rng.shuffle(parts)
        text = "".join(parts)
        assert many.names(text) == per_id(text), text


def test_an_export_carries_each_memorys_events_and_deleting_a_version_leaves_none_of_it(
    owner, owner_principal, memories
):
    """An export says why a memory is as it is: its events, the reason given. A version's
    events name the version they replaced or that replaced it (``successor``, ``supersedes``):
    the export leaves those ids out, so deleting the old version rewrites the export to the
    new one's record alone and the step's verification finds nothing of the old one."""
    old = memories[0]
    new = memory_correct(
        principal=owner_principal,
        memory_id=old.id,
        data={"content": "User prefers tea now.", "reason": "I switched."},
    ).memory
    memory_revoke(principal=owner_principal, memory_id=memories[1].id, reason="Not true.")
    export = export_create(principal=owner_principal)
    records = {m["id"]: m for m in json.loads(export_path(export).read_text())["memories"]}
    assert [e["action"] for e in records[str(old.id)]["events"]] == ["superseded"]
    corrected, admitted = records[str(new.id)]["events"]
    assert (corrected["action"], admitted["action"]) == ("corrected", "admitted")
    assert admitted["actor_type"] == "user"
    assert admitted["reason"] == "I switched."
    assert "supersession.supersedes" in admitted["rule_codes"]
    [revoked] = records[str(memories[1].id)]["events"]
    assert (revoked["action"], revoked["reason"]) == ("revoked", "Not true.")
    assert records[str(memories[2].id)]["events"] == []

    operation = _run(owner_principal, old)
    assert operation.steps.get(store="exports").status == "verified"
    text = export_path(export).read_text()
    assert str(old.id) not in text
    assert str(new.id) in text


def test_a_jsonl_rewrite_cut_short_leaves_the_old_file_whole(memories, tmp_path, monkeypatch):
    """The JSONL rewrite truncated the file in place: a worker killed (or a disk full)
    midway left a 600,000-case dataset empty, and the next run verified the empty file."""
    import errno
    import os

    from memory_core.deletion.stores import Residue, _rewrite_file

    target, kept = memories[0], memories[1]
    path = tmp_path / "cases.jsonl"
    lines = [
        json.dumps({"expected_ids": [str(m.id)], "query": f"q{i}"}) for i, m in enumerate(memories)
    ]
    path.write_text("\n".join(lines) + "\n")
    before = path.read_bytes()

    def disk_full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space left"):
        _rewrite_file(path, Residue([target.id], set()))
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["cases.jsonl"]  # no temporary file left

    monkeypatch.undo()
    assert _rewrite_file(path, Residue([target.id], set())) == 1
    assert str(target.id) not in path.read_text() and str(kept.id) in path.read_text()
    assert len(path.read_text().splitlines()) == len(memories) - 1


def test_an_export_rewritten_by_a_run_that_rolled_back_gets_the_files_hash_again(
    owner_principal, memories
):
    """A worker killed in the files phase had rewritten the export's file; its transaction
    rolled back and the row kept the old file's hash. The run after it found nothing left to
    rewrite and saved the row with that stale hash, for good."""
    import hashlib

    from memory_core.exports import export_remove_memories

    target = memories[0]
    export = export_create(principal=owner_principal)
    stale = export.sha256
    path = export_path(export)
    document = json.loads(path.read_text())
    document["memories"] = [m for m in document["memories"] if m["id"] != str(target.id)]
    path.write_text(json.dumps(document))  # the killed run's rewrite; its row update is lost

    assert export_remove_memories(export=export, memory_ids=[target.id]) is True
    export.refresh_from_db()
    assert export.sha256 == hashlib.sha256(path.read_bytes()).hexdigest() != stale
    assert str(target.id) not in map(str, export.memory_ids)


def test_an_export_a_deletion_rewrote_keeps_no_digest_of_what_it_held(owner_principal, memories):
    """Since stop 60 an export's row keeps a digest of its file's records (``state_sha256``),
    so a form sent twice gets the first file only while an export made now would hold the
    same. A deletion that rewrites the export clears it: the digest was of the deleted
    memory's record too, and no longer says what the file holds."""
    from memory_core.exports import export_holds_now

    export = export_create(principal=owner_principal)
    assert export.state_sha256
    assert export_holds_now(export, principal=owner_principal)

    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    assert deletion_run(operation_id=operation.id) == "completed"
    export.refresh_from_db()
    assert str(memories[0].id) not in map(str, export.memory_ids)
    assert export.state_sha256 == ""
    assert not export_holds_now(export, principal=owner_principal)


def test_a_rewritten_evaluation_file_keeps_its_permissions(memories, tmp_path):
    """The new file a rewrite renames over the old one was made 0600 (mkstemp's): an
    evaluation job running as another user could no longer read its dataset."""
    from memory_core.deletion.stores import Residue, _rewrite_file

    for name, body in [
        ("cases.jsonl", "\n".join(json.dumps({"id": str(m.id)}) for m in memories) + "\n"),
        ("cases.json", json.dumps({"cases": [{"id": str(m.id)} for m in memories]})),
    ]:
        path = tmp_path / name
        path.write_text(body)
        path.chmod(0o644)
        if os.geteuid() == 0:  # the worker as root: the file stays its owner's
            os.chown(path, 4321, 4322)
        assert _rewrite_file(path, Residue([memories[0].id], set())) == 1
        assert str(memories[0].id) not in path.read_text()
        assert path.stat().st_mode & 0o777 == 0o644, name
        if os.geteuid() == 0:
            assert (path.stat().st_uid, path.stat().st_gid) == (4321, 4322), name


def _case(memory, question="What is the user's usual coffee order?"):
    """An evaluation case about ``memory``: its content sits inside a longer answer, where no
    content hash finds it, so the id is what marks the case."""
    return {
        "query": question,
        "expected_ids": [str(memory.id)],
        "expected_answer": f"From memory: {memory.content}",
    }


# (document about the target, what is left of it: None when the file goes). ``T`` is the
# target's case, ``K`` a case about a memory that stays.
_SHAPES = {
    # The file is one case: the id sits in its own list of ids, in no list of cases. Only
    # the id went, and the query and the answer holding the content stayed.
    "one case": (lambda t, k: t, None),
    "one case, its fields objects": (
        lambda t, k: {
            "input": {"query": t["query"]},
            "expected": {"ids": t["expected_ids"], "answer": t["expected_answer"]},
        },
        None,
    ),
    "a list of ids": (lambda t, k: {"ids": [t["expected_ids"][0], k["expected_ids"][0]]}, None),
    # Cases by name (an object of objects alike) cannot be told from one case whose fields
    # are objects alike (below): the document goes whole.
    "cases by name": (lambda t, k: {"cases": {"c1": t, "c2": k}}, None),
    "one case, its fields objects alike": (
        lambda t, k: {
            "input": {"text": t["query"], "memory_id": t["expected_ids"][0]},
            "expected": {"text": t["expected_answer"], "memory_id": ""},
        },
        None,
    ),
    "cases in a list": (lambda t, k: {"cases": [t, k]}, lambda t, k: {"cases": [k]}),
    # The mention deep in a list inside the case: the whole case goes, not the context item
    # (the answer beside it holds the content).
    "a mention in a case's own list of objects": (
        lambda t, k: {
            "cases": [
                {**t, "expected_ids": [], "context": [{"memory_id": t["expected_ids"][0]}]},
                k,
            ]
        },
        lambda t, k: {"cases": [k]},
    ),
}


@pytest.mark.parametrize("shape", list(_SHAPES))
def test_an_evaluation_case_goes_whole_whatever_holds_it(
    shape, owner_principal, memories, settings, tmp_path
):
    settings.MEMLEDGER_EVAL_DATA_DIRS = [str(tmp_path)]
    target, kept = memories[0], memories[1]
    build, left = _SHAPES[shape]
    t, k = _case(target), _case(kept, question="What does the user read?")
    path = eval_file("dataset.json")
    path.write_text(json.dumps(build(t, k)))

    operation = _run(owner_principal, target)

    if left is None:
        assert not path.exists()
    else:
        assert json.loads(path.read_text()) == left(t, k)
        assert target.content not in path.read_text()
    evidence = operation.steps.get(store="evaluation").evidence
    assert (evidence["files_citing"], evidence["files_with_content"]) == (0, 0)
