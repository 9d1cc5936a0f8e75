"""Environment names: one parser for the write body, the import and the retrieval context."""

import pytest

from memory_core.admission import parse_candidate
from memory_core.environments import (
    MAX_ENVIRONMENT_CHARS,
    InvalidEnvironment,
    environment_applies,
    normalize_environment,
)
from memory_core.exceptions import ValidationFailed
from tests.factories import write_body


@pytest.mark.parametrize(
    ("raw", "stored"),
    [
        (None, ""),
        ("", ""),
        ("staging", "staging"),
        ("Staging", "staging"),  # one environment, however it is spelt
        ("eu-west-1/prod", "eu-west-1/prod"),
        ("k8s:cluster-2.blue_green", "k8s:cluster-2.blue_green"),
        ("9" * MAX_ENVIRONMENT_CHARS, "9" * MAX_ENVIRONMENT_CHARS),
    ],
)
def test_names_are_stored_lower_case(raw, stored):
    assert normalize_environment(raw) == stored


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (3, "invalid"),
        (["staging"], "invalid"),
        (True, "invalid"),
        ("x" * (MAX_ENVIRONMENT_CHARS + 1), "max_length"),
        ("stag ing", "invalid_environment"),
        (" staging", "invalid_environment"),
        ("staging\n", "invalid_environment"),  # Python's $ would have let it through
        ("-staging", "invalid_environment"),
        ("/prod", "invalid_environment"),
        ("prod;drop", "invalid_environment"),
        ("prod\u0000", "invalid_environment"),
        ("\u212aube", "invalid_environment"),  # the Kelvin sign lower-cases to an ASCII "k"
        ("stäging", "invalid_environment"),
    ],
)
def test_anything_else_is_refused_with_a_stable_code(raw, code):
    with pytest.raises(InvalidEnvironment) as caught:
        normalize_environment(raw)
    assert caught.value.code == code and caught.value.message


def test_another_json_type_is_invalid_in_the_words_every_field_uses():
    """It was ``invalid_type``, "Must be a string.", where every other field of a body says
    ``invalid``, naming the type sent (docs/api.md)."""
    with pytest.raises(InvalidEnvironment) as caught:
        normalize_environment(3)
    assert (caught.value.code, caught.value.message) == (
        "invalid",
        "Must be a string, not an integer.",
    )


def test_a_memory_without_environment_applies_everywhere_a_tied_one_only_where_it_is_active():
    assert environment_applies("", "") and environment_applies("", "production")
    assert environment_applies("staging", "staging")
    assert not environment_applies("staging", "production")
    # The caller did not say: a workaround for staging must not reach what may be production.
    assert not environment_applies("staging", "")


def test_the_write_parser_keeps_the_environment_and_reports_a_bad_one():
    assert parse_candidate(write_body(environment="Staging")).environment == "staging"
    assert parse_candidate(write_body()).environment == ""
    with pytest.raises(ValidationFailed) as caught:
        parse_candidate(write_body(environment="no spaces"))
    assert [e["code"] for e in caught.value.details["environment"]] == ["invalid_environment"]


def test_the_admin_form_is_told_to_write_the_stored_form():
    from django.core.exceptions import ValidationError

    from memory_core.environments import validate_stored_environment

    validate_stored_environment("staging")
    for value in ("Staging", "on staging"):
        with pytest.raises(ValidationError):
            validate_stored_environment(value)
