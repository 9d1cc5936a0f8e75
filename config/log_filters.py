"""What the web process's request lines leave out: the query string.

A request's query holds what an agent or a person filtered by: the memory list's ``subject``
(a person's external id, often an e-mail address) and ``key`` (a memory key can name a
health fact), the portal's search words. A log is a store no deletion reaches, so a request
line is logged as its method, path and protocol only. Paths hold ids, never words. gunicorn's
access log does the same by its format (``gunicorn.conf.py``); the development server logs its
lines through ``django.server``, whose records this filter rewrites (stop 51's audit of logs).
"""

from __future__ import annotations

import logging


def without_query(request_line: str) -> str:
    """``request_line`` ("GET /path?query HTTP/1.1") with its query string left out."""
    head, question, rest = request_line.partition("?")
    if not question:
        return request_line
    protocol = rest.rsplit(" ", 1)[1] if " " in rest else ""
    return f"{head} {protocol}" if protocol.startswith("HTTP/") else head


def _cut(text):
    """``text`` up to its first "?", where it holds one: the words of an error line that
    quote a request line ("Bad request syntax ('GET /memories?subject=a@b.c Smith HTTP/1.1')",
    from a request line of four words), which ``without_query`` cannot take apart."""
    if not isinstance(text, str) or "?" not in text:
        return text
    return text.split("?", 1)[0] + "?<query left out>"


class RequestLineWithoutQuery(logging.Filter):
    """Drop the query string from ``django.server``'s records: the request line of each
    request's line, and from anything else they quote (the server's error lines)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and record.args:
            first, *rest = record.args
            first = without_query(first) if isinstance(first, str) else first
            record.args = (first, *(_cut(arg) for arg in rest))
        return True
