"""Pagination of the API's lists: offset pages, and the memory list's opt-in cursor pages.

Offset pages (``limit``/``offset``, with ``count``) are the contract every client has. On a
large tenant the count visits every row the agent may see and a deep offset walks the rows
before it (docs/performance-history.md, "Stop 19"), so ``GET /api/v1/memories`` also pages by a
cursor on request: ``?pagination=cursor`` starts, the ``next`` and ``previous`` links carry an
opaque ``cursor``, and each page is a range of migration 0015's index at any depth.
"""

import uuid
from datetime import datetime

from django.core import signing
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from memory_core.selectors.memories import (
    MAX_LIST_LIMIT,
    MAX_LIST_OFFSET,
    ListPosition,
    memory_list_page,
)

# Signing salt of the memory list's cursors; a new token format gets a new version ("v").
_CURSOR_SALT = "memledger.api.memory-list-cursor"
_CURSOR_VERSION = 1
_OLDER, _NEWER = "o", "n"
# A token is ~150 characters; anything far longer is not one.
MAX_CURSOR_CHARS = 512


class InvalidCursor(ValueError):
    """A cursor this API did not give out (or no longer reads)."""


def cursor_encode(position: ListPosition, *, older: bool) -> str:
    """Return the opaque token of the page next to ``position`` (older or newer rows).

    Base64 of a small JSON, signed with the secret key: the position alone could do no harm
    (it only bounds the caller's own queryset), but a signature turns a token edited by hand
    into a clear 400 instead of a quietly different page, and keeps the format ours to change.
    """
    payload = {
        "v": _CURSOR_VERSION,
        "t": position.created_at.isoformat(),
        "i": str(position.pk),
        "d": _OLDER if older else _NEWER,
    }
    return signing.dumps(payload, salt=_CURSOR_SALT)


def cursor_decode(token: str) -> tuple[ListPosition, bool]:
    """Return the position and direction (``older``) of ``token``; InvalidCursor if it is
    malformed, was altered, was signed with another key, or holds the wrong types."""
    try:
        payload = signing.loads(token, salt=_CURSOR_SALT)
    except (signing.BadSignature, ValueError, TypeError) as exc:
        raise InvalidCursor("not a cursor of this API") from exc
    if not isinstance(payload, dict) or payload.get("v") != _CURSOR_VERSION:
        raise InvalidCursor("not a cursor of this version")
    if payload.get("d") not in (_OLDER, _NEWER):
        raise InvalidCursor("no direction")
    return _position(payload), payload["d"] == _OLDER


def _position(payload: dict) -> ListPosition:
    try:
        created_at = datetime.fromisoformat(payload["t"])
        pk = uuid.UUID(payload["i"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidCursor("no position") from exc
    if created_at.tzinfo is None:  # every position this API gives out is aware
        raise InvalidCursor("a naive time")
    return ListPosition(created_at=created_at, pk=pk)


class MemoryPagination(LimitOffsetPagination):
    """Offset pages: ``{"count", "next", "previous", "results"}``.

    ``limit`` and ``offset`` come from the view's parsed query (``view.query``, checked by a
    ``PageQuerySerializer``), never from the raw query string again: DRF's IntegerField takes
    ``limit=2.0`` as 2, and the paginator's own ``int()`` refused it and quietly fell back to
    50 rows (and ``offset=2.0`` to 0).
    """

    default_limit = 50
    max_limit = MAX_LIST_LIMIT

    def paginate_queryset(self, queryset, request, view=None):
        self.query = getattr(view, "query", {})
        self.rows = super().paginate_queryset(queryset, request, view)
        return self.rows

    def get_limit(self, request):
        return self.query.get("limit", self.default_limit)

    def get_offset(self, request):
        return self.query.get("offset", 0)

    def get_next_link(self):
        """DRF's link to ``offset + limit``, unless that passes ``MAX_LIST_OFFSET``, which the
        query refuses: a client following ``next`` over a list of more than a million rows
        was answered 400 half way (stop 50's audit). There, ``past_the_offsets``."""
        if self.offset + self.limit > MAX_LIST_OFFSET and self.offset + self.limit < self.count:
            return self.past_the_offsets()
        return super().get_next_link()

    def past_the_offsets(self) -> str | None:
        """The next page's link where no offset reaches it: none (the walk by offsets ends,
        and ``count`` says how many rows lie past it)."""
        return None


class MemoryListPagination(MemoryPagination):
    """Offset pages, or cursor pages when the query asks for them (``view.query``).

    The view parses the query first (``MemoryListQuerySerializer``: the cursor is decoded and
    ``cursor`` with ``offset`` refused there, as every other bad parameter is); a cursor page
    answers ``{"next", "previous", "results"}``, with no count to compute.
    """

    def paginate_queryset(self, queryset, request, view=None):
        self.query = query = getattr(view, "query", {})
        self.cursor_mode = "cursor" in query or query.get("pagination") == "cursor"
        if not self.cursor_mode:
            return super().paginate_queryset(queryset, request, view)
        self.request = request
        self.limit = self.get_limit(request)
        self.position, self.older = query.get("cursor") or (None, True)
        self.page = memory_list_page(
            queryset, position=self.position, older=self.older, size=self.limit
        )
        self.had_cursor = self.position is not None
        return self.page.rows

    def past_the_offsets(self) -> str | None:
        """The memory list's next page past ``MAX_LIST_OFFSET`` is a cursor page: the rows
        older than this page's last (both read newest first)."""
        if not self.rows:
            return None
        url = remove_query_param(self.request.build_absolute_uri(), "offset")
        url = remove_query_param(url, "pagination")
        return replace_query_param(
            url, "cursor", cursor_encode(ListPosition.of(self.rows[-1]), older=True)
        )

    def get_paginated_response(self, data):
        if not self.cursor_mode:
            return super().get_paginated_response(data)
        return Response(
            {"next": self.cursor_next(), "previous": self.cursor_previous(), "results": data}
        )

    def cursor_next(self):
        """Return the link to the older rows: past the last row, if any lie there (read
        forward, the page knows; read backward, the page it came from lies there). A backward
        read that found nothing (every row of that page left the caller's view: revoked under
        ``status=active``, say) links back to the page it came from, from its cursor's own
        row on: it answered both links null, stranding the walk (stop 47's audit)."""
        rows = self.page.rows
        if not rows:
            if self.older or self.position is None:
                return None
            return self.cursor_link(self.position.just_newer(), older=True)
        if self.older and not self.page.more:
            return None
        return self.cursor_link(ListPosition.of(rows[-1]), older=True)

    def cursor_previous(self):
        """Return the link to the newer rows: before the first row, unless this page starts
        the list (the first page, or a backward read that found nothing newer). A forward
        read that found nothing (every row its link led to left the caller's view) links
        back to the page it came from, from its cursor's own row on, as ``cursor_next`` does
        for a backward one: both links were null (stop 54's audit of reads)."""
        rows = self.page.rows
        if not rows and self.older and self.position is not None:
            return self.cursor_link(self.position.just_older(), older=False)
        if (
            not rows
            or (self.older and not self.had_cursor)
            or (not self.older and not self.page.more)
        ):
            return None
        return self.cursor_link(ListPosition.of(rows[0]), older=False)

    def cursor_link(self, position: ListPosition, *, older: bool) -> str:
        url = remove_query_param(self.request.build_absolute_uri(), "pagination")
        return replace_query_param(url, "cursor", cursor_encode(position, older=older))

    def get_paginated_response_schema(self, schema):
        """Document both pages in one shape: ``count`` only in offset pages."""
        offset_schema = super().get_paginated_response_schema(schema)
        offset_schema["required"] = ["results"]
        properties = offset_schema["properties"]
        properties["count"]["description"] = "Offset pages only (absent from cursor pages)."
        properties["next"]["description"] = "The next page's URL (null on the last page)."
        properties["previous"]["description"] = "The previous page's URL (null on the first)."
        return offset_schema
