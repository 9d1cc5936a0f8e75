"""The evaluation harness's figures and the dataset format's checks (stop 50's audit), and
``eval_locomo`` on a file with nothing to measure."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory_core.models import Memory

pytestmark = pytest.mark.django_db


def mem(local_id, content, **fields):
    return {"id": local_id, "tenant": "t", "subject": "u", "memory_type": "user_preference",
            "memory_key": "drink", "scope": "global", "content": content,
            "authority": "explicit_user", **fields}  # fmt: skip


CASE = {"case_id": "c1", "request": "What should I drink, tea or coffee?",
        "intent": "load_preferences", "context": {"tenant_id": "t", "user_id": "u"},
        "required_memory_ids": ["m2"]}  # fmt: skip


def _refused(tmp_path, data, match: str) -> None:
    """Run ``eval_retrieval`` on ``data``: refused with a message matching ``match``, and
    nothing stored."""
    path = tmp_path / "d.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CommandError, match=match):
        call_command("eval_retrieval", "--dataset", str(path), stdout=StringIO())
    assert not Memory.objects.exists()


def run(tmp_path, data) -> dict:
    path = tmp_path / "d.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "out.json"
    call_command("eval_retrieval", "--dataset", str(path), "--json", str(out), stdout=StringIO())
    return json.loads(out.read_text())


def test_a_memory_the_loader_stores_superseded_counts_as_stale(tmp_path):
    """FORMAT.md: stale = selected that are expired, revoked, superseded or deleted. A file
    that leaves the predecessor ``active`` has it stored ``superseded`` (docs/retrieval.md);
    the baseline (no status gate) selects that row, which must count as stale."""
    data = {"dataset": "chain", "memories": [
        mem("m1", "Prefers coffee."),
        mem("m2", "Prefers black tea.", supersedes="m1"),
    ], "cases": [CASE]}  # fmt: skip
    result = run(tmp_path, data)
    baseline = result["baseline_vector_topk"]
    # Two rows with vectors, k = 8: the baseline selects both, one of them superseded.
    assert baseline["precision_at_k"] == 0.5
    assert baseline["stale_memory_rate"] == 0.5


@pytest.mark.parametrize("version", [0, False, 0.0], ids=["zero", "false", "zero-float"])
def test_a_memory_version_outside_1_to_max_is_refused(tmp_path, version):
    """docs/retrieval.md: a memory ``version`` outside 1-2,147,483,647 is refused, the entry
    named. 0 (and false, 0.0, "") were read as 1."""
    data = {"dataset": "v", "memories": [mem("m2", "Prefers tea.", version=version)],
            "cases": [CASE]}  # fmt: skip
    _refused(tmp_path, data, r"memory 'm2': version must be a whole number")


def test_a_boolean_confidence_is_refused(tmp_path):
    """FORMAT.md: confidence is a number 0..1; a JSON boolean is another type (the loader
    refuses booleans for age_days, expires_in_days and version) but was read as 1.0."""
    data = {"dataset": "c", "memories": [mem("m2", "Prefers tea.", confidence=True)],
            "cases": [CASE]}  # fmt: skip
    _refused(tmp_path, data, r"memory 'm2': confidence")


def test_a_tag_listed_twice_counts_its_case_once(tmp_path):
    """by_tag's ``cases`` is a number of cases: one case tagged ["x", "x"] is one case."""
    data = {"dataset": "t", "memories": [mem("m2", "Prefers tea.")],
            "cases": [dict(CASE, tags=["x", "x"])]}  # fmt: skip
    result = run(tmp_path, data)
    assert result["cases"] == 1
    assert result["system"]["by_tag"]["x"] == {"cases": 1, "passed": 1}


def test_a_case_agent_longer_than_a_name_is_not_cut_into_another_agent(tmp_path):
    """A case's context.agent_id was cut to 100 characters: an agent named one character
    longer than a memory's agent became that agent and was served its private memory (the
    run scored the case as failed by the system, which did nothing wrong). Memories' agents
    over 100 characters are refused; a case's is refused now too."""
    owner = "a" * 100
    data = {"dataset": "agents", "memories": [mem("m1", "Prefers tea.", agent=owner)],
            "cases": [{"case_id": "c1", "request": "What should I drink, tea or coffee?",
                       "intent": "load_preferences",
                       "context": {"tenant_id": "t", "user_id": "u", "agent_id": owner + "b"},
                       "forbidden_memory_ids": ["m1"], "expect_empty": True}]}  # fmt: skip
    _refused(tmp_path, data, r"cases\[0\]: context.agent_id is at most 100")


@pytest.mark.parametrize(
    "data",
    [
        [],
        [{"sample_id": "s1", "conversation": {"session_1_date_time": "1 May 2023",
          "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "I like tea."}]},
          "qa": [{"question": "What?", "evidence": [], "category": 1}]}],
    ],
    ids=["no-conversations", "no-question-with-evidence"],
)  # fmt: skip
def test_a_file_with_no_question_to_ask_is_refused_not_scored_zero(tmp_path, data):
    """eval_retrieval refuses a file with no case ("there is nothing to evaluate");
    eval_locomo on a file with no question to ask printed recall 0.0 for every approach
    and category, a complete-looking report of figures nothing measured."""
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "out.json"
    with pytest.raises(CommandError, match="(?i)no question|nothing to evaluate"):
        call_command("eval_locomo", "--data", str(path), "--k", "1", "--json", str(out),
                     stdout=StringIO(), stderr=StringIO())  # fmt: skip
    assert not out.exists()
