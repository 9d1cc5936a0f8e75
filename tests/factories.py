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
    """A plain active preference without an embedding (tests that need one embed it)."""

    class Meta:
        model = models.Memory

    subject = factory.SubFactory(SubjectFactory)
    tenant = factory.LazyAttribute(lambda o: o.subject.tenant)
    memory_class = models.MemoryClass.PREFERENCE
    memory_type = models.MemoryType.USER_PREFERENCE
    memory_key = factory.Sequence(lambda n: f"pref.{n}")
    content = factory.Sequence(lambda n: f"User prefers option {n}.")
    content_hash = factory.LazyAttribute(lambda o: content_hash(o.content))
    source_type = models.SourceType.USER_INPUT
    authority = models.Authority.EXPLICIT_USER


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
