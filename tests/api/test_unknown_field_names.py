"""Unknown body fields of a write were named twice, and named whole (stop 53's audit; docs/api.md,
"Every error").

docs/api.md, 400 ``invalid_input``: "The answer grows with the mistakes the schema can hold,
not with the body: it names at most 50 unknown fields (...) and counts the rest in one
``non_field_errors`` entry, ``too_many_errors`` ..."; "a field's same mistake is told once".

A write's body is checked by its serializer (``api.memories_serializers.StrictSerializer``,
which names an unknown field by ``str(name)``, whole and unescaped) and then, in
``api.memories.parse_write``, by the domain parser (``memory_core.admission.candidate
.parse_candidate``, which names it ``echoed``: cut at 60 characters and escaped). The two
names differ for any name longer than 60 characters or holding an unprintable character, so
``errors.setdefault(name, found)`` keeps both: one unknown field is told twice, counted twice
against the 50 named, and the whole name (100,000 characters here) is quoted back.
"""

import json

import pytest

from memory_core.models import AdmissionDecision, Memory
from tests.factories import write_body

pytestmark = pytest.mark.django_db


def _unknown_entries(response) -> list[tuple[str, dict]]:
    details = response.json()["error"]["details"]
    return [
        (name, entry)
        for name, entries in details.items()
        for entry in entries
        if entry["code"] == "unknown_field"
    ]


@pytest.mark.parametrize(
    "name",
    ["x" * 61, "note\nline", "tab\there"],
    ids=["61-characters", "newline", "tab"],
)
def test_one_unknown_field_of_a_write_is_named_once(api_client, name):
    """One unknown field is one ``unknown_field`` entry. A name over 60 characters or holding
    an unprintable character was named twice (until stop 53): as sent (the serializer) and
    cut or escaped (the domain parser), under two keys of ``details``."""
    response = api_client.post("/api/v1/memories", {**write_body(), name: 1}, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_input"
    named = _unknown_entries(response)
    assert len(named) == 1, [key[:70] for key, _ in named]
    assert not Memory.objects.exists()
    assert not AdmissionDecision.objects.exists()


def test_a_batch_item_unknown_field_is_named_once(api_client):
    """The same in a batch item: ``items.0.<name>`` twice, whole and cut."""
    body = {"items": [{**write_body(), "y" * 80: True}]}
    response = api_client.post("/api/v1/memories/batch", body, format="json")

    assert response.status_code == 400
    named = _unknown_entries(response)
    assert len(named) == 1, [key[:80] for key, _ in named]


def test_too_many_errors_counts_the_unknown_fields_sent(api_client):
    """30 unknown fields (long names) were sent: none is left out, and no ``too_many_errors``
    entry may claim otherwise. Each was counted twice, so the answer names 50 entries
    (25 fields, twice) and said "10 more unknown fields were sent", a wrong figure: the
    client sent 30, not 60."""
    unknown = {f"{index:02d}" + "z" * 70: index for index in range(30)}
    response = api_client.post("/api/v1/memories", {**write_body(), **unknown}, format="json")

    assert response.status_code == 400
    details = response.json()["error"]["details"]
    assert "non_field_errors" not in details, details.get("non_field_errors")
    assert len(_unknown_entries(response)) == 30


@pytest.mark.parametrize(
    "path,body",
    [
        ("/api/v1/memories", write_body()),
        ("/api/v1/memories/batch", {"items": [write_body()]}),
        ("/api/v1/tasks/close", {"user_id": "user-1", "task_id": "t-1"}),
        ("/api/v1/deletions", {"subject": "user-1"}),
        ("/api/v1/subject-tokens", {"agent": "agent-x", "subject": "user-1"}),
    ],
    ids=["write", "batch", "task-close", "deletion", "subject-token"],
)
def test_an_unknown_field_name_is_not_quoted_back_whole(api_client, path, body):
    """A 100,000-character unknown field name: the answer must not grow with the body
    (docs/api.md: "The answer grows with the mistakes the schema can hold, not with the
    body"; ``candidate.parse_candidate``'s own comment: "Named as sent, cut and escaped (a
    100,000-character name came back whole)"). The serializer quoted it whole: a
    100 kB answer to one misspelt field (50 of them fit in the 1 MiB body limit: a 5 MB
    answer)."""
    name = "n" * 100_000
    response = api_client.post(path, {**body, name: 1}, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_input"
    assert len(response.content) < 5_000, len(response.content)


def test_a_corrections_unknown_field_is_not_quoted_back_whole(api_client):
    """The correction's parser named an unknown field whole too (``correction_fields``)."""
    written = api_client.post("/api/v1/memories", write_body(), format="json")
    assert written.status_code == 201, written.json()
    url = f"/api/v1/memories/{written.json()['memory']['id']}/supersede"
    body = {"content": "User prefers short answers.", "n" * 100_000: 1}
    response = api_client.post(url, body, format="json")
    assert response.status_code == 400
    assert len(_unknown_entries(response)) == 1
    assert len(response.content) < 5_000, len(response.content)


@pytest.mark.parametrize(
    "url", ["/api/v1/memories?=1", "/api/v1/whoami?=1", "/api/v1/deletions?=1"]
)
def test_an_empty_parameter_name_is_named_not_told_as_the_whole_query(api_client, url):
    """A parameter named "" was answered under ``non_field_errors``, as if the query string
    as a whole were unknown (``error_details`` took an empty name for none: stop 55's audit
    of the API)."""
    response = api_client.get(url)
    assert response.status_code == 400, response.content
    details = response.json()["error"]["details"]
    assert list(details) == [""]
    assert [entry["code"] for entry in details[""]] == ["unknown_field"]


def test_an_empty_field_name_in_a_write_is_told_once(api_client):
    """A body's field named "" was told twice: the serializer's error under
    ``non_field_errors``, the domain parser's under "" (stop 55's audit of the API)."""
    response = api_client.post("/api/v1/memories", {**write_body(), "": 1}, format="json")
    assert response.status_code == 400, response.content
    details = response.json()["error"]["details"]
    assert [code["code"] for code in details[""]] == ["unknown_field"]
    assert "non_field_errors" not in details
    assert not Memory.objects.exists()


def test_an_unknown_field_named_non_field_errors_is_named_at_its_own_path(api_client):
    """Stop 59's audit of bad input found an unknown field named ``non_field_errors`` inside
    an object read as DRF's key for the object's own errors (``api.exceptions.error_details``):
    the write told it twice (``source`` and ``source.non_field_errors``), the retrieval said
    ``context`` itself was unknown. It should be one ``unknown_field`` at its own path."""
    body = write_body()
    body["source"]["non_field_errors"] = 1
    write = api_client.post("/api/v1/memories", body, format="json")
    assert write.status_code == 400, write.content
    retrieval = api_client.post(
        "/api/v1/retrieve",
        {"query": "q", "context": {"user_id": "user-1", "non_field_errors": 1}},
        format="json",
    )
    assert retrieval.status_code == 400, retrieval.content
    unknown = [{"code": "unknown_field", "message": "Unknown field."}]
    assert (write.json()["error"]["details"], retrieval.json()["error"]["details"]) == (
        {"source.non_field_errors": unknown},
        {"context.non_field_errors": unknown},
    )
    assert not Memory.objects.exists()


def test_an_unknown_field_named_like_a_nested_path_is_not_told_as_that_path(api_client):
    """Stop 60's audit of bad input to the API found that an unknown field whose name holds a
    dot was told under a declared field's path (``api.exceptions.error_details`` joins a path
    with dots): a top-level ``"items.0.content"`` beside a valid batch item was answered as
    ``items.0.content: unknown_field`` with "Some items are invalid; see details for each item
    index.", a retrieval's extra ``"context.user_id"`` as the required field itself unknown,
    and a write's extra ``"source.type"`` merged into a bad ``source.type``'s entry. Such a
    name should be quoted (``"items.0.content"``), so no reader takes it for a path, the
    batch's message the body's, and nothing stored; a query parameter's too."""
    unknown = [{"code": "unknown_field", "message": "Unknown field."}]
    batch = api_client.post(
        "/api/v1/memories/batch",
        {"items": [write_body(memory_key="k.dotted")], "items.0.content": "x"},
        format="json",
    )
    assert batch.status_code == 400, batch.content
    assert batch.json()["error"]["details"] == {'"items.0.content"': unknown}
    assert batch.json()["error"]["message"] == (
        "The request body is invalid; see details for each field."
    )
    retrieval = api_client.post(
        "/api/v1/retrieve",
        {"query": "q", "context": {"user_id": "user-1"}, "context.user_id": "user-1"},
        format="json",
    )
    assert retrieval.status_code == 400, retrieval.content
    assert retrieval.json()["error"]["details"] == {'"context.user_id"': unknown}
    body = write_body(memory_key="k.dotted")
    body["source"]["type"] = "bogus"
    body["source"]["a.b"] = 1
    body["source.type"] = 1
    write = api_client.post("/api/v1/memories", body, format="json")
    assert write.status_code == 400, write.content
    details = write.json()["error"]["details"]
    assert (details['"source.type"'], details['source."a.b"']) == (unknown, unknown)
    assert [entry["code"] for entry in details["source.type"]] == ["invalid_choice"]
    assert not Memory.objects.filter(memory_key="k.dotted").exists()
    listed = api_client.get("/api/v1/memories?a.b=1")  # quoted once, not ""a.b""
    assert listed.status_code == 400, listed.content
    assert list(listed.json()["error"]["details"]) == ['"a.b"']


_RETRIEVAL = {"query": "q", "context": {"user_id": "u"}}


def _quotes_counted(monkeypatch) -> list:
    """Count the names quoted for an answer (``candidate.echoed``, which every check that
    names an unknown field quotes it with)."""
    from memory_core.admission import candidate

    quoted = []
    quote = candidate.echoed
    monkeypatch.setattr(candidate, "echoed", lambda text: quoted.append(text) or quote(text))
    return quoted


def _left_out(response) -> str:
    entries = response.json()["error"]["details"].get("non_field_errors", [])
    return " ".join(e["message"] for e in entries if e["code"] == "too_many_errors")


@pytest.mark.parametrize(
    "path, body",
    [
        ("/api/v1/memories", lambda unknown: {**write_body(), **unknown}),
        (
            "/api/v1/memories",
            lambda unknown: {**write_body(), "source": {**write_body()["source"], **unknown}},
        ),
        (
            "/api/v1/memories/batch",
            lambda unknown: {"items": [{**write_body(), **unknown}, {**write_body(), **unknown}]},
        ),
        (
            "/api/v1/retrieve",
            lambda unknown: {"query": "q", "context": {"user_id": "u"}, **unknown},
        ),
    ],
    ids=["write", "source", "batch", "retrieve"],
)
def test_unknown_fields_past_the_fifty_named_are_counted_unquoted(
    api_client, monkeypatch, path, body
):
    """Stop 62 (docs/security.md, left open since stop 60's audit): a body of some 90,000
    short unknown fields took about 4 s to refuse, each name quoted and made an error by the
    serializer, the domain parser and the answer before all but 50 were counted. Each check
    quotes the first 50 of an object's unknown fields now and counts the rest
    (``candidate.unknown_told``), and the answer's count is exact: each field once, whichever
    checks saw it and however many objects held them."""
    unknown = {f"k{index:05d}": index for index in range(5_000)}
    quoted = _quotes_counted(monkeypatch)

    response = api_client.post(path, body(unknown), format="json")

    assert response.status_code == 400, response.json()
    assert len(_unknown_entries(response)) == 50
    objects = 2 if path.endswith("batch") else 1
    assert _left_out(response).startswith(f"{5_000 * objects - 50:,} more unknown fields")
    assert len(quoted) <= 3 * 50 * objects, len(quoted)  # was 2 × 5,000 an object


def test_an_import_line_of_many_unknown_fields_names_fifty(tmp_path, tenant):
    """An import's line of many unknown fields was told one error line each (stop 62): it
    names 50 and counts the rest, as the API's answer does."""
    from io import StringIO

    from django.core.management import CommandError, call_command

    record = {
        **write_body(),
        "tenant": tenant.slug,
        "authority": "explicit_user",
        **{f"k{index:04d}": index for index in range(300)},
    }
    path = tmp_path / "memories.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    stderr = StringIO()
    with pytest.raises(CommandError):
        call_command("import_memories", str(path), stdout=StringIO(), stderr=stderr)
    lines = [line for line in stderr.getvalue().splitlines() if "unknown" in line.lower()]
    assert sum("(unknown_field)" in line for line in lines) == 50, lines[:3]
    assert any("250 more unknown fields were sent" in line for line in lines), lines[-3:]
