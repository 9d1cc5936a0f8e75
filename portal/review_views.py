"""Reviewer pages: pending sensitive writes, open conflicts, rejected writes by rule,
dead-lettered deletions and the health charts, for the reviewers of one tenant."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views import View
from django.views.generic import TemplateView

from memory_core.deletion.selectors import deletion_get
from memory_core.deletion.services import deletion_retry
from memory_core.exceptions import Conflict, DomainError
from memory_core.models import DeletionOperation, Memory, MemoryEvent, ReviewItem, Status
from memory_core.models.events import REPLACED_BY_LATER_CORRECTION
from memory_core.policy_check import STATE_WORDS
from memory_core.selectors.approvals import in_use_now
from memory_core.selectors.health import evaluation_figures, health_overview
from memory_core.selectors.portal import (
    conflict_queue,
    dead_letters_page,
    queue_page_of,
    rejected_by_rule,
    review_queue,
    review_recent,
)
from memory_core.selectors.reviews import review_approval_conflict, review_get
from memory_core.services.conflicts import conflict_resolve
from memory_core.services.reviews import review_approve, review_kind_check, review_reject
from portal.access import ReviewerMixin
from portal.charts import NARROW_WIDTH, chart_geometry
from portal.forms import ApprovalForm, ConflictResolveForm, ReasonForm, form_problems
from portal.paging import page_number, page_query
from portal.templatetags.portal_tags import reason_label


def back_to(name: str, request) -> str:
    """Return the URL of the list ``name`` at the page a form's action names (``?page=``):
    an action goes back to the page of the list it was sent from."""
    number = page_number(request)
    url = reverse(name)
    return f"{url}?page={number}" if number > 1 else url


def page_now(name: str, *, principal, item_id, kind, fallback: str) -> str:
    """Return the URL of the queue ``name`` at the page its item ``item_id`` is on now, or
    ``fallback`` when it is on none (decided meanwhile): a refused decision is shown where
    its item is, which other decisions may have moved onto an earlier page than the one its
    form was sent from (stop 61's reviews)."""
    number = queue_page_of(principal=principal, item_id=item_id, kind=kind)
    if number is None:
        return fallback
    url = reverse(name)
    return f"{url}?page={number}" if number > 1 else url


class OpenedByGetMixin:
    """A reviewer's action (a POST) whose address is opened with GET goes back to the page
    it lives on (``back_name``), doing nothing, and says so (``NOT_SENT``).

    An action sent after the session ended goes to the login page, whose ``next`` is its
    address: logged in again, the browser opens it (a refused action's page reloaded from
    history too), and a bare 405 showed the browser's own error page. ``find`` looks the
    target up first, as the POST does: another tenant's id is a 404, and a review item of
    the other ``kind`` is refused in the same words.
    """

    back_name = ""
    NOT_SENT = ""
    kind = ""  # the kind of review item the action is for

    def find(self, target_id) -> None:
        """Refuse a ``target_id`` the action cannot be taken on: none of the reviewer's tenant
        (NotFound), or an item of the other kind (``review_kind_check``: a write's id on a
        conflict's resolve address was a 404 to a POST and called a conflict on a GET, stop
        63's audit of the portal)."""
        item = review_get(principal=self.principal, item_id=target_id)
        try:
            review_kind_check(item, kind=self.kind)
        except Conflict as refusal:
            if refusal.code != "not_a_conflict":
                raise
            # The domain names the action; where a reviewer takes it is this portal's page,
            # as the reviewer API names the conflicts page (``not_a_sensitive_write``): the
            # refusal lands on the conflicts page, which has no link to the write, and said
            # only "decide it in the review queue" (stop 63's review).
            queue = reverse("portal:review:queue")
            raise Conflict(
                f"{refusal.message} It waits on {queue}, the review queue (Pending writes).",
                code=refusal.code,
            ) from refusal

    def get(self, request, **kwargs):
        (target_id,) = kwargs.values()
        back = back_to(self.back_name, request)
        try:
            self.find(target_id)
        except DomainError as error:  # NotFound stays a 404 (``refuse``)
            return self.refuse(error, back)
        messages.info(request, self.NOT_SENT.format(short=str(target_id)[:8]))
        return redirect(back)


def queue_context(*, principal, number: int) -> dict:
    """Return what the queue page shows: page ``number`` of the pending writes and the
    latest decisions."""
    page = review_queue(principal=principal, page=number)
    return {
        "page": page,
        "items": page.items,
        "recent": review_recent(principal=principal, limit=10),
    }


class ReviewQueueView(ReviewerMixin, TemplateView):
    """Sensitive writes waiting for a reviewer's approval."""

    template_name = "portal/review/queue.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.update(
            queue_context(principal=self.principal, number=page_number(self.request)),
            page_query=page_query(self.request),
        )
        return context


class ReviewDecideView(OpenedByGetMixin, ReviewerMixin, View):
    """Approve or reject one pending write, with a reason.

    A reason refused by the form (blank: spaces pass the browser's ``required``) shows the
    queue page again with the problem on that write's reason, focused, and nothing decided.
    """

    http_method_names = ["get", "post"]  # GET decides nothing (``OpenedByGetMixin``)
    back_name = "portal:review:queue"
    kind = ReviewItem.Kind.SENSITIVE_WRITE
    decision = ""  # "approve" | "reject"
    services = {"approve": review_approve, "reject": review_reject}
    form_classes = {"approve": ApprovalForm, "reject": ReasonForm}
    NOT_SENT = (
        "Nothing was decided on write {short}: a decision is made only with its Approve or "
        "Reject button, and one sent after your session had ended was lost at the login. "
        "Decide it below if it is still waiting."
    )

    # What ended a write's wait other than a decision (its memory's event), and who did it
    # (the event's ``actor_type``), in a reviewer's words; the system's is said without one.
    ENDED = {
        MemoryEvent.Action.DELETION_REQUESTED: "deleted",
        MemoryEvent.Action.REVOKED: "revoked",
        MemoryEvent.Action.EXPIRED: "expired",
    }
    WHO = {
        "user": "its person",
        "agent": "an agent",
        "reviewer": "a reviewer",
        "admin": "an administrator",
    }

    @staticmethod
    def event_of(item, actions, *, last: bool) -> MemoryEvent | None:
        """The first (or ``last``) event of ``actions`` on the write of ``item``."""
        order = ("-created_at", "-id") if last else ("created_at", "id")
        return (
            MemoryEvent.objects.filter(
                tenant_id=item.tenant_id, memory_id=item.memory_id, action__in=list(actions)
            )
            .order_by(*order)
            .first()
        )

    def closed_meanwhile(self, item_id) -> str:
        """Return, in a reviewer's words, why nothing was decided on the write ``item_id``:
        it stopped waiting after the queue was shown (``review_closed``), decided (by this
        reviewer's first click, by another reviewer, or by memledger again after a restore),
        deleted, revoked or expired."""
        # It was the service's "The memory is deleted, not pending.", which named no write
        # (stop 59's audit of the portal in a browser).
        item = review_get(principal=self.principal, item_id=item_id)
        short = str(item.pk)[:8]
        nothing = f"Nothing was decided on write {short}"
        if item.state in (ReviewItem.State.APPROVED, ReviewItem.State.REJECTED):
            if item.resolved_by_id == self.request.user.pk:  # a second click
                return f"Nothing more was decided on write {short}: you {item.state} it already."
            if item.resolved_by_id is not None:
                return f"{nothing}: another reviewer {item.state} it meanwhile."
            # No login: memledger's own decision (or a reviewer's whose login is gone since),
            # told apart by its event. The replay of a restore is memledger's only decision
            # (``reviews.memory_reject_replayed``), said to be another reviewer's until stop 59's
            # audit of the review queue.
            decided = self.event_of(item, [item.state], last=True)
            system = decided is not None and decided.actor_type == MemoryEvent.ActorType.SYSTEM
            if system and item.state == ReviewItem.State.REJECTED:
                return (
                    f"{nothing}: memledger rejected it again after a restore (it had been "
                    "rejected after the backup was taken)."
                )
            return f"{nothing}: it was {item.state} meanwhile."
        ended = self.event_of(item, self.ENDED, last=False)
        if ended is None:
            return f"{nothing}: it is no longer waiting for a reviewer."
        if ended.action == MemoryEvent.Action.EXPIRED:
            return f"{nothing}: it expired while it waited ({reason_label(ended.reason_code)})."
        if ended.reason_code == REPLACED_BY_LATER_CORRECTION:
            # Withdrawn by the person's own later correction (``writes._withdraw_own_waiting``),
            # recorded as a revoke: "its person revoked it" read as a person who took the
            # memory back, where what they said last stands (stop 68's audit of the portal).
            return (
                f"{nothing}: its person replaced it with a later correction while it waited; "
                "what they said last stands (if it is sensitive, it waits in this queue)."
            )
        done, who = self.ENDED[ended.action], self.WHO.get(ended.actor_type)
        happened = f"{who} {done} it" if who else f"it was {done}"
        return f"{nothing}: {happened} while it waited."

    @staticmethod
    def decided(form) -> dict:
        """Return the decision's arguments from the valid ``form``: its reason and, from the
        queue's approval form, the memory its card said the approval lands on (None: none).
        One sent without that field (every queue form holds it) approves wherever the write
        lands, as the reviewer API does."""
        arguments = {"reason": form.cleaned_data["reason"]}
        if "seen_head_id" in form.data and "seen_head_id" in form.fields:
            arguments["seen_head_id"] = form.cleaned_data["seen_head_id"]
        return arguments

    def post(self, request, item_id):
        # Back to the page of the queue the form was on (its action carries ``?page=``).
        number = page_number(request)
        queue = back_to("portal:review:queue", request)
        service = self.services[self.decision]
        try:  # another tenant's item, or none: 404 before anything about the form is said
            # A conflict is answered as the service answers it (``not_a_sensitive_write``),
            # whatever the reason: a blank one took the form's path, which looks the item up
            # among the writes waiting, and called the open conflict a write no longer
            # waiting (stop 62's audit of reviewer flows).
            self.find(item_id)
        except DomainError as error:
            return self.refuse(error, queue)
        form = self.form_classes[self.decision](request.POST)
        if not form.is_valid():
            if form.has_error("reason", "required"):
                problem = "Nothing was decided. Give a reason for the decision; it is kept with it."
            else:
                problem = f"Nothing was decided ({form_problems(form)})."
            # On the page the write is on now: another reviewer's decision may have moved it
            # onto an earlier one.
            number = queue_page_of(
                principal=self.principal, item_id=item_id, kind=ReviewItem.Kind.SENSITIVE_WRITE
            )
            if number is None:
                # Decided or withdrawn meanwhile: there is no form left to show it on, and
                # what ended its wait is the answer, as for a decision with a reason. A blank
                # one asked for a reason for a write no one can decide any more, never saying
                # who had (stop 60's audit of the portal in a browser).
                messages.error(request, self.closed_meanwhile(item_id))
                return redirect(queue)
            context = queue_context(principal=self.principal, number=number)
            context.update(
                page_base=reverse("portal:review:queue"),
                invalid_item=item_id,
                invalid_form=form,
                invalid_problem=problem,
            )
            return render(request, "portal/review/queue.html", context)
        try:
            item = service(principal=self.principal, item_id=item_id, **self.decided(form))
        except DomainError as error:
            if error.code == "review_closed":
                messages.error(request, self.closed_meanwhile(item_id))
                return redirect(queue)
            # To the page the write is on now, whose card says what approving it does now.
            here = page_now(
                "portal:review:queue",
                principal=self.principal,
                item_id=item_id,
                kind=ReviewItem.Kind.SENSITIVE_WRITE,
                fallback=queue,
            )
            if error.code == "review_changed":
                messages.error(request, f"Write {str(item_id)[:8]}: {error.message}")
                return redirect(here)
            return self.refuse(error, here)
        short = str(item.pk)[:8]
        if self.decision == "reject":
            messages.success(request, f"Write {short} rejected.")
            return redirect(queue)
        # A correction of a memory imported to start later keeps that start
        # (``reviews._approval_start``): "it is now active" was said of a write no agent is
        # given until then (stop 60's audit of reviewers). In the words of a conflict's
        # candidate not yet in effect (``ConflictResolveView.not_in_effect_yet``).
        start = item.memory.valid_from
        state = (
            f"it is not in effect until {start.isoformat(timespec='minutes')} (no agent is "
            "given it before then)"
            if start > item.resolved_at
            else "it is now active"
        )
        conflict = review_approval_conflict(principal=self.principal, item=item)
        if conflict is not None:
            # Of lower authority than the key's memory in use: it stands beside it, in its
            # place, and retrieval's rules keep giving agents the memory of higher authority
            # (stage 8) unless neither is sure enough for them to pick one.
            messages.warning(
                request,
                f"Write {short} approved: {state}, but its authority is lower than "
                "the memory in use on its key, so it stands beside it in a conflict "
                f"({str(conflict.pk)[:8]}) for a reviewer to settle under Conflicts; "
                "until then agents are given the memory of higher authority, as before, "
                "unless neither is sure enough for retrieval to pick one.",
            )
            return redirect(queue)
        messages.success(request, f"Write {short} approved: {state}.")
        return redirect(queue)


class ConflictListView(ReviewerMixin, TemplateView):
    """Open conflicts (a write kept beside a memory of higher authority, or a clarification
    retrieval returned) with their candidates, and what agents are given meanwhile."""

    template_name = "portal/review/conflicts.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        page = conflict_queue(principal=self.principal, page=page_number(self.request))
        context.update(
            page=page,
            items=page.items,
            page_query=page_query(self.request),
            outcomes=ConflictResolveForm.OUTCOMES,
        )
        return context


class ConflictResolveView(OpenedByGetMixin, ReviewerMixin, View):
    """Resolve one conflict: choose the winner, keep both, or ask the user.

    An incomplete resolution (no winner picked) shows the conflicts page again with the
    problem on that conflict's form and the reviewer's choices and reason kept in it.
    """

    http_method_names = ["get", "post"]  # GET resolves nothing (``OpenedByGetMixin``)
    back_name = "portal:review:conflicts"
    kind = ReviewItem.Kind.CONFLICT
    # What each outcome did, said after it (the form says it before). Retrieval gives agents
    # the candidate its rules prefer during an open conflict, and a clarification only for a
    # tie on a high-impact key (docs/retrieval.md, stage 8): "ask the user" changes neither.
    DONE = {
        "choose_winner": "The winner stays in use; every other candidate in use was revoked.",
        # Of the candidates still in use: one out of use or not yet in effect stays as it is,
        # given to no agent, and is named after it (``given_to_no_agent``).
        "keep_both_scoped": "Every candidate still in use stays in use: agents are given each "
        "where it applies, together where they hold in the same place.",
        "ask_user": "Nothing changed: agents are given what they were given before (the "
        "candidate retrieval's rules prefer or, where the rules leave a tie on a key that "
        "matters, a request for clarification) until a new memory on the key settles it.",
    }
    # ``out_of_use``'s word for a candidate active but not in effect yet (its valid_from is
    # still ahead: imported so), which no agent is given before then.
    NOT_YET = "not_in_effect_yet"
    NOT_SENT = (
        "Nothing was resolved: a conflict is resolved only with its Resolve button, and a "
        "resolution sent after your session had ended was lost at the login. Resolve it "
        "below if it is still open."
    )

    def post(self, request, item_id):
        # Back to the page of the queue the form was on (its action carries ``?page=``).
        number = page_number(request)
        conflicts = reverse("portal:review:conflicts")
        back = back_to("portal:review:conflicts", request)
        try:  # another tenant's item, or none: 404 before anything about the form is said
            # A sensitive write is answered as a GET of this address answers it
            # (``not_a_conflict``): it was a 404, as ``conflict_resolve`` finds no conflict of
            # its id (stop 63's audit of the portal).
            self.find(item_id)
        except DomainError as error:
            return self.refuse(error, back)
        form = ConflictResolveForm(request.POST)
        if not form.is_valid():
            # On the page the conflict is on now (see ``ReviewDecideView``).
            number = queue_page_of(
                principal=self.principal, item_id=item_id, kind=ReviewItem.Kind.CONFLICT
            )
            if number is None:
                # Resolved or closed meanwhile: there is no form left to show the problem on,
                # and what ended it is the answer, as for a resolution with a reason (it asked
                # for a reason and a winner for a conflict no one can resolve any more).
                messages.error(request, self.closed_meanwhile(item_id))
                return redirect(back)
            page = conflict_queue(principal=self.principal, page=number)
            return render(
                request,
                "portal/review/conflicts.html",
                {
                    "page": page,
                    "items": page.items,
                    "page_base": conflicts,
                    "outcomes": ConflictResolveForm.OUTCOMES,
                    "invalid_item": item_id,
                    "invalid_form": form,
                },
            )
        try:
            item = conflict_resolve(
                principal=self.principal,
                item_id=item_id,
                outcome=form.cleaned_data["outcome"],
                winner_id=form.cleaned_data.get("winner_id"),
                reason=form.cleaned_data["reason"],
                seen_candidate_ids=form.cleaned_data.get("candidate_ids"),
            )
        except DomainError as error:
            if error.code == "review_not_open":
                messages.error(request, self.closed_meanwhile(item_id))
                return redirect(back)
            # Where the conflict is now: changed, it is shown again there (``page_now``).
            here = page_now(
                "portal:review:conflicts",
                principal=self.principal,
                item_id=item_id,
                kind=ReviewItem.Kind.CONFLICT,
                fallback=back,
            )
            return self.refuse(error, here)
        outcome = form.cleaned_data["outcome"]
        label = dict(ConflictResolveForm.OUTCOMES)[outcome]
        done = self.DONE[outcome]
        if outcome == "choose_winner":
            done += self.not_in_effect_yet(item, form.cleaned_data["winner_id"])
        elif outcome == "keep_both_scoped":
            done += self.given_to_no_agent(item)
        messages.success(request, f"Conflict resolved: {label.lower()}. {done}")
        return redirect(back)

    def closed_meanwhile(self, item_id) -> str:
        """Return, in a reviewer's words, why nothing was resolved on the conflict ``item_id``:
        it stopped being open after the page was shown (``review_not_open``), resolved by this
        reviewer's first click or by another reviewer, or closed by itself, fewer than two of
        its candidates being left in use (its resolution the reason code of what retired one,
        ``conflicts_close_settled``, or the retention sweep's ``settled``).

        It was the service's "This conflict is already resolved." for each, which said neither
        by whom nor how, and called resolved a conflict no one had (stop 68's audit of the
        portal), where a decision on a write says both (``ReviewDecideView.closed_meanwhile``).
        """
        item = review_get(principal=self.principal, item_id=item_id)
        short = str(item.pk)[:8]
        nothing = f"Nothing was resolved on conflict {short}"
        outcome = dict(ConflictResolveForm.OUTCOMES).get(item.resolution)
        if outcome is None:
            return (
                f"{nothing}: it closed meanwhile, as fewer than two of its candidates are still "
                "in use (revoked, expired or deleted since), so nothing is left to choose."
            )
        how = outcome.lower()
        if item.resolved_by_id == self.request.user.pk:  # a second click
            return (
                f"Nothing more was resolved on conflict {short}: you resolved it already ({how})."
            )
        if item.resolved_by_id is not None:
            return f"{nothing}: another reviewer resolved it meanwhile ({how})."
        # No login: a reviewer's whose login is gone since.
        return f"{nothing}: it was resolved meanwhile ({how})."

    @classmethod
    def out_of_use(cls, item, winner_id=None) -> list[tuple[Memory, str]]:
        """Return the candidates of the resolved conflict ``item`` (but the winner
        ``winner_id``) that agents were not given at its resolution, each with why: its state
        then (``InUse.state`` at its ``resolved_at``, as ``conflict_resolve`` read them:
        expired, past its retention, revoked, deleted), or ``NOT_YET`` for one active whose
        ``valid_from`` is still ahead. By their start, then id. Two queries."""
        use = in_use_now(item.tenant_id, item.resolved_at)
        candidates = (
            Memory.objects.filter(tenant_id=item.tenant_id, pk__in=item.candidate_ids)
            .exclude(pk=winner_id)
            .order_by("valid_from", "id")
        )
        left = []
        for memory in candidates:
            state = use.state(memory)
            if state == Status.ACTIVE and memory.valid_from > use.now:
                state = cls.NOT_YET
            if state != Status.ACTIVE:
                left.append((memory, state))
        return left

    @classmethod
    def not_in_effect_yet(cls, item, winner_id) -> str:
        """Say which of the conflict's other candidates a chosen winner left active: those not
        in effect yet, which the resolution does not revoke (``conflict_resolve``). "Every
        other candidate was revoked" was said of them too (stop 59's audit of the portal).

        Only those in use at the resolution and starting after it (``out_of_use``): one past
        its valid_until or its retention is stored "active" until the sweep, and was said to
        be "not in effect until" its past start (stop 60's audit of reviewers); out of use,
        the page listed it so already."""
        return "".join(
            f" Candidate {str(memory.pk)[:8]} was not revoked: it is not in effect until "
            f"{memory.valid_from.isoformat(timespec='minutes')}."
            for memory, state in cls.out_of_use(item, winner_id)
            if state == cls.NOT_YET
        )

    @classmethod
    def given_to_no_agent(cls, item) -> str:
        """Say which of the conflict's candidates keeping both left given to no agent: it
        keeps each as it is, so one out of use at the resolution stays out of use, and one
        not in effect yet is given to no agent before its start (``out_of_use``). "Every
        candidate stays in use" was said of them, as the conflicts page listed them out of
        use or not in effect yet (stop 63's audit of the portal)."""
        said = []
        for memory, state in cls.out_of_use(item):
            short = str(memory.pk)[:8]
            if state == cls.NOT_YET:
                # In the words of an approved write that starts later (``ReviewDecideView``).
                start = memory.valid_from.isoformat(timespec="minutes")
                said.append(
                    f" Candidate {short} is not in effect until {start} (no agent is given it "
                    "before then)."
                )
            else:
                said.append(
                    f" Candidate {short} is {STATE_WORDS.get(state, state)} and given to no agent."
                )
        return "".join(said)


class RejectedWritesView(ReviewerMixin, TemplateView):
    """Writes the admission policy refused, grouped by the rule that refused them."""

    template_name = "portal/review/rejected.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["groups"] = rejected_by_rule(principal=self.principal)
        return context


class DeadLetterView(ReviewerMixin, TemplateView):
    """Deletion operations that exhausted their retries and need an operator."""

    template_name = "portal/review/deletions.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        page = dead_letters_page(principal=self.principal, page=page_number(self.request))
        context.update(page=page, operations=page.items, page_query=page_query(self.request))
        return context


class DeadLetterRetryView(OpenedByGetMixin, ReviewerMixin, View):
    """Re-drive one dead-lettered operation (``deletion_retry``): fresh attempts, its task
    sent once the request commits. For when the cause is fixed (a volume mounted again, a
    folder created): verified steps stay verified, the others run again."""

    http_method_names = ["get", "post"]  # GET retries nothing (``OpenedByGetMixin``)
    back_name = "portal:review:deletions"
    NOT_SENT = (
        "Nothing was retried: a deletion is retried only with its Retry button, and a retry "
        "sent after your session had ended was lost at the login. Retry it below if it is "
        "still listed."
    )

    def find(self, target_id) -> None:
        deletion_get(principal=self.principal, operation_id=target_id, ids=False)

    def post(self, request, operation_id):
        # Back to the page of the list the form was on (its action carries ``?page=``).
        dead_letters = back_to("portal:review:deletions", request)
        try:
            operation = deletion_retry(principal=self.principal, operation_id=operation_id)
        except DomainError as error:
            return self.refuse(error, dead_letters)
        short = str(operation.pk)[:8]
        if operation.retried:
            messages.success(
                request,
                f"Deletion {short} retried: its unverified steps run again "
                "(it comes back here if they fail again).",
            )
        elif operation.status == DeletionOperation.State.COMPLETED:
            messages.info(request, f"Nothing to retry: deletion {short} has already completed.")
        else:  # pending, running or partial: another retry (or the first run) goes on
            messages.info(
                request,
                f"Nothing to retry: deletion {short} is already running ({operation.status}).",
            )
        return redirect(dead_letters)


class HealthView(ReviewerMixin, TemplateView):
    """The tenant's health figures over time, as server-rendered SVG charts."""

    template_name = "portal/review/health.html"
    windows = (7, 14, 30)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        try:
            days = int(self.request.GET.get("days", 14))
        except ValueError:
            days = 14
        days = days if days in self.windows else 14
        overview = health_overview(principal=self.principal, days=days)
        context.update(
            overview=overview,
            days=days,
            windows=self.windows,
            charts=[
                (chart, chart_geometry(chart), chart_geometry(chart, width=NARROW_WIDTH))
                for chart in overview.charts
            ],
            evaluation=evaluation_figures(overview.evaluation),
        )
        return context
