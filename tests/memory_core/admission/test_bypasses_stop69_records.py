"""Stop 69's colon-record fix: a customer's tier in a record written "key: value" apart by
spaces, a slash or a bar, or "key value" between slashes ("customer: C-1 tier: Platinum",
"customer C-1 / tier Platinum"), refused with its paraphrases; the prose and the user's own
records that look like one kept stored, and the rule timed on a run of its own words."""

import pytest

from tests.memory_core.admission.test_bypasses_stop64_business import (
    assert_refused_by_a_guard,
    slug,
)
from tests.memory_core.admission.test_bypasses_stop69 import _id
from tests.memory_core.admission.test_policy import decide
from tests.memory_core.admission.test_regex_cost_stop66 import (
    run_of_its_words_grows_linearly,
)


@pytest.mark.parametrize(
    "content",
    [
        "customer: C-1 tier: Platinum",
        "customer_id: C-1 tier: Platinum",
        'customer: "C-1" tier: "Platinum"',
        "client: Acme Corp plan: Enterprise",
        "customer: C-1 tier: Platinum since: 2026-01-01",
        "tier: Gold customer: C-1",
        "Customer ID: C-1 | Plan: Enterprise",
        "customer: C-1 / tier: Platinum",
        "customer C-1 / tier Platinum",
        "customer C-1 / plan enterprise",
        "client Acme / tier Gold",
        "tier Gold / customer C-1",
    ],
    ids=slug,
)
def test_a_customers_tier_in_a_colon_or_slash_record_is_refused(content):
    """Each stored active after stop 69's second round, where "customer: C-1; tier:
    Platinum" and "customer=C-1 tier=Platinum" were refused."""
    assert_refused_by_a_guard(content)


@pytest.mark.parametrize(
    "content",
    [
        "Customer: C-1, Tier: Platinum",
        "Tier: Gold, Customer: C-1",
        "customer: C-1; tier: Platinum",
        "customer: C-1 loyalty tier: Platinum",
    ],
    ids=slug,
)
def test_a_customers_tier_apart_by_commas_stays_refused(content):
    """Refused already by stop 69's first round (a comma or ";" starts a field, or one key
    names the tier's holder): kept so."""
    assert_refused_by_a_guard(content)


@pytest.mark.parametrize(
    "content",
    [
        # Prose with a colon: no customer's record.
        "The customer said: tier two support was slow",
        "The customer asked about the plan: premium features look nice",
        "Note for customer: the Gold tier is being discontinued",
        "Customer: it was great. Tier: not sure.",
        "Customer support: excellent. Plan: come back in June",
        "Customer: Acme Corp is moving offices. Plan: Business lunch on Friday",
        # The user's own: their customer, their tier, their memberships.
        "User's customer: Acme. User's tier: gold member at the gym",
        "User's customer Acme is on a Premium tier of a different vendor",
        "User's gym membership: Gold / customer since 2019",
        "Membership: Gold / customer since 2019",
        "Customer since 2019 / plan Premium",
        "Netflix - customer since 2015 / plan: Premium",
        "Spotify: customer since 2015 plan: Premium",
        "Customer: me. Plan: Premium",
        "Plan: Pro / Client: happy",
        "Recipe: customer favorite / level: basic",
        # Slash lists and records holding no customer's tier.
        "Customer service was great / plan to return next year",
        "To do: call customer / plan Q3 offsite",
        "Meeting notes: client Acme / plan: pro bono work",
        "Hotel: Marriott / status Platinum",
        "program: Flying Blue status: Gold",
        "member_id: 123 tier: Gold",
        "customer: C-1 export: csv",
        "customer C-1 / export CSV",
        "Customer: C-1 status: active",
        "Customer: John. Level: beginner",
        "Customer: Acme. Preferred contact: email. Status: happy",
        "Client: Acme, deliverable: logo, plan: draft by Friday",
        "Customer journey map / status update",
    ],
    ids=slug,
)
def test_prose_and_the_users_own_records_are_stored(content):
    """Each stored before this fix and after it."""
    decision = decide(content)
    assert decision.outcome == "accepted", (decision.outcome, decision.rule_codes)


@pytest.mark.parametrize(
    ("example", "unit", "tail"),
    [
        ("customer: C-1 tier: Platinum", "customer: C-1 ", "tier: x"),
        ("customer: C-1 tier: Platinum", "customer: ", "x"),
        ("customer: C-1 tier: Platinum", "customer: C-1 / ", "x"),
        ("customer: C-1 tier: Platinum", "tier: Gold ", "customer"),
        ("customer: C-1 tier: Platinum", 'customer: "', "x"),
        ("customer: C-1 tier: Platinum", "k: v. ", "x"),
        ("customer C-1 / tier Platinum", "customer C-1 / ", "tier x"),
        ("customer C-1 / tier Platinum", "tier Gold / ", "customer"),
        ("customer C-1 / tier Platinum", "customer c / k v / ", "x"),
    ],
    ids=_id,
)
def test_the_rule_reads_a_run_of_its_words_in_linear_time(example, unit, tail):
    """The new rule (the first of class.business_state to fire on ``example``) on a run of
    its own words before an end that fails, at 1,000 and 4,000 characters: linear."""
    run_of_its_words_grows_linearly("class.business_state", example, unit, tail)
