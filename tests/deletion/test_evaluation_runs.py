"""An evaluation run's copy of a dataset is an evaluation set too: a deletion reaches it.

``eval_retrieval --keep`` keeps the run's tenants, which hold a copy of the dataset's memories;
a dataset made from a person's memories kept their words there after the person deleted them
(the dataset file itself was scrubbed). The evaluation step now removes such a run whole, and
fails its verification while one holds the words; a tenant of people's own memories holding
the same words is never touched.
"""

import time
from io import StringIO

import pytest
from django.core.management import call_command

from memory_core import tasks
from memory_core.deletion.runner import deletion_run, operation_context
from memory_core.deletion.services import deletion_request
from memory_core.deletion.stores import REGISTRY
from memory_core.evaluation import dataset as dataset_module
from memory_core.evaluation import harness, locomo
from memory_core.evaluation.dataset import DatasetError, load_dataset_memories
from memory_core.evaluation.harness import evaluate_dataset
from memory_core.models import DeletionOperation, DeletionStep, Memory, RetrievalTrace, Tenant
from memory_core.rls import platform_scope, tenant_scope
from tests.factories import MemoryFactory, SubjectFactory
from tests.threads import in_thread

pytestmark = pytest.mark.django_db


def dataset(*contents: str, tenant: str = "t", cases: int = 1) -> dict:
    memories = [
        {"id": f"m{index}", "tenant": tenant, "subject": "u", "memory_type": "user_preference",
         "memory_key": f"k{index}", "scope": "global", "content": content,
         "authority": "explicit_user"}
        for index, content in enumerate(contents)
    ]  # fmt: skip
    case = {"request": "What does the user prefer?", "intent": "load_preferences",
            "context": {"tenant_id": tenant, "user_id": "u"},
            "required_memory_ids": ["m0"]}  # fmt: skip
    return {
        "dataset": "golden",
        "memories": memories,
        "cases": [{"case_id": f"c{n}", **case} for n in range(cases)],
    }


def run_tenants(prefix: str) -> list[Tenant]:
    return list(Tenant.objects.filter(slug__startswith=prefix))


def evaluation_step(operation) -> DeletionStep:
    return DeletionStep.objects.get(operation=operation, store="evaluation")


def test_a_kept_run_holding_the_deleted_words_is_removed_whole(owner_principal, memories):
    target = memories[0]
    holding = evaluate_dataset(dataset(target.content, "Prefers trains."), keep=True)
    other = evaluate_dataset(dataset("Prefers trains."), keep=True)
    assert run_tenants(holding["tenant_prefix"]) and run_tenants(other["tenant_prefix"])

    operation = deletion_request(principal=owner_principal, memory_id=target.id)
    assert deletion_run(operation_id=operation.id) == "completed"

    assert run_tenants(holding["tenant_prefix"]) == []
    assert len(run_tenants(other["tenant_prefix"])) == 1  # no copy of the words: kept
    step = evaluation_step(operation)
    assert step.evidence["purged"]["runs_removed"] == 1
    assert step.evidence["runs_with_content"] == 0
    with platform_scope("test"):
        assert not Memory.objects.filter(content=target.content).exclude(pk=target.pk).exists()


def test_another_tenants_own_memory_of_the_same_words_stays(
    owner_principal, memories, other_tenant
):
    """Only a tenant made by an evaluation run is removed: a tenant of people's memories
    holding the same words is theirs."""
    target = memories[0]
    theirs = MemoryFactory(subject=SubjectFactory(tenant=other_tenant), content=target.content)

    operation = deletion_request(principal=owner_principal, memory_id=target.id)
    assert deletion_run(operation_id=operation.id) == "completed"

    assert Tenant.objects.filter(pk=other_tenant.pk).exists()
    with platform_scope("test"):
        assert Memory.objects.get(pk=theirs.pk).content == target.content
    assert evaluation_step(operation).evidence["purged"]["runs_removed"] == 0


def test_a_run_holding_the_words_fails_the_step_until_it_is_removed(owner_principal, memories):
    """A run loaded after the purge (or one the purge missed) is residue the verification
    finds; the operation's next run removes it."""
    target = memories[0]
    operation = deletion_request(principal=owner_principal, memory_id=target.id)
    assert deletion_run(operation_id=operation.id) == "completed"

    load_dataset_memories(dataset(target.content), tenant_prefix="eval-late-", evaluation_run=True)
    ok, evidence = REGISTRY["evaluation"].verify(operation_context(operation))
    assert not ok and evidence["runs_with_content"] == 1
    REGISTRY["evaluation"].purge(operation_context(operation))
    assert REGISTRY["evaluation"].verify(operation_context(operation))[0]
    assert run_tenants("eval-late-") == []


def test_a_run_never_takes_an_existing_tenant_of_peoples_memories(tenant, memories):
    """A run's prefix that names an existing tenant is refused: the run removes its tenants
    afterwards, and a deletion of their words removes them whole."""
    prefix, name = tenant.slug[:-1], tenant.slug[-1]
    with pytest.raises(DatasetError, match="not an evaluation run's"):
        evaluate_dataset(dataset("Prefers trains.", tenant=name), prefix=prefix)
    assert Tenant.objects.filter(pk=tenant.pk, evaluation_run=False).exists()
    assert Memory.objects.filter(pk=memories[0].pk).exists()


def test_a_run_whose_copy_a_deletion_removed_while_it_ran_says_so(monkeypatch):
    """Its figures were scored against what was left: not the dataset's."""
    scored = harness.score

    def removed_meanwhile(cases, outcomes, run):
        Tenant.objects.filter(pk__in=[t.pk for t in run.loaded.tenants.values()]).delete()
        return scored(cases, outcomes, run)

    monkeypatch.setattr(harness, "score", removed_meanwhile)
    with pytest.raises(DatasetError, match="run it again"):
        evaluate_dataset(dataset("Prefers trains."))


@pytest.mark.parametrize("command", ["delete_tenant", "delete_subject"])
def test_a_deletion_inside_a_kept_run_completes(journal, command):
    """An operator cleaning a kept run up (``delete_tenant`` of it, ``delete_subject`` of one
    of its people): its scrubbed rows keep their content hash, and the step removed the
    operation's own tenant, the operation and its steps with it; the command died with a
    DatabaseError (stop 53's review of the change)."""
    result = evaluate_dataset(dataset("Prefers trains.", "Likes green tea."), keep=True)
    tenant = Tenant.objects.get(slug=result["tenant_prefix"] + "t")
    names = [tenant.slug] if command == "delete_tenant" else [tenant.slug, "u"]
    call_command(command, *names, "--yes", "--run", stdout=StringIO(), stderr=StringIO())
    operation = DeletionOperation.objects.get(tenant_id=tenant.pk)
    assert operation.status == DeletionOperation.State.COMPLETED
    assert Tenant.objects.filter(pk=tenant.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_a_run_reached_between_two_cases_says_so(owner, owner_principal, memories, journal):
    """A deletion that removes a run while its cases run: the next case's agent and trace
    named the removed tenant, and the run died with a database error (a foreign key, a
    deadlock against the removal) instead of the sentence (stop 53's review)."""
    target = memories[0]

    def run():
        with platform_scope("eval_retrieval"):  # as the command runs (platform_command)
            return evaluate_dataset(dataset(target.content, "Likes tea.", cases=150))

    evaluating = in_thread(run, name="eval")
    deadline = time.monotonic() + 120
    while evaluating.is_alive() and time.monotonic() < deadline:
        with platform_scope("test"):  # the run's cases have begun: its first trace is there
            if RetrievalTrace.objects.filter(tenant__evaluation_run=True).exists():
                break
        time.sleep(0.02)
    assert evaluating.is_alive(), "the run ended before the deletion: give it more cases"
    with tenant_scope(owner.tenant_id):
        operation = deletion_request(principal=owner_principal, memory_id=target.id)
        assert tasks.deletion_run_task.apply(args=[str(operation.id)]).result == "completed"
    evaluating.wait(300)
    assert isinstance(evaluating.error, DatasetError), repr(evaluating.error)
    assert "run it again" in str(evaluating.error)


def deleted_meanwhile(owner, owner_principal, target):
    """Return ``wrap``: ``wrap(work)`` does ``work``, then deletes ``target`` in a thread of
    its own (its own connection) and waits for the deletion to complete, while the caller's
    transaction (a run's load) is still open."""

    def delete():
        with tenant_scope(owner.tenant_id):
            operation = deletion_request(principal=owner_principal, memory_id=target.id)
            return tasks.deletion_run_task.apply(args=[str(operation.id)]).result

    def wrap(work):
        def then_delete(*args, **kwargs):
            done = work(*args, **kwargs)
            assert in_thread(delete, name="deletion").outcome(120) == "completed"
            return done

        return then_delete

    return wrap


@pytest.mark.django_db(transaction=True)
def test_a_deletion_completed_while_a_kept_run_loads_leaves_no_copy(
    owner, owner_principal, memories, journal, monkeypatch
):
    """Stop 59's audit of evaluation found that a deletion completing while a kept run was
    still loading left the deleted words in that run: its evaluation step saw none of the
    rows of the load's open transaction, verified and completed, the load then committed,
    and ``--keep`` kept a tenant holding the words under a completed operation, which
    nothing revisits. Once its load commits, the run now removes its tenants holding words
    of a deletion not completed before the load began, and fails with the sentence of a run
    a deletion reached."""
    target = memories[0]
    wrap = deleted_meanwhile(owner, owner_principal, target)
    monkeypatch.setattr(dataset_module, "embed_memories", wrap(dataset_module.embed_memories))
    data = dataset(target.content, "Prefers trains.")
    with platform_scope("eval_retrieval"), pytest.raises(DatasetError, match="run it again"):
        evaluate_dataset(data, keep=True, prefix="eval-loading-")
    with platform_scope("test"):
        operation = DeletionOperation.objects.get(tenant_id=owner.tenant_id)
        assert operation.status == DeletionOperation.State.COMPLETED
        assert run_tenants("eval-loading-") == []
        assert not Memory.objects.filter(content=target.content).exclude(pk=target.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_a_deletion_completed_while_a_kept_locomo_run_loads_leaves_no_copy(
    owner, owner_principal, journal, monkeypatch
):
    """Stop 59's audit of evaluation found the same of ``eval_locomo``'s load (one
    transaction, its turns embedded inside it): a deletion of a turn's words completing
    meanwhile left them in the kept run. The run is removed now, and says so."""
    target = MemoryFactory(subject=owner, content="[1 May 2023] A: I like tea.")
    wrap = deleted_meanwhile(owner, owner_principal, target)
    monkeypatch.setattr(locomo, "_embedding_texts", wrap(locomo._embedding_texts))
    turn = {"speaker": "A", "dia_id": "D1:1", "text": "I like tea."}
    question = {"question": "What does A like?", "evidence": ["D1:1"], "category": 1}
    conversation = {"session_1_date_time": "1 May 2023", "session_1": [turn]}
    data = [{"sample_id": "s1", "conversation": conversation, "qa": [question]}]
    with platform_scope("eval_locomo"), pytest.raises(DatasetError, match="run it again"):
        locomo.evaluate_locomo(data, ks=[1], keep=True)
    with platform_scope("test"):
        assert not Tenant.objects.filter(evaluation_run=True).exists()
        assert not Memory.objects.filter(content=target.content).exclude(pk=target.pk).exists()
