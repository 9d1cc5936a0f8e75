"""The evaluation commands given text of another type, or text no report can hold (stop 54's
audit of the harness): refused with a sentence naming it, never read as its Python text nor
ending in a traceback."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory_core.models import Memory, Subject, Tenant

pytestmark = pytest.mark.django_db


def test_admission_report_json_with_a_lone_surrogate_is_a_command_error_not_a_traceback(tmp_path):
    """A corpus entry whose content holds a lone surrogate (JSON "\\ud800", which the parser
    reads) goes through admission and into accepted_attacks; --json then dies in
    write_text with a UnicodeEncodeError traceback after the report was printed. The entry
    is refused now, naming it."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "a1", "label": "attack", "content": "User likes tea \\ud800."}\n')
    target = tmp_path / "report.json"
    try:
        call_command(
            "admission_report", "--corpus", str(corpus), "--json", str(target),
            stdout=StringIO(), stderr=StringIO(),
        )  # fmt: skip
    except CommandError as refused:
        assert "corpus.jsonl:1: content" in str(refused), str(refused)
        return
    json.loads(target.read_text(encoding="utf-8"))  # or written as valid JSON


MEMORY = {
    "id": "m1",
    "tenant": "t",
    "subject": "u",
    "memory_type": "user_preference",
    "scope": "global",
    "content": "Prefers tea over coffee.",
    "authority": "explicit_user",
}
CASE = {
    "case_id": "c1",
    "request": "What should I drink?",
    "intent": "load_preferences",
    "context": {"tenant_id": "t", "user_id": "u"},
    "required_memory_ids": ["m1"],
}


@pytest.mark.parametrize(
    "memory, top",
    [
        ({"id": ["m2"]}, {}),
        ({"id": {"m": 2}}, {}),
        ({"id": "m2"}, {"dataset": ["name"]}),
    ],
    ids=["id_list", "id_object", "dataset_list"],
)
def test_eval_retrieval_refuses_an_id_or_name_that_is_not_a_string(tmp_path, memory, top):
    """FORMAT.md: a memory's id is a string, 'dataset' a name. load_dataset_memories reads
    them with str(): an id ["m2"] is loaded as the memory "['m2']" (its source_message_id),
    a dataset ["name"] becomes "dataset:['name']" and the report's "dataset". Stop 52 fixed
    exactly this for 'tenant' (_tenant_name); the id and the dataset name were left then."""
    other = dict(MEMORY, content="Prefers green tea.", **memory)
    data = {"dataset": "probe", "memories": [MEMORY, other], "cases": [CASE], **top}
    path = tmp_path / "d.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CommandError, match="string"):
        call_command("eval_retrieval", "--dataset", str(path), stdout=StringIO(), stderr=StringIO())


TURN = {"dia_id": "D1:1", "speaker": "A", "text": "I adopted a dog named Rex."}
LOCOMO = {
    "sample_id": "s",
    "conversation": {"session_1": [TURN]},
    "qa": [{"question": "What is the dog's name?", "evidence": ["D1:1"], "category": 4}],
}


@pytest.mark.parametrize("sample_id", [["s"], {"id": "s"}], ids=["list", "object"])
def test_eval_locomo_refuses_a_sample_id_that_is_not_a_string(tmp_path, sample_id):
    """locomo.parse reads sample_id with str(): a list or an object becomes the subject
    "['s']" / "{'id': 's'}" and the run goes on, the same mistake stop 52 fixed for
    eval_retrieval's tenant names."""
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([dict(LOCOMO, sample_id=sample_id)]))
    tenants = set(Tenant.objects.values_list("pk", flat=True))
    with pytest.raises(CommandError, match="sample_id"):
        call_command(
            "eval_locomo", "--data", str(path), "--k", "1", "--keep",
            stdout=StringIO(), stderr=StringIO(),
        )  # fmt: skip
    new = Tenant.objects.exclude(pk__in=tenants)
    assert not Subject.objects.filter(tenant__in=new).exists()
    assert not Memory.objects.filter(tenant__in=new).exists()
