"""The evaluation harness's figures and the dataset format's checks (stop 50's audit, stop
55's of eval: figures against a hand count), and ``eval_locomo`` on a file with nothing to
measure."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory_core.models import Memory, Tenant

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


@pytest.mark.parametrize("value", [False, 0, [], {}], ids=["false", "zero", "list", "object"])
@pytest.mark.parametrize("field", ["consent", "status", "sensitivity", "source_type"])
def test_a_false_choice_field_is_refused_not_read_as_its_default(tmp_path, field, value):
    """Stop 59's audit of eval found that a memory's ``consent``, ``status``, ``sensitivity``
    or ``source_type`` given as ``false`` (or 0, [], {}) was read as the field's default, as
    a left-out one: ``"consent": false`` became ``explicit``, the opposite of what the file
    says. Only a field left out or null takes the default now; any other value not of the
    field's strings is refused with the entry named, as a ``version`` of 0 is."""
    data = {"dataset": "f", "memories": [mem("m2", "Prefers tea.", **{field: value})],
            "cases": [CASE]}  # fmt: skip
    _refused(tmp_path, data, rf"memory 'm2': {field} .* is not one of")


def test_a_case_naming_an_unknown_memory_with_keep_stores_nothing(tmp_path):
    """Stop 59's audit of eval found that a file refused for a case naming no memory of the
    file, refused "before anything is stored" (docs/retrieval.md), kept a ``--keep`` run's
    tenants and memories: the case ids were checked once the memories had loaded, and only a
    run not kept cleaned up. They are checked against the file's own ids before the load
    now, and nothing is stored."""
    data = {"dataset": "k", "memories": [mem("m2", "Prefers tea.")],
            "cases": [dict(CASE, required_memory_ids=["typo"])]}  # fmt: skip
    path = tmp_path / "d.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CommandError, match="names 'typo', which no memory of the file has"):
        call_command("eval_retrieval", "--dataset", str(path), "--keep", stdout=StringIO())
    assert not Memory.objects.exists()
    assert not Tenant.objects.filter(evaluation_run=True).exists()


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


HAND_MEMORIES = [
    mem("m1", "Prefers green tea in the morning.", memory_key="drink.morning"),
    mem("m2", "Prefers black coffee.", memory_key="drink.coffee", status="revoked"),
    mem("m3", "Prefers herbal tea at night.", memory_key="drink.night", expires_in_days=-1),
    mem("m4", "Likes oolong tea.", memory_key="drink.oolong", status="pending_approval"),
    mem("m5", "Prefers tea too.", subject="v"),
    mem("m6", "Prefers tea as well.", tenant="t2"),
    mem("m7", "Prefers mint tea.", memory_key="drink.mint", status="deleted"),
]
HAND_CASES = [
    {"case_id": "c1", "request": "Which tea do I like?", "intent": "load_preferences",
     "context": {"tenant_id": "t", "user_id": "u", "agent_id": "a"},
     "required_memory_ids": ["m1"], "acceptable_memory_ids": ["m4"],
     "forbidden_memory_ids": ["m2", "m5", "m6", "m7"], "ranked_before": [["m1", "m5"]],
     "tags": ["stale", "x"]},
    {"case_id": "c2", "request": "Which tea do I like?", "intent": "load_preferences",
     "context": {"tenant_id": "t", "user_id": "v", "agent_id": "a"},
     "required_memory_ids": ["m5"], "tags": ["x"]},
    {"case_id": "c3", "request": "Which tea do I like?",
     "context": {"tenant_id": "nobody", "user_id": "u", "agent_id": "a"},
     "expect_empty": True, "tags": ["empty"]},
]  # fmt: skip


def test_baseline_and_no_memory_figures_match_a_hand_count(tmp_path):
    """The baseline (plain cosine top-k, k = 8, over the case's tenant and subject, no gate)
    and no_memory are deterministic on a file this small: the baseline selects every row of
    the case's tenant and subject that has a vector (a ``deleted`` row has none). Their
    figures, worked out by hand (stop 55's audit of eval), held; this keeps them held."""
    result = run(tmp_path, {"dataset": "hand", "memories": HAND_MEMORIES, "cases": HAND_CASES})
    base, none = result["baseline_vector_topk"], result["no_memory"]
    # Baseline: c1 selects m1, m2, m3, m4 (m7 has no vector); c2 m5; c3 nothing.
    assert base["precision_at_k"] == 0.6  # m1, m4, m5 of 5
    assert base["stale_memory_rate"] == 0.4  # m2 revoked, m3 expired
    assert base["useful_recall"] == 1.0
    assert base["leakage_rate"] == 0.0
    assert base["empty_retrieval_accuracy"] == 1.0
    assert base["ordering_accuracy"] == 1.0
    assert base["cases_passed"] == 2  # c1 selected the forbidden m2
    assert base["by_tag"] == {"empty": {"cases": 1, "passed": 1},
                              "stale": {"cases": 1, "passed": 0},
                              "x": {"cases": 2, "passed": 1}}  # fmt: skip
    assert none["precision_at_k"] == 0.0 and none["useful_recall"] == 0.0
    assert none["ordering_accuracy"] == 0.0 and none["empty_retrieval_accuracy"] == 1.0
    assert none["cases_passed"] == 1 and none["mean_prompt_tokens"] == 0.0


@pytest.mark.parametrize(
    ("required", "pairs"),
    [(["m1", "m1", "m2"], []), (["m1"], [["m1", "m2"], ["m1", "m2"], ["m2", "m1"]])],
    ids=["required", "ranked_before"],
)
def test_a_memory_named_twice_in_a_case_counts_once(tmp_path, required, pairs):
    """FORMAT.md: useful_recall = required selected / required, over memories. The baseline
    selects m1 (the only row with a vector) and never m2 (deleted: none), so its recall is 1
    of 2 required memories, 0.5, and its ordering 1 of 2 distinct pairs. With m1 listed twice
    the harness counted 2 of 3 (0.6667); with a pair listed twice, 2 of 3 pairs. Each now
    counts once, as a tag listed twice is one case (stop 55's audit of eval)."""
    memories = [
        mem("m1", "Prefers green tea in the morning.", memory_key="drink.morning"),
        mem("m2", "Prefers mint tea.", memory_key="drink.mint", status="deleted"),
    ]
    case = {"case_id": "c1", "request": "Which tea do I like?", "intent": "load_preferences",
            "context": {"tenant_id": "t", "user_id": "u", "agent_id": "a"},
            "required_memory_ids": required, "ranked_before": pairs}  # fmt: skip
    result = run(tmp_path, {"dataset": "dup", "memories": memories, "cases": [case]})
    base = result["baseline_vector_topk"]
    assert base["useful_recall"] == (0.5 if "m2" in required else 1.0)
    assert base["ordering_accuracy"] == (0.5 if pairs else 1.0)


@pytest.mark.parametrize(
    "field", ["required_memory_ids", "acceptable_memory_ids", "forbidden_memory_ids"]
)
def test_an_id_list_given_as_null_is_read_as_left_out(tmp_path, field):
    """Stop 61's audit of operations: a case's id lists are optional (FORMAT.md), and a null
    one is read as left out, as every other optional field is; the file was refused whole
    ("'required_memory_ids' must be a list"). A value of another type is still refused."""
    case = {**CASE, field: None}
    data = {"dataset": "nulls", "memories": [mem("m2", "Prefers black tea.")], "cases": [case]}
    assert run(tmp_path, data)["cases"] == 1
    case[field] = "m2"
    _refused(tmp_path, data, rf"cases\[0\]: '{field}' must be a list, not a string")


def test_a_dataset_saved_with_a_byte_order_mark_is_read(tmp_path):
    """Stop 61's audit of operations: an editor saving "UTF-8 with BOM" puts U+FEFF first,
    which RFC 8259 lets a reader ignore; the file was refused as no JSON."""
    data = {"dataset": "bom", "memories": [mem("m2", "Prefers black tea.")], "cases": [CASE]}
    path = tmp_path / "d.json"
    path.write_text("\ufeff" + json.dumps(data), encoding="utf-8")
    out = tmp_path / "out.json"
    call_command("eval_retrieval", "--dataset", str(path), "--json", str(out), stdout=StringIO())
    assert json.loads(out.read_text())["cases"] == 1


def test_a_ranked_before_pair_of_one_memory_is_refused(tmp_path):
    """stop 57's audit of commands found that ``"ranked_before": [["m1", "m1"]]`` passed
    check_case (m1 selected, not after itself), so the case passed and cases_passed was 1,
    while score() counted the pair wrong (index(a) < index(a) is false): ordering_accuracy
    0.0 in the same report. validate_cases now refuses the file, naming the case: a pair
    orders two memories."""
    case = dict(CASE, required_memory_ids=["m1"], ranked_before=[["m1", "m1"]])
    data = {"dataset": "pair", "memories": [mem("m1", "Prefers tea.")], "cases": [case]}
    _refused(tmp_path, data, r"cases\[0\]: ranked_before pair \['m1', 'm1'\] names one memory")


@pytest.mark.parametrize(
    ("field", "value"),
    [("user_id", "   "), ("user_id", "\u3000\t"), ("request", "   ")],
    ids=["user-spaces", "user-ideographic-space", "request-spaces"],
)
def test_a_blank_user_or_request_is_named_not_scored(tmp_path, field, value):
    """validate_cases refuses a case without ``request`` or ``context.user_id`` ("" or
    null), and the loader refuses a memory whose ``subject`` is blank once trimmed ("must not
    be blank"); the retrieval API refuses both as ``blank``. But a case's user_id of spaces
    passed the check (made before it is trimmed, as a request reads ids), became "" and was
    scored: a miss of every required memory for a user no memory can have, charged to the
    system, instead of the case named. A request of spaces likewise ran an empty query (stop
    55's audit of eval)."""
    case = json.loads(json.dumps(CASE))
    if field == "request":
        case["request"] = value
    else:
        case["context"][field] = value
    data = {"dataset": "blank", "memories": [mem("m2", "Prefers tea.")], "cases": [case]}
    _refused(tmp_path, data, rf"cases\[0\]: (context\.)?{field} must not be blank")


def test_a_winner_on_a_key_written_untrimmed_is_named_in_the_failure(tmp_path):
    """The clarification key is matched as the loader stores keys (trimmed, in NFC: stop
    52's audit), but ``Run.keys``, which ``check_case`` reads to find a winner selected for
    that key, held the file's keys as written: a memory whose ``memory_key`` is written
    " deploy.region" (stored "deploy.region") and selected as the winner was left out of the
    failure's reason ("a winner for deploy.region was selected"), which said only that no
    clarification came back (stop 55's audit of eval)."""
    memories = [mem("a", "Deploy to the eu-west-1 region.", memory_type="project_constraint",
                    memory_key=" deploy.region", scope="project:p")]  # fmt: skip
    case = {"case_id": "k", "request": "Which region do we deploy to?",
            "intent": "apply_project_rules",
            "context": {"tenant_id": "t", "user_id": "u", "agent_id": "a", "project_id": "p"},
            "expect_clarification_key": "deploy.region"}  # fmt: skip
    result = run(tmp_path, {"dataset": "keys", "memories": memories, "cases": [case]})
    (failure,) = result["failures"]
    assert "a winner for deploy.region was selected: ['a']" in failure["why"]
