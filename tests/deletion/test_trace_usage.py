"""A deleted memory's usage reports (and the package's token count) leave the traces kept for
the other memories they cite.

The traces step took the deleted id out of each report's ``memory_ids`` and kept the report:
one that cited only that memory stayed, with the agent's free-text reference to the answer
that used it (``{"kind": "answer", "reference": "msg-…", "memory_ids": []}``).
"""

import importlib
import json
import uuid

import pytest
from django.db import connection

from memory_core.deletion.runner import deletion_run
from memory_core.models import Memory, RetrievalTrace
from memory_core.retrieval.traces import trace_without
from tests.clients import client_for
from tests.factories import AgentFactory, write_body
from tests.rls_support import run_as_a_migration

pytestmark = pytest.mark.django_db


def _write(client, key, content, conversation):
    response = client.post(
        "/api/v1/memories",
        {
            "subject": "usage-user",
            "memory_type": "user_preference",
            "memory_key": key,
            "scope": "global",
            "content": content,
            "source": {
                "type": "user_input",
                "conversation_id": conversation,
                "message_id": f"{conversation}-m",
            },
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()["memory"]["id"]


def _retrieve_both(client, gone, kept):
    """Return the answer of a retrieval whose package holds the memories ``gone`` and
    ``kept``."""
    retrieved = client.post(
        "/api/v1/retrieve",
        {
            "query": "what colour does the user prefer for charts and how long should answers be",
            "context": {"user_id": "usage-user"},
        },
        format="json",
    )
    assert retrieved.status_code == 200, retrieved.content
    assert {gone, kept} <= {item["id"] for item in retrieved.json()["items"]}
    return retrieved.json()


def _delete(client, memory_id):
    deleted = client.delete(f"/api/v1/memories/{memory_id}")
    assert deleted.status_code == 202, deleted.content
    assert deletion_run(operation_id=deleted.json()["operation_id"]) == "completed"


def test_a_report_left_citing_no_memory_goes_with_the_deleted_memory(tenant):
    client = client_for(AgentFactory(tenant=tenant))
    gone = _write(client, "charts.colour", "The user prefers teal for charts.", "c-1")
    kept = _write(client, "answers.length", "The user likes short answers.", "c-2")
    trace_id = _retrieve_both(client, gone, kept)["trace_id"]
    usage = f"/api/v1/traces/{trace_id}/usage"
    for report in (
        {"kind": "answer", "reference": "msg-used-teal", "memory_ids": [gone]},
        {"kind": "tool_call", "reference": "render_chart#2", "memory_ids": [gone, kept]},
        {"kind": "answer", "reference": "msg-used-nothing", "memory_ids": []},
    ):
        assert client.post(usage, report, format="json").status_code == 200

    _delete(client, gone)

    trace = client.get(f"/api/v1/traces/{trace_id}")
    assert trace.status_code == 200  # kept: it still cites the other memory
    assert [(u["kind"], u["reference"], u["memory_ids"]) for u in trace.json()["usage"]] == [
        ("tool_call", "render_chart#2", [kept]),
        ("answer", "msg-used-nothing", []),
    ]
    stored = RetrievalTrace.objects.get(pk=trace_id)
    assert "msg-used-teal" not in json.dumps(stored.usage)
    assert stored.used_ids == [uuid.UUID(kept)]


def test_a_deleted_memory_s_length_leaves_the_trace_s_prompt_tokens(tenant):
    """Stop 62's audit of traces found that a trace kept for its other memories after one was
    deleted still answered the package's ``prompt_tokens`` (and
    ``stages.tokens.prompt_tokens``): with the package's other items, which the agent still
    reads, the figure told the deleted memory's length to a token, the very figure a trace
    nulls for a memory the agent merely lost sight of (stop 47). The traces step now nulls
    both on every trace it scrubs, in the statement that removes the id, and the usage
    report's answer says null too."""
    client = client_for(AgentFactory(tenant=tenant))
    secret = (
        "The user prefers teal for charts, with thin gridlines, muted axis labels and no "
        "legend box around the series names."
    )
    gone = _write(client, "charts.colour", secret, "c-1")
    kept = _write(client, "answers.length", "The user likes short answers.", "c-2")
    trace_id = _retrieve_both(client, gone, kept)["trace_id"]

    _delete(client, gone)

    trace = client.get(f"/api/v1/traces/{trace_id}")
    assert trace.status_code == 200  # kept for the other memory
    answered = trace.json()
    assert gone not in answered["selected_ids"] and answered["stages"]["deleted_since"] == 1
    assert answered["prompt_tokens"] is None
    assert answered["stages"]["tokens"]["prompt_tokens"] is None
    assert answered["stages"]["tokens"]["max_tokens"] > 0  # the budget is no one's length
    stored = RetrievalTrace.objects.get(pk=trace_id)
    assert stored.prompt_tokens is None and stored.stages["tokens"]["prompt_tokens"] is None
    report = {"kind": "answer", "reference": "msg-1", "memory_ids": [kept]}
    used = client.post(f"/api/v1/traces/{trace_id}/usage", report, format="json")
    assert used.status_code == 200, used.content
    assert used.json()["prompt_tokens"] is None


def test_migration_0047_nulls_the_tokens_of_the_traces_already_scrubbed(tenant):
    """The traces a deletion scrubbed before the traces step nulled their ``prompt_tokens``
    (their document says ``deleted_since``) lose the figure too; the others keep it."""
    tokens = {"prompt_tokens": 57, "max_tokens": 800}
    scrubbed, untouched = (
        RetrievalTrace.objects.create(
            tenant_id=tenant.id, mode="task", prompt_tokens=57, stages={"tokens": tokens, **extra}
        )
        for extra in ({"deleted_since": 1}, {})
    )

    run_as_a_migration(
        importlib.import_module(
            "memory_core.migrations.0047_trace_prompt_tokens_after_deletion"
        ).NULL_SCRUBBED
    )

    scrubbed.refresh_from_db()
    untouched.refresh_from_db()
    assert scrubbed.prompt_tokens is None
    assert scrubbed.stages["tokens"] == {"prompt_tokens": None, "max_tokens": 800}
    assert (untouched.prompt_tokens, untouched.stages["tokens"]) == (57, tokens)


def test_the_sql_usage_scrub_and_trace_without_agree(tenant):
    """Deletion scrubs usage reports in SQL (migration 0033), an agent's view in Python
    (``traces.trace_without``): the same reports stay, in the same order, with the same ids."""
    a, b, c = (str(uuid.uuid4()) for _ in range(3))
    reports = [
        {"kind": "answer", "reference": "only-a", "memory_ids": [a]},
        {"kind": "tool_call", "reference": "a-and-b", "memory_ids": [a, b]},
        {"kind": "answer", "reference": "none", "memory_ids": []},
        {"kind": "answer", "reference": "only-c", "memory_ids": [c]},
        {"kind": "answer", "reference": "a-and-c", "memory_ids": [c, a]},
    ]
    trace = RetrievalTrace.objects.create(
        tenant_id=tenant.id,
        mode="task",
        cited_ids=[a, b, c],
        selected_ids=[a, b, c],
        used_ids=[a, b, c],
        usage=reports,
    )
    for gone in ([a], [b], [a, c], [a, b, c], []):
        expected = trace_without(RetrievalTrace.objects.get(pk=trace.pk), set(gone))
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT memory_core_usage_without(usage, %s::text[]) "
                "FROM memory_core_retrievaltrace WHERE id = %s",
                [gone, trace.pk],
            )
            (usage,) = cursor.fetchone()
        usage = json.loads(usage) if isinstance(usage, str) else usage
        assert usage == expected.usage, gone
        names = {report["reference"] for report in usage}
        # A report goes when every memory it cited is gone, not before.
        assert names == {
            r["reference"]
            for r in reports
            if not r["memory_ids"] or set(r["memory_ids"]) - set(gone)
        }, gone


def test_a_trace_read_after_the_deletion_request_names_nothing_of_the_deleted_memory(api_client):
    """Stop 62's audit of deletion: from a memory's deletion request until the worker's
    ``traces`` step has run (a worker or broker down, a queue behind), the agent's trace
    still answered the deleted memory's id, its ``content_hash`` and the package's
    ``prompt_tokens``, which tells its length to a token (``traces._hidden_ids`` read
    ``visible_to``, which keeps tombstones), while its events are answered scrubbed from the
    request on. A deleted memory is hidden from the request on, as one the agent lost sight
    of: its id left out and ``prompt_tokens`` null."""
    ids = []
    for key, words in (("drink.morning", "quokka tea with lemon"), ("drink.evening", "cocoa")):
        body = write_body(subject="dana", memory_key=key, content=f"Dana likes {words}.")
        ids.append(api_client.post("/api/v1/memories", body, format="json").json()["memory"]["id"])
    answer = api_client.post(
        "/api/v1/retrieve",
        {
            "query": "What does Dana like to drink, quokka tea or cocoa?",
            "context": {"user_id": "dana"},
        },
        format="json",
    ).json()
    assert set(ids) <= {item["id"] for item in answer["items"]}
    deleted = ids[0]

    response = api_client.delete(f"/api/v1/memories/{deleted}")
    assert response.status_code == 202, response.content
    assert Memory.objects.get(pk=deleted).status == "deleted"  # the worker has not run yet

    trace = api_client.get(f"/api/v1/traces/{answer['trace_id']}").json()
    assert deleted not in json.dumps(trace)
    assert Memory.objects.get(pk=deleted).content_hash not in json.dumps(trace)
    assert trace["prompt_tokens"] is None
    assert trace["stages"]["tokens"]["prompt_tokens"] is None
