"""Parsing a request's body or query string with an input serializer (a 400 with stable field
codes otherwise): shared by every view, so each endpoint refuses a bad body or query alike.
``QueryStringChecked`` refuses a query string where an endpoint reads none."""

from rest_framework import serializers

from api.exceptions import InvalidQuery
from api.negotiation import NotAcceptableLast
from memory_core.admission.candidate import echoed_apart


def parse(serializer_class, data):
    """Validate ``data`` with ``serializer_class``; raise a 400 with stable field codes (the
    exception handler flattens the errors, ``api.exceptions.error_details``)."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def parse_query(serializer_class, query_params):
    """Validate a list's query string with ``serializer_class``. A parameter it declares
    given twice is refused (``repeated``): read as its last value, ``?subject=a&subject=b``
    listed b's rows only and ``?limit=500&limit=5`` passed the limit's check.

    Named with every other mistake of the query string, in one answer: it was checked first
    and answered alone, hiding them, and a parameter the endpoint does not take at all was
    told to be given once (it is ``unknown_field``, however often given), and without the
    bound on unknown names (stop 50's audit).

    Read under the names sent: the serializer names an unknown one as an answer quotes it
    (``StrictSerializer``). Named here first too, it was quoted twice: one holding a dot, which
    is told in quotes since stop 60's audit of bad input to the API, as ``""a.b""``."""
    declared = set(serializer_class().fields)
    repeated = {name for name, values in query_params.lists() if len(values) > 1} & declared
    serializer = serializer_class(
        data={name: value for name, value in query_params.items() if name not in repeated}
    )
    errors = {} if serializer.is_valid() else dict(serializer.errors)
    for name in sorted(repeated):
        errors[name] = [serializers.ErrorDetail("Give this parameter once.", code="repeated")]
    if errors:
        raise InvalidQuery(errors)
    return serializer.validated_data


def named(params: dict) -> dict:
    """Return ``params`` with each name as an answer may quote it (``echoed``: a lone
    surrogate or a newline escaped, a long name cut). An unknown parameter is named in the
    400, and a name holding a lone surrogate (``?%5Cud800=1`` read with a charset such as
    ``unicode_escape``) made an answer that could not be encoded: a 500. A name the endpoint
    declares is printable and short, so it is kept as it is. Names cut alike are told apart
    (``echoed_apart``): folded into one, sixty unknown parameters were one mistake."""
    return dict(zip(echoed_apart(params), params.values(), strict=True))


UNKNOWN_PARAMETER = "Unknown parameter: this endpoint takes no query string."


def handles_method(view, request) -> bool:
    """Whether ``view`` has a handler for ``request``'s method. One it lacks is answered 405
    by ``APIView.dispatch`` once ``initial`` returns, so a view's own checks of the query
    string in ``initial`` wait for that: the 405 comes first, whatever the query string (it
    was ``400 unknown_field`` with one, stop 63's audit of the API)."""
    method = request.method.lower()
    return method in view.http_method_names and hasattr(view, method)


class QueryStringChecked(NotAcceptableLast):
    """An API view whose handlers read no query string but those of ``query_methods`` (a
    list's GET, which parses its own with ``parse_query``): any parameter sent to another is
    ``unknown_field``, as an unknown body field is. (``POST /api/v1/memories?dry_run=1`` stored
    the memory, ``?format=api`` and ``?subject=`` were ignored, and the answer read as if it
    had honoured them.)

    Checked after authentication, the permission and the rate limits (``initial``), as a
    body is, and an ``Accept`` header the view cannot answer is (``NotAcceptableLast``); a
    method the endpoint does not have is its 405 first."""

    query_methods: frozenset[str] = frozenset()

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if not handles_method(self, request):
            return  # the 405 comes first (APIView.dispatch)
        if request.method in self.query_methods or not request.query_params:
            return
        raise InvalidQuery(
            {
                name: [serializers.ErrorDetail(UNKNOWN_PARAMETER, code="unknown_field")]
                for name in sorted(named(request.query_params))
            }
        )
