"""``import_memories`` stores what the write API would, and answers its mistakes and races as
the API does (stop 55's audit of imports; the tenant's deletion and ``status``'s type failed
on the code before)."""

import codecs
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory_core.management.commands import import_memories as import_module
from memory_core.models import Memory, Tenant
from tests.memory_core.admission.test_commands import record


@pytest.mark.django_db
def test_a_tenant_deleted_while_its_file_is_validated_ends_the_import_with_a_command_error(
    tenant, tmp_path, monkeypatch
):
    """The tenants are read once, before the file is validated (minutes for a large file);
    a whole tenant's deletion committed meanwhile makes the database refuse the import's
    rows (trigger ``tenant_not_deleted``), and the import ended in an IntegrityError's
    traceback where the API answers 410."""
    path = tmp_path / "in.jsonl"
    path.write_text(record(tenant))
    real_store = import_module.Command._store

    def store_after_the_deletion(self, total):
        from memory_core.deletion.services import tenant_deletion_request

        tenant_deletion_request(tenant_id=tenant.id)  # the admin's action, meanwhile
        assert Tenant.objects.get(pk=tenant.pk).deleted_at is not None
        return real_store(self, total)

    monkeypatch.setattr(import_module.Command, "_store", store_after_the_deletion)
    with pytest.raises(CommandError):
        call_command("import_memories", str(path), stdout=StringIO(), stderr=StringIO())
    assert not Memory.objects.exists()


FIELDS = (
    "memory_class", "memory_type", "memory_key", "scope_kind", "scope_ref", "session_id",
    "task_id", "environment", "content", "value", "source_type", "source_conversation_id",
    "source_message_id", "source_tool", "authority", "confidence", "consent", "sensitivity",
    "status", "version", "content_hash", "embedding_model", "policy_version", "admitted",
)  # fmt: skip

BODIES = [
    {"memory_type": "user_preference", "memory_key": " style.tone ", "scope": "global",
     "content": "User prefers a friendly tone.", "authority": "explicit_user",
     "source": {"type": "user_input", "conversation_id": "c1", "message_id": " m1 "}},
    {"memory_type": "project_constraint", "memory_key": "project.backend_language",
     "scope": " project : atlas ", "content": "The backend is written in Go.",
     "value": {"language": "go"}, "authority": "tool_observation", "confidence": 0.9,
     "source": {"type": "verified_tool_output", "conversation_id": "c1", "message_id": "m2",
                "tool": "read_file"}},
    {"memory_type": "episode", "scope": "repo:lunest-ios", "environment": "Staging",
     "content": "The build broke after the Xcode upgrade.", "authority": "model_inference",
     "confidence": 0.95,
     "source": {"type": "model_inference", "conversation_id": "c1", "message_id": "m3"}},
    {"memory_type": "task_state", "memory_key": "task.progress", "scope": "task:t-1",
     "session_id": "s-1", "task_id": "t-1", "content": "Step two of three is done.",
     "authority": "tool_observation",
     "source": {"type": "verified_tool_output", "conversation_id": "c1", "message_id": "m4",
                "tool": "task_tracker"}},
]  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize("body", BODIES, ids=lambda b: b["memory_type"])
def test_a_memory_imported_is_stored_as_the_same_memory_written_through_the_api(
    tenant, agent, tmp_path, body
):
    from tests.clients import client_for

    answer = client_for(agent).post("/api/v1/memories", {**body, "subject": "api-user"},
                                    format="json")  # fmt: skip
    assert answer.status_code == 201, answer.json()
    written = Memory.objects.get(subject__external_id="api-user")
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({**body, "subject": "import-user", "tenant": tenant.slug}))
    call_command("import_memories", str(path), stdout=StringIO(), stderr=StringIO())
    imported = Memory.objects.get(subject__external_id="import-user")
    differ = {
        name: (getattr(written, name), getattr(imported, name))
        for name in FIELDS
        if getattr(written, name) != getattr(imported, name)
    }
    assert not differ


def _import_errors(tenant, tmp_path, **overrides) -> str:
    path = tmp_path / "in.jsonl"
    path.write_text(record(tenant) + "\n" + record(tenant, **overrides) + "\n")
    err = StringIO()
    with pytest.raises(CommandError, match="error"):
        call_command("import_memories", str(path), "--dry-run", stdout=StringIO(), stderr=err)
    return err.getvalue()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (5, "line 2: status: Must be a string, not an integer. (invalid)"),
        (["active"], "line 2: status: Must be a string, not an array. (invalid)"),
    ],
    ids=["integer", "array"],
)
def test_an_imports_status_of_another_json_type_is_named_with_the_apis_code(
    tenant, tmp_path, value, expected
):
    """docs/api.md ("Importing memories"): every optional field is "validated like the write
    API, with the API's codes for the same mistakes (`invalid` for another JSON type, …)".
    ``status`` answered every mistake with ``invalid_choice``."""
    assert _import_errors(tenant, tmp_path, status=value).splitlines() == [expected]


@pytest.mark.django_db
def test_a_line_naming_a_key_twice_is_an_error_line_and_nothing_is_imported(tenant, tmp_path):
    """A line giving ``content`` twice was imported with its last value (stop 58's audit of
    the commands), where the write API refuses such a body (``malformed_json``): parsers
    differ on which value wins, so a file checked by one could be stored with the other."""
    line = record(tenant)[:-1] + ', "content": "User prefers long answers."}'
    path = tmp_path / "twice.jsonl"
    path.write_text(f"{record(tenant, subject='user-8')}\n{line}\n", encoding="utf-8")
    err = StringIO()
    with pytest.raises(CommandError):
        call_command("import_memories", str(path), stdout=StringIO(), stderr=err)
    assert "line 2: invalid JSON (the key 'content' appears twice in one object)" in err.getvalue()
    assert not Memory.objects.exists()


@pytest.mark.django_db
def test_a_number_below_a_floats_range_is_an_error_line_and_nothing_is_imported(tenant, tmp_path):
    """Stop 61's review: ``1e-400`` in a value was imported as 0.0, where the write API
    answers it ``malformed_json`` since that stop's audit."""
    line = record(tenant, memory_key="travel.budget", content="User's travel budget.")
    path = tmp_path / "tiny.jsonl"
    path.write_text(line[:-1] + ', "value": {"budget": 1e-400}}\n', encoding="utf-8")
    err = StringIO()
    with pytest.raises(CommandError):
        call_command("import_memories", str(path), stdout=StringIO(), stderr=err)
    assert "line 1: invalid JSON (Number out of range: 1e-400)" in err.getvalue()
    assert not Memory.objects.exists()


@pytest.mark.django_db
def test_a_file_saved_with_a_byte_order_mark_is_imported(tenant, tmp_path):
    """Stop 61's review: a file saved "UTF-8 with BOM" was refused at line 1 as invalid JSON;
    the other commands' files and the API's bodies ignore it (RFC 8259)."""
    path = tmp_path / "bom.jsonl"
    path.write_bytes(
        codecs.BOM_UTF8 + f"{record(tenant)}\n{record(tenant, subject='u-2')}\n".encode()
    )
    call_command("import_memories", str(path), stdout=StringIO(), stderr=StringIO())
    assert Memory.objects.filter(tenant=tenant).count() == 2


@pytest.mark.django_db
def test_a_line_naming_two_tasks_is_refused_as_the_api_refuses_it(tenant, tmp_path):
    """Stop 62's audit of tasks found that a memory could belong to two tasks (``task_id``
    T-1, scope ``task:T-2``): the close of T-1 expired the state of T-2, still running. The
    write API refuses it (``invalid_scope``, tests/api/test_tasks.py), and so does an import,
    through the same parser."""
    errors = _import_errors(tenant, tmp_path, memory_key="", scope="task:T-2", task_id="T-1")
    [line] = errors.splitlines()
    assert line.startswith("line 2: scope: The scope task:T-2 names another task than the")
    assert line.endswith("(invalid_scope)")
