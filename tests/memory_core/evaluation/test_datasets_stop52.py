"""The evaluation harness, its datasets and its commands on what stop 52's audit found: a
traceback or a figure that blamed the pipeline for the dataset's own mistake. Each test failed
on the code before."""

import copy
import json
import unicodedata
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory_core.evaluation.dataset import DatasetError
from memory_core.evaluation.harness import evaluate_dataset

pytestmark = pytest.mark.django_db


def drink(local_id="m1", **fields):
    return {"id": local_id, "tenant": "t", "subject": "u", "memory_type": "user_preference",
            "memory_key": "drink", "scope": "global", "content": "Prefers tea.",
            "authority": "explicit_user", **fields}  # fmt: skip


CASE = {"case_id": "c1", "request": "What should I drink, tea or coffee?",
        "intent": "load_preferences", "context": {"tenant_id": "t", "user_id": "u"},
        "required_memory_ids": ["m1"]}  # fmt: skip


def test_eval_locomo_with_a_conversation_without_turns_is_no_traceback(tmp_path):
    """A conversation with questions (with evidence) but no turns: the dense baseline does
    ``plain @ q_vector`` on an empty (0,) array and dies in a numpy ValueError after the load."""
    data = [
        {"sample_id": "a", "conversation": {"session_1_date_time": "1 May 2023", "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat named Tom."}]},
         "qa": [{"question": "What pet did Ann adopt?", "evidence": ["D1:1"], "category": 4}]},
        {"sample_id": "b", "conversation": {},
         "qa": [{"question": "What pet did Bo adopt?", "evidence": ["D1:1"], "category": 4}]},
    ]  # fmt: skip
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data))
    out = StringIO()
    try:
        call_command("eval_locomo", "--data", str(path), "--k", "1", stdout=out, stderr=StringIO())
    except CommandError as exc:  # refused, naming the conversation: fine too
        assert "b" in str(exc)
        return
    result = json.loads(out.getvalue())
    assert result["questions"] == 2
    assert result["system"]["recall@1"]["4"] <= 0.5


@pytest.mark.parametrize("command", ["eval_retrieval", "eval_locomo"])
def test_a_number_past_pythons_digit_limit_is_named_as_bad_json(tmp_path, command):
    """json_loads promises any unreadable JSON is a JSONDecodeError the command names; an
    integer of more than 4,300 digits raises a plain ValueError and the command tracebacks."""
    path = tmp_path / "big.json"
    path.write_text('{"memories": [], "cases": [{"case_id": ' + "1" * 5000 + "}]}")
    option = "--dataset" if command == "eval_retrieval" else "--data"
    with pytest.raises(CommandError, match="big.json"):
        call_command(command, option, str(path), stdout=StringIO(), stderr=StringIO())


def test_a_clarification_key_is_matched_as_the_loader_stores_keys():
    """The loader stores a memory_key as ids are read (trimmed, NFC: ``_id``), but the case's
    ``expect_clarification_key`` is compared as written: the same key, spelt the same way in
    the memories and the case (NFD), scores a correct clarification as a conflict error."""
    key = unicodedata.normalize("NFD", "deploy.région")
    memories = [
        drink("a", memory_type="previous_decision", memory_key=key, scope="project:lunest",
              content="Deploy the Lunest API to eu-west-1.", authority="model_inference",
              confidence=0.7, age_days=8),
        drink("b", memory_type="previous_decision", memory_key=key, scope="project:lunest",
              content="Deploy the Lunest API to us-east-1.", authority="model_inference",
              confidence=0.72, age_days=6),
    ]  # fmt: skip
    case = {"case_id": "c", "request": "Deploy the Lunest API to production.",
            "intent": "apply_project_rules", "tags": ["conflict"],
            "context": {"tenant_id": "t", "user_id": "u", "agent_id": "coder",
                        "project_id": "lunest"},
            "forbidden_memory_ids": ["a", "b"], "expect_clarification_key": key}  # fmt: skip
    result = evaluate_dataset({"dataset": "nfd", "memories": memories, "cases": [case]})
    # The same file with the key in NFC passes (checked): the pipeline does clarify.
    assert result["failures"] == []
    assert result["system"]["conflict_error_rate"] == 0.0


@pytest.mark.parametrize("value", [5, 1.5, True])
def test_a_ranked_before_that_is_not_a_list_is_named(value):
    """validate_cases iterates ``case.get("ranked_before", []) or []``: a number or true is a
    TypeError traceback ('int' object is not iterable), not a DatasetError naming the case."""
    data = {"memories": [drink()], "cases": [dict(CASE, ranked_before=value)]}
    with pytest.raises(DatasetError, match=r"cases\[0\]"):
        evaluate_dataset(data)


def test_a_user_scope_naming_another_subject_is_refused():
    """The API refuses a user scope naming another subject (400 invalid_scope, "as no
    retrieval could reach it"); the loader stores it: the system can never select the memory
    while the baseline (no scope gate) does, and the figures blame the pipeline."""
    data = {"memories": [drink(scope="user:someone-else")], "cases": [CASE]}
    with pytest.raises(DatasetError, match="m1"):
        evaluate_dataset(data)


@pytest.mark.parametrize(
    "where",
    ["memory.tenant", "case.request", "context.user_id"],
)
def test_a_field_of_the_wrong_type_is_refused_not_turned_into_text(where):
    """FORMAT.md: tenant and subject are strings, request the request text, context ids
    strings. A list or an object is str()-ed instead: the memory lands in tenant "['t']", the
    query is "{'text': ...}", the user is "['u']", and the case is scored on that."""
    data = {"memories": [drink()], "cases": [copy.deepcopy(CASE)]}
    if where == "memory.tenant":
        data["memories"][0]["tenant"] = ["t"]
    elif where == "case.request":
        data["cases"][0]["request"] = {"text": "What should I drink?"}
    else:
        data["cases"][0]["context"]["user_id"] = ["u"]
    with pytest.raises(DatasetError):
        evaluate_dataset(data)
