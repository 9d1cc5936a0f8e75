"""The write body's domain parser (``parse_candidate``): its field errors, all at once, in
the API's words (pure: no database)."""

import pytest

from memory_core.admission.candidate import parse_candidate
from memory_core.exceptions import ValidationFailed
from tests.factories import write_body


def errors_of(data) -> dict:
    with pytest.raises(ValidationFailed) as caught:
        parse_candidate(data)
    return caught.value.details


def test_a_choice_outside_the_enumeration_names_the_valid_ones():
    errors = errors_of(write_body(consent="yes", sensitivity=5))
    assert errors["consent"] == [
        {
            "code": "invalid_choice",
            "message": '"yes" is not a valid choice; one of: explicit, workflow.',
        }
    ]
    # Not a string at all: the API's words and code (api.fields.StrictChoiceField).
    assert errors["sensitivity"] == [
        {"code": "invalid", "message": "Must be a string, not an integer."}
    ]


def test_every_field_error_is_reported_at_once_and_a_sources_under_source():
    errors = errors_of({"user": "u", "scope": "moon:1", "source": {"type": "chat"}})
    assert {name: [e["code"] for e in found] for name, found in errors.items()} == {
        "user": ["unknown_field"],
        "subject": ["required"],
        "memory_type": ["required"],
        "scope": ["invalid_scope"],
        "content": ["required"],
        "source.type": ["invalid_choice"],
        "source.conversation_id": ["required"],
        "source.message_id": ["required"],
    }
