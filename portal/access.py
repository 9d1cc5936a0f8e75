"""Who is asking: a portal login's principal, and the mixins that guard every page.

A login becomes a principal through its PortalMembership (an end user of one subject, or a
reviewer of one tenant). A login without a membership, or with the wrong role for a page, gets
a 403 page that says so; an id outside the principal's scope is a 404, like a missing id.
"""

from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.db import IntegrityError, connection, transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers

from memory_core.exceptions import (
    DomainError,
    NotFound,
    OverBudget,
    SubjectBeingDeleted,
    is_tenant_deleted,
)
from memory_core.principals import ReviewerPrincipal, SubjectPrincipal
from memory_core.rls import request_tenant_set
from memory_core.selectors.portal import portal_principal

END_USER = "end_user"
REVIEWER = "reviewer"


def role_of(principal) -> str | None:
    """Return the portal role of a principal ("end_user", "reviewer") or None."""
    if isinstance(principal, SubjectPrincipal):
        return END_USER
    if isinstance(principal, ReviewerPrincipal):
        return REVIEWER
    return None


# SubjectBeingDeleted in a person's words (its own are an agent's: retry in a few seconds).
BEING_DELETED = (
    "A deletion of memories about you is under way (see Deletions), so nothing was changed: "
    "while it runs, or waits for a worker, none of your memories can be changed. Try again "
    "once it has finished."
)
# The same for a reviewer, whose pages have no Deletions link and who has no memories there.
BEING_DELETED_FOR_REVIEWER = (
    "This subject's memories are queued for deletion or being deleted, so nothing was "
    "decided. Try again once the deletion has finished."
)
# Said on the login page a form sent after the session ended is taken to: the login's ``next``
# opens the form's address afresh (a correction's form with the old text), and a correction,
# a revoke, a deletion or an export was dropped without a word (stop 60's audit of the portal
# in a browser).
SESSION_ENDED = (
    "Your session had ended, so what you sent was not saved: nothing was changed. Log in and "
    "try again."
)


class PortalAccessMixin(LoginRequiredMixin):
    """Resolve ``self.principal`` from the login; refuse logins without the page's role.

    ``NotFound`` raised by a selector or service anywhere in the view becomes a 404.
    """

    required_role: str | None = None
    # What ``refuse`` says of SubjectBeingDeleted, in the words of the page's reader.
    being_deleted = BEING_DELETED

    def dispatch(self, request, *args, **kwargs):
        if not request.user.is_authenticated:
            if request.method == "POST":
                messages.error(request, SESSION_ENDED)
            return self.handle_no_permission()
        self.principal = portal_principal(user=request.user)
        self.role = role_of(self.principal)
        request.portal_role = self.role
        if self.principal is not None:
            # The request's transaction acts for this login's tenant only (row-level
            # security); the membership that names the tenant is readable before.
            request_tenant_set(self.principal.tenant_id)
        if self.principal is None:
            return render(
                request,
                "portal/forbidden.html",
                {"reason": "no_membership"},
                status=403,
            )
        if self.required_role and self.role != self.required_role:
            return self.wrong_role(request)
        try:
            response = super().dispatch(request, *args, **kwargs)
        except NotFound as error:
            raise Http404(error.message) from error
        except IntegrityError as error:
            # The tenant was deleted while the request ran (trigger ``tenant_not_deleted``):
            # nothing of it is stored, and the login acts for nobody from now on. An export's
            # or a correction's insert answered 500.
            if not is_tenant_deleted(error):
                raise
            if connection.in_atomic_block:  # the request's transaction (ATOMIC_REQUESTS)
                transaction.set_rollback(True)
            return render(request, "portal/forbidden.html", {"reason": "no_membership"}, status=403)
        if callable(getattr(response, "render", None)) and not response.is_rendered:
            # Render inside the request's transaction: a lazy queryset in the context runs
            # now, while the tenant is set (row-level security), not after the commit.
            response.render()
        # Every portal page shows what is remembered about someone: no browser or proxy keeps
        # a copy (the back button after logout, a shared computer).
        add_never_cache_headers(response)
        return response

    def wrong_role(self, request):
        return render(
            request,
            "portal/forbidden.html",
            {"reason": "wrong_role", "required_role": self.required_role},
            status=403,
        )

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["principal"] = self.principal
        context["portal_role"] = self.role
        return context

    def refuse(self, error: DomainError, fallback_url: str):
        """Show a domain error as a message and go back to ``fallback_url``."""
        if isinstance(error, NotFound):
            raise Http404(error.message) from error
        if isinstance(error, OverBudget):
            # Its own words are for API clients and operators (memory_key, manage.py).
            messages.error(
                self.request,
                "This took longer than a page may wait, so nothing was changed. Try again in "
                "a moment; if it keeps happening, ask the service's administrator.",
            )
            return redirect(fallback_url)
        if isinstance(error, SubjectBeingDeleted):
            messages.error(self.request, self.being_deleted)
            return redirect(fallback_url)
        messages.error(self.request, error.message)
        return redirect(fallback_url)


class EndUserMixin(PortalAccessMixin):
    """A page about the login's own subject."""

    required_role = END_USER


class ReviewerMixin(PortalAccessMixin):
    """A page for the reviewers of one tenant."""

    required_role = REVIEWER
    being_deleted = BEING_DELETED_FOR_REVIEWER
