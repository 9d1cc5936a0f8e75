"""The class guard reads the memory_key as the label of what a write holds: "account.balance"
with "5400" is business state that neither says alone (docs/security.md). Each refused case
was stored active before; the benign keys next to them stay admitted."""

import pytest

from memory_core.models import Memory
from tests.api.test_bypasses_stop36_api import URL, body

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"memory_key": "account.balance", "content": "5400"}, "class.business_state"),
        ({"memory_key": "account.balance", "content": "5400 USD"}, "class.business_state"),
        ({"memory_key": "order.status", "content": "Shipped."}, "class.business_state"),
        ({"memory_key": "payment_status", "content": "paid"}, "class.business_state"),
        ({"memory_key": "user.role", "content": "admin"}, "class.access_rule"),
        (  # the key labels a bare value as it labels the content
            {"memory_key": "account.balance", "content": "Noted.", "value": 5400},
            "class.business_state",
        ),
        (
            {"memory_key": "order.status", "content": "Noted.", "value": "shipped"},
            "class.business_state",
        ),
        (
            {"memory_key": "account.balance", "content": "Noted.", "value": {"amount": 5400}},
            "class.business_state",
        ),
    ],
)
def test_a_key_labelling_business_state_is_refused(api_client, fields, code):
    response = api_client.post(URL, body(**fields), format="json")

    assert response.status_code == 422, response.json()
    assert code in response.json()["rule_codes"]
    assert not Memory.objects.exists()


@pytest.mark.parametrize(
    "fields",
    [
        {"memory_key": "preferences.budget", "content": "Under 500 EUR."},
        {"memory_key": "billing.currency", "content": "User prefers invoices in EUR."},
        {"memory_key": "payment.method", "content": "User prefers to pay by card."},
        {"memory_key": "order.history", "content": "User usually orders vegan meals."},
        {"memory_key": "balance", "content": "User wants a better work-life balance."},
        {"memory_key": "user.role", "content": "Senior engineer on the platform team."},
        # A sentence is read on its own, not as the value the key labels.
        {"memory_key": "user.role", "content": "User is a root beer enthusiast."},
        {"memory_key": "refund.policy", "content": "User keeps receipts for every purchase."},
        {  # a pointer's fields name a record elsewhere: the key does not label them
            "memory_key": "order.status",
            "content": "The order lives in the orders system.",
            "value": {"system": "orders", "reference": "ORD-88123"},
        },
    ],
)
def test_a_benign_key_is_admitted(api_client, fields):
    response = api_client.post(URL, body(**fields), format="json")

    assert response.status_code == 201, response.json()
