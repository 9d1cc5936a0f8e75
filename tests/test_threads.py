"""The helper the race tests run their second request with (``tests/threads.py``)."""

import threading
import time

import pytest
from django.db import connection

from tests.threads import errors_of, in_thread


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _session_exists(pid: int) -> bool:
    with connection.cursor() as cursor:
        # The test's transaction would read the sessions of its first look again and again:
        # PostgreSQL keeps a transaction's view of pg_stat_activity until told to drop it.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid])
        return cursor.fetchone()[0] == 1


@pytest.mark.django_db
def test_the_thread_has_its_own_session_and_ends_it_with_its_work():
    mine = _backend_pid()
    pid = in_thread(_backend_pid).outcome(30)
    assert pid != mine
    deadline = time.monotonic() + 10  # the backend exits just after the client hangs up
    while _session_exists(pid):
        assert time.monotonic() < deadline, f"the thread's session {pid} outlived it"
        time.sleep(0.02)


@pytest.mark.django_db
def test_an_error_of_the_session_ends_it_too_and_is_raised_to_the_test():
    pids = []

    def fails():
        pids.append(_backend_pid())
        raise LookupError("the work failed")

    failing = in_thread(fails)
    with pytest.raises(LookupError, match="the work failed"):
        failing.outcome(30)
    deadline = time.monotonic() + 10
    while _session_exists(pids[0]):
        assert time.monotonic() < deadline, f"the failed thread's session {pids[0]} outlived it"
        time.sleep(0.02)


def test_an_error_releases_whoever_waits_for_the_work():
    reached = threading.Event()

    def fails_before_it_gets_there():
        raise RuntimeError("broken before the pause")

    thread = in_thread(fails_before_it_gets_there, released=[reached])
    assert reached.wait(10)  # not the 10 s a test waiting for the pause would lose
    assert errors_of(thread)[0].args == ("broken before the pause",)


def test_errors_of_waits_for_every_thread_and_keeps_their_order():
    go = threading.Event()

    def late_failure():
        go.wait(10)
        raise KeyError("late")

    late = in_thread(late_failure)
    fine = in_thread(lambda: "fine")
    early = in_thread(lambda: 1 / 0)
    go.set()
    errors = errors_of(late, fine, early)
    assert [type(error) for error in errors] == [KeyError, ZeroDivisionError]
    assert fine.result == "fine" and not late.is_alive()


def test_a_thread_still_working_fails_the_wait_instead_of_passing_unseen():
    release = threading.Event()
    stuck = in_thread(lambda: release.wait(10), name="stuck")
    try:
        with pytest.raises(AssertionError, match="thread 'stuck' still running after 0.1 s"):
            stuck.outcome(0.1)
    finally:
        release.set()
        stuck.wait(10)
