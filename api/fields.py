"""Fields of JSON request bodies that take only their own JSON type.

DRF's fields convert loosely, as suits HTML forms: a BooleanField reads "yes", "on" or 1 as
true, an IntegerField reads "5" and 5.0, a FloatField reads "0.5", a CharField turns 5 into
"5". In a JSON body each of these is a client bug (a number sent as a string, a flag sent as
1, an id sent as a number), and reading it anyway hides the bug: ``{"subject": 5}`` asked
to delete the memories of subject "5". Here a value of another JSON type is the field error
``invalid`` (DRF's code for a value it cannot read, as ``UUIDStringField`` answers a number),
whose message names the type expected and the type sent: "Must be an integer, not a string."

Every field subclasses the DRF field it tightens, so its other checks (``max_length``,
``min_value``, ``null``, ``blank``, ``null_characters_not_allowed``...) and its OpenAPI type
(drf-spectacular maps a field by its DRF class) stay as they were. Query strings are text
whatever they mean, so their serializers keep DRF's fields (``api.pagination``,
``api.parsing.parse_query``).
"""

import math

from django.core.validators import ProhibitNullCharactersValidator, RegexValidator
from rest_framework import serializers
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from memory_core.admission.candidate import (
    ID_PATTERN,
    INVALID_ID,
    INVISIBLE_ONLY,
    id_problems,
    invalid_choice_message,
)
from memory_core.admission.normalize import is_blank
from memory_core.json_types import wrong_type
from memory_core.text import BIDI_CONTROLS, BIDI_CONTROLS_MESSAGE, identifier


class _StrictType:
    """Refuse, before the DRF field reads it, a value that ``accepts`` does not."""

    expected = ""  # "a string", ..., as the message names it

    def accepts(self, data) -> bool:
        raise NotImplementedError

    def to_internal_value(self, data):
        if not self.accepts(data):
            raise serializers.ValidationError(wrong_type(self.expected, data), code="invalid")
        return super().to_internal_value(data)


class StrictCharField(_StrictType, serializers.CharField):
    """A JSON string (DRF's CharField also takes 5 and 5.0, as "5" and "5.0")."""

    expected = "a string"

    def accepts(self, data) -> bool:
        return isinstance(data, str)


def visible_id(value: str) -> None:
    """Refuse an id that shows nothing (zero-width spaces, format or control characters
    alone): ``invisible_characters_only``, as every write refuses it. No memory can hold
    such an id, so a lookup by one would answer nothing and never say why. And one holding a
    bidirectional control, which no write stores either: ``bidi_controls_not_allowed``."""
    if value and BIDI_CONTROLS.search(value):
        raise serializers.ValidationError(BIDI_CONTROLS_MESSAGE, code="bidi_controls_not_allowed")
    if value and is_blank(value):
        raise serializers.ValidationError(INVISIBLE_ONLY, code="invisible_characters_only")


class _VisibleId:
    """Read a text field as an id (``text.identifier``: trimmed, in NFC, as writes store
    them) and add ``visible_id`` to its validators."""

    def __init__(self, **kwargs):
        kwargs["validators"] = [*kwargs.get("validators", ()), visible_id]
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        return identifier(super().to_internal_value(data))


class IdField(_VisibleId, StrictCharField):
    """An id a request names a subject, key, session, task or scope by, as a JSON string: its
    surrounding whitespace trimmed and in NFC (``text.identifier``), and one that shows
    nothing refused (``visible_id``)."""


class BodyIdField(StrictCharField):
    """An id in a write's body, measured as the write stores it (``text.identifier``: trimmed,
    in NFC). The domain parser refuses an id that shows nothing with its own codes; measured
    as sent, an 80-character Korean subject from a macOS client (240 code points in NFD) was
    a 400 ``max_length`` that its NFC spelling was not (stop 54's audit of writes)."""

    def to_internal_value(self, data):
        return identifier(super().to_internal_value(data))


class WrittenId(RegexValidator):
    """Refuse an id a write could not store, by the domain's checker
    (``candidate.id_problems``): each of its mistakes once, as import answers it. A
    RegexValidator, so the OpenAPI schema gives the id's ``pattern``."""

    def __init__(self):
        super().__init__(rf"\A{ID_PATTERN}\Z", INVALID_ID, code="invalid_id")

    def __call__(self, value):
        problems = id_problems(value)
        if problems:
            details = [serializers.ErrorDetail(message, code=code) for code, message in problems]
            raise serializers.ValidationError(details)


class WriteIdField(BodyIdField):
    """An id a write stores and answers as sent, held to ``ID_CHARACTERS``
    (``source.conversation_id``, ``source.tool``, ``session_id``, ``task_id``, a usage
    report's ``reference``), checked by ``WrittenId`` alone: DRF's own NUL and surrogate
    checks are left out, as ``WrittenId`` tells them (beside them a NUL was told twice,
    ``null_characters_not_allowed`` and ``invalid_id``: stop 57's audit of bad input)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.validators = [
            validator
            for validator in self.validators
            if not isinstance(
                validator, (ProhibitNullCharactersValidator, ProhibitSurrogateCharactersValidator)
            )
        ]
        self.validators.append(WrittenId())


class QueryIdField(_VisibleId, serializers.CharField):
    """``IdField`` in a query string (text whatever it means: DRF's CharField)."""


class NamedChoiceField(serializers.ChoiceField):
    """A ChoiceField whose ``invalid_choice`` error names the valid choices (DRF's says only
    ``"preference" is not a valid choice.``): the query string's choices, and the base of
    ``StrictChoiceField``."""

    def fail(self, key, **kwargs):
        if key == "invalid_choice":
            message = invalid_choice_message(kwargs.get("input"), self.choices)
            raise serializers.ValidationError(message, code=key)
        super().fail(key, **kwargs)


class StrictChoiceField(_StrictType, NamedChoiceField):
    """One of the choices, as a JSON string (DRF's ChoiceField compares ``str(value)``, so a
    choice spelt like a number would be chosen by that number)."""

    expected = "a string"

    def accepts(self, data) -> bool:
        return isinstance(data, str)


class StrictDateTimeField(_StrictType, serializers.DateTimeField):
    """An ISO 8601 date-time, as a JSON string."""

    expected = "a string holding an ISO 8601 date-time"

    def accepts(self, data) -> bool:
        return isinstance(data, str)


class StrictBooleanField(_StrictType, serializers.BooleanField):
    """``true`` or ``false`` (DRF's BooleanField also takes "yes", "on", "1", 1 and 0.0)."""

    expected = "true or false"

    def accepts(self, data) -> bool:
        return isinstance(data, bool)


class StrictIntegerField(_StrictType, serializers.IntegerField):
    """A JSON integer: not a boolean, a string, or a number written with a fraction or an
    exponent (DRF's IntegerField takes true as 1, "5" and 5.0)."""

    expected = "an integer"

    def accepts(self, data) -> bool:
        return isinstance(data, int) and not isinstance(data, bool)


class StrictFloatField(_StrictType, serializers.FloatField):
    """A finite JSON number, integer or not: not a boolean or a string (DRF's FloatField takes
    true as 1.0 and "0.5")."""

    expected = "a finite number"

    def accepts(self, data) -> bool:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            return False
        return isinstance(data, int) or math.isfinite(data)

    def to_internal_value(self, data):
        if isinstance(data, int) and not isinstance(data, bool):
            # An integer is compared with the bounds before DRF's ``float()``, which raises on
            # one beyond a float's range: a 400-digit confidence was ``overflow``, "Integer
            # value too large to convert to float", where 2 is ``max_value`` (stop 60's audit
            # of bad input to the API).
            if self.max_value is not None and data > self.max_value:
                self.fail("max_value", max_value=self.max_value)
            if self.min_value is not None and data < self.min_value:
                self.fail("min_value", min_value=self.min_value)
        return super().to_internal_value(data)


class UUIDStringField(serializers.UUIDField):
    """A UUID sent as a JSON string. DRF's UUIDField also reads a number as the UUID of that
    integer (``5`` as 00000000-…-0005, ``true`` as …-0001), which no client means: here it is
    ``invalid``, not a 404 or ``not_selected`` about an id nobody sent, and its message names
    the type sent ("Must be an id (a UUID string), not an integer."; DRF's "Must be a valid
    UUID." read as if the id were a string spelt wrong)."""

    expected = "an id (a UUID string)"

    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise serializers.ValidationError(wrong_type(self.expected, data), code="invalid")
        return super().to_internal_value(data)


class BoundedListField(serializers.ListField):
    """A list whose length is checked before its items: DRF's ``ListField`` checks each item
    first and its ``max_length`` only when every item passed, so 60,000 items of the wrong
    type were 60,000 errors (a 180 kB body answered 4.4 MB), not one ``max_length``.

    Another JSON type is DRF's ``not_a_list``, in the words every field uses ("Must be an
    array of ids (UUID strings), not a string."; DRF's named Python's type, ``"str"``)."""

    def __init__(self, *, expected: str = "an array", **kwargs):
        self.expected = expected
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, list):
            raise serializers.ValidationError(wrong_type(self.expected, data), code="not_a_list")
        if self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().to_internal_value(data)
