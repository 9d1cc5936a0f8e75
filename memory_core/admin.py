"""Django admin for platform admins: tenants, agents, keys, policies, and the memory rows."""

import json
import unicodedata

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import ChangeList
from django.contrib.auth import get_permission_codename, get_user_model
from django.contrib.auth.admin import GroupAdmin as DjangoGroupAdmin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.forms import AdminPasswordChangeForm as DjangoUserPasswordForm
from django.contrib.auth.forms import AdminUserCreationForm as DjangoUserCreationForm
from django.contrib.auth.models import Group
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db import DatabaseError, transaction
from django.db.models import JSONField
from django.forms.fields import InvalidJSONInput
from django.template.response import TemplateResponse

from memory_core import models
from memory_core.admission.normalize import is_blank
from memory_core.deletion.ledger import LOGIN_FLAGS
from memory_core.deletion.services import Budget
from memory_core.exceptions import ValidationFailed
from memory_core.policy_check import policy_errors
from memory_core.services.policy import policy_publish
from memory_core.text import (
    BIDI_CONTROLS,
    BIDI_CONTROLS_MESSAGE,
    identifier,
    lone_surrogate,
    refuse_lone_surrogates,
)

# The date parts a changelist's lookup may name, and the values a date can hold.
DATE_PARTS = {"__year": (1, 9999), "__iso_year": (1, 9999), "__month": (1, 12), "__day": (1, 31)}


class GuardedChangeList(ChangeList):
    """A changelist whose query string PostgreSQL or Python could not take is an incorrect
    lookup (the list again, ``?e=1``), as Django answers an unknown filter: a NUL in a
    filter's value (``?kind__exact=%00``: PostgreSQL's DataError) and a date part out of
    range (``?created_at__year=99999``: Python's ValueError) were 500s (stop 49's audit)."""

    def get_filters_params(self, params=None):
        lookup_params = super().get_filters_params(params)
        for key, values in lookup_params.items():
            for value in values if isinstance(values, list) else [values]:
                if "\x00" in str(value):
                    raise IncorrectLookupParameters(f"{key} holds a NUL character")
                part = next((p for p in DATE_PARTS if key.endswith(p)), None)
                if part is not None and not _whole_number_within(value, *DATE_PARTS[part]):
                    raise IncorrectLookupParameters(f"{key} is no {part[2:]}")
        return lookup_params

    def get_results(self, request):
        # Django turns a lookup it cannot build into an incorrect lookup; one it builds and
        # PostgreSQL (or the year's bounds) then refuses as the list is counted was a 500:
        # ``?write_types=user_preference`` (a malformed array literal), ``?memory_key__regex=[``,
        # ``?created_at__contained_by=2024-01-01`` (stop 51's fuzzing). In a savepoint, so the
        # request's transaction stays usable for the list shown again.
        try:
            with transaction.atomic():
                super().get_results(request)
        except (DatabaseError, ValueError, IndexError) as exc:
            raise IncorrectLookupParameters(exc) from exc


def _whole_number_within(value, low: int, high: int) -> bool:
    try:
        return low <= int(value) <= high
    except (TypeError, ValueError):
        return False


class GuardedAdminMixin:
    """What every admin page of memledger's models refuses rather than answering 500 with:
    a changelist query string no database could take (``GuardedChangeList``), an action
    posted with an id that is none (``_selected_action=not-a-uuid``: every key is a UUID,
    and ``filter(pk__in=...)`` raised), and an add page's initial value its field cannot
    read (``?created_at=garbage`` broke the date widget)."""

    def get_search_results(self, request, queryset, search_term):
        """Search in NFC, as content, ids, keys and names are stored: "José" typed with a
        combining accent found nothing (stop 61's reviews; the portal's search alike, its
        audit)."""
        search_term = unicodedata.normalize("NFC", search_term)
        return super().get_search_results(request, queryset, search_term)

    def get_changelist(self, request, **kwargs):
        return GuardedChangeList

    def response_action(self, request, queryset):
        selected = request.POST.getlist(helpers.ACTION_CHECKBOX_NAME)
        try:
            for value in selected:
                self.opts.pk.to_python(value)
        except ValidationError:
            self.message_user(
                request, "An item selected is no row of this list: nothing was done.",
                messages.ERROR,
            )  # fmt: skip
            return None
        return super().response_action(request, queryset)

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        """Every text field refuses a lone surrogate (a form posted as ``unicode_escape``):
        the database could not be sent it, nor the page shown again, a 500 on every form but
        the passwords' (stop 53's audit of the admin)."""
        formfield = super().formfield_for_dbfield(db_field, request, **kwargs)
        if isinstance(formfield, forms.CharField):
            formfield.validators.append(refuse_lone_surrogates)
            # The refused text shown again escaped (``\ud800``): the page could not be encoded.
            formfield.prepare_value = _escaped(formfield.prepare_value)
        return formfield

    def get_changeform_initial_data(self, request):
        initial = super().get_changeform_initial_data(request)
        for name in list(initial):
            try:
                field = self.opts.get_field(name)
            except FieldDoesNotExist:
                continue
            # A reverse relation (``?subjects=``) has no form field: ignored, as Django did.
            # The admin form's own field where it has one (a policy's document reads what
            # Django's JSONField does not: stop 53's audit of the admin).
            formfield = self._initial_field(request, name, field)
            if formfield is None:
                del initial[name]
                continue
            try:
                # The value read, not the text: the date widget took "2024-01-01" for one.
                value = formfield.to_python(initial[name])
            except (ValidationError, ValueError, RecursionError):
                del initial[name]
                continue
            # A value holding a lone surrogate (``?document="\ud800"``) read, the page could
            # not be encoded: a 500.
            if lone_surrogate(json.dumps(value, ensure_ascii=False, default=str)):
                del initial[name]
                continue
            initial[name] = value
        return initial

    def _initial_field(self, request, name, field):
        if not getattr(field, "concrete", False):
            return None
        if isinstance(field, JSONField):  # a policy's document: its own field reads it
            own = self.get_form(request).base_fields.get(name)
            if own is not None:
                return own
        return field.formfield()


def _escaped(prepare_value):
    """Return ``prepare_value`` showing a text's lone surrogates as escapes."""

    def prepare(value):
        value = prepare_value(value)
        if isinstance(value, str) and lone_surrogate(value):
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value

    return prepare


class MemledgerAdmin(GuardedAdminMixin, admin.ModelAdmin):
    """The base of memledger's model admins (``GuardedAdminMixin``).

    Every action names the permission it needs (``allowed_permissions``): Django offers an
    action to anyone who may see the list otherwise, and a login that could only view
    tenants deleted one, one that could only view agents reactivated them (stop 52's audit).
    """

    def has_model_permission(self, request, action: str) -> bool:
        """Whether the login holds the model's own ``action`` permission (``delete``,
        ``change``, …), whatever this admin's ``has_*_permission`` answers for its forms: a
        row no form deletes may still be deleted through an operation."""
        codename = get_permission_codename(action, self.opts)
        return request.user.has_perm(f"{self.opts.app_label}.{codename}")

    def has_operation_permission(self, request) -> bool:
        """A deletion operation's action (memories, subjects): the model's delete permission."""
        return self.has_model_permission(request, "delete")


class NoHardDeleteMixin:
    """Rows that own memories are never deleted here: a cascade would remove memory rows
    without a deletion operation, so no derived store (traces, exports, evaluation files,
    caches, the journal) would be purged or verified. Delete memories through operations."""

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyMixin:
    """Rows written only by memledger's own services, shown here, never added, edited or
    removed: a memory (admission writes it, a deletion operation removes it), the deletion
    record itself (operations, steps, tombstones: the evidence a deletion happened and was
    verified; a deleted operation would also drop its steps), and the audit trail (events,
    admission decisions, review items, retrieval traces: an admin could add a backdated
    "approved" event that the memory's history then showed as its first)."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class LiveTenantMixin:
    """A deleted tenant (``Tenant.deleted_at``) is offered for no row: the database refuses
    its new subjects, traces, decisions and review items (migration 0011), which would be a
    500 here, and its agents, logins and policies would be rows its deletion never verifies."""

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "tenant":
            kwargs["queryset"] = models.Tenant.objects.filter(deleted_at=None)
        elif db_field.name == "subject":
            kwargs["queryset"] = models.Subject.objects.filter(tenant__deleted_at=None)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(models.Tenant)
class TenantAdmin(NoHardDeleteMixin, MemledgerAdmin):
    list_display = ["slug", "name", "created_at", "deleted_at", "evaluation_run"]
    list_filter = [("deleted_at", admin.EmptyFieldListFilter)]
    search_fields = ["slug", "name"]
    readonly_fields = ["deleted_at", "evaluation_run"]
    actions = ["request_tenant_deletion"]

    def has_platform_permission(self, request) -> bool:
        """A whole tenant's deletion: platform administrators only (docs/operations.md)."""
        return request.user.is_active and request.user.is_superuser

    @admin.action(
        description="Delete the selected tenants and all their memories (an operation)",
        permissions=["platform"],
    )
    def request_tenant_deletion(self, request, queryset):
        """Ask first (a page listing what goes), then request one operation per tenant."""
        if request.POST.get("confirmed") != "yes":
            # The page posts back the ids of the tenants it lists, as Django's own
            # delete_selected does: with "Select all N" the boxes ticked are one page's only,
            # and the confirmation deleted fewer tenants than it listed.
            context = {
                **self.admin_site.each_context(request),
                "title": "Delete whole tenants?",
                "tenants": list(queryset),
                "action": "request_tenant_deletion",
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
                "opts": self.model._meta,
            }
            return TemplateResponse(
                request, "admin/memory_core/tenant/delete_confirmation.html", context
            )
        from memory_core.deletion.services import tenant_deletion_request
        from memory_core.exceptions import Busy, OverBudget

        budget = _ActionBudget()
        tenants = list(queryset)
        for done, tenant in enumerate(tenants):
            left = len(tenants) - done
            if budget.spent(self, request, left=left, what="tenants", command="delete_tenant"):
                break
            try:
                operation = tenant_deletion_request(
                    tenant_id=tenant.pk,
                    requested_by="admin",
                    time_limited=True,
                    seconds=budget.left(),
                )
            except (Busy, OverBudget) as exc:
                self.message_user(request, f"{tenant}: {exc.message}", messages.ERROR)
                continue
            self.message_user(request, f"{tenant}: deletion operation {operation.pk}.")
        return None


class SubjectForm(forms.ModelForm):
    """A subject's external id as every request reads one (``text.identifier``: trimmed, in
    NFC) and refuses one: holding a bidirectional control, or showing nothing. Stored as typed,
    an NFD "José" was a second subject the agents' writes, read in NFC, never reached, and its
    portal login saw none of them (stop 51's review)."""

    class Meta:
        model = models.Subject
        fields = ["tenant", "external_id", "display_name", "created_at"]

    def clean_external_id(self):
        value = identifier(self.cleaned_data.get("external_id") or "")
        if BIDI_CONTROLS.search(value):
            raise ValidationError(BIDI_CONTROLS_MESSAGE)
        if not value or is_blank(value):
            raise ValidationError(
                "An external id must show something: it is how agents name the person."
            )
        return value


@admin.register(models.Subject)
class SubjectAdmin(LiveTenantMixin, NoHardDeleteMixin, MemledgerAdmin):
    form = SubjectForm
    list_display = ["external_id", "display_name", "tenant", "created_at", "deletion_queued_at"]
    list_filter = ["tenant"]
    search_fields = ["external_id", "display_name"]
    actions = ["request_subject_deletion"]
    # Set by the portal or the API, cleared by the worker that makes the queued request: the
    # whole mark, or the worker would delete another key (or the whole subject) for another.
    readonly_fields = [
        "deletion_queued_at",
        "deletion_queued_by",
        "deletion_queued_by_agent",
        "deletion_queued_key",
    ]

    def get_readonly_fields(self, request, obj=None):
        # A subject stays in its tenant: its memories, decisions and traces name the tenant
        # too, so moved it left them behind, unreadable by its end user, and showed who it is
        # to the other tenant's reviewers.
        # Nor is it renamed: its user-scoped memories hold its external id (``user:<id>``),
        # which retrieval matches with the request's user, so a renamed subject's were
        # reached by no retrieval again (stop 49's audit), a state the API refuses.
        # A deleted tenant's subject keeps nothing either: its deletion cleared and verified the
        # names (the ``identities`` step), and a name typed back here was a person's name in a
        # tenant whose deletion said it was gone (stop 52's audit).
        if obj is None:
            return self.readonly_fields
        if obj.tenant.deleted_at is not None:
            return [*self.readonly_fields, "tenant", "external_id", "display_name"]
        return [*self.readonly_fields, "tenant", "external_id"]

    @admin.action(
        description="Delete every memory of the selected subjects (an operation)",
        permissions=["operation"],
    )
    def request_subject_deletion(self, request, queryset):
        budget = _ActionBudget()
        subjects = list(queryset)
        for done, subject in enumerate(subjects):
            if budget.spent(self, request, left=len(subjects) - done, what="subjects"):
                break
            operation = _request_deletion(
                self, request, str(subject), subject.tenant_id, budget, subject_id=subject.pk
            )
            if operation is not None:
                self.message_user(request, f"{subject}: deletion operation {operation.pk}.")


def _save_governed(request, obj, changed: list[str], governed, apply) -> None:
    """Save the fields of ``obj`` a form changed (``changed``), those in ``governed`` through
    the service ``apply`` (called with them), which journals them for a restore's replay: a
    grant or an expiry saved with the form was not journaled, and a restore from an older
    backup undid it (a narrowed grant wide again, a key usable past its expiry).

    The form checked the values; one the service still refuses (another change of the row
    made the two invalid together) is the admin's error message, and nothing of the form is
    saved."""
    plain = [name for name in changed if name not in governed]
    values = {name: getattr(obj, name) for name in changed if name in governed}
    try:
        with transaction.atomic():
            if plain:
                obj.save(update_fields=plain)
            if values:
                apply(**values)
    except ValidationFailed as exc:
        messages.error(request, f"Not saved: {exc.message}")


def _key_save(request, key, changed: list[str]) -> None:
    """Save a key's form: its ``expires_at`` through ``api_key_expiry_set``."""
    from memory_core.services.api_keys import api_key_expiry_set

    _save_governed(
        request,
        key,
        changed,
        ["expires_at"],
        lambda expires_at: api_key_expiry_set(key=key, expires_at=expires_at),
    )


class ApiKeyInline(admin.TabularInline):
    model = models.ApiKey
    extra = 0
    fields = ["name", "prefix", "created_at", "expires_at", "revoked_at", "last_used_at"]
    # Revoked only by the list's action (api_key_revoke, which journals it for a restore's
    # replay): typed into a form, a revocation was not journaled, and a key could be un-revoked.
    # expires_at is saved by api_key_expiry_set (AgentAdmin.save_formset), journaled too.
    readonly_fields = ["prefix", "created_at", "revoked_at", "last_used_at"]
    can_delete = False  # revoked, never deleted: a deleted row came back with a backup too

    def has_add_permission(self, request, obj=None):
        # Keys are shown once at creation: use `manage.py create_agent_key` (a row added here
        # had no prefix or hash, and no key that could ever match it).
        return False


class AgentForm(forms.ModelForm):
    """An agent's name as every path reads one (``text.identifier``: trimmed, in NFC;
    migration 0040), refusing a bidirectional control: a subject token is asked for by the
    name, and an NFD "José" typed here was found by that spelling only."""

    def clean_name(self):
        value = identifier(self.cleaned_data.get("name") or "")
        if BIDI_CONTROLS.search(value):
            raise ValidationError(BIDI_CONTROLS_MESSAGE)
        if not value or is_blank(value):
            raise ValidationError("An agent's name must show something: keys are made for it.")
        # The tenant is read-only on the change form, so Django checks no unique name with it:
        # a rename to another agent's name reached the database, a 500 (stop 53's audit).
        tenant_id = self.instance.tenant_id if self.instance.pk else None
        taken = models.Agent.objects.filter(tenant_id=tenant_id, name=value)
        if tenant_id is not None and taken.exclude(pk=self.instance.pk).exists():
            raise ValidationError("An agent of this tenant with this name already exists.")
        return value


@admin.register(models.Agent)
class AgentAdmin(LiveTenantMixin, MemledgerAdmin):
    form = AgentForm
    list_display = [
        "name",
        "tenant",
        "max_sensitivity",
        "any_subject",
        "issues_subject_tokens",
        "is_active",
        "deactivated_at",
    ]
    list_filter = ["tenant", "is_active"]
    inlines = [ApiKeyInline]
    # Deactivated only by the list's action (agent_deactivate, which journals it for a
    # restore's replay): a deactivation typed into the form was not journaled, and the agent,
    # deactivated after a backup, worked again after a restore. Reactivated by the other one.
    # The grant is saved by agent_grant_set (save_model), which journals it: a grant
    # narrowed after a backup was wide again after a restore.
    readonly_fields = [
        "is_active",
        "deactivated_at",
        "deactivation_journaled_at",
        "grant_changed_at",
        "grant_journaled_at",
    ]
    actions = ["deactivate_agents", "reactivate_agents"]

    def get_readonly_fields(self, request, obj=None):
        # An agent stays in its tenant: moved after a backup, a restore put it (and what its
        # keys reach) back in the old one, and no journal line said so.
        return [*self.readonly_fields, "tenant"] if obj is not None else self.readonly_fields

    def save_model(self, request, obj, form, change):
        if not change:  # a new agent: no backup holds it, a restore drops it
            return super().save_model(request, obj, form, change)
        from memory_core.deletion.ledger import GRANT_FIELDS
        from memory_core.services.api_keys import agent_grant_set

        _save_governed(
            request,
            obj,
            form.changed_data,
            GRANT_FIELDS,
            lambda **grant: agent_grant_set(agent=obj, **grant),
        )
        return None

    def save_formset(self, request, form, formset, change):
        if formset.model is not models.ApiKey:
            return super().save_formset(request, form, formset, change)
        formset.save(commit=False)  # no new key: ApiKeyInline adds none
        for key, changed in formset.changed_objects:
            _key_save(request, key, changed)
        return None

    def has_delete_permission(self, request, obj=None):
        # Deactivate instead (the action below): a deleted agent, keys and all, came back
        # usable with a restored backup, and nothing outside the database recorded it.
        return False

    @admin.action(
        description="Deactivate the selected agents (every key of each refused at once)",
        permissions=["change"],
    )
    def deactivate_agents(self, request, queryset):
        """Deactivate each selected agent (``agent_deactivate``): its keys' next request is
        refused; journaled, so a restore's replay deactivates it again."""
        from memory_core.services.api_keys import agent_deactivate

        agents = list(queryset.filter(is_active=True))
        for agent in agents:
            agent_deactivate(agent=agent)
        self.message_user(request, f"{len(agents)} agent(s) deactivated.")

    @admin.action(
        description="Reactivate the selected agents (their usable keys work again)",
        permissions=["change"],
    )
    def reactivate_agents(self, request, queryset):
        """Reactivate each selected agent (``agent_reactivate``); an agent of a deleted tenant
        stays inactive. Not journaled: a restore may bring it back inactive (the safe side),
        and it is reactivated here again."""
        from memory_core.exceptions import ValidationFailed
        from memory_core.services.api_keys import agent_reactivate

        done = 0
        for agent in queryset.filter(is_active=False):
            try:
                agent_reactivate(agent=agent)
            except ValidationFailed as exc:
                self.message_user(request, f"{agent}: {exc.message}", messages.ERROR)
                continue
            done += 1
        self.message_user(request, f"{done} agent(s) reactivated.")


@admin.register(models.ApiKey)
class ApiKeyAdmin(MemledgerAdmin):
    list_display = [
        "prefix",
        "agent",
        "name",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    ]
    list_filter = ["agent__tenant", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["prefix", "name", "agent__name"]
    # revoked_at as in ApiKeyInline: only the action below revokes a key; expires_at is
    # saved by api_key_expiry_set (save_model), which journals it.
    # Its agent too: a key moved from a wide agent to a narrow one after a backup was back
    # with the wide one after a restore, and no journal line said so. When its revocation
    # was journaled is the service's to record: set by hand, it hid a failed append from the
    # deletion sweep.
    readonly_fields = [
        "agent",
        "prefix",
        "hashed_key",
        "created_at",
        "revoked_at",
        "revocation_journaled_at",
        "last_used_at",
        "expiry_changed_at",
        "expiry_journaled_at",
    ]
    actions = ["revoke_keys"]

    def save_model(self, request, obj, form, change):
        _key_save(request, obj, form.changed_data)

    def has_add_permission(self, request):
        # Keys are shown once at creation: use `manage.py create_agent_key`.
        return False

    def has_delete_permission(self, request, obj=None):
        # Revoke instead (the action below): a deleted key was not journaled either.
        return False

    @admin.action(
        description="Revoke the selected keys (at once, for good)", permissions=["change"]
    )
    def revoke_keys(self, request, queryset):
        """Revoke each selected key (``api_key_revoke``): its next request is refused."""
        from memory_core.services.api_keys import api_key_revoke

        keys = list(queryset.filter(revoked_at__isnull=True))
        for key in keys:
            api_key_revoke(key=key)
        self.message_user(request, f"{len(keys)} key(s) revoked.")


class PortalMembershipForm(forms.ModelForm):
    """An end user's subject is one of the membership's tenant: one of another tenant was
    saved, and its login then acted for the one tenant on the other's subject."""

    class Meta:
        model = models.PortalMembership
        fields = ["user", "role", "tenant", "subject"]

    def clean(self):
        cleaned = super().clean()
        tenant, subject = cleaned.get("tenant"), cleaned.get("subject")
        if tenant is not None and subject is not None and subject.tenant_id != tenant.pk:
            self.add_error("subject", "This subject belongs to another tenant.")
        return cleaned


@admin.register(models.PortalMembership)
class PortalMembershipAdmin(LiveTenantMixin, MemledgerAdmin):
    """A membership is removed through ``portal_membership_remove``, which journals it for a
    restore's replay: removed in a form or the list's "Delete selected", it came back with a
    restored backup, a departed reviewer's review queue with it (stop 63's audit of
    backups). A membership changed is the old one removed and a new one added."""

    form = PortalMembershipForm
    list_display = ["user", "role", "tenant", "subject"]
    list_filter = ["role", "tenant"]
    # Every column's row in the page's one query: an optional key (the subject) is otherwise
    # read row by row (one query a row: stop 50's audit), as in the lists below.
    list_select_related = ["user", "tenant", "subject"]

    def save_model(self, request, obj, form, change):
        if change and form.has_changed():
            from memory_core.services.logins import portal_membership_remove

            # The access it gave (its login, tenant, role, subject) is taken away.
            portal_membership_remove(membership=obj)
            obj.pk = None
        super().save_model(request, obj, form, change)

    def delete_model(self, request, obj):
        from memory_core.services.logins import portal_membership_remove

        portal_membership_remove(membership=obj)

    def delete_queryset(self, request, queryset):
        from memory_core.services.logins import portal_membership_remove

        for membership in queryset:
            portal_membership_remove(membership=membership)


class PasswordsRefuseLoneSurrogates:
    """A form of passwords whose text fields refuse a lone surrogate (``\\ud800``, sent with
    a charset such as ``unicode_escape``) on the field: one reached the hasher, a 500, as the
    login's did (stop 52's review). The admin's password change (``config.login``), a user's
    password set or a user added here."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            if isinstance(field, forms.CharField):
                field.validators.append(refuse_lone_surrogates)


class PasswordsJournaled:
    """A form that sets a login's password saves it through ``login_password_save``, which
    journals it for a restore's replay: a password changed after a backup (one that leaked)
    was the old one again after a restore (stop 63's audit of backups). The admin's password
    change (``config.login``) and a user's password set here."""

    def save(self, commit=True):
        from memory_core.services.logins import login_password_save

        user = super().save(commit=False)
        if commit:
            login_password_save(user=user)
        return user


class UserPasswordForm(PasswordsJournaled, PasswordsRefuseLoneSurrogates, DjangoUserPasswordForm):
    """A user's password set from the user list (``UserAdmin.change_password_form``)."""


class UserCreationForm(PasswordsRefuseLoneSurrogates, DjangoUserCreationForm):
    """A user added here (``UserAdmin.add_form``)."""


admin.site.unregister(get_user_model())
admin.site.unregister(Group)


@admin.register(Group)
class GroupAdmin(GuardedAdminMixin, DjangoGroupAdmin):
    """Django's own, with the lookups and actions every other list guards (``GuardedAdminMixin``):
    a NUL or an invalid regular expression in a filter, and an action on an id that is none,
    were 500s here (stop 52's audit)."""


@admin.register(get_user_model())
class UserAdmin(GuardedAdminMixin, DjangoUserAdmin):
    """A login that decided a review is deactivated (``Active`` unchecked), never deleted here:
    a decision names who made it (``ReviewItem.resolved_by``), and deleting the login left
    every decision it made naming nobody. The list's "Delete selected" asks the same of each
    user it would delete, and refuses a selection holding one. A tenant's deletion still
    removes its logins (its ``identities`` step).

    A login deactivated, deleted, given a password or its staff or superuser status cleared
    here goes through ``services.logins``, which journals it for a restore's replay (stop
    63's audit of backups; the statuses since stop 64's review); its password is set by its
    own form (``UserPasswordForm``). Its groups and permissions taken away are not
    journaled."""

    change_password_form = UserPasswordForm
    add_form = UserCreationForm

    def has_delete_permission(self, request, obj=None):
        if obj is not None and models.ReviewItem.objects.filter(resolved_by=obj).exists():
            return False
        return super().has_delete_permission(request, obj)

    def save_model(self, request, obj, form, change):
        cleared = [f for f in LOGIN_FLAGS if f in form.changed_data and not getattr(obj, f)]
        if not change or not cleared:
            # A new login (no backup holds it), or access given: not journaled.
            return super().save_model(request, obj, form, change)
        from memory_core.services.logins import login_deactivate

        concrete = {field.name for field in obj._meta.concrete_fields}
        _save_governed(
            request,
            obj,
            [name for name in form.changed_data if name in concrete],
            cleared,
            lambda **flags: login_deactivate(user=obj, flags=list(flags)),
        )
        return None

    def delete_model(self, request, obj):
        from memory_core.services.logins import login_delete

        login_delete(user=obj)

    def delete_queryset(self, request, queryset):
        from memory_core.services.logins import login_delete

        for user in queryset:
            login_delete(user=user)


@admin.register(models.Memory)
class MemoryAdmin(ReadOnlyMixin, MemledgerAdmin):
    list_display = [
        "memory_type",
        "memory_key",
        "short_content",
        "subject",
        "scope",
        "authority",
        "status",
        "version",
        "created_at",
    ]
    # Not the environment: a filter on free text reads every row's value for its choices.
    list_filter = ["tenant", "status", "memory_type", "authority", "sensitivity"]
    search_fields = ["memory_key", "content", "subject__external_id"]
    readonly_fields = [
        "id",
        "content_hash",
        "embedding_model",
        "created_at",
        "updated_at",
        "supersedes",
        "version",
        "policy_version",
    ]
    exclude = ["embedding"]
    list_select_related = ["subject"]
    actions = ["request_deletion"]

    @admin.display(description="content")
    def short_content(self, obj):
        return (obj.content[:80] + "…") if len(obj.content) > 80 else obj.content

    @admin.action(
        description="Delete the selected memories and their history (an operation)",
        permissions=["operation"],
    )
    def request_deletion(self, request, queryset):
        budget = _ActionBudget()
        memories = list(queryset.exclude(status=models.Status.DELETED))
        for done, memory in enumerate(memories):
            if budget.spent(self, request, left=len(memories) - done, what="memories"):
                break
            label = f"Memory {memory.pk}"
            operation = _request_deletion(
                self, request, label, memory.tenant_id, budget, memory_id=memory.pk
            )
            if operation is not None:
                self.message_user(
                    request, f"Memory {memory.pk}: deletion operation {operation.pk}."
                )


class _ActionBudget(Budget):
    """``MEMLEDGER_DELETION_REQUEST_BUDGET`` for one action over many rows: its web request's,
    shared by the rows' deletion requests (each given what is ``left``). Each row had a budget
    of its own, and "Select all" over a long list outlived gunicorn's timeout (a 500,
    everything rolled back: stop 52's audit); the rows left once it is spent are counted, not
    requested."""

    def __init__(self):
        super().__init__(settings.MEMLEDGER_DELETION_REQUEST_BUDGET)

    def spent(
        self, model_admin, request, *, left: int, what: str, command: str = "delete_subject"
    ) -> bool:
        """Whether the time is spent; if so, say how many rows were not requested."""
        if self.deadline is None or self.left() > 0:
            return False
        model_admin.message_user(
            request,
            f"{left} of the selected {what} were not requested: this request's time for "
            f"deletions is spent. Select them again, or fewer at a time, or run "
            f"`manage.py {command}`.",
            level=messages.WARNING,
        )
        return True


def _request_deletion(model_admin, request, label: str, tenant_id, budget, **target):
    """Request a deletion as memledger itself, in the row's tenant (row-level security), within
    what is left of the action's ``budget``; a refusal (a subject too large for a request:
    deletion_too_large) is shown, not raised."""
    from memory_core.deletion.services import deletion_request
    from memory_core.exceptions import DomainError
    from memory_core.principals import SystemPrincipal
    from memory_core.rls import tenant_atomic

    try:
        with tenant_atomic(tenant_id):
            return deletion_request(
                principal=SystemPrincipal(tenant_id=tenant_id, name="admin"),
                reason_code="admin",
                seconds=budget.left(),
                **target,
            )
    except DomainError as exc:
        model_admin.message_user(request, f"{label}: {exc.message}", level=messages.ERROR)
        return None


@admin.register(models.MemoryEvent)
class MemoryEventAdmin(ReadOnlyMixin, MemledgerAdmin):
    list_display = ["created_at", "action", "memory_id", "actor_type", "actor_id", "reason_code"]
    list_filter = ["tenant", "action", "actor_type"]


class PolicyDocumentField(forms.JSONField):
    """A policy document as the admin's text: nested too deeply for Python's parser, or
    holding an integer too long for it (over 4,300 digits), it is refused on the form
    (``RecursionError`` and that ``ValueError`` escaped Django's field: a 500)."""

    def to_python(self, value):
        try:
            return super().to_python(value)
        except RecursionError:
            raise forms.ValidationError(
                "The document is nested too deeply to read.", code="invalid"
            ) from None
        except ValueError:  # not a JSONDecodeError, which Django's field answers itself
            raise forms.ValidationError(
                "The document holds a number too long to read.", code="invalid"
            ) from None

    def bound_data(self, data, initial):
        """The text as sent, when the form is shown again with its error: parsed and dumped
        again, a ``"\\ud800"`` escape became a lone surrogate in the page, which no
        response can encode (a 500)."""
        if self.disabled:
            return initial
        return None if data is None else InvalidJSONInput(data)


class PolicyVersionForm(forms.ModelForm):
    """A new version's tenant, document and note; a document that the stages could not read
    (``policy_errors``) is refused."""

    class Meta:
        model = models.PolicyVersion
        fields = ["tenant", "document", "note"]
        field_classes = {"document": PolicyDocumentField}

    def clean_document(self):
        document = self.cleaned_data["document"]
        errors = policy_errors(document)
        if errors:
            raise forms.ValidationError(
                [f"{path or 'document'}: {message}" for path, message in errors.items()]
            )
        return document


@admin.register(models.PolicyVersion)
class PolicyVersionAdmin(LiveTenantMixin, MemledgerAdmin):
    """A policy is changed by publishing a new version (``policy_publish``: the tenant's next
    number, active at once), never by editing or removing one. Versions are immutable: a
    memory, a decision and a trace name the version they were made under, and an edited
    document would make that history lie. Made inactive, or removed, the active version left
    its tenant with none: its writes and retrievals fell back to the defaults, a shortened
    retention with them, and its next agent key failed (``policy_ensure`` made version 1 of the
    defaults again, which the tenant had). An earlier version is brought back by publishing it
    again (the action below)."""

    form = PolicyVersionForm
    list_display = ["tenant", "version", "is_active", "created_at", "note"]
    list_filter = ["tenant", "is_active"]
    actions = ["publish_again"]

    def has_change_permission(self, request, obj=None):
        return False  # shown, read only

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        # The version published, its number and all, is the one the next page names.
        obj.pk = policy_publish(tenant=obj.tenant, document=obj.document, note=obj.note).pk
        obj.refresh_from_db()

    @admin.action(
        description="Publish the selected version again, as its tenant's next one",
        permissions=["add"],
    )
    def publish_again(self, request, queryset):
        chosen = list(queryset.select_related("tenant"))
        if len({version.tenant_id for version in chosen}) < len(chosen):
            messages.error(request, "Select at most one version of each tenant.")
            return
        for version in chosen:
            if version.tenant.deleted_at is not None:
                messages.error(request, f"Tenant {version.tenant.slug} is deleted.")
                continue
            # A version stored before a bound of today's check (docs/operations.md) is not
            # published again: the service refused it with a 500 here (stop 47's audit).
            errors = policy_errors(version.document)
            if errors:
                named = "; ".join(f"{path}: {message}" for path, message in errors.items())
                messages.error(
                    request,
                    f"{version.tenant.slug}: version {version.version} was not published "
                    f"again, its document is invalid ({named}).",
                )
                continue
            published = policy_publish(
                tenant=version.tenant,
                document=version.document,
                note=f"version {version.version} published again",
            )
            messages.success(
                request, f"{version.tenant.slug}: version {published.version} is active."
            )


@admin.register(models.AdmissionDecision)
class AdmissionDecisionAdmin(ReadOnlyMixin, MemledgerAdmin):
    list_display = ["created_at", "tenant", "agent", "outcome", "rule_codes", "memory_type"]
    list_filter = ["tenant", "outcome"]
    list_select_related = ["tenant", "agent"]


@admin.register(models.ReviewItem)
class ReviewItemAdmin(ReadOnlyMixin, MemledgerAdmin):
    list_display = [
        "created_at",
        "tenant",
        "kind",
        "state",
        "memory_key",
        "scope",
        "environment",
        "resolution",
    ]
    list_filter = ["tenant", "kind", "state"]


@admin.register(models.RetrievalTrace)
class RetrievalTraceAdmin(ReadOnlyMixin, MemledgerAdmin):
    list_display = ["created_at", "tenant", "agent", "mode", "degraded", "latency_ms"]
    list_select_related = ["tenant", "agent"]
    list_filter = ["tenant", "mode", "degraded"]
    # A digest of a user id is for matching only: a guessable id (an email) is found from it.
    exclude = ["user_id_sha256"]


class DeletionStepInline(ReadOnlyMixin, admin.TabularInline):
    model = models.DeletionStep
    extra = 0


@admin.register(models.DeletionOperation)
class DeletionOperationAdmin(ReadOnlyMixin, MemledgerAdmin):
    list_display = ["id", "tenant", "target", "status", "requested_at", "completed_at", "attempts"]
    list_filter = ["tenant", "status", "target"]
    inlines = [DeletionStepInline]
    # A digest of a user id is for matching only, as a trace's is.
    exclude = ["user_id_sha256"]
    actions = ["retry_failed"]

    def has_retry_permission(self, request) -> bool:
        """Re-driving an operation changes it (no form does: ``ReadOnlyMixin``)."""
        return self.has_model_permission(request, "change")

    @admin.action(
        description="Retry the selected failed deletions (fresh attempts)", permissions=["retry"]
    )
    def retry_failed(self, request, queryset):
        """Re-drive each dead-lettered operation selected (``deletion_retry``, as a reviewer's
        Retry does, for every tenant at once: after an outage that dead-lettered many)."""
        from memory_core.deletion.services import deletion_retry
        from memory_core.principals import SystemPrincipal

        retried = 0
        for operation in queryset.filter(status=models.DeletionOperation.State.FAILED):
            principal = SystemPrincipal(tenant_id=operation.tenant_id, name="admin")
            retried += deletion_retry(principal=principal, operation_id=operation.pk).retried
        self.message_user(request, f"{retried} failed deletion(s) sent to run again.")


@admin.register(models.Tombstone)
class TombstoneAdmin(ReadOnlyMixin, MemledgerAdmin):
    list_display = ["memory_id", "tenant_id", "deleted_at", "operation"]
    list_select_related = ["operation"]
