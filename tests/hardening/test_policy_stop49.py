"""The tenant policy document: what stop 49's audit found a policy could hold that did
nothing, or was read otherwise than retrieval reads it, or made the admin answer 500. Each
docstring says what happened before; the assertions, what happens now."""

import copy

import pytest

from memory_core.exceptions import ValidationFailed
from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.retrieval.policy import RetrievalPolicy, is_high_impact
from memory_core.services.policy import policy_publish
from tests.factories import write_body


def with_(path: str, value) -> dict:
    document = copy.deepcopy(DEFAULT_POLICY)
    section, key = path.split(".")
    document.setdefault(section, {})[key] = value
    return document


@pytest.mark.django_db
def test_admin_form_refuses_an_integer_too_long_to_parse_instead_of_500(tenant):
    """The admin's policy form (PolicyDocumentField) catches RecursionError but not the
    ValueError Python's json raises on an integer of more than 4,300 digits (the int/str
    conversion limit): ``is_valid()`` raises, a 500 in the admin. Expected: a form error
    ("Enter a valid JSON." or similar), nothing published."""
    from memory_core.admin import PolicyVersionForm

    document = '{"retention": {"episodic_days": 1' + "0" * 5000 + "}}"
    form = PolicyVersionForm(data={"tenant": tenant.pk, "note": "", "document": document})
    assert not form.is_valid()
    assert "document" in form.errors


@pytest.mark.django_db
@pytest.mark.parametrize("prefix", ["Payroll", "payroll.account"])
def test_a_high_impact_key_prefix_that_can_never_match_is_not_silently_published(tenant, prefix):
    """``retrieval.high_impact_key_prefixes`` is published as any list of strings, but
    ``is_high_impact`` compares the key's first segment, lower-cased and cut at any
    non-alphanumeric character, with the prefixes as written: "Payroll" or "payroll.account"
    can never match, so a conflict on ``payroll.account`` is settled by score instead of a
    clarification while the tenant believes it guarded (the same failure as the capitalised
    sensitive category that policy_check now refuses). Expected: refused on publication
    (invalid_policy naming the path), or normalised so that it matches."""
    try:
        version = policy_publish(
            tenant=tenant, document=with_("retrieval.high_impact_key_prefixes", [prefix])
        )
    except ValidationFailed as refused:
        assert "retrieval.high_impact_key_prefixes" in refused.details
        return
    policy = RetrievalPolicy.from_document(version.document, version.version)
    assert is_high_impact(policy, memory_key="payroll.account", memory_types=["user_preference"])


@pytest.mark.django_db
def test_admission_confidence_floor_refuses_a_write_below_it(tenant, api_client):
    """``admission.confidence_floor`` is in the default policy and bounded 0..1 by
    policy_check, but admission never reads it: with a floor of 0.9 published, a write of
    confidence 0.1 is accepted (201) and stored. Expected: a write below the tenant's
    admission confidence floor is refused (422 with a rule code), or the knob is not offered."""
    policy_publish(tenant=tenant, document=with_("admission.confidence_floor", 0.9))
    response = api_client.post("/api/v1/memories", write_body(confidence=0.1), format="json")
    assert response.status_code == 422, response.json()


@pytest.mark.django_db
def test_admin_add_page_answers_a_form_error_for_an_integer_too_long_to_parse(client, tenant):
    """The admin's "Add policy version" page POSTed with a document holding a 5,000-digit
    integer answers 500 (ValueError from json.loads in PolicyDocumentField.to_python, and
    again in bound_data when the form is shown again). Expected: 200, the form shown again
    with an error on the document, the tenant's active version unchanged."""
    from django.contrib.auth import get_user_model

    from memory_core.models import PolicyVersion

    active = PolicyVersion.objects.get(tenant=tenant, is_active=True)
    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw-12345")
    client.force_login(admin)
    client.raise_request_exception = False
    response = client.post(
        "/admin/memory_core/policyversion/add/",
        {
            "tenant": str(tenant.pk),
            "note": "",
            "document": '{"retention": {"episodic_days": 1' + "0" * 5000 + "}}",
        },
    )
    assert response.status_code == 200
    assert PolicyVersion.objects.get(tenant=tenant, is_active=True) == active


@pytest.mark.django_db
def test_health_stale_rate_reads_the_half_lives_retrieval_reads(api_client, tenant):
    """The health page's stale-memory rate read ``half_life_days`` as the document holds it,
    and its SQL then took 90 days for every type the document lacked, where retrieval fills
    each from the defaults (``RetrievalPolicy.from_document``). Since stop 51 it counts the
    freshness retrieval stored in each trace: under a policy that sets only the episode's
    half-life, a project constraint 100 days old is served fresh (its default half-life is
    180 days: 2^(-100/180) = 0.68), and the chart agrees."""
    from datetime import timedelta

    from django.utils import timezone

    from memory_core.principals import ReviewerPrincipal
    from memory_core.selectors.health import health_overview
    from tests.portal.conftest import make_login
    from tests.portal.test_health_figures import _inferred_rule_served

    policy_publish(tenant=tenant, document={"half_life_days": {"episode": 20}})
    reviewer = make_login("reviewer", tenant=tenant, role="reviewer")
    then = timezone.now() - timedelta(days=100)
    served = _inferred_rule_served(
        api_client, tenant, written=then, changed=then, memory_type="project_constraint",
        authority="explicit_user", source_type="user_input", confidence=1.0,
        scope_kind="project", scope_ref="atlas",
    )  # fmt: skip
    assert served["components"]["freshness"] == pytest.approx(2 ** (-100 / 180), abs=0.001)
    overview = health_overview(
        principal=ReviewerPrincipal(tenant_id=tenant.id, user_id=reviewer.pk), days=7
    )
    chart = {c.key: c for c in overview.charts}["stale_rate"]
    assert chart.summary == "0 of 1 memories served were past their half-life", chart.summary


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["Repo", "repository"])
def test_an_unknown_scope_bound_kind_is_refused_on_publication(tenant, kind):
    """``retrieval.scope_bound_kinds`` is published as any list of strings, though scope kinds
    are a closed set (global, user, project, repo, task) and retrieval compares them as
    written (plan.py, rerank.py): "Repo" or "repository" silently binds nothing, and the
    tenant's repository rules stop applying to every action in the repo. Its sibling lists
    (``high_impact_types``, ``scope_bound_types``) are checked against their closed set.
    Expected: ValidationFailed (invalid_policy) naming retrieval.scope_bound_kinds."""
    with pytest.raises(ValidationFailed) as refused:
        policy_publish(tenant=tenant, document=with_("retrieval.scope_bound_kinds", [kind]))
    assert "retrieval.scope_bound_kinds" in refused.value.details
