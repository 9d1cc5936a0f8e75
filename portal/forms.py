"""The portal's forms: they parse and validate input shape only; rules live in memory_core."""

import uuid

from django import forms
from django.forms.forms import NON_FIELD_ERRORS

from memory_core.models import (
    MAX_REVIEW_REASON_CHARS,
    Authority,
    MemoryClass,
    MemoryType,
    ScopeKind,
)
from memory_core.text import refuse_lone_surrogates
from portal.templatetags.portal_tags import authority_label


class RefusesLoneSurrogates:
    """A form field that refuses a lone surrogate before anything else reads the value: a
    choice field's own error quoted it ("Select a valid choice. \\ud800 is not one of ..."),
    and the page showing that error could not be encoded."""

    def to_python(self, value):
        value = super().to_python(value)
        refuse_lone_surrogates(value)
        return value


def shown_escaped(value):
    """Return ``value`` with a lone surrogate escaped (``\\ud800``), to show a refused form
    again: the page could not be encoded with it."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


class TextField(RefusesLoneSurrogates, forms.CharField):
    """Django's CharField (which refuses NUL characters) that also refuses lone surrogates,
    with its line breaks read as ``\n``: a browser sends each as CRLF and counts it as one
    character (``maxlength``), so a text the field accepted was refused as too long, and one
    saved held ``\r\n`` (stop 53's audit of the portal in a browser)."""

    def to_python(self, value):
        value = super().to_python(value)
        if isinstance(value, str) and "\r" in value:
            value = value.replace("\r\n", "\n").replace("\r", "\n")
        return value

    def prepare_value(self, value):
        return shown_escaped(value)


class ChoiceField(RefusesLoneSurrogates, forms.ChoiceField):
    """Django's ChoiceField that refuses lone surrogates without quoting them."""


def _with_any(choices, label="Any"):
    return [("", label), *choices]


class FocusFirstErrorMixin:
    """Autofocus the first field with an error; none when only the form has one (a service
    refused it): the template focuses its message then (``only_form_errors``), which the
    field, described by its help text only, never said (stop 53's audit of the portal).

    A refused form comes back as a new page: without this, focus starts at the top and a
    keyboard or screen-reader user has to hunt for what to fix.
    """

    def add_error(self, field, error):
        # Also called by a view after cleaning (a service refused the input).
        super().add_error(field, error)
        self._focus_first_error()

    def _focus_first_error(self):
        names = [name for name in self.fields if name in self._errors]
        if not names and NON_FIELD_ERRORS not in self._errors:
            names = list(self.fields)
        for name, field in self.fields.items():
            field.widget.attrs.pop("autofocus", None)
            if names and name == names[0]:
                field.widget.attrs["autofocus"] = True

    @property
    def only_form_errors(self) -> bool:
        """Whether only the form as a whole has an error: its message takes the focus."""
        return bool(self.errors) and set(self.errors) == {NON_FIELD_ERRORS}


class MemoryFilterForm(FocusFirstErrorMixin, forms.Form):
    """Search and filters of the "what is remembered" page (GET)."""

    q = TextField(label="Search", required=False, max_length=200)
    memory_class = ChoiceField(
        label="Class", required=False, choices=_with_any(MemoryClass.choices)
    )
    memory_type = ChoiceField(label="Type", required=False, choices=_with_any(MemoryType.choices))
    # In the cards' words ("stated by you", "inferred by a model"), not the enum's
    # ("Explicit User", "Model Inference").
    authority = ChoiceField(
        label="Authority",
        required=False,
        choices=_with_any(
            [(value, authority_label(value).capitalize()) for value in Authority.values]
        ),
    )
    scope_kind = ChoiceField(label="Scope", required=False, choices=_with_any(ScopeKind.choices))


class CorrectionForm(FocusFirstErrorMixin, forms.Form):
    """A user's correction of one memory: the new text, and why."""

    content = TextField(
        label="Corrected memory",
        # dir="auto" on the boxes a person's own text is typed in (and on the pages showing
        # it): a right-to-left script's ran left to right (stop 60's audit of the portal in
        # a browser).
        widget=forms.Textarea(attrs={"rows": 4, "dir": "auto"}),
        max_length=4000,
        help_text="This becomes a new version, recorded as stated by you. "
        "The current version stays in the history as superseded. A version set by an "
        "administrator is not replaced: your correction is kept beside it for a reviewer.",
    )
    reason = TextField(
        label="Why (optional)",
        required=False,
        max_length=500,
        widget=forms.TextInput(attrs={"dir": "auto"}),
    )


def form_problems(form: forms.Form) -> str:
    """Return a form's errors as one line for a message: "reason: Ensure this value ..."."""
    return "; ".join(
        f"{field if field != '__all__' else 'form'}: {' '.join(errors)}"
        for field, errors in form.errors.items()
    )


class RevokeForm(FocusFirstErrorMixin, forms.Form):
    """An optional reason for revoking a memory or withdrawing a workflow's consent to it;
    it is kept in the memory's events.

    Like every TextField it refuses NUL characters and lone surrogates, which the events' JSON
    cannot hold.
    """

    reason = TextField(
        label="Why (optional)",
        required=False,
        max_length=500,
        widget=forms.TextInput(attrs={"dir": "auto"}),
    )


class ReasonForm(forms.Form):
    """A reviewer's decision needs a reason; it is recorded with the decision."""

    reason = TextField(label="Reason", max_length=MAX_REVIEW_REASON_CHARS)


class ApprovalForm(ReasonForm):
    """An approval: its reason, and the memory the queue's card said it lands on."""

    # The id of that memory, empty when the card named none: the approval is refused when it
    # lands on another by now (``review_changed``).
    seen_head_id = forms.UUIDField(
        required=False,
        widget=forms.HiddenInput,
        error_messages={"invalid": "The page's note of what approving does is damaged."},
    )


class ConflictResolveForm(forms.Form):
    """How a reviewer settles an open conflict."""

    OUTCOMES = [
        ("choose_winner", "Choose the winner"),
        ("keep_both_scoped", "Keep both"),
        ("ask_user", "Ask the user"),
    ]

    outcome = ChoiceField(choices=OUTCOMES, widget=forms.RadioSelect)
    winner_id = forms.UUIDField(label="Winner", required=False)
    reason = TextField(label="Reason", max_length=MAX_REVIEW_REASON_CHARS)
    # The candidates the page showed (comma-separated ids): one added since is refused.
    candidate_ids = forms.CharField(required=False, widget=forms.HiddenInput)

    def clean_candidate_ids(self):
        text = self.cleaned_data.get("candidate_ids", "")
        if not text:
            return None  # a form without the field (none of the portal's)
        try:
            return [uuid.UUID(part) for part in text.split(",")]
        except ValueError:
            raise forms.ValidationError("The page's list of candidates is damaged.") from None

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("outcome") == "choose_winner" and not cleaned.get("winner_id"):
            self.add_error("winner_id", "Pick the memory that wins.")
        return cleaned


class ConfirmForm(forms.Form):
    """An explicit tick before something irreversible."""

    confirm = forms.BooleanField(
        label="I understand this cannot be undone.",
        required=True,
    )
