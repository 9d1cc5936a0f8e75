"""Stop 70's second review of f066a297: ``manage.py retention_sweep``'s soft time limit.

The limit (``_soft_time_limit``, a ``SIGALRM``) raised ``SoftTimeLimitExceeded`` wherever the
main thread was, psycopg's wait for a COMMIT included. psycopg then held the connection ACTIVE
(the COMMIT's answer never read), Django's ``atomic`` could not put it back in autocommit (a
``ProgrammingError``, "connection in transaction status ACTIVE"), and the retention sweep took
that for a tenant's failure: the limit was swallowed, the run went on past it, every later
statement failed ("another command is already in progress"), and the command printed a report
(exit status 0) where it was to end at the limit. A COMMIT waits where its deferred foreign-key
checks wait: for a row another transaction holds ``FOR UPDATE`` (here the subject's).
The limit is now raised between statements (the one in flight cancelled), and only a run
waiting outside any statement (a file lock) is ended where it waits, after a grace.
"""

import io
import json
import time
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.utils import timezone

from memory_core.models import MemoryClass, MemoryType, Subject, Tombstone
from memory_core.rls import PLATFORM_SETTING
from tests.deletion.conftest import held_in_another_transaction
from tests.factories import MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_soft_limit_reached_in_a_commit_ends_the_run_and_leaves_the_connection_usable(
    tenant, settings
):
    settings.CELERY_TASK_SOFT_TIME_LIMIT = 2
    created = timezone.now() - timedelta(days=91)
    episode = MemoryFactory(
        subject=SubjectFactory(tenant=tenant),
        memory_type=MemoryType.EPISODE,
        memory_class=MemoryClass.EPISODIC,
        created_at=created,
        valid_from=created,
    )
    platform = _platform_mode_left()
    out, err = io.StringIO(), io.StringIO()

    # The operation's COMMIT checks its subject's foreign key (DEFERRABLE INITIALLY DEFERRED),
    # which waits for the subject's row held FOR UPDATE until the holder's transaction ends.
    held = lambda: Subject.objects.select_for_update().get(pk=episode.subject_id)  # noqa: E731
    with held_in_another_transaction(tenant.id, held) as holder:
        started = time.monotonic()
        with pytest.raises(CommandError) as raised:
            call_command("retention_sweep", stdout=out, stderr=err)
        took = time.monotonic() - started
        assert holder.is_alive()  # still held when the command ended

    try:
        message = str(raised.value)
        assert message.startswith("retention sweep: the run was ended at 2 s"), message
        assert took < 2 + 3, took
        assert out.getvalue() == "", out.getvalue()[:500]  # no report
        assert "failed" not in err.getvalue(), err.getvalue()  # no tenant failure either
        # The connection is usable, out of platform mode, and the next run deletes the episode
        # (its COMMIT was cancelled with the statement it waited in).
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting(%s, true)", [PLATFORM_SETTING])
            assert cursor.fetchone()[0] in ("", None)
        assert not Tombstone.objects.filter(memory_id=episode.id).exists()
    finally:
        _platform_mode_restore(platform)
    report = io.StringIO()
    call_command("retention_sweep", stdout=report, stderr=io.StringIO())
    assert json.loads(report.getvalue())["memories_deleted"] == 1


def test_a_run_waiting_outside_any_statement_at_the_soft_limit_ends_after_the_grace(
    tenant, settings, journal
):
    """No statement to raise the limit from (the operation's journal line waits for the
    journal's file lock, which a prune holds as it rewrites the journal): the limit is raised
    where the run waits, ``LIMIT_GRACE_SECONDS`` later, and the run ends (it waited as long as
    the lock was held, without the limit)."""
    import fcntl

    from memory_core.management.commands.retention_sweep import LIMIT_GRACE_SECONDS

    settings.CELERY_TASK_SOFT_TIME_LIMIT = 1
    created = timezone.now() - timedelta(days=91)
    MemoryFactory(
        subject=SubjectFactory(tenant=tenant),
        memory_type=MemoryType.EPISODE,
        memory_class=MemoryClass.EPISODIC,
        created_at=created,
        valid_from=created,
    )
    platform = _platform_mode_left()
    try:
        with open(journal, "ab") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            started = time.monotonic()
            with pytest.raises(CommandError) as raised:
                call_command("retention_sweep", stdout=io.StringIO(), stderr=io.StringIO())
            took = time.monotonic() - started
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting(%s, true)", [PLATFORM_SETTING])
            assert cursor.fetchone()[0] in ("", None)
    finally:
        _platform_mode_restore(platform)

    assert str(raised.value).startswith("retention sweep: the run was ended at 1 s")
    assert 1 + LIMIT_GRACE_SECONDS - 0.5 < took < 1 + LIMIT_GRACE_SECONDS + 3, took


def _platform_mode_left() -> str:
    """Leave the test's platform mode, as a command starts outside it; return its value."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting(%s), set_config(%s, '', false)", [PLATFORM_SETTING] * 2
        )
        return cursor.fetchone()[0]


def _platform_mode_restore(value: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config(%s, %s, false)", [PLATFORM_SETTING, value])
