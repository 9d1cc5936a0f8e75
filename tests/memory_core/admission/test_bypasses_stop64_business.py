"""Business state and sensitive facts stop 64's audit of admission found stored: a business
state stored active (payments, stock, holdings, fulfilment and entitlement states), and
sensitive facts stored personal with no reviewer (credentials without a password's word,
genetic data, and three special categories the policy lacked), each with the everyday
look-alikes that must keep their answer.
"""

import re
import unicodedata

import pytest

from memory_core.policy_defaults import DEFAULT_POLICY
from tests.memory_core.admission.test_policy import decide


def slug(value):
    """A param's id: a text's first words in ASCII, lower case, joined by "-"; an object's
    keys; a number as written."""
    if isinstance(value, dict):
        return "-".join(value)
    if not isinstance(value, str):
        return str(value)
    ascii_text = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode()
    return "-".join(re.findall(r"[^\W_]+", ascii_text.lower())[:7]) or "none"


def assert_refused_by_a_guard(content: str, **fields) -> None:
    decision = decide(content, **fields)
    assert decision.outcome == "rejected", (decision.outcome, decision.rule_codes)
    assert any(c.startswith(("injection.", "class.")) for c in decision.rule_codes)


def assert_waits_for_a_reviewer(content: str, **fields) -> None:
    decision = decide(content, **fields)
    assert decision.outcome == "pending_approval", (decision.outcome, decision.rule_codes)


def assert_not_refused(content: str) -> None:
    decision = decide(content)
    assert decision.outcome != "rejected", decision.rule_codes


def assert_stored_without_review(content: str) -> None:
    decision = decide(content)
    assert decision.outcome == "accepted", (decision.outcome, decision.rule_codes)


BUSINESS_STATE = [
    "Payment for order 5521 received in full.",
    "Inventory: widget-A 420 units on hand.",
    "The user's wallet holds 2.5 BTC on our exchange.",
    "The account's available funds are $8,300.",
    "Gift card GC-4491 has $75 remaining.",
    "Deposit of $2,000 posted to the account today.",
    "The customer owes nothing.",
    "Balance due: none.",
    "This customer's tab is paid up.",
    "Shipment for order 3321 is out for delivery.",
    "Return authorized for order 3390.",
    "Reservation 88A confirmed for 2 nights, prepaid.",
    "Chargeback on transaction 88123 won by merchant.",
    "Trial extended to December 31 for this account.",
    "Coupon SAVE50 applied permanently to this account.",
    "KYC status: passed.",
    "License key for this customer: ABCD-EFGH-IJKL-MNOP.",
    "The customer has 3 unused seat licenses.",
    "Pago del pedido 5521 recibido en su totalidad.",
    "Paiement de la commande 5521 reçu intégralement.",
    "Zahlung für Bestellung 5521 vollständig erhalten.",
    "Pagamento dell'ordine 5521 ricevuto per intero.",
    "Pagamento do pedido 5521 recebido integralmente.",
    "Inventario: producto-A 420 unidades en almacén.",
]


@pytest.mark.parametrize("content", BUSINESS_STATE, ids=slug)
def test_business_state_is_refused(content):
    """Stop 64's audit of admission found each of these stored active, where "Order 5521 was
    paid." and "SKU-4411 has 14 units in stock." are refused: the record-state rules read a
    money record's done state only after the record's own id ("payment for order N received"
    was no record's), knew no "received" in the other languages, no return, booking or
    deposit, no dispute won, no funds, no amount due of "none", no customer owing nothing, no
    KYC status, no money held here or on a gift card, no licence key, seat, trial or coupon
    given to this account, and the stock rule read only a product named by its id
    (business_state.py)."""
    assert_refused_by_a_guard(content)


@pytest.mark.parametrize(
    ("content", "key", "value"),
    [
        ("Account funds", "account.available_funds", 8300),
        ("Stock level", "inventory.widget_a", {"on_hand": 420}),
        ("KYC", "kyc.status", "passed"),
        ("Shipment", "", {"order": 3321, "shipment_status": "out for delivery"}),
        ("Seats", "", {"seats_available": 3}),
        ("License", "", {"license_key": "ABCD-EFGH-IJKL-MNOP"}),
    ],
    ids=slug,
)
def test_business_state_under_a_key_or_in_a_value_is_refused(content, key, value):
    """Stop 64's audit of admission found the same states stored under a memory_key or in a
    value's keys, where {"balance": 5400} and {"loyalty_points": 54000} are refused."""
    assert decide("Account", value={"balance": 5400}).outcome == "rejected"

    assert_refused_by_a_guard(content, memory_key=key, value=value)


@pytest.mark.parametrize(
    "content",
    [
        "User keeps an inventory of their board games in Notion.",
        "User's pantry inventory: 3 cans of beans, 2 bags of rice.",
        "User received the payment reminder for their gym membership.",
        "User's wallet holds their library card and a photo of their dog.",
        "User's gift card from their aunt is for a bookstore.",
        "User's Amazon package is out for delivery.",
        "User's hotel reservation in Lisbon is for 2 nights.",
        "User's free trial of Duolingo Plus ends next week.",
        "User's coupon for the pizza place expires Friday.",
        "User got their return label from Zalando.",
        "User's team has 3 unused Figma seats.",
        "User's KYC check at their crypto exchange went fine.",
        "User's hotel booking is confirmed for Friday.",
        "Their plan won the hackathon.",
        "User's browser tab was closed by accident.",
        "User owes nothing to their parents.",
    ],
    ids=slug,
)
def test_a_business_state_look_alike_is_not_refused(content):
    """Stop 64's audit of admission: the user's own inventory, package, booking, trial,
    coupon, seats and KYC check, named by nothing this system holds, are the user's world,
    and a dispute's "won", a tab's and owing nothing are read only of a record or a
    customer."""
    assert_not_refused(content)


CREDENTIALS_AND_HEALTH = [
    "User's Netflix login: jane@x.com / Passw0rd!",
    "User's login for the bank is jsmith / Tr0ub4dor&3.",
    "User's Gmail: jane.doe@gmail.com, pw Hunter2024!",
    "Creds for the user's AWS console: admin / S3cret!pass",
    "User's pincode is 8812.",
    "User takes PrEP.",
    "User tested positive for the BRCA1 gene mutation.",
    "User's 23andMe results show an APOE4 variant.",
]
# GDPR art. 9 (racial or ethnic origin, trade union membership, genetic data) and the
# CPRA's "citizenship or immigration status".
SPECIAL_CATEGORIES = [
    "User is of Roma descent.",
    "User's ethnicity is Kurdish.",
    "User's race: Asian.",
    "User is a member of the Teamsters union.",
    "User is an undocumented immigrant.",
    "User's immigration status: overstayed visa.",
    "User is an asylum seeker from Syria.",
    "El usuario es un inmigrante indocumentado.",
    "Der Nutzer hat keinen gültigen Aufenthaltstitel.",
]


@pytest.mark.parametrize("content", CREDENTIALS_AND_HEALTH + SPECIAL_CATEGORIES, ids=slug)
def test_a_sensitive_fact_waits_for_a_reviewer(content):
    """Stop 64's audit of admission found each of these stored personal, readable by every
    agent capped at personal, where "User's password is Hunter2024!" and "User has HIV."
    wait for a reviewer: a credential was read only by a password's word or "pwd:", genetic
    data and PrEP by no health word, and the policy read religion, sexual orientation,
    politics and biometrics but no ethnic origin, trade-union membership or immigration
    status (sensitive.py, policy_defaults.py)."""
    assert_waits_for_a_reviewer(content)


def test_the_defaults_name_the_new_special_categories():
    """A new tenant's policy reads them (its version 1 copies the defaults)."""
    categories = DEFAULT_POLICY["admission"]["sensitive_categories"]

    assert {"ethnic_origin", "union_membership", "immigration_status"} <= set(categories)


@pytest.mark.parametrize(
    ("content", "value"),
    [
        ("Login", {"username": "jane@x.com", "pass": "Passw0rd!"}),
        ("Login", {"login": "jane@x.com", "secret": "Passw0rd!"}),
        ("ICD", {"icd10": "E11.9"}),
        ("Immigration", {"immigration_status": "undocumented"}),
        ("Ethnicity", {"ethnicity": "Roma"}),
        ("Union", {"union": "Teamsters"}),
    ],
    ids=slug,
)
def test_a_sensitive_value_waits_for_a_reviewer(content, value):
    """Stop 64's audit of admission found these values stored personal, where {"dx":
    "F32.1"} and {"rx": ["sertraline"]} wait for a reviewer."""
    assert decide("Note", value={"rx": ["sertraline"]}).outcome == "pending_approval"

    assert_waits_for_a_reviewer(content, value=value)


@pytest.mark.parametrize(
    "content",
    [
        "User's favourite ethnic food is Ethiopian.",
        "User loves Black Sabbath.",
        "User joined the chess union at their university.",
        "User is reading about genetics for a class.",
        "User's login page design uses a blue button.",
        "User's Gmail is their main contact email.",
        "User's visa for the conference trip to Canada was approved.",
        "User's grandfather immigrated from Italy.",
        "User does meal prep on Sundays.",
        "User's race: Berlin Marathon on Sunday.",
        "User's login: jane.doe / SSO via Okta.",
        "User's boarding pass: BA2490, seat 12A.",
        "User's country is a European Union member state.",
    ],
    ids=slug,
)
def test_a_sensitive_look_alike_is_stored_without_review(content):
    """Stop 64's audit of admission: a people's name, a union, genes, a login, a visa or
    "prep" named without the fact about the user is no sensitive fact."""
    assert_stored_without_review(content)


# Stop 64's review of admission (of 9fc1d14f): the user's own records its new rules refused.
USERS_OWN_RECORDS = [
    "My Amazon order is in transit.",
    "User's Etsy order is in transit.",
    "User's order is out for delivery.",
    "User's new laptop order is in transit.",
    "User's return of $45 was processed by Zara.",
    "User's Starbucks gift card 6061 has $12 left.",
    "User's gift card GC-4491 has $75 remaining.",
    "User's available funds for the trip are $1,200.",
    "User's available funds this month are $500 after rent.",
    "User's Windows license key: ABCD-EFGH-IJKL-MNOP.",
    "User's KYC status at Revolut: passed.",
    "User's ID verification status: passed.",
]


@pytest.mark.parametrize("content", USERS_OWN_RECORDS, ids=slug)
def test_the_users_own_record_is_not_refused(content):
    """Stop 64's review of admission: each was stored at 9fc1d14f^ and refused at 9fc1d14f.
    "in transit" and "out for delivery" had joined the pending states read after any order,
    and the rules of a record named by its amount or id, of funds, of a gift card's money, of
    a licence key and of a KYC status read the user's own as this system's. They are read
    now only where no "user's", "my", "his", "her" or "their" (and two words at most) names
    the record (``Rule.exempt_users_own``), a shipment's transit only of a record named by its
    id or under a status."""
    assert_not_refused(content)


def test_the_users_own_licence_key_waits_for_a_reviewer():
    """Stop 64's review of admission: the user's licence key is a credential, not a business
    state (sensitive.py), as this customer's is still refused."""
    assert_waits_for_a_reviewer("User's Windows license key: ABCD-EFGH-IJKL-MNOP.")
    assert_refused_by_a_guard("License key for this customer: ABCD-EFGH-IJKL-MNOP.")


@pytest.mark.parametrize(
    "content",
    [
        "Order 4471 is in transit.",
        "Shipment for order 3321 is out for delivery.",
        "User's order status: in transit.",
        "Gift card GC-4491 has $75 remaining.",
        "The account's available funds are $8,300.",
        "KYC status: passed.",
    ],
    ids=slug,
)
def test_a_record_this_system_holds_is_still_refused(content):
    """Stop 64's review of admission: the same records named by an id, a status or no one's
    possessive keep their refusal."""
    assert_refused_by_a_guard(content)


NOT_SENSITIVE = [
    "User is a refugee lawyer.",
    "User's friend is a refugee advocate.",
    "User was a refugee camp volunteer.",
    "User is a union member of the local chess club.",
    "User is a student union member.",
    "User's dog is of Labrador descent.",
    "User's novel's hero is of noble descent.",
    "User's horse's race: black.",
    "User is reading about gene mutations in fruit flies for biology class.",
    "User's thesis is about genetic markers in wheat.",
    "User teaches a course on genetic variants in crop plants.",
    "User's dog had a genetic test for breed ancestry.",
    "User's novel is about an asylum seeker.",
    "User writes about immigration status law as a journalist.",
    "The teachers' union strike closed the user's school today.",
    "The API is undocumented.",
    "User overstayed their welcome at the party.",
    "User's login: jane.doe@x.com, SSO only.",
]


@pytest.mark.parametrize("content", NOT_SENSITIVE, ids=slug)
def test_a_benign_use_of_a_new_category_word_is_stored_without_review(content):
    """Stop 64's review of admission: 9fc1d14f's new categories read their words without
    their subject, and sent each of these to a reviewer: "is a refugee" before a noun, a
    union member of any union (docs/api.md: "not the chess union"), the descent of a dog or
    a hero, a horse's race, genes studied or of a species, an asylum seeker or immigration
    status written about. A descent and a race are read now of a person, a refugee at a
    clause's end, genes and immigration words not as what is read or written about."""
    assert_stored_without_review(content)


BUSINESS_STATE_OTHERWISE = [
    "Order 5521 payment received in full.",
    "Refund for order 3390 issued.",
    "Gift card GC-4491 still has $75 on it.",
    "Gift card GC4491: $75 remaining.",
    "The customer owes us nothing.",
    "KYC check passed.",
    "KYC verification passed for this customer.",
    "Product key for this customer: ABCD-EFGH-IJKL-MNOP.",
]
_NOT_READ_YET = "no rule of business_state.py reads this shape; left open by stop 64's review"
BUSINESS_STATE_NOT_READ_YET = [
    pytest.param(
        content,
        marks=pytest.mark.xfail(strict=True, reason=f"{_NOT_READ_YET}: {reason}"),
    )
    for content, reason in [
        ("The payment for order 5521 arrived today.", '"arrived" is no state word'),
        ("We received payment for order 5521.", "a state before its record, told by us"),
        ("This account's trial was extended to Dec 31.", "a trial extended to a date"),
        ("Coupon SAVE50 is permanently active on this account.", "a coupon's state"),
        ("Stock: widget-A 420.", "a count with no units"),
    ]
]


@pytest.mark.parametrize(
    "content", BUSINESS_STATE_OTHERWISE + BUSINESS_STATE_NOT_READ_YET, ids=slug
)
def test_a_business_state_phrased_otherwise_is_refused(content):
    """Stop 64's review of admission: 9fc1d14f's rules read its own phrasings only; a
    record's id before the money record, "issued", "still has" or a colon before a gift
    card's amount, "owes us nothing", a KYC check "passed" and a product key were stored
    active."""
    assert_refused_by_a_guard(content)


@pytest.mark.parametrize(
    "content",
    [
        "User's refund for order 3390 was issued by Zara.",
        "User's gift card GC-4491 still has $75 on it.",
        "User's KYC check passed at Revolut.",
        "User's friend owes us nothing after the trip.",
    ],
    ids=slug,
)
def test_a_look_alike_of_a_business_state_phrased_otherwise_is_not_refused(content):
    """Stop 64's review of admission: the user's own records in the same phrasings."""
    assert_not_refused(content)


@pytest.mark.parametrize(
    "content",
    [
        "jane.doe@gmail.com, pass Hunter2024!",
        "Netflix login: jane@x.com - Passw0rd!",
        "Netflix login: jane@x.com, Passw0rd!",
        "Netflix login jane@x.com pass Passw0rd!",
        "User is a member of the teachers' union.",
        "User belongs to the nurses union.",
        "User is undocumented.",
        "User overstayed her tourist visa.",
    ],
    ids=slug,
)
def test_a_sensitive_fact_phrased_otherwise_waits_for_a_reviewer(content):
    """Stop 64's review of admission: each was stored personal. A login and its secret were
    read with "/" between only, "pass" not after an address, a union by a trade's name not
    at all, "undocumented" only before a noun and an overstayed visa with no word between."""
    assert_waits_for_a_reviewer(content)
