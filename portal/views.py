"""End-user pages: what is remembered about you, its history, correct, delete, export.

Each view parses its input, calls one memory_core service or selector with the login's
principal, and renders. An id outside the login's subject is a 404.
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib import messages
from django.db.models.functions import Now
from django.http import FileResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.translation import ngettext
from django.views import View
from django.views.generic import FormView, TemplateView

from memory_core.clock import database_now
from memory_core.deletion.selectors import QUEUED, deletion_get, queued_deletions
from memory_core.deletion.services import (
    MEMORY_CHANGED,
    deletion_request,
    subject_deletion_request_or_queue,
)
from memory_core.exceptions import DomainError, NotFound, ReasonRefused, SubjectBeingDeleted
from memory_core.exports import (
    ExportPathRefused,
    export_create,
    export_holds_now,
    export_path,
)
from memory_core.locks import export_turn_lock, subject_shared_lock
from memory_core.models import (
    DeletionOperation,
    Export,
    Memory,
    MemoryClass,
    Status,
)
from memory_core.policy_check import STATE_WORDS
from memory_core.selectors.approvals import in_use_now
from memory_core.selectors.memories import memory_get, memory_visible_chain
from memory_core.selectors.portal import (
    correction_saved_as,
    deletions_page,
    mark_only_rejected,
    memory_deleted_by,
    memory_history,
    memory_pending_replacements,
    memory_unsettled,
    same_text,
    subject_deletions_in_progress,
    subject_memories,
    subject_memories_not_in_use,
    subject_memories_pending,
)
from memory_core.services.writes import (
    CONFIRMABLE,
    consent_withdraw,
    consent_withdrawable,
    memory_confirm,
    memory_correct,
    memory_revoke,
)
from portal.access import BEING_DELETED, REVIEWER, EndUserMixin
from portal.forms import (
    ConfirmForm,
    CorrectionForm,
    MemoryFilterForm,
    RevokeForm,
)
from portal.paging import page_number, page_query

logger = logging.getLogger(__name__)

# The rule code of a correction kept as a separate chain beside a higher-authority head.
KEPT_BESIDE = "supersession.conflict_lower_authority"


class MemoryListView(EndUserMixin, TemplateView):
    """The active memories about the login's subject, grouped by class and type, a page at
    a time (``?page=``), with the filters kept across pages."""

    template_name = "portal/memory_list.html"

    def wrong_role(self, request):
        # The portal's front door: a reviewer lands on the review queue instead.
        if self.role == REVIEWER:
            return redirect("portal:review:queue")
        return super().wrong_role(request)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        form = MemoryFilterForm(self.request.GET or None)
        invalid = form.is_bound and not form.is_valid()
        filters = form.cleaned_data if form.is_bound and not invalid else {}
        narrow = {
            "query": filters.get("q", ""),
            "memory_class": filters.get("memory_class", ""),
            "memory_type": filters.get("memory_type", ""),
            "authority": filters.get("authority", ""),
            "scope_kind": filters.get("scope_kind", ""),
        }
        # A search that cannot be applied lists nothing: every memory, unfiltered, would
        # read as the answer to it. The lists beside the active memories (waiting, not in
        # use) are searched too: unfiltered, they stood next to "No active memory matches".
        page, pending, pending_count, not_in_use, not_in_use_count = None, [], 0, [], 0
        if not invalid:
            # One reading of what is in use now for the three lists: a memory is in one.
            narrow.update(principal=self.principal, use=in_use_now(self.principal.tenant_id))
            page = subject_memories(page=page_number(self.request), **narrow)
            pending, pending_count = subject_memories_pending(**narrow)
            not_in_use, not_in_use_count = subject_memories_not_in_use(**narrow)
        context.update(
            form=form,
            invalid=invalid,
            page=page,
            groups=page.groups if page else [],
            # The links to the other pages keep the filters.
            page_query=page_query(self.request),
            pending=pending,
            pending_count=pending_count,
            not_in_use=not_in_use,
            not_in_use_count=not_in_use_count,
            total=page.total if page else 0,
            filtered=invalid or any(filters.values()),
            # A deletion queued for a worker fences what it deletes (every memory of the
            # subject, or a key's) from agents and from changes: the list says so before a
            # correction is refused.
            queued=next(iter(queued_deletions(principal=self.principal)), None),
        )
        return context


def in_use(memory) -> bool:
    """Whether agents are given ``memory`` now: active, and past neither its valid_until nor
    its class's retention under the tenant's policy (``policy_check.InUse``, as the write
    and review services read it; the retention sweep marks such a row only later). One
    query: the tenant's active policy."""
    return _state_now(memory) == Status.ACTIVE


def _state_now(memory) -> str:
    return in_use_now(memory.tenant_id).state(memory)


def _newest_of(principal, memory):
    """The newest version of ``memory``'s chain ``principal`` may see, or None (it is the
    newest itself)."""
    chain = memory_visible_chain(principal=principal, memory=memory)
    return chain[-1] if chain and chain[-1].pk != memory.pk else None


def revocable(memory) -> bool:
    """A preference in use can be revoked."""
    return in_use(memory) and memory.memory_class == MemoryClass.PREFERENCE


def not_in_use(memory, so: str) -> str:
    """Return that ``memory`` is not in use (its status now says why), and ``so``."""
    state = _state_now(memory)
    said = STATE_WORDS.get(state, state.replace("_", " "))
    return f"This memory is {said}, so agents do not use it and {so}."


def replaced_by_one_in_use(principal, memory, then: str) -> str:
    """Return that ``memory`` was replaced by a newer version agents use now (or from its
    start, one that starts later), naming it, and ``then`` (what to do with that one); "" if
    it was not (not superseded, or its chain's newest is out of use too).

    A revoke sent from a tab opened before another tab's correction was told "agents do not
    use it" of a preference whose newer version they use (stop 60's audit of the portal in a
    browser), where a correction or a confirmation names that version."""
    if _state_now(memory) != Status.SUPERSEDED:
        return ""
    newest = _newest_of(principal, memory)
    if newest is None or _state_now(newest) != Status.ACTIVE:
        return ""
    if newest.valid_from > timezone.now():
        # A correction of a memory that starts later keeps that start: "agents use now" was
        # said of a version no agent is given yet (stop 60's review).
        start = date_format(timezone.localtime(newest.valid_from), "j M Y, H:i T")
        return (
            f"This version was replaced by version {newest.version}, which agents are given "
            f"from {start} (it is linked at the top of this page): {then}."
        )
    return (
        f"This version was replaced by version {newest.version}, which agents use now (it is "
        f"linked at the top of this page): {then}."
    )


def say_withdrawn(request, result) -> None:
    """Tell the person that their correction or confirmation (``result``) withdrew their
    earlier corrections waiting for a reviewer (``WriteResult.withdrawn``), if it did: their
    pages listed them as waiting, and the approval of one replaced what they said last (stop
    64's audit of the portal)."""
    n = len(result.withdrawn)
    if n:
        messages.info(
            request,
            ngettext(
                "Your earlier correction that was waiting for a reviewer is withdrawn: what "
                "you sent now replaces it, and no reviewer can approve it any more.",
                "Your %(n)d earlier corrections that were waiting for a reviewer are "
                "withdrawn: what you sent now replaces them, and no reviewer can approve "
                "them any more.",
                n,
            )
            % {"n": n},
        )


def queued_deletion_taking(principal, memory):
    """Return the deletion queued for a worker that takes ``memory`` (every memory of its
    subject, or its key's), or None."""
    return next(
        (
            operation
            for operation in queued_deletions(principal=principal)
            if operation.target == DeletionOperation.Target.SUBJECT
            or operation.subject.deletion_queued_key == memory.memory_key
        ),
        None,
    )


def back_while_queued(view, memory):
    """A redirect to ``memory``'s page, saying why (``view.being_deleted``), while a deletion
    queued for a worker takes it (``queued_deletion_taking``), or None: the page offers no
    action on it then, and a form opened anyway (a bookmark, the history, a tab left open)
    was offered, and always refused (stop 58's and stop 64's audits of the portal)."""
    if queued_deletion_taking(view.principal, memory) is None:
        return None
    messages.info(view.request, view.being_deleted)
    return redirect("portal:memory", memory_id=memory.pk)


class MemoryDetailView(EndUserMixin, TemplateView):
    """One memory: its provenance, its whole supersession chain and every event."""

    template_name = "portal/memory_detail.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        history = memory_history(principal=self.principal, memory_id=kwargs["memory_id"])
        memory = history.memory
        # A write waiting for a reviewer that its agent may no longer write can only be
        # rejected: the page said a reviewer's approval puts it in use.
        mark_only_rejected([memory])
        # A deletion queued for a worker that takes it fences it from changes, as the list
        # says: this page offered Correct and Revoke, always refused, and said it was used
        # until corrected or deleted (stop 57's audit in a browser).
        queued = queued_deletion_taking(self.principal, memory)
        # Past its valid_until, a correction or a confirmation copied the past end and was
        # always refused (ttl.in_past), a revoke or a withdrawal retired what no agent uses.
        is_active = in_use(memory) and queued is None
        context.update(
            history=history,
            memory=memory,
            deletion_queued=queued,
            # A sensitive correction of it waits for a reviewer: shown here, where the person
            # who wrote it looks for it (it was listed only apart, unlinked to this memory).
            waiting=memory_pending_replacements(principal=self.principal, memory=history.head),
            # What agents are given while those wait: the version in use, or, once the chain's
            # newest is revoked, deleted or expired, nothing (the page said "the version in
            # use" of a revoked preference: stop 56's audit of the portal).
            head_in_use=history.head.state_now == Status.ACTIVE,
            # The conflicts it stands in, unsettled: "a reviewer is asking you which one is
            # right" named no other memory (stop 64's audit of the portal).
            unsettled=memory_unsettled(principal=self.principal, memory=memory)
            if is_active
            else [],
            is_head=memory.pk == history.head.pk,
            can_correct=is_active,
            can_confirm=is_active and memory.authority in CONFIRMABLE,
            can_revoke=is_active and memory.memory_class == MemoryClass.PREFERENCE,
            can_withdraw=queued is None and consent_withdrawable(memory),
            can_delete=memory.status != Status.DELETED,
        )
        return context


class MemoryCorrectView(EndUserMixin, FormView):
    """Correct a memory: a new version with explicit_user authority supersedes it.

    A head set with higher authority (explicit_admin) is not superseded: the correction is
    kept beside it and a conflict goes to a reviewer; the message says which happened.
    """

    template_name = "portal/memory_correct.html"
    form_class = CorrectionForm

    def get_memory(self):
        if not hasattr(self, "_memory"):
            self._memory = memory_get(principal=self.principal, memory_id=self.kwargs["memory_id"])
        return self._memory

    def read_again(self) -> None:
        """Read the memory again, as it is now: read as the POST began, a correction refused
        because it changed meanwhile showed the version it was as "Currently remembered"."""
        self._memory = memory_get(principal=self.principal, memory_id=self.kwargs["memory_id"])
        self.__dict__.pop("_now", None)

    def now(self) -> tuple[str, Memory | None, Memory | None]:
        """Return the memory's state now (``InUse.state``); the newest version of its chain
        if it was superseded by one in use, or None; and the version no longer in use that
        leaves nothing to correct, or None: the memory itself, or, superseded, its newest
        version (revoked in another tab after a correction: it said "correct it there" of
        the newest, which could not be: stop 55's review of the portal)."""
        if not hasattr(self, "_now"):
            memory = self.get_memory()
            state, newest, retired = _state_now(memory), None, None
            if state == Status.SUPERSEDED:
                newest = _newest_of(self.principal, memory)
                if newest is not None and _state_now(newest) != Status.ACTIVE:
                    newest, retired = None, newest
            elif state != Status.ACTIVE:
                retired = memory
            self._now = (state, newest, retired)
        return self._now

    def get_initial(self):
        return {"content": self.get_memory().content}

    EXPIRED_SO = "there is nothing to correct: to have it remembered again, tell an agent again"

    def past_end(self):
        """A redirect to the memory, saying why, when it is active but past its valid_until
        (a correction copied that end and admission always refused it, ``ttl.in_past``) or
        its class's retention (the service refuses it: no agent is given it again)."""
        memory = self.get_memory()
        if memory.status == Status.ACTIVE and not in_use(memory):
            messages.error(
                self.request, f"Nothing was changed. {not_in_use(memory, self.EXPIRED_SO)}"
            )
            return redirect("portal:memory", memory_id=memory.pk)
        return None

    # Why a memory not in use has no correction form, by its status now (``status_at``).
    NOTHING_TO_CORRECT = {
        Status.DELETED: "This memory was deleted, so there is nothing to correct.",
        Status.SUPERSEDED: (
            "This version of the memory was replaced by a newer one, so there is nothing to "
            "correct here: open the memory in the list below to correct the version in use."
        ),
        Status.PENDING_APPROVAL: (
            "This memory is waiting for a reviewer, so there is nothing to correct yet: once "
            "it is approved, it can be corrected."
        ),
    }

    def retired(self):
        """A redirect to the memory list, saying why, for a memory not in use (deleted,
        superseded, expired, revoked, refused by a reviewer, waiting for one): the form
        showed an empty or stale "Currently remembered" and a save always failed."""
        memory = self.get_memory()
        status = memory.status_at(timezone.now())
        if status == Status.ACTIVE:
            return None
        said = self.NOTHING_TO_CORRECT.get(status) or not_in_use(memory, self.EXPIRED_SO)
        messages.info(self.request, said)
        return redirect("portal:home")

    def get(self, request, *args, **kwargs):
        # Past its valid_until (still stored active): back to the memory, which says
        # "Expired", as its other actions do.
        return (
            self.past_end()
            or self.retired()
            or back_while_queued(self, self.get_memory())
            or super().get(request, *args, **kwargs)
        )

    def post(self, request, *args, **kwargs):
        return self.past_end() or super().post(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        state, newest, _ = self.now()
        # "Currently remembered" and Save only for a memory in use: a correction refused
        # because it changed meanwhile (corrected, deleted in another tab) showed the old
        # version, or an empty quote, as what is remembered, and a Save that always failed
        # (stop 55's audit of the portal).
        context.update(memory=self.get_memory(), in_use=state == Status.ACTIVE, newest=newest)
        return context

    CHANGED = "This memory changed after you opened this page"

    def refusal(self, error: DomainError) -> str:
        """Return why ``memory_correct`` refused, in the words of the person correcting."""
        memory = self.get_memory()
        if error.code == "not_chain_head":
            # Another tab or an agent changed the memory after this page was opened: said of
            # the memory as it is now (``read_again``).
            _, newest, retired = self.now()
            if newest is not None:
                return (
                    f"{self.CHANGED}: version {memory.version} is now superseded, so your "
                    "correction was not saved. Your text is kept below; the newest version, "
                    f"version {newest.version}, is linked above: open it to see what is "
                    "remembered now, and correct it there if it is still wrong."
                )
            if retired is not None:
                # Deleted, revoked, expired: nothing of it is left to correct, and it said
                # "correct that version if it is still wrong" of a deleted one.
                return (
                    f"{self.CHANGED}, so your correction was not saved. "
                    f"{not_in_use(retired, 'there is nothing to correct')} Your text is kept "
                    "below."
                )
            return (
                f"{self.CHANGED}: version {memory.version} is now "
                f"{memory.get_status_display().lower()}, so your correction was not saved. "
                "Your text is kept below; open the memory to see what is remembered now, and "
                "correct that version if it is still wrong."
            )
        if isinstance(error, SubjectBeingDeleted):
            return BEING_DELETED
        return f"Your correction was not saved: {error.message}"

    UNCHANGED = "Nothing changed: the text is the same as the version in use."
    ALREADY_KEPT = (
        "Nothing new was saved: this same correction is already kept beside the current "
        "version, for a reviewer to decide which one stands."
    )
    ALREADY_SAVED = (
        "Nothing new was saved: this same correction is already saved as version {version}. "
        "The previous version is kept in the history as superseded."
    )
    ALREADY_WAITING = (
        "Nothing new was saved: this same correction is already waiting for a reviewer. The "
        "current version stays in use until then."
    )

    @staticmethod
    def unchanged(memory: Memory, content: str) -> bool:
        """Return whether saving ``content`` would change nothing of ``memory``, the version
        in use: the same text (``same_text``) and no structured value.

        Saved as it was (or with only its spacing changed), the text made an identical new
        version, "Saved version 2", and the usage shown started again from nothing. Not of a
        memory with a value: a correction saves the text alone (the page says so), so the
        same text is how a person is rid of a wrong value, and it was refused as "Nothing
        changed" (stop 65's audit of the portal). Only for the version in use: a correction
        of one changed since is the service's refusal."""
        return (
            memory.status == Status.ACTIVE
            and memory.value is None
            and same_text(content, memory.content)
        )

    def form_valid(self, form):
        detail = reverse("portal:memory", args=[self.kwargs["memory_id"]])
        memory = self.get_memory()
        if self.unchanged(memory, form.cleaned_data["content"]):
            form.add_error("content", self.UNCHANGED)
            return self.form_invalid(form)
        data = {"content": form.cleaned_data["content"]}
        if form.cleaned_data.get("reason"):
            data["reason"] = form.cleaned_data["reason"]
        # Of a memory of higher authority than the person's, ``memory_correct`` keeps the same
        # correction beside it once and writes another on their own correction kept there,
        # deciding both under the key's lock: read here first, two sent at once (a double
        # click, two tabs) both found none and both were kept beside it (stop 57's audit of
        # races).
        try:
            result = memory_correct(
                principal=self.principal, memory_id=self.kwargs["memory_id"], data=data
            )
        except NotFound as error:
            return self.refuse(error, detail)
        except DomainError as error:
            # Sent twice, the second found the version it corrects superseded by the first
            # (stop 54's audit in a browser: it was told "not saved").
            saved = error.code == "not_chain_head" and correction_saved_as(
                principal=self.principal, memory=memory, content=form.cleaned_data["content"]
            )
            if saved:
                # Sent twice (a second click while the first was saved): it was told its
                # correction was not saved, though the first had saved it.
                messages.info(self.request, self.ALREADY_SAVED.format(version=saved.version))
                return redirect("portal:memory", memory_id=saved.pk)
            if error.code == "not_chain_head":
                self.read_again()
            # The form stays, with the user's text in it: a redirect would throw it away.
            form.add_error(None, self.refusal(error))
            return self.form_invalid(form)
        say_withdrawn(self.request, result)
        if result.already_kept:
            # Sent again (a double click, the form once more): kept beside it once.
            messages.info(self.request, self.ALREADY_KEPT)
            return redirect("portal:memory", memory_id=result.memory.pk)
        if result.decision == "accepted" and result.memory is not None:
            if KEPT_BESIDE in result.rule_codes:
                # Admission kept it as a separate chain: the current version was set with
                # higher authority than the user's, so nothing was superseded.
                messages.warning(
                    self.request,
                    "Your correction was saved beside the current version, not in its place: "
                    "that version was set with higher authority than yours, so both are kept "
                    "and a reviewer will decide which one stands "
                    f"({', '.join(result.rule_codes)}).",
                )
            elif result.written_on is not None:
                # The person corrected this memory before, and their correction stands beside
                # it (its authority is higher than theirs): the newer statement replaced their
                # own earlier one, as a write of equal authority does. Each one stood beside it
                # with the others, "stated by you" and contradicting each other, in a conflict
                # of three (stop 56's audit of the portal).
                messages.success(
                    self.request,
                    f"Saved: your correction replaces the one you made before, kept beside the "
                    f"current version (now version {result.memory.version} of yours). A "
                    "reviewer will decide which one stands.",
                )
            else:
                messages.success(
                    self.request,
                    f"Saved version {result.memory.version}. The previous version is kept in "
                    "the history as superseded.",
                )
            return redirect("portal:memory", memory_id=result.memory.pk)
        # A correction waiting for a reviewer is listed on the page of the memory it corrects:
        # the person's own correction beside ``memory`` when it went there (the page of
        # ``memory`` did not show it: stop 56's review).
        corrected = result.written_on or memory
        waits_on = reverse("portal:memory", args=[corrected.pk])
        if result.decision == "pending_approval" and result.already_waiting:
            # Sent twice (a double click, the form again): the first one waits, once.
            messages.info(self.request, self.ALREADY_WAITING)
            return redirect(waits_on)
        if result.decision == "pending_approval":
            messages.info(
                self.request,
                "Your correction touches sensitive information, so a reviewer will look at it "
                "first. The current version stays in use until then.",
            )
            return redirect(waits_on)
        form.add_error(
            None,
            f"The correction was refused: {result.message or 'it breaks a memory rule'} "
            f"({', '.join(result.rule_codes) or 'no rule code'}).",
        )
        return self.form_invalid(form)


class _MemoryActionView(EndUserMixin, View):
    """An action on one memory that cannot be undone: GET asks to confirm it (what happens,
    the memory, the form's fields, Cancel), POST does it and answers with a message and a
    redirect.

    A memory the action does not apply to (``available``) sends GET and POST back to its
    page with why (``unavailable``), and a POST changes nothing: the services would retire any
    memory in use, so the portal's own rule (only a preference is revoked, only a workflow's
    consent withdrawn) is kept here. ``form_class``, when set, then validates the POST: invalid
    input shows the form again with the person's text and the problem on its field, and
    nothing changes.
    """

    http_method_names = ["get", "post"]
    template_name = "portal/memory_action.html"
    heading = button = explanation = done_message = ""
    # The action as the subject of a sentence ("Revoking this one leaves them waiting").
    doing = ""
    form_class = None

    @staticmethod
    def available(memory) -> bool:
        raise NotImplementedError

    def unavailable(self, memory) -> str:
        """Return why the action does not apply to ``memory``, in its owner's words."""
        raise NotImplementedError

    def call(self, data: dict):
        raise NotImplementedError

    def explain(self, memory) -> str:
        """Return what the action does to ``memory``, said before the person confirms it."""
        return self.explanation

    def get(self, request, memory_id):
        memory = memory_get(principal=self.principal, memory_id=memory_id)
        if not self.available(memory):
            messages.info(request, self.unavailable(memory))
            return redirect("portal:memory", memory_id=memory_id)
        form = self.form_class() if self.form_class is not None else None
        return back_while_queued(self, memory) or self.render_form(memory, form)

    def render_form(self, memory, form):
        context = {
            "memory": memory,
            "form": form,
            "heading": self.heading,
            "button": self.button,
            "explanation": self.explain(memory),
            "doing": self.doing,
            # The newer versions waiting for a reviewer, as the delete page names them: the
            # action leaves them waiting, and an approval makes one what is remembered, which
            # the page said nothing of (stop 56's audit of the portal).
            "replacements": memory_pending_replacements(principal=self.principal, memory=memory),
        }
        return render(self.request, self.template_name, context)

    def post(self, request, memory_id):
        detail = reverse("portal:memory", args=[memory_id])
        memory = memory_get(principal=self.principal, memory_id=memory_id)
        if not self.available(memory):
            messages.error(request, f"Nothing was changed. {self.unavailable(memory)}")
            return redirect(detail)
        data = {}
        if self.form_class is not None:
            form = self.form_class(request.POST)
            if not form.is_valid():
                # The form again, the text kept: a redirect to the memory threw it away.
                return self.render_form(memory, form)
            data = form.cleaned_data
        try:
            self.call(data)
        except ReasonRefused as error:
            # The reason reads as an instruction: the form again, the text kept and the
            # problem on its field. The redirect to the memory threw the text away (stop 57's
            # audit in a browser).
            form.add_error("reason", error.message)
            return self.render_form(memory, form)
        except SubjectBeingDeleted:
            # A form opened before a deletion was queued: the form again, the reason kept, as
            # a refused correction keeps its text (the redirect threw it away: stop 58's
            # audit of the portal).
            form.add_error(None, self.being_deleted)
            return self.render_form(memory, form)
        except DomainError as error:
            # Read again: the same action sent twice (a second click while the first ran)
            # found the memory retired by the first, and was answered in the API's words
            # ("Memory <uuid> is revoked."), where the portal says why in its own (stop 54's
            # audit in a browser).
            now = memory_get(principal=self.principal, memory_id=memory_id)
            if not self.available(now):
                messages.error(request, f"Nothing was changed. {self.unavailable(now)}")
                return redirect(detail)
            return self.refuse(error, detail)
        messages.success(request, self.done_message)
        return redirect(detail)


class MemoryConfirmView(EndUserMixin, View):
    """Confirm what a model inferred (or a tool observed) as right: a new version, stated by
    the user, opens (``memory_confirm``)."""

    http_method_names = ["get", "post"]  # GET confirms nothing (``get``)
    NOT_CURRENT = (
        "Nothing was changed: this version is no longer the one in use, as it was confirmed "
        "or corrected meanwhile. The version in use is linked at the top of this page."
    )
    NOT_SENT = (
        'Nothing was confirmed: a memory is confirmed only with its "This is right" '
        "button, and one pressed after your session had ended was lost at the login. Press "
        "it again below if it is still offered."
    )

    def get(self, request, memory_id):
        """Send the confirmation's opened address back to the memory, confirming nothing.

        A confirmation sent after the session ended goes to the login page, whose ``next``
        is this address: logged in again, the browser opens it, and a bare 405 showed the
        browser's own error page.
        """
        memory_get(principal=self.principal, memory_id=memory_id)  # another's: 404
        messages.info(request, self.NOT_SENT)
        return redirect("portal:memory", memory_id=memory_id)

    def not_current(self, error: DomainError, detail: str):
        """Answer a confirmation refused as ``not_chain_head``, of the memory as it is now:
        superseded (confirmed twice, corrected in another tab), ``NOT_CURRENT``; revoked or
        deleted in another tab, as any action on a memory not in use is answered. It said
        "confirmed or corrected meanwhile" of those too, and pointed at a version in use
        that there was not (stop 55's audit of the portal)."""
        memory = memory_get(principal=self.principal, memory_id=self.kwargs["memory_id"])
        state = _state_now(memory)
        if state == Status.SUPERSEDED:
            # The version in use it points at, if there is one: the newest, revoked since,
            # is told as the memory not in use (stop 55's review of the portal).
            newest = _newest_of(self.principal, memory)
            if newest is None or _state_now(newest) == Status.ACTIVE:
                messages.info(self.request, self.NOT_CURRENT)
                return redirect(detail)
            memory, state = newest, _state_now(newest)
        if state != Status.ACTIVE:
            messages.error(
                self.request,
                f"Nothing was changed. {not_in_use(memory, 'there is nothing to confirm')}",
            )
            return redirect(detail)
        return self.refuse(error, detail)

    def post(self, request, memory_id):
        detail = reverse("portal:memory", args=[memory_id])
        memory = memory_get(principal=self.principal, memory_id=memory_id)
        if memory.status == Status.ACTIVE and not in_use(memory):
            # Past its valid_until: the confirmation copied that end and was always refused.
            messages.error(
                request,
                f"Nothing was changed. {not_in_use(memory, 'there is nothing to confirm')}",
            )
            return redirect(detail)
        try:
            result = memory_confirm(principal=self.principal, memory_id=memory_id)
        except DomainError as error:
            if error.code == "not_chain_head":  # confirmed twice, or changed in another tab
                return self.not_current(error, detail)
            return self.refuse(error, detail)
        say_withdrawn(request, result)
        if result.decision == "accepted" and result.memory is not None:
            messages.success(
                request,
                f"Confirmed: version {result.memory.version} is now stated by you. Agents "
                "treat it as your own word, and it no longer fades as a guess does.",
            )
            return redirect("portal:memory", memory_id=result.memory.pk)
        if result.decision == "pending_approval" and result.already_waiting:
            messages.info(
                request,
                "Nothing new was saved: your confirmation is already waiting for a reviewer. "
                "The current version stays in use until then.",
            )
            return redirect(detail)
        if result.decision == "pending_approval":
            messages.info(
                request,
                "This touches sensitive information, so a reviewer will look at your "
                "confirmation first. The current version stays in use until then.",
            )
            return redirect(detail)
        messages.error(
            request,
            f"The confirmation was refused: {result.message or 'it breaks a memory rule'} "
            f"({', '.join(result.rule_codes) or 'no rule code'}).",
        )
        return redirect(detail)


class MemoryRevokeView(_MemoryActionView):
    """Revoke a preference: never used again, and deleted with its history by the retention
    sweep's next run (its "retention:revoked" rule)."""

    heading = button = "Revoke this preference"
    doing = "Revoking this one"
    # It said the preference stayed in the history with the reason; the sweep deletes it, its
    # earlier versions with it, within minutes (stop 52's audit of the portal).
    explanation = (
        "Agents stop using it at once, and it cannot be made active again or corrected: to "
        "state it again later, tell an agent again, and it is remembered anew. Within minutes "
        "the retention sweep then deletes it, with its earlier versions and your reason, as a "
        "deletion would; to delete it at once, delete it instead."
    )
    done_message = "Revoked. Agents will no longer use it."
    form_class = RevokeForm

    available = staticmethod(revocable)

    def unavailable(self, memory) -> str:
        if not in_use(memory):
            return replaced_by_one_in_use(
                self.principal, memory, "revoke that one to stop agents using the preference"
            ) or not_in_use(memory, "there is nothing to revoke")
        return (
            "Only a preference can be revoked, and this memory is not one. To stop agents "
            "from using it, delete it."
        )

    def call(self, data):
        return memory_revoke(
            principal=self.principal,
            memory_id=self.kwargs["memory_id"],
            # None given, none recorded: a code here read as the person's own words.
            reason=data["reason"],
        )


class ConsentWithdrawView(_MemoryActionView):
    """Withdraw the workflow consent a memory was stored under."""

    heading = button = "Withdraw consent"
    doing = "Withdrawing consent"
    explanation = (
        "This memory was kept under a workflow's consent, not yours. Withdrawing it stops "
        "agents from using it at once; it stays in the history, with your reason. To remove "
        "it entirely, delete it instead."
    )
    # A withdrawn preference is revoked, and the retention sweep deletes a revoked preference
    # (``retention:revoked``): it said the preference stayed in the history with the reason,
    # as the revoke page did until stop 52 (stop 53's audit of the portal).
    preference_explanation = (
        "This memory was kept under a workflow's consent, not yours. Withdrawing it stops "
        "agents from using it at once. Within minutes the retention sweep then deletes it, "
        "with its earlier versions and your reason, as a deletion would; to delete it at "
        "once, delete it instead."
    )

    def explain(self, memory) -> str:
        if memory.memory_class == MemoryClass.PREFERENCE:
            return self.preference_explanation
        return self.explanation

    done_message = "Consent withdrawn. This memory is no longer used."
    form_class = RevokeForm

    available = staticmethod(consent_withdrawable)

    def unavailable(self, memory) -> str:
        if not in_use(memory):
            return replaced_by_one_in_use(
                self.principal, memory, "open that one to stop agents using it"
            ) or not_in_use(memory, "there is no consent to withdraw")
        return (
            "This memory was kept with your own consent, not a workflow's, so there is no "
            "workflow consent to withdraw. To stop agents from using it, delete it."
        )

    def call(self, data):
        return consent_withdraw(
            principal=self.principal, memory_id=self.kwargs["memory_id"], reason=data["reason"]
        )


class MemoryDeleteView(EndUserMixin, FormView):
    """Delete one memory: start a deletion operation and follow it to verified."""

    template_name = "portal/memory_delete.html"
    form_class = ConfirmForm
    ALREADY_DELETED = "This memory is already deleted: nothing is left to delete."

    def already_deleted(self):
        """A redirect, saying why, for a memory already deleted: to the operation that
        deleted it, or to the memory when there is none to show. Its delete page (Back after
        deleting it) asked again "Delete this memory", tick box and button, above an empty
        quote, while every other action's page refuses a memory not in use."""
        memory = memory_get(principal=self.principal, memory_id=self.kwargs["memory_id"])
        if memory.status != Status.DELETED:
            return None
        operation_id = memory_deleted_by(principal=self.principal, memory=memory)
        if operation_id is None:
            messages.info(self.request, self.ALREADY_DELETED)
            return redirect("portal:memory", memory_id=memory.pk)
        messages.info(
            self.request,
            f"This memory is already deleted, by operation {operation_id}: nothing is left "
            "to delete. This page shows that operation.",
        )
        return redirect("portal:deletion", operation_id=operation_id)

    def get(self, request, *args, **kwargs):
        return self.already_deleted() or super().get(request, *args, **kwargs)

    def form_invalid(self, form):
        # Sent without the tick from a page opened before the deletion: no form again either.
        return self.already_deleted() or super().form_invalid(form)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        memory = memory_get(principal=self.principal, memory_id=self.kwargs["memory_id"])
        context["memory"] = memory
        context["replacements"] = memory_pending_replacements(
            principal=self.principal, memory=memory
        )
        return context

    def form_valid(self, form):
        detail = reverse("portal:memory", args=[self.kwargs["memory_id"]])
        # The page says what the deletion takes, and that depends on the memory's status: the
        # version in use goes with its history, a superseded one leaves the newer version in
        # use. The deletion compares the status shown with the memory's once it holds the
        # subject's lock (read before, a correction committing meanwhile went unseen, and the
        # deletion took the old version alone); changed (corrected in another tab, by an
        # agent), nothing is deleted.
        try:
            operation = deletion_request(
                principal=self.principal,
                memory_id=self.kwargs["memory_id"],
                expected_status=self.request.POST.get("shown_status") or None,
            )
        except DomainError as error:
            if error.code == MEMORY_CHANGED:
                return self.changed_since_shown(form)
            return self.refuse(error, detail)
        if operation.already_requested:
            messages.info(
                self.request,
                f"This memory was already deleted by operation {operation.pk}; nothing new "
                "was started. This page shows that operation.",
            )
        else:
            messages.success(
                self.request,
                "Deletion started. The memory is no longer used; this page follows the "
                "clean-up of every copy until it is verified.",
            )
        return redirect("portal:deletion", operation_id=operation.pk)

    def changed_since_shown(self, form):
        """Show the page again, as the memory is now, to confirm again: it changed after the
        page was shown, and nothing was deleted."""
        memory = memory_get(principal=self.principal, memory_id=self.kwargs["memory_id"])
        form.add_error(
            None,
            "This memory changed after you opened this page: it is now "
            f"{memory.get_status_display().lower()}, so nothing was deleted. Read what "
            "deleting it does now, and confirm again.",
        )
        return self.form_invalid(form)


class DeleteEverythingView(EndUserMixin, FormView):
    """Delete every memory about the login's subject."""

    template_name = "portal/delete_everything.html"
    form_class = ConfirmForm
    QUEUED = (
        "There is too much remembered about you to delete within a page's time, so the "
        "deletion of everything is queued: a worker starts it within a minute or two, and it "
        "then appears below. From now on, no agent is given your memories; they stay listed "
        "here until it deletes them."
    )
    ALREADY_QUEUED = (
        "A deletion of everything remembered about you was already queued, on {queued_at}; "
        "nothing new was started. A worker starts it within a minute or two, and it then "
        "appears below. Since then, no agent is given your memories; they stay listed here "
        "until it deletes them."
    )

    def form_valid(self, form):
        try:
            operation = subject_deletion_request_or_queue(
                principal=self.principal, subject_id=self.principal.subject_id
            )
        except DomainError as error:
            return self.refuse(error, reverse("portal:home"))
        if operation.status == QUEUED:  # too much for one page's time: a worker makes it
            # Asked again while queued, the first request comes back: it was told it had
            # queued it just now, "From now on" (stop 60's audit of the portal in a browser),
            # where one already under way says nothing new started. The service says which
            # (``already_requested``): told by comparing the mark's moment, the database's
            # clock, with this host's, a person on a host a second ahead was told their own
            # new request was queued before (stop 65's review of the database's clock).
            if operation.already_requested:
                queued_at = date_format(timezone.localtime(operation.requested_at), "j M Y, H:i T")
                messages.info(self.request, self.ALREADY_QUEUED.format(queued_at=queued_at))
            else:
                messages.info(self.request, self.QUEUED)
            return redirect("portal:deletions")
        messages.add_message(self.request, *self._outcome(operation))
        return redirect("portal:deletion", operation_id=operation.pk)

    @staticmethod
    def _outcome(operation) -> tuple[int, str]:
        """Return the message level and text that say what the request did."""
        if operation.already_requested and operation.status == DeletionOperation.State.COMPLETED:
            return messages.INFO, (
                "Nothing is left to delete: everything remembered about you was already "
                f"deleted by this operation ({operation.pk}). Nothing new was started."
            )
        if operation.already_requested and operation.target != DeletionOperation.Target.SUBJECT:
            # Everything is in the ledger, but a memory's (or a key's) own deletion is not
            # done (deletion.services._subject_deletion_covering).
            return messages.INFO, (
                "Everything remembered about you was already deleted or is being deleted, "
                "but the deletion of some of it, asked for on its own, is still under way "
                f"({operation.pk}); nothing new was started. This page follows it until every "
                "copy is verified gone."
            )
        if operation.already_requested:
            return messages.INFO, (
                "A deletion of everything remembered about you is already under way "
                f"({operation.pk}); nothing new was started. This page follows it until every "
                "copy is verified gone."
            )
        if not operation.memory_ids:
            return messages.SUCCESS, (
                "No memory about you was left to delete. This operation still clears your "
                "exports, retrieval traces and cached entries and verifies every store."
            )
        return messages.SUCCESS, (
            "Deletion of everything remembered about you has started. This page follows it "
            "until every copy is verified gone."
        )


class DeletionListView(EndUserMixin, TemplateView):
    """The login's deletion operations with their ids and statuses, newest first, a page at a
    time."""

    template_name = "portal/deletion_list.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        page = deletions_page(principal=self.principal, page=page_number(self.request))
        context.update(page=page, operations=page.items, page_query=page_query(self.request))
        # A queued deletion of the subject (everything, or a key's, asked by an agent): one
        # at a time.
        context["queued"] = next(iter(queued_deletions(principal=self.principal)), None)
        return context


def deletion_heading(operation, *, done: bool) -> str:
    """Return the heading of a deletion's progress page: the page renders it, and its script
    puts the one the status JSON gives in place once the operation is done (a queued key
    deletion's heading, which names the key, is the template's)."""
    if done and operation.status != DeletionOperation.State.COMPLETED:
        return "Deletion stopped: some copies may remain"
    everything = operation.target == DeletionOperation.Target.SUBJECT
    if operation.status == DeletionOperation.State.COMPLETED:
        return "Everything about you is deleted" if everything else "Deleted and verified"
    if everything:
        return "Deleting everything about you"
    # Counted by the database (``deletion_get(ids=False)``); a queued one has none yet.
    count = getattr(operation, "memory_count", None)
    count = len(operation.memory_ids) if count is None else count
    return f"Deleting {count} memor{'y' if count == 1 else 'ies'}"


def operation_status(operation) -> dict:
    """Return the JSON the progress page polls: the operation and each step's state, and,
    for the page's script to show without reloading, its heading and when it completed."""
    steps = list(operation.steps.all())
    done = operation.status in ("completed", "failed") or bool(operation.dead_lettered_at)
    completed_at = operation.completed_at
    return {
        "id": str(operation.pk),
        "status": operation.status,
        "done": done,
        "heading": deletion_heading(operation, done=done),
        "attempts": operation.attempts,
        "requested_at": operation.requested_at,
        "started_at": operation.started_at,
        "completed_at": completed_at,
        # As the page writes it ("5 Dec 2026, 14:51:03 UTC", dated: a retried or queued
        # deletion completes days after it was asked): the portal renders in TIME_ZONE.
        "completed_label": (
            date_format(timezone.localtime(completed_at), "j M Y, H:i:s T") if completed_at else ""
        ),
        "steps": [
            {
                "store": step.store,
                "status": step.status,
                "attempts": step.attempts,
                "verified_at": step.verified_at,
            }
            for step in steps
        ],
        "verified": sum(1 for step in steps if step.status == "verified"),
        "total": len(steps),
    }


class DeletionDetailView(EndUserMixin, TemplateView):
    """One deletion operation and its steps; refreshes itself until it is done."""

    template_name = "portal/deletion_detail.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        operation = deletion_get(
            principal=self.principal, operation_id=kwargs["operation_id"], ids=False
        )
        status = operation_status(operation)
        context.update(
            operation=operation,
            status=status,
            # Done without completing: it used up its runs (dead-lettered) and waits for a
            # reviewer's retry; nothing re-drives it by itself.
            stopped=status["done"] and operation.status != DeletionOperation.State.COMPLETED,
        )
        return context


class DeletionStatusView(EndUserMixin, View):
    """The progress of one deletion operation as JSON, for the page's polling script."""

    http_method_names = ["get"]

    def get(self, request, operation_id):
        operation = deletion_get(principal=self.principal, operation_id=operation_id, ids=False)
        response = JsonResponse(operation_status(operation))
        response["Cache-Control"] = "no-store"
        return response


def export_during_deletion(operations) -> str:
    """Return what an export made now holds and leaves out, while ``operations`` (deletions
    of the subject's memories not finished, ``subject_deletions_in_progress``) run."""
    said = []
    for operation in operations:
        everything = operation.target == DeletionOperation.Target.SUBJECT
        if operation.status == QUEUED:  # not made yet: nothing is out of use
            what = (
                "everything remembered about you"
                if everything
                else f"your memories on the key {operation.subject.deletion_queued_key}"
            )
            said.append(
                f"The deletion of {what} is queued for a worker and has not started, so the "
                "export still holds those memories, as this portal still lists them; once it "
                "runs, the deletion removes them from the copy of the export kept here, but "
                "not from the file you download."
            )
        elif everything:
            said.append(
                f"Everything remembered about you is being deleted (operation {operation.pk}), "
                "so the export holds none of it: what a deletion takes is out of use from the "
                "moment it is asked for, and left out."
            )
        else:
            count = operation.memory_count
            said.append(
                f"A deletion of {count} memor{'y' if count == 1 else 'ies'} about you is under "
                f"way (operation {operation.pk}), so the export leaves "
                f"{'it' if count == 1 else 'them'} out (out of use from the moment the deletion "
                "was asked for) and holds everything else remembered about you."
            )
    return " ".join(said)


def period_in_words(hours: int) -> str:
    """Return a number of hours as a person reads it: "an hour", "36 hours", "a day",
    "3 days", "a week", "2 weeks" (the largest unit that divides it)."""
    units = ((168, "week"), (24, "day"), (1, "hour"))
    size, unit = next((size, unit) for size, unit in units if hours % size == 0)
    count = hours // size
    if count == 1:
        return "an hour" if unit == "hour" else f"a {unit}"
    return f"{count} {unit}s"


def export_kept(hours: int) -> str:
    """Return how long the copy of an export stays on the server, as the export page says it:
    ``MEMLEDGER_EXPORT_RETENTION_HOURS``, which the retention sweep deletes it by (0: until
    a deletion of the subject removes it). The page said "for a day" whatever the setting."""
    if not hours:
        return (
            "A copy of the file stays on our side until a deletion of everything about you "
            "removes it."
        )
    return (
        f"A copy of the file stays on our side for {period_in_words(hours)}, then is deleted; "
        "a deletion of everything about you removes it sooner."
    )


def shown_deletions(operations) -> str:
    """The deletions in progress an export page said what the export holds during, as its
    form carries them: a change since (one started, one made from its queue) asks again;
    one finished since does not, as the page said what the export leaves out of it."""
    return ",".join(
        f"{operation.pk}:{'queued' if operation.status == QUEUED else 'made'}"
        for operation in operations
    )


def deletion_entries(shown: str) -> set[str]:
    """Return the ``id:state`` entries of a ``shown_deletions`` string."""
    return {entry for entry in shown.split(",") if entry}


# How long after an export a request from a page opened before it is answered with that
# export's file instead of a new one. A second click waits for the first's export
# (``locks.export_turn_lock``) and finds it made a moment ago, however long it took to write.
EXPORT_SENT_AGAIN = timedelta(seconds=10)


def page_opened(value: str) -> datetime | None:
    """Return when an export page was opened, as its form carries it; None for a form that
    does not say it (a page from before it did) or a value that is not an aware moment."""
    try:
        opened = datetime.fromisoformat(value)
    except ValueError:
        return None
    return opened if timezone.is_aware(opened) else None


class ExportView(EndUserMixin, TemplateView):
    """Export everything remembered about the login's subject as one JSON download.

    While a deletion of the subject's memories is in progress, the page says what the export
    holds and leaves out (``export_during_deletion``); a request from a page that did not say
    it (opened before the deletion began) downloads nothing and shows the page, which does.
    A request sent again (a double click) gets the file of the export its page already made,
    while that file still holds what an export would hold now.
    """

    template_name = "portal/export.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        deleting = subject_deletions_in_progress(principal=self.principal)
        context.update(
            during_deletion=export_during_deletion(deleting),
            shown_deletions=shown_deletions(deleting),
            kept=export_kept(settings.MEMLEDGER_EXPORT_RETENTION_HOURS),
            # The database's clock, as the exports' ``created_at`` it is compared with
            # (``sent_again``).
            opened=database_now().isoformat(),
        )
        return context

    # SubjectBeingDeleted (a deletion holds the subject past the lock's wait) in the words of
    # an export: the person's "nothing was changed ... none of your memories can be changed"
    # read as though exporting changed something.
    being_deleted = (
        "A deletion of memories about you is running right now (see Deletions), so nothing "
        "was exported. Try again in a moment, once it has finished."
    )
    NOT_YET = (
        "Nothing was downloaded yet: a deletion of memories about you is under way. Read "
        "below what the export holds while it runs, then download it again."
    )

    MADE_SINCE = (
        "Nothing was downloaded yet: a deletion of memories about you has been made since this "
        "page was opened, so the export no longer holds them. Download it again to get what "
        "is remembered now."
    )

    def post(self, request):
        # A double click sends the form twice, the second while the first is still writing
        # the file. Each made an export: two full copies of everything remembered about the
        # person kept on our side (stop 56's audit of the portal in a browser). The second
        # now waits here for the first, then answers with its file (``sent_again``).
        export_turn_lock(self.principal.actor_id)
        # The subject's lock first, as ``export_create`` takes it, before the deletions are
        # read: one asked for after this check (another tab) waits for the export, which then
        # holds what the page said. Taken after, such a deletion passed unseen, and the file
        # left out its memory silently (stop 53's audit of exports).
        try:
            subject_shared_lock(self.principal.subject_id)
        except DomainError as error:
            return self.refuse(error, reverse("portal:export"))
        # Compared entry by entry, not as one string: a page that named two deletions, one
        # of which finished before the button was pressed, downloaded nothing, though what it
        # said of each still held (stop 55's audit of the portal).
        now = deletion_entries(
            shown_deletions(subject_deletions_in_progress(principal=self.principal))
        )
        shown = deletion_entries(request.POST.get("shown_deletions", ""))
        if now - shown:
            # One in progress the page did not speak of (begun since, or made from its queue).
            messages.info(request, self.NOT_YET)
            return redirect("portal:export")
        if any(entry.endswith(":queued") and entry not in now for entry in shown):
            # The page said a queued deletion left its memories in the export, and it has
            # been made and finished since: the file would hold none of them (stop 54's
            # audit of the portal). A made one the page said it left out, finished since,
            # leaves out what the page said.
            messages.info(request, self.MADE_SINCE)
            return redirect("portal:export")
        again = self.sent_again(page_opened(request.POST.get("opened", "")))
        if again is not None:
            return again
        try:
            export = export_create(principal=self.principal)
        except DomainError as error:
            return self.refuse(error, reverse("portal:export"))
        return self.download(export, export_path(export).open("rb"))

    def sent_again(self, opened: datetime | None) -> FileResponse | None:
        """Return the download of the export this login made after its page was ``opened``,
        within ``EXPORT_SENT_AGAIN``, if its file still holds what an export would hold now
        (``export_holds_now``): the same request sent again. None makes a new one.

        Every moment here is the database's clock: ``opened`` (the page's ``database_now``),
        the export's ``created_at`` and the window's start (``Now()``). With the web host's
        for the two others, a host ahead of the database read a double click's export as made
        before its page was opened, and made a second one, and a host behind gave a page
        opened after an export that export's file (stop 65's review of the database's
        clock)."""
        if opened is None:
            return None
        export = (
            Export.objects.filter(
                tenant_id=self.principal.tenant_id,
                subject_id=self.principal.subject_id,
                requested_by_type=self.principal.actor_type,
                requested_by_id=self.principal.actor_id,
                created_at__gt=opened,
            )
            .filter(created_at__gt=Now() - EXPORT_SENT_AGAIN)
            .order_by("-created_at")
            .first()
        )
        # An export sent again after a revoke in another tab gave back the earlier file,
        # which said the preference was active (stop 59's audit of the portal in a browser);
        # then, told by the revoke's event stamp, one committed after the file was read but
        # stamped before the page was opened (stop 59's audit of races); then, told by the
        # memories' and events' ids, an expiry, a policy or a writer's new name (stop 60's
        # audit of exports). The records are made again and compared whole.
        if export is None or not export_holds_now(export, principal=self.principal):
            return None
        try:
            file = export_path(export).open("rb")
        except FileNotFoundError:  # its file is gone: a new export, rather than a 500
            return None
        except ExportPathRefused as error:
            # A row restored or edited to name a file outside the export folder: that file
            # is never served (until stop 69 /etc/passwd was), and a new export is made.
            logger.error("portal export: export %s: %s", export.id, error)
            return None
        return self.download(export, file)

    @staticmethod
    def download(export, file) -> FileResponse:
        """Return ``file``, the file of ``export``, as the download, named by when it was made."""
        # Streamed from the file, a block at a time: an export may be tens of megabytes.
        stamp = export.created_at.strftime("%Y%m%d-%H%M%S")
        response = FileResponse(file, content_type="application/json")
        response["Content-Disposition"] = f'attachment; filename="memledger-export-{stamp}.json"'
        response["Cache-Control"] = "no-store"
        return response
