"""A deleted memory's usage reports leave the traces kept for the other memories they cite.

The traces step took the deleted id out of each report's ``memory_ids`` and kept the report:
one that cited only that memory stayed, with the agent's free-text reference to the answer
that used it (``{"kind": "answer", "reference": "msg-…", "memory_ids": []}``).
"""

import json
import uuid

import pytest
from django.db import connection

from memory_core.deletion.runner import deletion_run
from memory_core.models import RetrievalTrace
from memory_core.retrieval.traces import trace_without
from tests.clients import client_for
from tests.factories import AgentFactory

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


def test_a_report_left_citing_no_memory_goes_with_the_deleted_memory(tenant):
    client = client_for(AgentFactory(tenant=tenant))
    gone = _write(client, "charts.colour", "The user prefers teal for charts.", "c-1")
    kept = _write(client, "answers.length", "The user likes short answers.", "c-2")
    retrieved = client.post(
        "/api/v1/retrieve",
        {
            "query": "what colour does the user prefer for charts and how long should answers be",
            "context": {"user_id": "usage-user"},
        },
        format="json",
    )
    assert retrieved.status_code == 200, retrieved.content
    trace_id = retrieved.json()["trace_id"]
    assert {gone, kept} <= {item["id"] for item in retrieved.json()["items"]}
    usage = f"/api/v1/traces/{trace_id}/usage"
    for report in (
        {"kind": "answer", "reference": "msg-used-teal", "memory_ids": [gone]},
        {"kind": "tool_call", "reference": "render_chart#2", "memory_ids": [gone, kept]},
        {"kind": "answer", "reference": "msg-used-nothing", "memory_ids": []},
    ):
        assert client.post(usage, report, format="json").status_code == 200

    deleted = client.delete(f"/api/v1/memories/{gone}")
    assert deleted.status_code == 202, deleted.content
    assert deletion_run(operation_id=deleted.json()["operation_id"]) == "completed"

    trace = client.get(f"/api/v1/traces/{trace_id}")
    assert trace.status_code == 200  # kept: it still cites the other memory
    assert [(u["kind"], u["reference"], u["memory_ids"]) for u in trace.json()["usage"]] == [
        ("tool_call", "render_chart#2", [kept]),
        ("answer", "msg-used-nothing", []),
    ]
    stored = RetrievalTrace.objects.get(pk=trace_id)
    assert "msg-used-teal" not in json.dumps(stored.usage)
    assert stored.used_ids == [uuid.UUID(kept)]


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
