"""Policy documents are checked before they can become a tenant's policy."""

import copy
import json

import pytest

from memory_core.exceptions import ValidationFailed
from memory_core.models import PolicyVersion
from memory_core.policy_check import policy_errors
from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.retrieval.policy import RETRIEVAL_DEFAULTS, RetrievalPolicy
from memory_core.services.policy import policy_publish


def with_(path: str, value) -> dict:
    document = copy.deepcopy(DEFAULT_POLICY)
    section, key = path.split(".")
    document.setdefault(section, {})[key] = value
    return document


def test_the_defaults_and_an_empty_document_are_valid():
    assert policy_errors(DEFAULT_POLICY) == {}
    assert policy_errors({**DEFAULT_POLICY, "retrieval": RETRIEVAL_DEFAULTS}) == {}
    assert policy_errors({}) == {}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("budget.max_items", None),
        ("budget.max_items", 0),
        ("budget.max_items", float("inf")),
        ("budget.max_items", float("nan")),
        ("budget.max_tokens", 10),  # the empty package alone costs 11
        ("budget.max_items_per_type", 2.5),
        ("retrieval.rrf_k", -1),
        ("retrieval.max_candidates", -1),
        ("retrieval.near_duplicate_cosine", float("nan")),
        ("retrieval.max_prompt_sensitivity", "secret"),
        ("retrieval.high_impact_types", ["no_such_type"]),
        ("ranking_weights.semantic", None),
        ("ranking_weights.semantic", True),
        ("half_life_days.incident", "soon"),
        ("half_life_days.incident", 0),  # was read as 90 days
        ("retention.trace_days", -3),
        ("admission.split_window_writes", "five"),
        # Periods past any date: now - or + them raised OverflowError (every tenant's
        # retention sweep stopped; a tenant's preference writes answered 500).
        ("retention.episodic_days", 1_000_000),
        ("retention.preference_days", 3_000_000),
        ("retention.working_hours", 876_001),
        ("retention.trace_days", 36_501),
        ("admission.split_window_minutes", 10**12),
        ("half_life_days.incident", 1e300),
        ("retrieval.inferred_half_life_days", 1e300),
        # Weights that make a score infinite.
        ("ranking_weights.semantic", 1e308),
        ("retrieval.rrf_vector_weight", 1e308),
        ("retrieval.rrf_k", 1e308),
        # A class's period of 0 capped a write's valid_until at its valid_from, which the
        # table's CHECK refused: a 500 on every write of the class (stop 51's audits).
        ("retention.working_hours", 0),
        ("retention.episodic_days", 0),
        ("retention.preference_days", 0),
        ("retention.inferred_days", 0),
        # A name the stages never read did nothing, the tenant believing it set (stop 51).
        ("half_life_days.task-state", 0.25),
        ("ranking_weights.semantics", 0.5),
        ("retention.episode_days", 7),  # the class is episodic_days: kept 90 days
    ],
)
def test_a_value_the_stages_cannot_read_is_named_with_its_path(path, value):
    assert path in policy_errors(with_(path, value))


@pytest.mark.parametrize("key", ["trace_days", "rejected_days"])
def test_a_trace_or_a_refused_write_may_be_kept_no_longer_than_the_next_sweep(key):
    assert policy_errors(with_(f"retention.{key}", 0)) == {}


@pytest.mark.django_db
def test_a_document_nested_too_deeply_is_refused_not_a_500(tenant, client):
    """Some 850 levels parsed, then failed to encode again as the version was saved or its
    admin page shown: RecursionError, a 500 (stop 51's audit of policies)."""
    from django.contrib.auth import get_user_model

    document = '{"extra": ' + "[" * 850 + "1" + "]" * 850 + "}"
    assert "extra" + "[0]" * 31 in policy_errors(json.loads(document))
    client.force_login(get_user_model().objects.create_superuser("root", "r@example.invalid", "x"))
    client.raise_request_exception = False
    answer = client.post(
        "/admin/memory_core/policyversion/add/",
        {"tenant": str(tenant.pk), "note": "", "document": document},
    )
    assert answer.status_code == 200 and b"levels deep" in answer.content
    assert PolicyVersion.objects.filter(tenant=tenant).count() == 1


def test_a_hundred_years_is_the_longest_retention():
    assert policy_errors(with_("retention.episodic_days", 36_500)) == {}
    assert policy_errors(with_("retention.working_hours", 876_000)) == {}
    assert policy_errors(with_("retention.episodic_days", 36_501)) == {
        "retention.episodic_days": "At most 36500. Or null, for no limit."
    }


def test_a_section_or_a_document_that_is_not_an_object_is_refused():
    assert policy_errors(["not", "a", "dict"]) == {"": "A policy document is a JSON object."}
    assert "budget" in policy_errors({**DEFAULT_POLICY, "budget": [1, 2]})
    # Read anyway (stored some other way), it falls back to the defaults.
    assert RetrievalPolicy.from_document(["not", "a", "dict"]).budget["max_items"] == 8
    assert RetrievalPolicy.from_document({"budget": 3}).budget["max_tokens"] == 800


@pytest.mark.django_db
def test_publish_refuses_an_invalid_document_and_changes_nothing(tenant):
    active = PolicyVersion.objects.get(tenant=tenant, is_active=True)
    with pytest.raises(ValidationFailed) as refused:
        policy_publish(tenant=tenant, document=with_("budget.max_items", None))
    assert refused.value.code == "invalid_policy"
    assert "budget.max_items" in refused.value.details
    assert PolicyVersion.objects.get(tenant=tenant, is_active=True) == active
    assert policy_publish(tenant=tenant, document=with_("budget.max_items", 4)).version == 2


@pytest.mark.django_db
def test_the_admin_form_refuses_an_invalid_document(tenant):
    from memory_core.admin import PolicyVersionForm

    data = {"tenant": tenant.pk, "version": 9, "is_active": False, "note": "",
            "created_at_0": "2026-12-01", "created_at_1": "10:00:00"}  # fmt: skip
    bad = PolicyVersionForm(data={**data, "document": '{"retrieval": {"rrf_k": 0}}'})
    assert not bad.is_valid()
    assert "retrieval.rrf_k" in str(bad.errors["document"])
    good = PolicyVersionForm(data={**data, "document": '{"retrieval": {"rrf_k": 10}}'})
    assert "document" not in good.errors


def test_an_unreadable_stored_retention_value_is_logged_once_a_process(caplog, monkeypatch):
    """Retrieval reads the active policy on every request: a stored value nobody can read (a
    string, a negative) logged a warning on each. Now once per tenant, key and value."""
    from memory_core import policy_check
    from memory_core.policy_check import retention_period

    monkeypatch.setattr(policy_check, "_WARNED", set(), raising=False)
    for _ in range(3):
        assert (
            retention_period({"episodic_days": "ninety"}, "episodic_days", tenant_id="t1") is None
        )
    assert caplog.text.count("tenant t1: retention.episodic_days is 'ninety'") == 1
    retention_period({"episodic_days": "ninety"}, "episodic_days", tenant_id="t2")
    retention_period({"episodic_days": -4}, "episodic_days", tenant_id="t1")
    assert caplog.text.count("not a number of hours or days") == 3


@pytest.mark.parametrize(
    "categories",
    [["Health"], ["health ", "finance"], ["government ids"], ["precise location"]],
)
def test_an_unknown_sensitive_category_is_refused_naming_the_categories(categories):
    """A name admission does not know was accepted and skipped: a tenant that wrote "Health"
    (or api.md's words, "government ids") had health facts go to agents without review."""
    errors = policy_errors(with_("admission.sensitive_categories", categories))
    message = errors["admission.sensitive_categories"]
    assert message.startswith(f'Unknown sensitive categories: "{categories[0]}".'), message
    assert "health, finance, credentials, government_id, precise_location" in message
    assert policy_errors(with_("admission.sensitive_categories", ["health", "biometric"])) == {}
    assert policy_errors(with_("admission.sensitive_categories", [])) == {}


@pytest.mark.django_db
def test_a_capitalised_sensitive_category_is_not_published(tenant, api_client):
    from tests.factories import write_body

    with pytest.raises(ValidationFailed) as refused:
        policy_publish(tenant=tenant, document=with_("admission.sensitive_categories", ["Health"]))
    assert "admission.sensitive_categories" in refused.value.details
    # The tenant keeps its policy, under which a health fact waits for a reviewer.
    response = api_client.post(
        "/api/v1/memories",
        write_body(content="User has HIV and takes antiretroviral therapy."),
        format="json",
    )
    assert response.status_code == 202, response.json()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "value", "named", "message"),
    [
        (
            "retrieval.high_impact_key_prefixes",
            ["deploy\u0000"],
            "retrieval.high_impact_key_prefixes[0]",
            "Holds a NUL character (U+0000), which a policy cannot store.",
        ),
        (
            "retrieval.scope_bound_kinds",
            ["project\ud800"],
            "retrieval.scope_bound_kinds[0]",
            "Holds a lone surrogate (U+D800; no UTF-8 text holds one), which a policy cannot "
            "store.",
        ),
        (
            "half_life_days.episode\u0000",
            30,
            'half_life_days."episode\\x00"',
            "This key holds a NUL character (U+0000), which a policy cannot store.",
        ),
        (
            "ranking_weights.note",
            {"deep": ["\u0000"]},
            "ranking_weights.note.deep[0]",
            "Holds a NUL character (U+0000), which a policy cannot store.",
        ),
    ],
    ids=["list-item", "surrogate", "key", "nested"],
)
def test_a_text_postgresql_cannot_store_is_refused_not_a_database_error(
    tenant, path, value, named, message
):
    """A NUL (or a lone surrogate) anywhere in the document reached jsonb: a database error
    on publishing (a 500 in the admin) instead of a refusal naming where it is."""
    document = with_(path, value)
    assert policy_errors(document) == {named: message}
    with pytest.raises(ValidationFailed) as refused:
        policy_publish(tenant=tenant, document=document)
    assert refused.value.code == "invalid_policy"
    assert list(refused.value.details) == [named]
    assert PolicyVersion.objects.filter(tenant=tenant).count() == 1
