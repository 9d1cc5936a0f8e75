"""Sensitive facts stop 65's audit of admission found stored personal, readable by every agent
capped at personal, where the design has a reviewer read them first (sensitive.py): a blood
type, a test's reading and more conditions, a medical record's and a Medicare number, a
security question's answer and a mother's maiden name, a green card and asylum applied for, a
point by its hemispheres, a hotel room and a Romance street's address; each with the everyday
look-alikes that must stay stored.
"""

import pytest

from tests.memory_core.admission.test_bypasses_stop64_business import slug
from tests.memory_core.admission.test_policy import decide

# The audit's texts, each with the category a reviewer sees.
FOUND_STORED = [
    ("User's blood type is O negative.", "health"),
    ("User's blood group is A+.", "health"),
    ("El grupo sanguíneo del usuario es O negativo.", "health"),
    ("User's A1C was 9.1 at the last checkup.", "health"),
    ("User's cholesterol is 280.", "health"),
    ("User is immunocompromised.", "health"),
    ("User has leukemia.", "health"),
    ("User has lymphoma.", "health"),
    ("User has lupus.", "health"),
    ("User's medical record number is MRN 4455667.", "health"),
    ("User's Medicare number is 1EG4-TE5-MK73.", "government_id"),
    ("User's live location: 51.5007 N, 0.1246 W.", "precise_location"),
    ("User's location: 51°30'2\"N 0°7'28\"W", "precise_location"),
    ("User is at 51.50070N 0.12460W right now.", "precise_location"),
    ("The user is currently at the Hilton on 5th Avenue, room 1204.", "precise_location"),
    ("The user checked into the Marriott downtown, room 818, until Friday.", "precise_location"),
    ("User is staying at her sister's place, 14 Rue Cler, this week.", "precise_location"),
    ("User's flat is at 7 Via Roma, Milano.", "precise_location"),
    ("User's office: 22 Calle Mayor.", "precise_location"),
    ("User's security question answer is Fluffy.", "credentials"),
    ("User's mother's maiden name is Kowalski.", "credentials"),
    ("User has a green card.", "immigration_status"),
    ("User's visa expires next month and they are applying for asylum.", "immigration_status"),
]
# The same facts put otherwise: the rules read the fact, not the audit's sentence.
SAME_FACTS_OTHERWISE = [
    ("O tipo sanguíneo do usuário é A+.", "health"),
    ("Die Blutgruppe des Nutzers ist 0 negativ.", "health"),
    ("User's HbA1c: 6.5%.", "health"),
    ("User's LDL cholesterol was 190 at the last test.", "health"),
    ("User has high cholesterol.", "health"),
    ("User's Medicaid ID is 99887766.", "government_id"),
    ("Position: N51.5007 W0.1246", "precise_location"),
    ("User's location: 51° 30′ 2″ N, 0° 7′ 28″ W", "precise_location"),
    ("User is staying in room 412 at the Holiday Inn Express.", "precise_location"),
    ("User is at 12 Rua Augusta, Lisboa.", "precise_location"),
    ("The answer to their security question is Fluffy.", "credentials"),
    ("Mother's maiden name: Kowalski", "credentials"),
    ("User got her green card last year.", "immigration_status"),
    ("User filed for asylum in 2019.", "immigration_status"),
]


def assert_waits_as(category, content, **fields):
    decision = decide(content, **fields)
    assert decision.outcome == "pending_approval", (decision.outcome, decision.rule_codes)
    assert category in decision.categories, decision.categories


@pytest.mark.parametrize(("content", "category"), FOUND_STORED + SAME_FACTS_OTHERWISE, ids=slug)
def test_a_sensitive_fact_waits_for_a_reviewer(content, category):
    """Stop 65's audit of admission: each was stored personal with no reviewer. Health read no
    blood type, no test's reading, no blood cancer, lupus or weakened immune system and no
    medical record's number; government ids no Medicare number; credentials no security
    answer or mother's maiden name; immigration "green card" only before holder, application
    or status and asylum only sought, applied for or claimed; a location no hemisphere's
    letter, no degrees, minutes and seconds, no hotel room and a street's type only after a
    word ("12 Abbey Road", not "14 Rue Cler")."""
    assert_waits_as(category, content)


@pytest.mark.parametrize(
    ("value", "category"),
    [
        ({"blood_type": "O-"}, "health"),
        ({"bloodGroup": "AB+"}, "health"),
        ({"mothers_maiden_name": "Kowalski"}, "credentials"),
        ({"security_question_answer": "Fluffy"}, "credentials"),
        ({"medicare_number": "1EG4-TE5-MK73"}, "government_id"),
    ],
    ids=slug,
)
def test_a_sensitive_value_under_its_own_key_waits_for_a_reviewer(value, category):
    """Stop 65's audit of admission: {"blood_type": "O-"} under a bland content ("User's
    medical profile.") was stored personal; the value reads "blood type: O-", and the key
    before its value is read as a person's blood type is."""
    assert_waits_as(category, "User's medical profile.", value=value)


LOOK_ALIKES = [
    "User's favourite band is Blood Type.",
    "User has tickets to see Blood Type play in Leeds.",
    "User likes reading about the blood types of famous people.",
    "User donates blood every 3 months.",
    "User reads that oats lower cholesterol in 6 weeks.",
    "User buys cholesterol-free margarine.",
    "User scored 9.1 on the A1C quiz at school.",
    "User loves the Canis lupus exhibit at the zoo.",
    "User has a Medicare Advantage plan question for their mom.",
    "User finds security questions annoying and prefers passkeys.",
    "User thinks security questions are pointless.",
    "User thinks a mother's maiden name is a weak security check.",
    "User goes by her maiden name at work.",
    "User's own Wi-Fi router admin password reminder is on the fridge.",
    "User likes the film Green Card.",
    "User has a green thumb and grows tomatoes.",
    "User is applying for jobs in Berlin.",
    "User's favourite game is Batman: Arkham Asylum.",
    "User's team won 51-30 on Saturday.",
    "User pinned the library at v51.5007.",
    "User's standup is at 5:30 every day.",
    "User takes Route 66 trips.",
    "User's room number preference: a quiet room away from the lift.",
    "User prefers hotel rooms on a high floor.",
    "User booked a hotel room for 2 nights in Lisbon.",
    "User stayed at the Hilton and loved its room service.",
    "User prefers meeting room 4 for 1:1s.",
    "User's call is at 7 via Zoom.",
    "User's standup is at 9 via Google Meet.",
    "User's birthday party is at 7 via the back entrance.",
    "User likes Rue McClanahan from The Golden Girls.",
    "User's favourite café is on Via Roma in Turin.",
]


@pytest.mark.parametrize("content", LOOK_ALIKES, ids=slug)
def test_a_look_alike_is_stored_without_review(content):
    """Stop 65's audit of admission: the new rules read a blood type, a reading, an answer, a
    green card, a point, a room and a street as a person's fact, so their words elsewhere
    (a band, a cereal box, a film, a score, a version, a time, a room wished for, "via" as
    English's "by way of") stay stored without a reviewer."""
    decision = decide(content)
    assert decision.outcome == "accepted", (decision.outcome, decision.rule_codes)
