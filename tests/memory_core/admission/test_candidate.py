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


def test_an_id_of_invisible_characters_only_is_refused_on_every_path_that_parses_a_write():
    """The domain parser is the API's second reading and import_memories' only one: an id of
    zero-width spaces is ``invisible_characters_only`` there too, and one that shows a letter
    is kept as written."""
    source = {"type": "user_input", "conversation_id": "c-1", "message_id": "\u2060"}
    errors = errors_of(
        write_body(subject="\u200b", memory_key="\u200c\u200d", scope="task: \ufeff", source=source)
    )
    assert {name: [e["code"] for e in found] for name, found in errors.items()} == {
        "subject": ["invisible_characters_only"],
        "memory_key": ["invisible_characters_only"],
        "scope": ["invisible_characters_only"],
        "source.message_id": ["invisible_characters_only"],
    }
    kept = parse_candidate(write_body(subject="\u200bu-1", scope="task:t\u200b"))
    assert (kept.subject, kept.scope_ref) == ("\u200bu-1", "t\u200b")


@pytest.mark.parametrize(
    ("raw", "code"), [(10**400, "max_value"), (-(10**400), "min_value")], ids=["above", "below"]
)
def test_the_domain_parser_answers_a_huge_integer_confidence_as_the_api_does(raw, code):
    """Stop 60's review found that the stop's fix made the API answer a 400-digit integer
    ``confidence`` as ``max_value`` (``min_value`` below 0), "however large" (docs/api.md),
    but only in
    ``api.fields.StrictFloatField``: the domain parser, ``candidate._confidence``
    (memory_core/admission/candidate.py:1085), called ``float()`` first and answered
    ``overflow`` "Integer value too large to convert to float", while its docstring said it
    refused a confidence "as the API does", and ``import_memories`` (which reads a JSON line
    through it) is held to answer as the API does (tests/memory_core/test_import_as_api.py).
    An integer is compared with 0 and 1 before ``float()`` now."""
    with pytest.raises(ValidationFailed) as caught:
        parse_candidate(write_body(confidence=raw))
    codes = [entry["code"] for entry in caught.value.details["confidence"]]
    assert codes == [code], caught.value.details
