"""Portal logins' access taken away: a membership removed, a login deactivated or deleted, its
staff or superuser status cleared, a password set (the admin's forms and actions call these).

Each is journaled as it commits (the deletion journal, ``deletion.ledger``): a backup taken
before it holds the membership, the active login or the old password, and a restore gave a
departed reviewer the review queue back (stop 63's audit of backups); ``replay_deletions``
takes the access away again. Django's user table is not memledger's and a removed
membership is gone, so neither can record its line as an agent's row does: the change's
transaction owes it in a row of its own (``LoginAccessLine``), appended as it commits and by
the deletion sweep if that failed (``logins_journal``). Access given (a membership added, a
login reactivated) is not journaled: a restore that takes it away errs on the safe side, and
an administrator gives it again.
"""

from datetime import timedelta
from functools import partial

from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.sessions.models import Session
from django.db import transaction
from django.db.models.functions import Now
from django.utils import timezone

from memory_core.commit_hooks import after_commit
from memory_core.deletion.ledger import (
    NO_TENANT_ID,
    backups_cutoff,
    ledger_appended,
    ledger_catch_up,
    login_deactivation_entry,
    membership_removal_entry,
    password_change_entry,
)
from memory_core.models import LoginAccessLine, PortalMembership


@transaction.atomic
def portal_membership_remove(*, membership: PortalMembership) -> None:
    """Delete ``membership`` (as the database holds it): its login reaches its tenant no more
    from its next request (the portal reads the membership on each).

    Journaled as it commits (``ledger.membership_removal_entry``): a backup taken before it
    holds the membership, and ``replay_deletions`` deletes it again after the restore."""
    row = (
        PortalMembership.objects.select_for_update(of=("self",))
        .select_related("user")
        .filter(pk=membership.pk)
        .first()
    )
    if row is None:
        return
    now = timezone.now()
    _owe(
        membership_removal_entry(
            membership_id=row.pk,
            user_id=row.user_id,
            username=row.user.get_username(),
            tenant_id=row.tenant_id,
            role=row.role,
            subject_id=row.subject_id,
            removed_at=now,
        ),
        now,
        f"login {row.user_id}",
        "membership's removal",
    )
    row.delete()


@transaction.atomic
def login_deactivate(*, user: AbstractBaseUser, flags=("is_active",)) -> None:
    """Clear the ``flags`` of the login ``user`` (of ``ledger.LOGIN_FLAGS``). Deactivated (by
    default), Django refuses its password and every session of it from its next request;
    without staff or superuser status, the admin refuses it.

    Journaled as it commits (``ledger.login_deactivation_entry``, with the flags it cleared):
    a backup taken before it holds the flags set, and ``replay_deletions`` clears them again
    after the restore and ends the login's sessions. Staff or superuser status cleared was
    not journaled, and a restore gave a departed administrator the admin back (stop 64's
    review of backups)."""
    row = get_user_model().objects.select_for_update().get(pk=user.pk)
    cleared = [flag for flag in flags if getattr(row, flag)]
    for flag in flags:
        setattr(user, flag, False)
        setattr(row, flag, False)
    if not cleared:
        return
    row.save(update_fields=cleared)
    now = timezone.now()
    entry = login_deactivation_entry(
        user_id=row.pk,
        username=row.get_username(),
        tenant_id=_tenant_of(row),
        deactivated_at=now,
        flags=cleared,
    )
    _owe(entry, now, f"login {row.pk}", "deactivation")


@transaction.atomic
def login_delete(*, user: AbstractBaseUser) -> None:
    """Delete the login ``user``, its membership with it: journaled as that membership's
    removal and the login's deactivation, so that the replay takes away the access a restore
    brings back with the login."""
    login_deactivate(user=user)  # first: its line names the membership's tenant
    membership = PortalMembership.objects.filter(user_id=user.pk).first()
    if membership is not None:
        portal_membership_remove(membership=membership)
    user.delete()


@transaction.atomic
def login_password_save(*, user: AbstractBaseUser) -> None:
    """Save the password just given to ``user`` (``set_password``, or
    ``set_unusable_password``: the admin's password forms).

    Journaled as it commits (``ledger.password_change_entry``: the digest of the new hash,
    never the password or the hash): a backup taken before it holds the old password (one
    that leaked, say), and ``replay_deletions`` makes a restored older one unusable and ends
    the login's sessions, for an administrator to set a new one."""
    user.save(update_fields=["password"])
    now = timezone.now()
    entry = password_change_entry(
        user_id=user.pk,
        username=user.get_username(),
        tenant_id=_tenant_of(user),
        password_hash=user.password,
        changed_at=now,
    )
    _owe(entry, now, f"login {user.pk}", "password change")


def _tenant_of(user: AbstractBaseUser):
    """The tenant of the login's membership; ``NO_TENANT_ID`` for one with none (staff)."""
    tenant_id = (
        PortalMembership.objects.filter(user_id=user.pk).values_list("tenant_id", flat=True).first()
    )
    return tenant_id or NO_TENANT_ID


def _owe(entry: dict, at, row: str, action: str) -> None:
    """Owe the journal line ``entry`` of ``row``'s ``action`` made ``at`` in the change's
    transaction, and append it as the transaction commits."""
    LoginAccessLine.objects.create(pk=entry["operation_id"], entry=entry, created_at=at)
    after_commit(partial(_journal, entry["operation_id"], row, action))


def _journal(line_id, row: str, action: str) -> bool:
    """Append a committed change's owed line and record it; return whether it was. A failure
    is logged, never raised (the change is made; the sweep appends it later)."""
    line = LoginAccessLine.objects.filter(pk=line_id, journaled_at=None).first()
    if line is None or not ledger_appended(line.entry, row, action):
        return False
    LoginAccessLine.objects.filter(pk=line_id, journaled_at=None).update(
        journaled_at=timezone.now()
    )
    return True


def logins_journal(*, older_than: float = 0, limit: int = 500) -> int:
    """Append the owed lines of the logins' changes made more than ``older_than`` seconds ago
    whose line is not recorded (an append that failed), at most ``limit``, oldest first;
    return how many were appended. Raise LedgerAppendFailed if the journal cannot be written.
    One read, one write (one fsync) and one UPDATE. A change made before the oldest backup kept
    (``ledger.backups_cutoff``) needs no line: its row is dropped (one DELETE), as every
    backup kept holds the change, and the username's digest it holds goes with it."""
    LoginAccessLine.objects.filter(created_at__lt=backups_cutoff()).delete()
    before = Now() - timedelta(seconds=older_than)  # the database's clock (stop 66)
    lines = list(
        LoginAccessLine.objects.filter(created_at__lte=before, journaled_at=None).order_by(
            "created_at"
        )[:limit]
    )
    if not lines:
        return 0
    ledger_catch_up([line.entry for line in lines])
    LoginAccessLine.objects.filter(pk__in=[line.pk for line in lines], journaled_at=None).update(
        journaled_at=timezone.now()
    )
    return len(lines)


def logins_sessions_end(user_ids: set[int]) -> int:
    """End every session of the logins ``user_ids`` (Django's database sessions, read one by
    one: a session names its login only inside its signed data); return how many. For the
    replay, which makes a restored password unusable or deactivates a login: the sessions
    the backup holds were made with the old access."""
    if not user_ids:
        return 0
    names = {str(pk) for pk in user_ids}
    ended = [
        session.pk
        for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator()
        if str(session.get_decoded().get(SESSION_KEY)) in names
    ]
    Session.objects.filter(pk__in=ended).delete()
    return len(ended)
