"""Input and output serializers of the memory write/read endpoints and the reviewer API.

Input serializers describe and check the shape of a body (HTTP 400 with field errors when it
does not fit); the domain parser (``memory_core.admission.candidate``) checks it again, and
admission decides (HTTP 201/202/422). Output serializers render rows; they hold no rules.
"""

from collections.abc import Mapping

from django.core.validators import ProhibitNullCharactersValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.settings import api_settings

from api.fields import (
    BodyIdField,
    NamedChoiceField,
    QueryIdField,
    StrictCharField,
    StrictChoiceField,
    StrictDateTimeField,
    StrictFloatField,
    WriteIdField,
)
from api.pagination import MAX_CURSOR_CHARS, InvalidCursor, cursor_decode
from memory_core.admission.candidate import (
    HARD_MAX_CONTENT_CHARS,
    HARD_MAX_ID_CHARS,
    MAX_BATCH,
    MAX_REASON_CHARS,
    MAX_SCOPE_CHARS,
    UNKNOWN_LEFT_OUT,
    batch_not_a_list,
    batch_size,
    unknown_told,
)
from memory_core.environments import (
    ENVIRONMENT_ALPHABET,
    MAX_ENVIRONMENT_CHARS,
    InvalidEnvironment,
    normalize_environment,
)
from memory_core.json_types import wrong_type
from memory_core.models import (
    MAX_REVIEW_REASON_CHARS,
    MAX_SCOPE_REF_CHARS,
    Authority,
    Consent,
    Memory,
    MemoryEvent,
    MemoryType,
    ReviewItem,
    Sensitivity,
    SourceType,
    Status,
)
from memory_core.selectors.memories import (
    MAX_LIST_LIMIT,
    MAX_LIST_OFFSET,
    WITHHELD_FIELDS,
    VisibleMemoryIds,
    memory_message_id_withheld,
    memory_words_withheld,
)


def _whole(message: str, code: str) -> serializers.ValidationError:
    """An error of an object or a list as a whole (``api.exceptions.error_details`` keys it by
    the object's path: ``source``, ``items``; the body's own under ``non_field_errors``)."""
    return serializers.ValidationError(
        {api_settings.NON_FIELD_ERRORS_KEY: [serializers.ErrorDetail(message, code=code)]}
    )


class StrictSerializer(serializers.Serializer):
    """An object in a JSON body: refuse fields the serializer does not declare
    (``unknown_field``), and another JSON type in the words every field uses ("Must be an
    object, not a string.", DRF's code ``invalid``). Unknown fields are reported with the
    declared fields' errors, in one answer: a body of ``user``, ``type`` and ``text`` hears
    that ``subject``, ``memory_type`` and ``content`` are required too."""

    unknown_message = "Unknown field."

    def run_validation(self, data=serializers.empty):
        if data is None and self.parent is None:
            # A body of literal ``null``: DRF's words were "No data provided", as if nothing
            # had been sent. (A nested object's null is its field's ``null`` error.)
            raise _whole("The body must be a JSON object, not null.", "null")
        return super().run_validation(data)

    def to_internal_value(self, data):
        if not isinstance(data, Mapping):
            raise _whole(wrong_type("an object", data), "invalid")
        # Named as an answer quotes a name (``echoed``: cut, escaped), as the domain parser
        # names it: quoted whole, a 100,000-character name came back whole, and one longer
        # than 60 characters or holding a newline was told twice, once in each spelling
        # (stop 53's audit of the write API).
        # Only the first 50 named, the rest counted (``unknown_told``), as the answer tells
        # them (``bounded``): each made an error, 90,000 of them kept a worker ~4 s.
        declared = set(self.fields)
        shown, left_out = unknown_told([name for name in data if name not in declared])
        unknown = {
            name: [serializers.ErrorDetail(self.unknown_message, code="unknown_field")]
            for name in shown
        }
        if left_out:
            unknown.setdefault(api_settings.NON_FIELD_ERRORS_KEY, []).append(
                serializers.ErrorDetail(str(left_out), code=UNKNOWN_LEFT_OUT)
            )
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            raise serializers.ValidationError(_merged(unknown, exc.detail)) from None
        if unknown:
            raise serializers.ValidationError(unknown)
        return value


def _merged(unknown: dict, detail: dict) -> dict:
    """Return the unknown fields' errors and the declared fields' ``detail`` as one: an
    unknown field named ``non_field_errors``, or the count of those left unnamed, and the
    object's own errors keep both lists."""
    merged = dict(unknown)
    for name, errors in detail.items():
        merged[name] = [*merged[name], *errors] if name in merged else errors
    return merged


def _id_field(**kwargs):
    """An id in a query string (text whatever it means: DRF's CharField)."""
    return QueryIdField(max_length=HARD_MAX_ID_CHARS, **kwargs)


def _body_id_field(**kwargs):
    """An id in a JSON body: a JSON string, measured in NFC (``api.fields.BodyIdField``)."""
    return BodyIdField(max_length=HARD_MAX_ID_CHARS, **kwargs)


def body_identifier_field(**kwargs):
    """An id in a JSON body that no guard reads (a conversation's, a tool's, a session's, a
    task's, a usage report's reference): letters, digits and a few separators only
    (``ID_PATTERN``), refused by the domain parser's checker with its codes
    (``api.fields.WriteIdField``)."""
    return WriteIdField(max_length=HARD_MAX_ID_CHARS, **kwargs)


@extend_schema_field(
    {
        "type": "string",
        "maxLength": MAX_ENVIRONMENT_CHARS,
        "pattern": "^([A-Za-z0-9][A-Za-z0-9._:/-]*)?$",
    }
)
class EnvironmentField(serializers.Field):
    """An environment name, checked and lower-cased by the domain's one parser
    (``memory_core.environments``), so the API and the import refuse the same names with the
    same codes: ``invalid`` (another JSON type), ``max_length``, ``invalid_environment``. Null
    or "" is none."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        kwargs.setdefault("default", "")
        super().__init__(**kwargs)

    def validate_empty_values(self, data):
        if data is None:
            return True, ""  # none: the same as leaving the field out
        return super().validate_empty_values(data)

    def to_internal_value(self, data):
        try:
            return normalize_environment(data)
        except InvalidEnvironment as exc:
            raise serializers.ValidationError(exc.message, code=exc.code) from exc

    def to_representation(self, value):
        return value


ENVIRONMENT_HELP = (
    f"The environment the memory holds in, e.g. 'staging' ({ENVIRONMENT_ALPHABET}; at most "
    f"{MAX_ENVIRONMENT_CHARS}; stored in lower case). Empty or absent: every environment."
)


class SourceSerializer(StrictSerializer):
    type = StrictChoiceField(choices=SourceType.choices)
    conversation_id = body_identifier_field()
    message_id = _body_id_field()
    tool = body_identifier_field(required=False, allow_blank=True)


class _MemoryBodySerializer(StrictSerializer):
    content = StrictCharField(max_length=HARD_MAX_CONTENT_CHARS, trim_whitespace=False)
    value = serializers.JSONField(
        required=False, allow_null=True, help_text="Optional structured value (any JSON)."
    )
    authority = StrictChoiceField(choices=Authority.choices, required=False)
    confidence = StrictFloatField(min_value=0.0, max_value=1.0, required=False)
    consent = StrictChoiceField(choices=Consent.choices, required=False)
    sensitivity = StrictChoiceField(choices=Sensitivity.choices, required=False)
    valid_until = StrictDateTimeField(required=False, allow_null=True)


class MemoryWriteSerializer(_MemoryBodySerializer):
    """The body of ``POST /api/v1/memories`` (and of each batch item)."""

    subject = _body_id_field(help_text="The subject's external id inside the key's tenant.")
    memory_type = StrictChoiceField(choices=MemoryType.choices)
    memory_key = _body_id_field(required=False, allow_blank=True)
    # Its length as sent is only a guard: the id, trimmed, is at most MAX_SCOPE_REF_CHARS
    # (the domain parser's ``invalid_scope``, answered with this serializer's errors).
    scope = BodyIdField(
        max_length=MAX_SCOPE_CHARS,
        help_text=(
            "'global' or kind:ref with kind user, project, repo or task; ref at most "
            f"{MAX_SCOPE_REF_CHARS} characters, stored without surrounding whitespace."
        ),
    )
    source = SourceSerializer()
    session_id = body_identifier_field(required=False, allow_blank=True)
    task_id = body_identifier_field(required=False, allow_blank=True)
    environment = EnvironmentField(help_text=ENVIRONMENT_HELP)


class BatchItemsSerializer(serializers.ListSerializer):
    """A batch's ``items``: an array of 1 to ``MAX_BATCH`` write bodies. Another type or size
    is an error of ``items`` itself, in words (DRF's codes ``not_a_list``, ``min_length`` and
    ``max_length``; its messages were "Expected a list of items but got type "int"." and
    "Ensure this field has at least 1 elements.")."""

    def __init__(self, **kwargs):
        kwargs.setdefault("child", MemoryWriteSerializer())
        super().__init__(min_length=1, max_length=MAX_BATCH, **kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, list):
            raise _whole(batch_not_a_list(data), "not_a_list")
        if not 1 <= len(data) <= MAX_BATCH:
            code = "min_length" if not data else "max_length"
            raise _whole(batch_size(len(data)), code)
        return super().to_internal_value(data)


class MemoryBatchSerializer(StrictSerializer):
    """The body of ``POST /api/v1/memories/batch``."""

    items = BatchItemsSerializer()


class MemoryCorrectionSerializer(_MemoryBodySerializer):
    """The body of ``POST /api/v1/memories/{id}/supersede``: the new version's content and
    provenance (subject, type, key and scope are the corrected memory's)."""

    source = SourceSerializer()
    reason = StrictCharField(max_length=MAX_REASON_CHARS, required=False, allow_blank=True)


class RevokeSerializer(StrictSerializer):
    reason = StrictCharField(max_length=MAX_REASON_CHARS, required=False, allow_blank=True)


class ReviewDecisionSerializer(StrictSerializer):
    reason = StrictCharField(
        max_length=MAX_REVIEW_REASON_CHARS, help_text="Kept with the decision."
    )


class TokenField(serializers.CharField):
    """An opaque token's field: DRF's check for NUL characters left out, so that a token
    holding one reaches the field's own validation and is the one code it answers for every
    bad token (``null_characters_not_allowed`` was answered for a cursor: stop 50's audit)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.validators = [
            validator
            for validator in self.validators
            if not isinstance(validator, ProhibitNullCharactersValidator)
        ]


class QuerySerializer(StrictSerializer):
    """A query string (``api.parsing.parse_query``): an unknown name is a parameter."""

    unknown_message = "Unknown parameter."


class PageQuerySerializer(QuerySerializer):
    """``limit`` and ``offset`` of a list paginated by ``MemoryPagination``: its next and
    previous links carry them, so every paginated list must accept them."""

    limit = serializers.IntegerField(min_value=1, max_value=MAX_LIST_LIMIT, required=False)
    offset = serializers.IntegerField(min_value=0, max_value=MAX_LIST_OFFSET, required=False)


def _offset_with_cursor(field: str) -> serializers.ValidationError:
    return serializers.ValidationError(
        {
            field: [
                serializers.ErrorDetail(
                    "offset pages and cursor pages do not mix: drop offset, or drop cursor "
                    "and pagination=cursor.",
                    code="offset_with_cursor",
                )
            ]
        }
    )


class MemoryListQuerySerializer(PageQuerySerializer):
    subject = _id_field(required=False)
    type = NamedChoiceField(choices=MemoryType.choices, required=False)
    status = NamedChoiceField(choices=Status.choices, required=False)
    key = _id_field(required=False)
    pagination = NamedChoiceField(
        choices=["offset", "cursor"],
        required=False,
        help_text=(
            "offset (the default): limit/offset pages with a count. cursor: pages read by "
            "position, newest first, with next/previous links carrying a cursor and no count; "
            "as fast at any depth, and stable while memories are added."
        ),
    )
    cursor = TokenField(
        required=False,
        allow_blank=True,  # so that an empty one is invalid_cursor like any other
        help_text="Opaque; copy it from a cursor page's next or previous link.",
    )

    def validate_cursor(self, token: str):
        """Return the cursor decoded, ``(ListPosition, older)``. A token that is malformed,
        altered, signed with another key or holds the wrong types is the one field error
        ``invalid_cursor``, so a client has one code to check before starting over."""
        try:
            if len(token) > MAX_CURSOR_CHARS:
                raise InvalidCursor("too long")
            return cursor_decode(token)
        except InvalidCursor:
            raise serializers.ValidationError(
                "This cursor is not one this API gave out (or it was altered): follow the "
                "next and previous links as given, or start again with pagination=cursor.",
                code="invalid_cursor",
            ) from None

    def to_internal_value(self, data):
        """Name mixed pagings with the query string's other mistakes: DRF runs ``validate``
        only once every field passed, and a query with another bad parameter heard of
        ``offset_with_cursor`` in a second round (stop 54's audit of reads)."""
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError as exc:
            mixed = _mixed_pagings(data)
            if mixed and isinstance(exc.detail, dict) and mixed not in exc.detail:
                exc.detail[mixed] = _offset_with_cursor(mixed).detail[mixed]
            raise

    def validate(self, attrs):
        """Refuse ``offset`` in cursor mode (and a cursor with ``pagination=offset``): the two
        pagings name a page differently, and neither answer could honour both."""
        mixed = _mixed_pagings(attrs)
        if mixed:
            raise _offset_with_cursor(mixed)
        return attrs


def _mixed_pagings(query) -> str | None:
    """Return the parameter that mixes offset and cursor pages in ``query`` (the query
    string, or its values read), or None."""
    cursor_mode = "cursor" in query or query.get("pagination") == "cursor"
    if cursor_mode and "offset" in query:
        return "offset"
    if "cursor" in query and query.get("pagination") == "offset":
        return "pagination"
    return None


class ReviewListQuerySerializer(PageQuerySerializer):
    state = NamedChoiceField(choices=ReviewItem.State.choices, required=False)
    kind = NamedChoiceField(choices=ReviewItem.Kind.choices, required=False)


# --- Output -----------------------------------------------------------------------------------

# The serializer context's entry that says which other memories an answer may name: a
# ``VisibleMemoryIds`` (``memory_core.selectors.memories.memory_visible_references``), one
# query for the whole answer. Without it an answer names no other memory.
VISIBLE_MEMORY_IDS = "visible_memory_ids"


def _visible_memory_ids(field) -> VisibleMemoryIds:
    return field.context.get(VISIBLE_MEMORY_IDS) or VisibleMemoryIds()


class MemoryRefField(serializers.UUIDField):
    """The id of another memory (a memory's ``supersedes``): null unless the caller may see
    that memory (the context's ``VISIBLE_MEMORY_IDS``), as its detail would answer 404."""

    def __init__(self, **kwargs):
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_representation(self, value):
        if value is None or not _visible_memory_ids(self).shows(value):
            return None
        return super().to_representation(value)


_WITHHELD = (
    "to agents while the write waits for a reviewer (status pending_approval), after one "
    "rejected it, and after it was revoked or expired before a reviewer approved it"
)


class SourceOutSerializer(serializers.Serializer):
    type = serializers.CharField(source="source_type")
    conversation_id = serializers.CharField(source="source_conversation_id")
    message_id = serializers.CharField(
        source="source_message_id",
        help_text="The message's id; empty when it is a sentence (it holds whitespace) "
        f"{_WITHHELD}.",
    )
    tool = serializers.CharField(source="source_tool")


def withheld_unless_admitted(data: dict, memory: Memory) -> dict:
    """Return ``data`` without the words agents are not answered (``memory_words_withheld``:
    a write never in use, one that waits for a reviewer, that a reviewer rejected, or that
    was revoked or expired while it waited), a message id that is a sentence among them
    (``memory_message_id_withheld``)."""
    if memory_words_withheld(memory):
        data.update({name: empty for name, empty in WITHHELD_FIELDS.items() if name in data})
    if isinstance(data.get("source"), dict) and memory_message_id_withheld(memory):
        data["source"] = {**data["source"], "message_id": ""}
    return data


class MemorySerializer(serializers.ModelSerializer):
    """A memory as agents see it (never the vector itself; the content of a write that was
    never in use withheld, ``withheld_unless_admitted``)."""

    withholds_words = True

    subject = serializers.CharField(source="subject.external_id")
    scope = serializers.CharField()
    source = SourceOutSerializer(source="*")
    supersedes = MemoryRefField(
        source="supersedes_id",
        help_text="The version this one corrects; null for a first version, and when the "
        "caller may not see that version.",
    )
    has_embedding = serializers.SerializerMethodField()

    class Meta:
        model = Memory
        extra_kwargs = {  # what ``withheld_unless_admitted`` answers agents in their place
            "content": {"help_text": f"What the memory says; empty {_WITHHELD}."},
            "value": {"help_text": f"The structured value, if any; null {_WITHHELD}."},
            "content_hash": {"help_text": f"SHA-256 of the normalized content; empty {_WITHHELD}."},
        }
        fields = [
            "id",
            "subject",
            "memory_class",
            "memory_type",
            "memory_key",
            "scope",
            "session_id",
            "task_id",
            "environment",
            "content",
            "value",
            "source",
            "authority",
            "confidence",
            "consent",
            "sensitivity",
            "valid_from",
            "valid_until",
            "status",
            "version",
            "supersedes",
            "policy_version",
            "content_hash",
            "embedding_model",
            "has_embedding",
            "created_at",
            "updated_at",
        ]

    @extend_schema_field(serializers.BooleanField())
    def get_has_embedding(self, memory) -> bool:
        return memory.embedding is not None

    def to_representation(self, instance):
        data = super().to_representation(instance)
        return withheld_unless_admitted(data, instance) if self.withholds_words else data


class EventDetailsField(serializers.JSONField):
    """An event's ``details`` (ids and codes), less the keys that name a memory the caller may
    not see, and less a reason the caller may not read: one of a write whose words are
    withheld, or one more sensitive than its grant (the context's ``VISIBLE_MEMORY_IDS``,
    ``VisibleMemoryIds.event_details``). Reads the whole event: which memory it is of decides
    the reason."""

    def __init__(self, **kwargs):
        kwargs.setdefault("source", "*")
        super().__init__(**kwargs)

    def to_representation(self, value):
        details = _visible_memory_ids(self).event_details(value.details, memory_id=value.memory_id)
        return super().to_representation(details)


class ChainLinkSerializer(serializers.ModelSerializer):
    supersedes = MemoryRefField(source="supersedes_id")

    def to_representation(self, instance):
        return withheld_unless_admitted(super().to_representation(instance), instance)

    class Meta:
        model = Memory
        fields = [
            "id",
            "version",
            "status",
            "authority",
            "supersedes",
            "content",
            "created_at",
            "updated_at",
        ]


class EventSerializer(serializers.ModelSerializer):
    """An event of a memory; its ``details`` name another memory (``successor``,
    ``supersedes``, ``winner``) only when the caller may see it: else the key is left out.
    ``actor_id`` names an agent or memledger, never a person (``actor_id_for_agents``)."""

    details = EventDetailsField()
    actor_id = serializers.CharField(
        source="actor_id_for_agents",
        help_text="The agent's id, or memledger's own name for itself (retention, deletion); "
        "empty when a person acted (the user, a reviewer, an administrator).",
    )

    class Meta:
        model = MemoryEvent
        fields = [
            "memory_id",
            "action",
            "actor_type",
            "actor_id",
            "reason_code",
            "policy_version",
            "details",
            "created_at",
        ]


class AdmissionOutSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    outcome = serializers.CharField()
    rule_codes = serializers.ListField(child=serializers.CharField())
    policy_version = serializers.IntegerField(allow_null=True)
    agent_id = serializers.UUIDField(allow_null=True)
    created_at = serializers.DateTimeField()


class MemoryDetailSerializer(serializers.Serializer):
    """A memory with its provenance, whole supersession chain (oldest first) and events."""

    memory = MemorySerializer()
    admission = AdmissionOutSerializer(source="decision", allow_null=True)
    chain = ChainLinkSerializer(many=True)
    events = EventSerializer(many=True)


class _DecisionBase(serializers.Serializer):
    decision = serializers.CharField()
    rule_codes = serializers.ListField(child=serializers.CharField())
    message = serializers.CharField(allow_blank=True)
    admission_decision_id = serializers.UUIDField(source="admission_decision.id")
    policy_version = serializers.IntegerField(allow_null=True)


def _item_of_kind(result, kind: str) -> str | None:
    """The id of ``result``'s review item if it is of ``kind``, else None."""
    item = result.review_item
    return str(item.id) if item is not None and item.kind == kind else None


class ConflictItemMixin(serializers.Serializer):
    """``conflict_review_item``: the conflict an accepted write of lower authority opened
    beside the key's head, or null."""

    conflict_review_item = serializers.SerializerMethodField()

    @extend_schema_field(serializers.UUIDField(allow_null=True))
    def get_conflict_review_item(self, result):
        return _item_of_kind(result, "conflict")


class AcceptedWriteSerializer(ConflictItemMixin, _DecisionBase):
    """201: the write was accepted and stored (embedded) before this answer."""

    memory = MemorySerializer(
        allow_null=True,
        help_text="The memory as it is now; null when the caller may not see it: its grant "
        "writes a type or sensitivity it does not read, or, in a replay (Idempotent-Replayed), "
        "it may no longer see it.",
    )


class PendingWriteSerializer(_DecisionBase):
    """202: a sensitive write waits for a reviewer; it is not used until approved."""

    review_item = serializers.UUIDField(source="review_item.id")
    memory_id = serializers.UUIDField(
        source="memory.id",
        allow_null=True,
        help_text="Null when the caller may not see the memory: its grant writes a type or "
        "sensitivity it does not read, or, in a replay (Idempotent-Replayed), it may no "
        "longer see it.",
    )


class RejectedWriteSerializer(_DecisionBase):
    """422: the admission policy refused the write; ``rule_codes`` say why."""


class BatchItemResultSerializer(ConflictItemMixin, _DecisionBase):
    """One item's result, its fields named as a single write's answer names them: the
    conflict an accepted item opened is ``conflict_review_item`` (it was ``review_item``,
    which a pending write's single answer uses for the item that waits for a reviewer)."""

    index = serializers.IntegerField()
    memory = MemorySerializer(allow_null=True)
    review_item = serializers.SerializerMethodField()

    @extend_schema_field(serializers.UUIDField(allow_null=True))
    def get_review_item(self, result):
        return _item_of_kind(result, "sensitive_write")


class BatchResultSerializer(serializers.Serializer):
    accepted = serializers.IntegerField()
    pending_approval = serializers.IntegerField()
    rejected = serializers.IntegerField()
    results = BatchItemResultSerializer(many=True)


class ReviewMemorySerializer(MemorySerializer):
    """A memory as a reviewer sees it: a reviewer sees every memory of the tenant, so every
    version one names, and the content of a write that waits for them or that they rejected."""

    withholds_words = False

    supersedes = serializers.UUIDField(source="supersedes_id", allow_null=True)


class ReviewItemSerializer(serializers.ModelSerializer):
    subject = serializers.CharField(source="subject.external_id")
    memory = ReviewMemorySerializer(allow_null=True)
    scope = serializers.CharField(
        read_only=True,
        help_text="A conflict's scope, that of its narrowest candidates ('' for other kinds).",
    )

    class Meta:
        model = ReviewItem
        fields = [
            "id",
            "kind",
            "state",
            "subject",
            "memory",
            "memory_key",
            "scope",
            "environment",
            "candidate_ids",
            "rule_codes",
            "resolution",
            "reason",
            "created_at",
            "resolved_at",
        ]


class ErrorBodySerializer(serializers.Serializer):
    """Every error: ``{"error": {"code", "message", "details"}}``."""

    class _Error(serializers.Serializer):
        code = serializers.CharField()
        message = serializers.CharField()
        details = serializers.JSONField()

    error = _Error()
