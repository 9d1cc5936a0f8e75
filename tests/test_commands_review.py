"""The operator's commands, run as docs/operations.md and the README tell a new operator to:
bad input and conflicting flags end in a CommandError that says what is wrong (never a
traceback, never a silent widening or a success that did nothing)."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from memory_core.management.commands._options import strict_json
from memory_core.models import Agent, DeletionOperation, Memory, Subject, Tenant
from tests.factories import AgentFactory, MemoryFactory

pytestmark = pytest.mark.django_db


def quiet() -> dict:
    return {"stdout": StringIO(), "stderr": StringIO()}


@pytest.mark.parametrize("key", ["", "   "])
def test_delete_subject_refuses_an_empty_key_instead_of_deleting_the_whole_subject(subject, key):
    """``--key "$KEY"`` with KEY unset deleted every memory of the subject: the empty key
    was taken for "no --key" (the API never widens a misspelt field so)."""
    kept = [MemoryFactory(subject=subject), MemoryFactory(subject=subject)]
    with pytest.raises(CommandError, match="--key is empty"):
        call_command(
            "delete_subject", subject.tenant.slug, subject.external_id, "--key", key,
            "--yes", "--run", **quiet(),
        )  # fmt: skip
    assert Memory.objects.filter(pk__in=[m.pk for m in kept], status="active").count() == 2
    assert not DeletionOperation.objects.exists()


@pytest.mark.parametrize("command", ["delete_subject", "delete_tenant"])
def test_the_deletion_commands_refuse_run_with_wait(subject, command):
    """``--run --wait 60`` ran the steps and silently dropped ``--wait``."""
    MemoryFactory(subject=subject)
    arguments = [subject.tenant.slug]
    if command == "delete_subject":
        arguments.append(subject.external_id)
    with pytest.raises(CommandError, match="--run and --wait exclude each other"):
        call_command(command, *arguments, "--yes", "--run", "--wait", "60", **quiet())
    assert not DeletionOperation.objects.exists()
    assert Tenant.objects.get(pk=subject.tenant_id).deleted_at is None


def test_replay_refuses_a_journal_file_and_a_ledger_database_together(tmp_path):
    """Both given, the file was ignored without a word."""
    journal = tmp_path / "journal.jsonl"
    journal.write_text("")
    with pytest.raises(CommandError, match="not allowed with argument"):
        call_command(
            "replay_deletions", "--since", "2026-01-01T00:00:00+00:00", "--ledger", str(journal),
            "--ledger-database", "memledger", **quiet(),
        )  # fmt: skip


def test_replay_refuses_a_file_of_which_no_line_is_a_journal_entry(tmp_path):
    """The dump given as --ledger (or any other file) replayed nothing and exited 0: the
    restored database kept every deletion since the backup undone."""
    wrong = tmp_path / "backup.dump"
    wrong.write_bytes(b'PGDMP\x01\x0e\x00\x04\x08\x01\x01\nnot a journal\n{"a": 1}\n')
    with pytest.raises(CommandError, match="None of the 3 line"):
        call_command(
            "replay_deletions", "--since", "2026-01-01T00:00:00+00:00", "--ledger", str(wrong),
            **quiet(),
        )  # fmt: skip
    empty = tmp_path / "empty.jsonl"  # a journal nothing was written to yet: nothing to do
    empty.write_text("")
    out = StringIO()
    call_command(
        "replay_deletions", "--since", "2026-01-01T00:00:00+00:00", "--ledger", str(empty),
        stdout=out, stderr=StringIO(),
    )  # fmt: skip
    assert json.loads(out.getvalue())["replayed"] == 0


def test_replay_refuses_a_since_in_the_future(tmp_path):
    """A mistyped year replayed nothing and succeeded."""
    journal = tmp_path / "journal.jsonl"
    journal.write_text("")
    later = (timezone.now() + timezone.timedelta(days=365)).isoformat()
    with pytest.raises(CommandError, match="is in the future"):
        call_command("replay_deletions", "--since", later, "--ledger", str(journal), **quiet())


# A byte that is not UTF-8 on the command line (an operator's Latin-1 terminal typing "café"):
# Python hands it to the command as a lone surrogate (surrogateescape).
UNDECODABLE = "caf\udce9"


@pytest.mark.parametrize(
    ("command", "arguments", "named"),
    [
        ("delete_subject", ["{slug}", UNDECODABLE], "user"),
        ("delete_subject", [UNDECODABLE, "{user}"], "slug"),
        ("delete_subject", ["{slug}", "{user}", "--key", UNDECODABLE, "--yes"], "--key"),
        ("delete_tenant", [UNDECODABLE, "--yes"], "slug"),
        ("issue_subject_token", ["--tenant", UNDECODABLE, "--agent", "{agent}", "--user", "u"],
         "--tenant"),
        ("issue_subject_token", ["--tenant", "{slug}", "--agent", UNDECODABLE, "--user", "u"],
         "--agent"),
        ("issue_subject_token", ["--tenant", "{slug}", "--agent", "{agent}", "--user", "u\x00"],
         "--user"),
        ("create_agent_key", ["--tenant", "acme-review", "--agent", UNDECODABLE], "--agent"),
        ("create_agent_key", ["--tenant", "acme-review", "--agent", "bot", "--name", UNDECODABLE],
         "--name"),
        ("replay_deletions", ["--since", "2026-01-01T00:00:00+00:00",
                              "--ledger-database", UNDECODABLE], "--ledger-database"),
    ],
)  # fmt: skip
def test_the_commands_refuse_an_undecodable_byte_in_an_argument(subject, agent, command,
                                                                arguments, named):  # fmt: skip
    """Such an argument (a lone surrogate once Python decoded argv) reached PostgreSQL, or
    psycopg's connect, unchecked: a ``UnicodeEncodeError: 'utf-8' codec can't encode
    character '\\udce9'`` traceback. Only issue_subject_token's --user was checked. Now every
    text argument is (``_options.check_texts``), named, before any query: nothing made."""
    values = {"slug": subject.tenant.slug, "user": subject.external_id, "agent": agent.name}
    arguments = [argument.format(**values) for argument in arguments]
    with pytest.raises(CommandError) as refused:
        call_command(command, *arguments, **quiet())
    message = str(refused.value)
    assert message.startswith(f"{named} ") and "undecodable bytes" in message, message
    assert "\n" not in message and message.isascii()  # one line any terminal can print
    assert not Tenant.objects.filter(slug="acme-review").exists()
    assert not Subject.objects.exclude(pk=subject.pk).exists()
    assert not DeletionOperation.objects.exists()
    assert Tenant.objects.get(pk=subject.tenant_id).deleted_at is None


def tiny_dataset(**case) -> dict:
    return {
        "dataset": "tiny",
        "memories": [
            {"id": "m1", "tenant": "t", "subject": "u", "memory_type": "user_preference",
             "scope": "global", "content": "Prefers tea over coffee.",
             "authority": "explicit_user"},
        ],
        "cases": [
            {"case_id": "c1", "request": "What should I drink, tea or coffee?",
             "intent": "load_preferences", "context": {"tenant_id": "t", "user_id": "u"},
             "required_memory_ids": ["m1"], **case},
        ],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"required_memory_ids": ["m-typo"]},
            "cases\\[0\\]: required_memory_ids names 'm-typo', which no memory of the file has",
        ),
        (
            {"forbidden_memory_ids": ["gone"]},
            "forbidden_memory_ids names 'gone'",
        ),
        ({"ranked_before": [["m1", "m9"]]}, "ranked_before names 'm9'"),
        ({"max_items": "lots"}, "max_items must be a whole number, not 'lots'"),
        ({"max_prompt_tokens": 0}, "max_prompt_tokens must be at least 16, not 0"),
        # The empty package costs 11 tokens: a case of 10 could never pass, and was scored
        # the system's failure (stop 55's audit of retrieval).
        ({"max_prompt_tokens": 10}, "max_prompt_tokens must be at least 16, not 10"),
        ({"max_items": 0}, "max_items must be at least 1, not 0"),
        # A TypeError traceback while scoring, after the run had loaded everything.
        ({"tags": 5}, r"cases\[0\]: tags must be a list of strings, not 5"),
        ({"tags": [["x"]]}, r"cases\[0\]: tags must be a list of strings, not \[\['x'\]\]"),
        ({"tags": "stale"}, "tags must be a list of strings, not 'stale'"),
        (
            {"expect_clarification_key": ["k"]},
            r"cases\[0\]: expect_clarification_key must be a memory_key \(a string\), not",
        ),
        ({"expect_clarification_key": 5}, "expect_clarification_key must be a memory_key"),
    ],
)
def test_eval_retrieval_names_a_case_it_cannot_score(tmp_path, change, message):
    """A case's id no memory has was scored as a miss (or a forbidden id never selected, a
    pass), and a non-integer ``max_items`` ended in a ValueError traceback."""
    path = tmp_path / "data.json"
    path.write_text(json.dumps(tiny_dataset(**change)))
    with pytest.raises(CommandError, match=message):
        call_command("eval_retrieval", "--dataset", str(path), **quiet())
    assert not Tenant.objects.filter(slug__startswith="eval-").exists()


def test_eval_retrieval_refuses_a_dataset_without_cases(tmp_path):
    """No case at all printed a report of nothing, exit status 0."""
    path = tmp_path / "data.json"
    path.write_text(json.dumps({**tiny_dataset(), "cases": []}))
    with pytest.raises(CommandError, match="'cases' is empty"):
        call_command("eval_retrieval", "--dataset", str(path), **quiet())


def test_eval_retrieval_refuses_a_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "data.json"
    path.write_bytes(b"\xff\xfe{}")
    with pytest.raises(CommandError, match="is not UTF-8 text"):
        call_command("eval_retrieval", "--dataset", str(path), **quiet())


@pytest.mark.parametrize(
    ("command", "arguments"),
    [
        ("eval_retrieval", ["--dataset", "{data}"]),
        ("eval_locomo", ["--data", "{data}"]),
        ("admission_report", []),
        ("leak_hunt", ["--retrievals", "1"]),
        ("rls_cost", ["--tenants", "1", "--memories", "1", "--queries", "1"]),
        ("fuzz_api", ["--requests", "1"]),
        ("fuzz_portal", ["--requests", "1"]),
        ("bench_deletion", ["--operations", "1"]),
        ("bench_ingest", []),
        ("bench_retrieval", ["--memories", "100", "--tenants", "1"]),
    ],
)
def test_a_json_output_in_a_missing_folder_is_refused_before_the_run(tmp_path, command, arguments):
    """The run went to its end and then died on the write with a FileNotFoundError
    traceback, the result lost (the evaluations first; leak_hunt, rls_cost, the fuzzers and
    the benchmarks until they shared check_output_path)."""
    data = tmp_path / "data.json"
    data.write_text(json.dumps(tiny_dataset() if command == "eval_retrieval" else []))
    target = tmp_path / "missing" / "out.json"
    arguments = [argument.format(data=data) for argument in arguments]
    with pytest.raises(CommandError, match="the folder .* does not exist"):
        call_command(command, *arguments, "--json", str(target), **quiet())
    assert not Tenant.objects.filter(slug__startswith="eval-").exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--limit", "-1"], "--limit must be at least 1, not -1"),
        (["--context-turns", "-3"], "--context-turns must be 0 or more, not -3"),
        (["--k", "a,b"], "--k needs positive integers"),
    ],
)
def test_eval_locomo_refuses_counts_that_mean_nothing(tmp_path, arguments, message):
    """``--limit -1`` asked nothing and ``--context-turns -3`` ran as given, both exit 0."""
    data = tmp_path / "locomo.json"
    data.write_text("[]")
    with pytest.raises(CommandError, match=message):
        call_command("eval_locomo", "--data", str(data), *arguments, **quiet())


@pytest.mark.parametrize("k", ["99999999999999999999", "5,101"])
def test_eval_locomo_refuses_a_k_beyond_the_retrieval_apis_max_items(tmp_path, k):
    """The largest k becomes the retrieval budget's max_items: ``--k 99999999999999999999``
    passed the check (positive integers), the turns were loaded and embedded, then the
    full-text baseline's SQL died in ``DataError: bigint out of range``. It is bounded as the
    API bounds max_items (100), before the run."""
    path = locomo_file(tmp_path, {
        "session_1_date_time": "1 May 2023",
        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "I like tea."}],
    })  # fmt: skip
    with pytest.raises(CommandError, match=r"--k must be at most 100 \(the retrieval API's"):
        call_command("eval_locomo", "--data", str(path), "--k", k, **quiet())
    assert not Tenant.objects.filter(slug__startswith="eval-").exists()
    assert not Memory.objects.exists()


def test_admission_report_refuses_an_empty_corpus_and_takes_any_split_name(tmp_path):
    """An empty corpus printed 0.00 % for every rate, exit 0; a split that is a number in
    the file ended in a TypeError traceback when another split was asked for."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(CommandError, match="holds no entry"):
        call_command("admission_report", "--corpus", str(empty), **quiet())
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"label": "benign", "content": "I like tea.", "split": 7}))
    with pytest.raises(CommandError, match="No entry of split 'dev'.* its splits: 7"):
        call_command("admission_report", "--corpus", str(corpus), "--split", "dev", **quiet())
    with pytest.raises(CommandError, match="No corpus file at"):
        call_command("admission_report", "--corpus", str(tmp_path / "nope.jsonl"), **quiet())


def test_issue_subject_token_refuses_what_the_api_refuses(tenant):
    """The command signed tokens for an empty user, for a deactivated agent and for a
    deleted tenant's agent: tokens no request could ever use."""
    agent = AgentFactory(tenant=tenant, name="bot")
    base = ["--tenant", tenant.slug, "--agent", "bot"]
    with pytest.raises(CommandError, match="--user must not be empty"):
        call_command("issue_subject_token", *base, "--user", "  ", **quiet())
    with pytest.raises(CommandError, match="at most 200 characters"):
        call_command("issue_subject_token", *base, "--user", "x" * 201, **quiet())
    # It creates the subject now (stop 48): what the API's id refuses is refused, nothing made.
    with pytest.raises(CommandError, match="--user must not be empty"):
        call_command("issue_subject_token", *base, "--user", "\u200b\u200b", **quiet())
    with pytest.raises(CommandError, match="without NUL characters or undecodable bytes"):
        call_command("issue_subject_token", *base, "--user", "bob\udcff", **quiet())
    assert not Subject.objects.filter(tenant=tenant).exists()
    Agent.objects.filter(pk=agent.pk).update(is_active=False)
    with pytest.raises(CommandError, match="is deactivated"):
        call_command("issue_subject_token", *base, "--user", "user-1", **quiet())
    Agent.objects.filter(pk=agent.pk).update(is_active=True)
    out = StringIO()
    call_command("issue_subject_token", *base, "--user", "user-1", stdout=out)
    assert out.getvalue().strip()
    Tenant.objects.filter(pk=tenant.pk).update(deleted_at=timezone.now())
    with pytest.raises(CommandError, match="was deleted"):
        call_command("issue_subject_token", *base, "--user", "user-1", **quiet())


def test_admission_report_names_a_corpus_line_that_is_not_an_object(tmp_path):
    """A line that is JSON but not an object (``[1]``) ended in an AttributeError traceback."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"label": "benign", "content": "I like tea."}) + "\n[1]\n")
    with pytest.raises(CommandError, match=r"corpus.jsonl:2: an entry is a JSON object"):
        call_command("admission_report", "--corpus", str(corpus), **quiet())


DEEP = "[" * 100_000 + "]" * 100_000  # beyond Python's parser: RecursionError, not bad JSON


def test_import_names_a_line_nested_too_deeply_to_read(tenant, tmp_path):
    """The import died in a RecursionError traceback."""
    path = tmp_path / "deep.jsonl"
    path.write_text(DEEP + "\n")
    stderr = StringIO()
    with pytest.raises(CommandError, match="1 error"):
        call_command("import_memories", str(path), "--dry-run", stdout=StringIO(), stderr=stderr)
    assert "line 1: invalid JSON (arrays or objects nested too deeply to read)" in (
        stderr.getvalue()
    )


def test_admission_report_names_a_corpus_line_nested_too_deeply_to_read(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps({"label": "benign", "content": "I like tea."}) + "\n" + DEEP)
    with pytest.raises(CommandError, match=r"deep.jsonl:2: arrays or objects nested too deeply"):
        call_command("admission_report", "--corpus", str(path), **quiet())


def corpus_report(tmp_path, entries: list[dict], *, ensure_ascii=True) -> tuple[str, dict]:
    """Run admission_report on ``entries`` (one JSON line each); return what it printed and
    the figures of its --json."""
    path = tmp_path / "corpus.jsonl"
    lines = [json.dumps(entry, ensure_ascii=ensure_ascii) + "\n" for entry in entries]
    path.write_text("".join(lines), encoding="utf-8")
    out, target = StringIO(), tmp_path / "out.json"
    call_command(
        "admission_report", "--corpus", str(path), "--json", str(target),
        stdout=out, stderr=StringIO(),
    )  # fmt: skip
    return out.getvalue(), json.loads(target.read_text(encoding="utf-8"))


def test_admission_report_takes_an_entry_whose_id_is_a_number(tmp_path):
    """The corpus check takes a numeric id ("a number is a name too"), but it went on as the
    candidate's source_message_id unconverted and admission died in ``TypeError: 'int'
    object is not iterable``. The id is read as its text."""
    entries = [{"id": 12, "label": "benign", "content": "User prefers tea."}]
    printed, figures = corpus_report(tmp_path, entries)
    assert "0 attacks, 1 benign" in printed
    assert figures["benign"] == 1


def test_admission_report_reads_a_line_separator_inside_a_json_string(tmp_path):
    """The corpus was split with str.splitlines, which also splits at U+2028, U+2029 and
    U+0085, characters JSON allows raw inside a string (``ensure_ascii=False`` writes them
    so): a valid corpus was refused as "Unterminated string" on line 1. It is split at
    newlines only, as import_memories reads its file."""
    entries = [
        {"label": "benign", "content": "User prefers\u2028short answers."},
        {"label": "benign", "content": "User prefers\u2029dark\x85mode."},
    ]
    printed, figures = corpus_report(tmp_path, entries, ensure_ascii=False)
    assert "0 attacks, 2 benign" in printed
    assert figures["benign"] == 2


def test_admission_report_counts_a_split_named_by_a_number_and_by_its_text_once(tmp_path):
    """``"split": 7`` and ``"split": "7"``, one split to ``--split 7``, were counted under two
    keys that both became "benign/7": the later overwrote the earlier, and by_split said 1
    entry where 2 were measured."""
    entries = [
        {"label": "benign", "content": "User prefers short answers.", "split": 7},
        {"label": "benign", "content": "User prefers dark mode.", "split": "7"},
    ]
    _, figures = corpus_report(tmp_path, entries)
    assert figures["by_split"]["benign/7"]["total"] == 2
    assert sum(counts["total"] for counts in figures["by_split"].values()) == 2


@pytest.mark.parametrize(
    ("command", "option"), [("eval_retrieval", "--dataset"), ("eval_locomo", "--data")]
)
def test_the_evaluations_name_a_file_nested_too_deeply_to_read(tmp_path, command, option):
    path = tmp_path / "deep.json"
    path.write_text(DEEP)
    with pytest.raises(CommandError, match=r"deep.json is not JSON: arrays or objects nested too"):
        call_command(command, option, str(path), **quiet())


@pytest.mark.parametrize("case_id", [["c1"], {"id": "c1"}, True])
def test_eval_retrieval_refuses_a_case_id_that_is_not_a_string_or_a_number(tmp_path, case_id):
    """A list ended in a TypeError traceback (unhashable), the run's tenants left behind."""
    path = tmp_path / "data.json"
    path.write_text(json.dumps(tiny_dataset(case_id=case_id)))
    with pytest.raises(CommandError, match=r"cases\[0\]: case_id must be a string or a number"):
        call_command("eval_retrieval", "--dataset", str(path), **quiet())
    assert not Tenant.objects.filter(slug__startswith="eval-").exists()


@pytest.mark.parametrize("case_id", [float("nan"), float("inf"), float("-inf")])
def test_eval_retrieval_refuses_a_case_id_that_is_not_finite(tmp_path, case_id):
    """Python's json reads NaN and Infinity, and validate_cases took them as case_ids: a
    failing case's id went into ``failures`` as a bare ``NaN``, and the --json file (and
    stdout) was no JSON (JSON.parse, jq and RFC 8259 refuse it). Refused, the case named."""
    path = tmp_path / "data.json"
    path.write_text(json.dumps(tiny_dataset(case_id=case_id)))  # a bare NaN: Python reads it
    target = tmp_path / "out.json"
    with pytest.raises(CommandError, match=r"cases\[0\]: case_id must be a finite number"):
        call_command("eval_retrieval", "--dataset", str(path), "--json", str(target), **quiet())
    assert not target.exists()
    assert not Tenant.objects.filter(slug__startswith="eval-").exists()


def test_the_evaluations_write_strict_json_or_nothing():
    """The belt of the case_id's check: ``json.dumps`` writes NaN as a bare ``NaN``; what the
    evaluations print and write is strict JSON, or a CommandError."""
    assert json.loads(strict_json({"a": [1.5]})) == {"a": [1.5]}
    with pytest.raises(CommandError, match="NaN or Infinity"):
        strict_json({"failures": [{"case_id": float("nan")}]})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"agent": "a" * 101}, r"memory 'm1': agent is at most 100 characters"),
        ({"agent": 5}, r"memory 'm1': agent must be a string"),
        ({"id": "m" * 201}, r"memories\[0\]: id is at most 200 characters"),
    ],
)
def test_eval_retrieval_refuses_a_memory_field_too_long_for_its_column(tmp_path, change, message):
    """The agent's name and the id (the memory's source_message_id) went to the database as
    they were: a DataError traceback."""
    data = tiny_dataset()
    data["memories"][0].update(change)
    path = tmp_path / "data.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CommandError, match=message):
        call_command("eval_retrieval", "--dataset", str(path), **quiet())
    assert not Memory.objects.exists()
    assert not Tenant.objects.filter(slug__startswith="eval-").exists()


def test_eval_retrieval_refuses_a_dataset_name_too_long_for_its_column(tmp_path):
    """The name is the memories' source_conversation_id (dataset:<name>): a DataError."""
    path = tmp_path / "data.json"
    path.write_text(json.dumps({**tiny_dataset(), "dataset": "d" * 193}))
    with pytest.raises(CommandError, match="'dataset' is at most 192 characters"):
        call_command("eval_retrieval", "--dataset", str(path), **quiet())
    assert not Memory.objects.exists()
    path.write_text(json.dumps({**tiny_dataset(), "dataset": "d" * 192}))
    call_command("eval_retrieval", "--dataset", str(path), **quiet())  # the longest fits


def locomo_file(tmp_path, conversation: dict):
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([{"sample_id": "s1", "conversation": conversation, "qa": [
        {"question": "What does A like?", "answer": "tea", "evidence": ["D1:1"], "category": 1},
    ]}]))  # fmt: skip
    return path


def test_eval_locomo_reads_a_zero_padded_session_under_its_own_key(tmp_path):
    """``session_01`` was found, then looked up again as ``session_1``: a KeyError."""
    path = locomo_file(tmp_path, {
        "session_01_date_time": "1 May 2023",
        "session_01": [{"speaker": "A", "dia_id": "D1:1", "text": "I like tea."}],
    })  # fmt: skip
    out = StringIO()
    call_command("eval_locomo", "--data", str(path), "--k", "1", stdout=out, stderr=StringIO())
    result = json.loads(out.getvalue())
    assert result["questions"] == 1 and result["loading"]["turns_stored"] == 1, result
    assert not Tenant.objects.filter(slug__startswith="eval-").exists()


def test_eval_locomo_refuses_two_keys_of_one_session(tmp_path):
    turn = {"speaker": "A", "dia_id": "D1:1", "text": "I like tea."}
    path = locomo_file(tmp_path, {"session_1": [turn], "session_01": [turn]})
    with pytest.raises(CommandError, match="'session_01' and 'session_1' are both session 1"):
        call_command("eval_locomo", "--data", str(path), **quiet())
