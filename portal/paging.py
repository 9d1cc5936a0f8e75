"""The query string of a paged portal list: which page, and the rest kept for its links."""


def page_number(request) -> int:
    """Return the ``page`` of the query string (1 when absent or not a positive number)."""
    try:
        return max(1, int(request.GET.get("page", 1)))
    except (TypeError, ValueError):
        return 1


def page_query(request) -> str:
    """Return the query string without ``page``: the links to other pages add their own."""
    query = request.GET.copy()
    query.pop("page", None)
    return query.urlencode()
