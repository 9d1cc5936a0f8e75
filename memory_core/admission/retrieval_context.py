"""A retrieval's context read by the injection guard, as a write's ids are.

The trace keeps the context's ids (``TRACED_CONTEXT``) and ``GET /api/v1/traces/{id}``
answers them to the agent, so what a write is refused for is refused there too: the retrieval
API's 400 ``refused`` (``api.retrieval``) and the evaluation harness's check of a case's
context (``evaluation.harness``) read them here alike. The harness read only the ids' shape,
and a case the API refuses was scored, a miss of every required memory charged to the system
(stop 63's review).
"""

from __future__ import annotations

from collections.abc import Mapping

from memory_core.admission.candidate import key_words, written_and_words
from memory_core.admission.policy import REFUSING, describe, id_codes

# What the trace keeps of the request's context besides the user's id, which names a subject a
# write admitted (``task:<id>``, ``project:<id>`` and ``repo:<id>`` in its scopes, the session
# and task in its plan, the environment and the locale as sent), in ``Candidate.id_texts``'s
# order. GET /api/v1/traces/{id} answers them to the agent.
TRACED_CONTEXT = (
    "task_id",
    "session_id",
    "project_id",
    "repository_id",
    "environment",
    "locale",
)


def context_refusals(ids: Mapping[str, str]) -> dict[str | None, str]:
    """Return the message of each of ``ids`` (by name, ``TRACED_CONTEXT``'s) a write would be
    refused for: the injection guard's refusing codes (``policy.id_codes``) of each as written
    and as words, then, if none, of all of them as words on one line (under None), as
    ``Candidate.id_texts`` reads a write's ids (an instruction may be split across them). {}
    when none is refused."""
    given = {name: text for name, text in ids.items() if text}
    refusals: dict[str | None, str] = {}
    for name, text in given.items():
        codes = _refusing(written_and_words(text))
        if codes:
            refusals[name] = _message(codes)
    if not refusals and len(given) > 1:
        codes = _refusing("\n".join(key_words(text) for text in given.values()))
        if codes:
            refusals[None] = _message(codes)
    return refusals


def _refusing(text: str) -> list[str]:
    """Return the injection guard's codes for ``text`` that refuse a write."""
    return [code for code in id_codes([text]) if code in REFUSING]


def _message(codes: list[str]) -> str:
    return (
        f"{describe(codes)} ({', '.join(codes)}) It would be kept in the trace, which is "
        "answered again."
    )
