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


class RequestLineWithoutQuery(logging.Filter):
    """Drop the query string from the request line of ``django.server``'s records."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and record.args and isinstance(record.args[0], str):
            record.args = (without_query(record.args[0]), *record.args[1:])
        return True
