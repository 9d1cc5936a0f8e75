"""Parsing a request's body or query string with an input serializer (a 400 with stable field
codes otherwise): shared by every view, so each endpoint refuses a bad body or query alike."""

from rest_framework import serializers

from api.exceptions import InvalidQuery


def parse(serializer_class, data):
    """Validate ``data`` with ``serializer_class``; raise a 400 with stable field codes (the
    exception handler flattens the errors, ``api.exceptions.error_details``)."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def parse_query(serializer_class, query_params):
    """Validate a list's query string with ``serializer_class``. A parameter given twice is
    refused (``repeated``): read as its last value, ``?subject=a&subject=b`` listed b's rows
    only and ``?limit=500&limit=5`` passed the limit's check."""
    repeated = sorted(name for name, values in query_params.lists() if len(values) > 1)
    if repeated:
        raise InvalidQuery(
            {
                name: [serializers.ErrorDetail("Give this parameter once.", code="repeated")]
                for name in repeated
            }
        )
    try:
        return parse(serializer_class, query_params.dict())
    except serializers.ValidationError as exc:
        raise InvalidQuery(exc.detail) from None
