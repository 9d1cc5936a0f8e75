"""Sensitive facts stop 65's audit of admission found stored personal, readable by every agent
capped at personal, where the design has a reviewer read them first (sensitive.py): a blood
type, a test's reading and more conditions, a medical record's and a Medicare number, a
security question's answer and a mother's maiden name, a green card and asylum applied for, a
point by its hemispheres, a hotel room and a Romance street's address; each with the everyday
look-alikes that must stay stored.
"""

import pytest

from tests.memory_core.admission.test_bypasses_stop64_business import (
    assert_stored_without_review,
    slug,
)
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
    ("User is in room 1204 at the Hilton.", "precise_location"),
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
    assert_stored_without_review(content)


# The new rules' gates, the same facts written a little otherwise: "via" after a move or "is",
# a blood type after "blood is type" or after whose it is, a room after the room at a hotel,
# as a suite, or in the sentence after the hotel's.
PAST_A_GATE = [
    ("User's address is 7 Via Roma, Milano.", "precise_location"),
    ("User moved to 7 Via Roma in Milan last year.", "precise_location"),
    ("User lives in 3 Via Garibaldi, Bologna.", "precise_location"),
    ("User's blood is type A positive.", "health"),
    ("Her blood is type O negative.", "health"),
    ("Blood type of the user: B+", "health"),
    ("Blood group of the patient: O-", "health"),
    ("User's room at the Hilton is 1204.", "precise_location"),
    ("User's suite at the Ritz is 401.", "precise_location"),
    ("User's hotel room number is 818.", "precise_location"),
    ("User is staying at the Hilton, suite 1204.", "precise_location"),
    ("User checked into the Hilton on 5th Ave. Room 1204.", "precise_location"),
    ("User booked room 1204 at the Hyatt for Friday.", "precise_location"),
]


@pytest.mark.parametrize(("content", "category"), PAST_A_GATE, ids=slug)
def test_a_sensitive_fact_past_a_new_rules_gate_waits_for_a_reviewer(content, category):
    """Stop 65's audit of admission: the review of its fixes found each stored personal. A
    Romance "via" street counted only after "at", ":" or ","; a blood type only after a
    possessive or right after "blood type"; a hotel room only as "room N" in the hotel's
    sentence. Now "via" counts after "is", "in", "address" or a move "to", a blood type after
    "blood is type" or "blood type of <whom>:", and a room as a suite or "rm", in the
    sentence after the hotel's, or given after the room at a hotel or a person's room."""
    assert_waits_as(category, content)


# One word changed from the audit's texts.
ONE_WORD_OTHERWISE = [
    ("User's mom's maiden name is Kowalski.", "credentials"),
    ("User's mum's maiden name: Nowak", "credentials"),
    ("User's green card expires in 2027.", "immigration_status"),
    ("User's green card was renewed last month.", "immigration_status"),
    ("User's fasting glucose is 130.", "health"),
    ("User's LDL was 190.", "health"),
    ("User's HDL is 35 and triglycerides were 250.", "health"),
    ("User is at 51.5007 North, 0.1246 West.", "precise_location"),
    ("Position: north 51.5007, west 0.1246", "precise_location"),
    ("User's MBI is 1EG4-TE5-MK73.", "government_id"),
    ("User's MBI: 1EG4TE5MK73", "government_id"),
    ("User's Medicare Beneficiary Identifier is 1EG4-TE5-MK73.", "government_id"),
]


@pytest.mark.parametrize(("content", "category"), ONE_WORD_OTHERWISE, ids=slug)
def test_a_sensitive_fact_one_word_otherwise_waits_for_a_reviewer(content, category):
    """Stop 65's audit of admission: the review of its fixes found each stored personal, one
    word away from a text the audit's rules read: a mother's maiden name read only
    "mother's", a green card only had or got, a test's reading only A1C, cholesterol and
    blood sugar, a hemisphere only by its letter, and Medicare's identifier only as a
    "Medicare number". Now "mom's" and "mum's", a green card that expires or is renewed,
    glucose, LDL, HDL and triglycerides, "North" and "West", and "MBI" before an identifier's
    shape count too."""
    assert_waits_as(category, content)


NEW_GATES_LOOK_ALIKES = [
    # a room that is no one's lodging
    "User's Elks Lodge meets in room 4 every Tuesday.",
    "User's favourite film is Room 237, about the Overlook Hotel.",
    "User teaches in room 204 at the Hilton School.",
    "User booked meeting room 4 at the Hyatt for the sales offsite.",
    "User booked room 4 for the team meeting.",
    "User's kid stays after school in room 12 for chess club.",
    "User's hotel room was 120 euros a night.",
    "User's room is 12 square metres and faces the garden.",
    # "via" as English's "by way of", after "to"
    "User's meeting moved to 7 via Teams.",
    "User got down to 40 via cycling.",
    "User counts to 7 via flashcards.",
    # a blood type, a maiden name, a green card no one's
    "User asked what the blood type of a newborn is based on.",
    "User says bad blood is the type of drama they avoid.",
    "User thinks a mom's maiden name is a weak security check.",
    "User's mom's maiden name comes up in her genealogy research.",
    "User's favourite film, Green Card, came out in 1990.",
    "User's Green Card DVD arrived yesterday.",
    # a test's words with no reading, a distance, the short word MBI
    "User buys glucose tablets in packs of 10.",
    "User's energy gel has 25 g of glucose.",
    "User studies LDL receptors in lab 4.",
    "User drove 12.500 km north, then 3.250 km west.",
    "User's lap split was 1.250 north of the river and 2.375 west of the park.",
    "User's MBI course starts in 2025.",
    "User reads the MBI 2024 report.",
]


@pytest.mark.parametrize("content", NEW_GATES_LOOK_ALIKES, ids=slug)
def test_a_look_alike_of_a_widened_gate_is_stored_without_review(content):
    """Stop 65's audit of admission: its hotel-room rule sent a room to a reviewer wherever a
    lodging's word stood near it, "lodge" and "inn" alone and a hotel's name after the room
    included, so a club's room, a film's and a school's waited. A room now counts after the
    hotel's name, right after a verb of a stay, or given after a person's room or the room at
    a hotel; and the gates widened by the review's fixes still pass the user's own world."""
    assert_stored_without_review(content)


# The audit of the review's fixes (daca34e2): an inn's or a lodge's room, a room before its
# hotel with a sleeping verb or the stay said after it.
HOTEL_ROOMS_PAST_THE_REVIEW = [
    "User is staying at the Lakeside Inn, room 12.",
    "User is at the Inn on the Park, room 214, until Friday.",
    "User is staying at the Pines Lodge in room 8 this week.",
    "Room 1204 at the Hilton is where the user is staying.",
    "User sleeps in room 412 at the Marriott.",
    "User is sleeping in room 412 at the Marriott.",
    # the same facts put otherwise
    "User checked into the Lakeside Inn, room 12.",
    "User spent the night in room 412 at the Marriott.",
    "Room 412 at the Marriott is where she sleeps this week.",
    "User checked into the Hilton. Room 1204 is where they sleep.",
    "User stays in room 3 in the east wing of the Marriott.",
]


@pytest.mark.parametrize("content", HOTEL_ROOMS_PAST_THE_REVIEW, ids=slug)
def test_a_hotel_room_past_the_reviews_gates_waits_for_a_reviewer(content):
    """Stop 65's audit of admission: its review dropped "inn" and "lodge" from the lodgings,
    so a room at the Lakeside Inn or the Pines Lodge was stored personal; a room before its
    hotel counted only right after "<person> is in" or "booked", so "sleeps in room 412 at
    the Marriott" and a room as the sentence's subject with the stay said after it were
    stored too. An inn and a lodge are lodgings again (not a club's lodge that meets, nor
    the verb), sleeping and spending the night are verbs of a stay, and a room before its
    hotel counts with a stay's verb in the sentence."""
    assert_waits_as("precise_location", content)


ROOMS_NO_ONE_LODGES_IN = [
    # the audit's: benign writes the review sent to a reviewer
    "User stays in room 3 of the library to study.",
    "The hotel was nice. Room 237 in The Shining is the scariest.",
    "User's suite is #4 in the office building.",
    # a stay's or a sleep's room that is another place's
    "User stays in room 5 at the office late on Fridays.",
    "User's son sleeps in room 2 at summer camp.",
    "User's toddler sleeps in room 3 of the daycare after lunch.",
    # a suite or a room after a possessive, no lodging's
    "User's suite is 4 on the office's third floor.",
    "User's rm is 12 in the dorm block.",
    # the next sentence after a lodging's, not a room alone nor a stay
    "User read The Shining at a hotel. Room 237 scared them.",
    "The lodge was lovely. Room 5 of the museum has the best view.",
    # a lodge that is a club's or the verb, an inn with no room of anyone's
    "User's Masonic lodge meets in room 2 on Thursdays.",
    "User's lodge meeting is in room 2 on Thursdays.",
    "User will lodge a complaint about room 12 with the landlord.",
    "User likes the Lakeside Inn's restaurant and its room service.",
    "User's favourite pub is the Red Lion Inn, which has a function room 2 upstairs.",
]


@pytest.mark.parametrize("content", ROOMS_NO_ONE_LODGES_IN, ids=slug)
def test_a_room_no_one_lodges_in_is_stored_without_review(content):
    """Stop 65's audit of admission: its review's stay verbs read any "stays in room 3", the
    next sentence after a hotel's any "Room 237", and "suite" or "rm" after a possessive any
    room, so a library's study room, a film's room and an office suite waited for a
    reviewer. A stay's room followed by another place's name ("of the library", "at the
    office") is no lodging's unless a lodging is named after it, the next sentence counts
    only as "Room N" alone or with a stay's verb, and a possessive's suite only a hotel's."""
    assert_stored_without_review(content)
