"""The database failing as a write request's transaction commits.

Stop 57's audit of failure behaviour found that a write answered 503 at its request's commit
(``ATOMIC_REQUESTS``, after DRF's dispatch: ``DatabaseUnavailableMiddleware`` answers it)
kept its write quota's charge, which only DRF's exception handler gave back: an agent
retrying as the 503 told it to was throttled for writes that stored nothing (docs/api.md,
429). The charges are kept on Django's request now, and the middleware gives them back.
"""

import psycopg
import pytest
from django.db.backends.postgresql.base import DatabaseWrapper
from django.test.utils import override_settings

from api import throttling
from memory_core.models import Memory
from memory_core.services import writes

_fail = {"next_commit": False, "armed": True}


@pytest.fixture
def commit_fails_once(monkeypatch):
    """The connection is lost as the write's request commits (the server restarted, a
    failover): PostgreSQL never saw the COMMIT, so nothing was stored."""
    real_commit = DatabaseWrapper._commit
    real_write = writes.memory_write

    def commit(self):
        if _fail["next_commit"]:
            _fail["next_commit"] = False
            self.connection.rollback()
            with self.wrap_database_errors:
                raise psycopg.OperationalError("server closed the connection unexpectedly")
        return real_commit(self)

    def write(*args, **kwargs):
        result = real_write(*args, **kwargs)
        _fail["next_commit"] = _fail["armed"]
        return result

    monkeypatch.setattr(DatabaseWrapper, "_commit", commit)
    monkeypatch.setattr("api.memories.memory_write", write)
    throttling.counter_cache().clear()
    _fail["armed"] = True
    yield
    _fail["next_commit"] = False
    throttling.counter_cache().clear()


def note(client, n):
    return client.post(
        "/api/v1/memories",
        {
            "subject": "dana", "memory_type": "user_preference", "memory_key": f"style.n{n}",
            "scope": "global", "content": f"User prefers answers in style number {n}.",
            "source": {"type": "user_input", "conversation_id": "c-1", "message_id": f"m-{n}"},
        },
        format="json",
    )  # fmt: skip


@pytest.mark.django_db(transaction=True)
@override_settings(MEMLEDGER_WRITE_QUOTA="3/day", MEMLEDGER_RATE_LIMIT=None)
def test_a_write_answered_503_at_commit_gives_its_write_back(api_client, commit_fails_once):
    """docs/api.md, 429: a write answered with an error, 4xx or 503, stored nothing and gives
    its write back, a 503 the middleware answers too (the failure at the request's commit,
    outside DRF's exception handler)."""
    api_client.raise_request_exception = False
    failed = [note(api_client, n) for n in range(2)]
    assert [r.status_code for r in failed] == [503, 503], [r.content[:300] for r in failed]
    assert failed[0].json()["error"]["code"] == "memory_unavailable"
    assert Memory.objects.count() == 0
    # The database is back: three writes fit a quota of three a day, as none was stored.
    _fail["armed"] = False
    after = [note(api_client, n).status_code for n in range(2, 5)]
    assert after == [201, 201, 201]
