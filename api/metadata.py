"""What ``OPTIONS`` answers on an endpoint."""

from django.urls import reverse
from rest_framework.metadata import BaseMetadata


class MethodsMetadata(BaseMetadata):
    """The methods the path takes and where its contract is described.

    The OpenAPI schema is the one description of bodies, fields and errors. DRF's
    ``SimpleMetadata`` published a second, partial one: the view's docstring (internal notes)
    and a form-style field list that disagreed with the schema (it listed read-only fields
    and none of the write path's validation)."""

    def determine_metadata(self, request, view):
        return {"methods": view.allowed_methods, "schema": reverse("schema")}
