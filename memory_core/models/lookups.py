"""Lookups that send a list of values as one array parameter.

Django's ``__in`` (``id IN (%s, %s, ...)``) and ArrayField's ``__overlap`` (``ARRAY[%s, ...]``)
bind one parameter per value. The wire protocol counts a statement's parameters in 16 bits,
so with psycopg's server-side binding (``server_side_binding``, config/settings/base.py) a
statement over more than 65,535 ids failed ("number of parameters must be between 0 and
65535"): a subject or tenant with that many memories could be neither deleted nor exported.
These lookups bind the whole list as one array:

- ``pk__in_array=ids``: ``id = ANY(%s::uuid[])``, on every UUIDField, foreign key and
  CharField (``content_hash__in_array=hashes``: ``= ANY(%s::varchar[])``);
- ``memory_ids__overlap_array=ids``: ``memory_ids && %s::uuid[]``, on every ArrayField.

They take a list (or any iterable) of values, never a queryset: a subquery needs no array.

A list of UUIDs is sent as one array literal (``uuid_array``), which PostgreSQL parses:
psycopg adapts a Python list element by element, testing each one for characters to quote,
about 10 µs a UUID (0.63 s for the 66,000 ids of a large subject's deletion, against 0.11 s
for the literal), and a deletion binds its ids in several statements.
"""

import uuid

from django.contrib.postgres.fields import ArrayField
from django.db.models import CharField, ForeignKey, Lookup, UUIDField


def uuid_array(values) -> str:
    """Return ``values`` (UUIDs, or strings of UUIDs) as one PostgreSQL array literal,
    ``{...}``, to be cast with ``::uuid[]``. Each is parsed as a UUID first (ValueError
    otherwise), so the literal holds hex digits, dashes and commas only."""
    return _literal(str(v if isinstance(v, uuid.UUID) else uuid.UUID(v)) for v in values)


def _literal(checked) -> str:
    return "{" + ",".join(checked) + "}"


class _ArrayParameter(Lookup):
    """A lookup whose right-hand side is a list bound as one array parameter."""

    # The values are prepared here, one by one, not as one value of the left-hand field.
    prepare_rhs = False
    operator = ""

    def element_field(self):
        raise NotImplementedError

    def get_db_prep_lookup(self, value, connection):
        field = self.element_field()
        # One type for every element: psycopg picks the array's type from its elements.
        values = [
            None if item is None else str(field.get_db_prep_value(item, connection))
            for item in value
        ]
        if isinstance(getattr(field, "target_field", field), UUIDField) and None not in values:
            # The field parsed each value as a UUID (a bad one raised): nothing to quote.
            return "%s", [_literal(values)]
        return "%s", [values]

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        _, rhs_params = self.get_db_prep_lookup(self.rhs, connection)
        cast = self.element_field().db_type(connection).split("(")[0]
        return self.operator % {"lhs": lhs, "cast": cast}, [*lhs_params, *rhs_params]


@CharField.register_lookup
@ForeignKey.register_lookup
@UUIDField.register_lookup
class InArray(_ArrayParameter):
    """``field = ANY(%s::uuid[])``: the rows whose value is in the list."""

    lookup_name = "in_array"
    operator = "%(lhs)s = ANY(%%s::%(cast)s[])"

    def element_field(self):
        return self.lhs.output_field


@ArrayField.register_lookup
class OverlapArray(_ArrayParameter):
    """``field && %s::type[]``: the rows whose array shares an element with the list."""

    lookup_name = "overlap_array"
    operator = "%(lhs)s && %%s::%(cast)s[]"

    def element_field(self):
        return self.lhs.output_field.base_field
