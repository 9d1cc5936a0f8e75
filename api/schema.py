"""Post-processing of the OpenAPI schema (``SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]``)."""

from drf_spectacular.plumbing import ResolvedComponent

from api.memories_serializers import StrictSerializer
from memory_core.admission.candidate import MAX_BATCH
from memory_core.subject_tokens import HEADER

# "HTTP_X_MEMLEDGER_SUBJECT_TOKEN" as a client sends it: X-Memledger-Subject-Token.
SUBJECT_TOKEN_HEADER = "-".join(part.capitalize() for part in HEADER[5:].split("_"))

SUBJECT_TOKEN_PARAMETER = {
    "in": "header",
    "name": SUBJECT_TOKEN_HEADER,
    "required": False,
    "schema": {"type": "string"},
    "description": (
        "A subject token (POST /api/v1/subject-tokens): an agent without any_subject acts "
        "for the subject it names, and only for it."
    ),
}


def subject_token_header(result, generator, request, public):
    """Give every operation an agent's API key authenticates the optional subject token
    header: a client generated from the schema had no way to send it."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            if any("ApiKey" in requirement for requirement in operation.get("security", [])):
                operation.setdefault("parameters", []).append(SUBJECT_TOKEN_PARAMETER)
    return result


def batch_item_bounds(result, generator, request, public):
    """State a batch's 1 to ``MAX_BATCH`` items on ``MemoryBatch.items`` (drf-spectacular
    describes no bounds of a list serializer): a client or a fuzzer reading the schema sent
    empty and oversized batches it could not know were refused (stop 52's audit)."""
    schemas = result.get("components", {}).get("schemas", {})
    for name, component in schemas.items():
        if name.startswith("MemoryBatch") and "items" in component.get("properties", {}):
            component["properties"]["items"].update(minItems=1, maxItems=MAX_BATCH)
    return result


def strict_request_objects(result, generator, request, public):
    """Close every object a ``StrictSerializer`` describes (``additionalProperties: false``):
    the API refuses a field it does not declare (``400 unknown_field``), and a client or a
    fuzzer reading the schema sent bodies it was told were valid (stop 64's audit of the
    API)."""
    schemas = result.get("components", {}).get("schemas", {})
    for name, component in schemas.items():
        if isinstance(_built_from(generator, name), StrictSerializer):
            component["additionalProperties"] = False
    return result


def _built_from(generator, name: str):
    """Return what the schema component ``name`` was built from (a serializer), or None for
    one the registry does not hold."""
    try:
        return generator.registry[(name, ResolvedComponent.SCHEMA)].object
    except KeyError:
        return None
