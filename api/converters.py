"""Path converters of the API's URLs (api/urls.py)."""

from django.urls.converters import UUIDConverter


class AnyCaseUUIDConverter(UUIDConverter):
    """A UUID in a path, in lower or upper case: UUIDs are case-insensitive on input (RFC
    9562), as a body's UUID fields read them. Django's ``uuid`` takes lower case only, so an
    upper-case id was a 404 saying to check that the ids in the path are UUIDs."""

    regex = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
