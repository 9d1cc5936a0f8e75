"""factory_boy factories for the domain's rows."""

import factory

from memory_core import models
from memory_core.text import content_hash


class TenantFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Tenant

    slug = factory.Sequence(lambda n: f"tenant-{n}")
    name = factory.LazyAttribute(lambda o: o.slug)


class SubjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Subject

    tenant = factory.SubFactory(TenantFactory)
    external_id = factory.Sequence(lambda n: f"user-{n}")


class AgentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Agent

    tenant = factory.SubFactory(TenantFactory)
    name = factory.Sequence(lambda n: f"agent-{n}")


class MemoryFactory(factory.django.DjangoModelFactory):
    """A plain active preference without an embedding (tests that need one embed it);
    ``incident=True``: an episodic incident, keyless."""

    class Meta:
        model = models.Memory

    class Params:
        incident = factory.Trait(
            memory_class=models.MemoryClass.EPISODIC,
            memory_type=models.MemoryType.INCIDENT,
            memory_key="",
        )

    subject = factory.SubFactory(SubjectFactory)
    tenant = factory.LazyAttribute(lambda o: o.subject.tenant)
    memory_class = models.MemoryClass.PREFERENCE
    memory_type = models.MemoryType.USER_PREFERENCE
    memory_key = factory.Sequence(lambda n: f"pref.{n}")
    content = factory.Sequence(lambda n: f"User prefers option {n}.")
    content_hash = factory.LazyAttribute(lambda o: content_hash(o.content))
    source_type = models.SourceType.USER_INPUT
    authority = models.Authority.EXPLICIT_USER
    status = models.Status.ACTIVE
    # A row made waiting (or rejected) was never in use; any other, as written, was.
    admitted = factory.LazyAttribute(lambda o: o.status not in models.PROPOSED_STATUSES)


def write_body(**overrides) -> dict:
    """A valid body of ``POST /api/v1/memories`` (and of ``memory_write``): a user's
    preference about ``user-1``, global scope; ``overrides`` replace or add fields."""
    return {
        "subject": "user-1",
        "memory_type": "user_preference",
        "memory_key": "style.answers",
        "scope": "global",
        "content": "User prefers concise answers.",
        "source": {"type": "user_input", "conversation_id": "c-1", "message_id": "m-1"},
        **overrides,
    }


def approve_workflow_consent(tenant, *memory_types: str) -> None:
    """Publish a policy under which ``tenant`` accepts workflow consent for ``memory_types``
    (an inferred preference needs it: only the user's own words carry explicit consent)."""
    import copy

    from memory_core.policy_defaults import DEFAULT_POLICY
    from memory_core.services.policy import policy_publish

    document = copy.deepcopy(DEFAULT_POLICY)
    document["admission"]["workflow_consent_types"] = sorted(
        {*document["admission"]["workflow_consent_types"], *memory_types}
    )
    policy_publish(tenant=tenant, document=document, note="workflow consent for the test")


# Every column a stored memory row needs, with the value insert_memories gives it; ``{n}`` in
# a text value is the row's number (1..count).
_INSERTED_MEMORY = {
    "memory_class": "preference",
    "memory_type": "user_preference",
    "memory_key": "pref.{n}",
    "scope_kind": "global",
    "scope_ref": "",
    "session_id": "",
    "task_id": "",
    "content": "User prefers option {n}.",
    "source_type": "user_input",
    "source_conversation_id": "",
    "source_message_id": "",
    "source_tool": "",
    "authority": "explicit_user",
    "consent": "explicit",
    "sensitivity": "personal",
    "status": "active",
    "embedding_model": "",
}


def insert_memories(subject, count: int, *, age_seconds: int = 0, **fields) -> None:
    """Insert ``count`` stored memories of ``subject`` in one statement (generate_series).

    For tests at a real tenant's scale: tens of thousands of rows in about a second, where
    the factory takes a query each. Row ``n`` is ``created_at`` ``n`` seconds (plus
    ``age_seconds``) before now, so newest first is row 1 first. Text ``fields`` may hold
    ``{n}``; no vector (copy one in with an UPDATE where a test needs it).
    """
    from django.db import connection

    values = {**_INSERTED_MEMORY, **fields}
    columns = list(values)
    expressions = [
        "replace(%s, '{n}', n::text)" if isinstance(values[c], str) else "%s" for c in columns
    ]
    sql = (
        "INSERT INTO memory_core_memory (id, tenant_id, subject_id, confidence, version, "  # noqa: S608
        "valid_from, created_at, updated_at, content_hash, "
        + ", ".join(columns)
        + ") SELECT gen_random_uuid(), %s, %s, 1.0, 1, "
        "now() - make_interval(secs => n + %s + 1), now() - make_interval(secs => n + %s), "
        "now() - make_interval(secs => n + %s), md5(n::text), "
        + ", ".join(expressions)
        + " FROM generate_series(1, %s) AS n"
    )
    params = [subject.tenant_id, subject.id, age_seconds, age_seconds, age_seconds]
    params += [values[c] for c in columns] + [count]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def pending_write_on(head, content: str, *, key=None, **fields) -> models.ReviewItem:
    """Return the open review item of a pending sensitive write of ``content`` on ``head``'s
    key (or ``key``), written on ``head`` (its ``candidate_ids``)."""
    write = MemoryFactory(
        subject=head.subject,
        memory_key=head.memory_key if key is None else key,
        content=content,
        status="pending_approval",
        sensitivity="sensitive",
        **fields,
    )
    return models.ReviewItem.objects.create(
        tenant=head.tenant,
        subject=head.subject,
        kind="sensitive_write",
        memory=write,
        memory_key=write.memory_key,
        rule_codes=["sensitivity.review_required"],
        candidate_ids=[head.pk],
    )
