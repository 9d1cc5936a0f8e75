"""The embedding column: pgvector's field, with its values sent to PostgreSQL in binary.

pgvector's ``VectorField`` turns a vector into its text literal before the driver sees it:
384 floats formatted in Python (~0.17 ms), sent as ~8 kB of text (8.0 kB on average for 200
unit vectors) and parsed again by the server. ``EmbeddingField`` hands the driver a
``BinaryVector`` instead, which psycopg sends in pgvector's binary format (1,540 bytes, no
formatting, no parsing) whenever the statement binds its parameters on the server
(``server_side_binding``, the default here); a client-side binding cursor gets the text
literal. 100 memories took 75 instead of 118 ms to insert at 1M rows (docs/performance.md,
section 12). The stored float4 values are the same either way.
"""

from __future__ import annotations

import numpy as np
import psycopg
from pgvector.django import VectorField
from psycopg.adapt import Dumper
from psycopg.pq import Format


class BinaryVector:
    """A vector as pgvector's binary send format: int16 dimensions, int16 unused, float4s
    (big-endian)."""

    __slots__ = ("data",)

    def __init__(self, values):
        array = np.asarray(values, dtype=">f4")
        if array.ndim != 1:
            raise ValueError(f"A vector has one dimension, not {array.ndim}.")
        self.data = len(array).to_bytes(2, "big") + b"\0\0" + array.tobytes()

    def to_text(self) -> str:
        """pgvector's text literal of the same float4 values (9 significant digits hold any
        float4 exactly)."""
        values = np.frombuffer(self.data, dtype=">f4", offset=4).tolist()
        return "[" + ",".join(["%.9g" % value for value in values]) + "]"  # noqa: UP031 - fastest


class _TextDumper(Dumper):
    format = Format.TEXT

    def dump(self, obj: BinaryVector) -> bytes:
        return obj.to_text().encode()


class _BinaryDumper(Dumper):
    # No type oid: the server takes the parameter's type from where it is used (the column
    # it is written to, or an explicit ``::vector``), so no lookup per connection is needed.
    format = Format.BINARY

    def dump(self, obj: BinaryVector) -> bytes:
        return obj.data


# Every psycopg connection made from now on knows the class. The binary dumper is registered
# last, so it is the one chosen for a ``%s`` placeholder; ``%t`` and client-side binding
# cursors use the text one.
psycopg.adapters.register_dumper(BinaryVector, _TextDumper)
psycopg.adapters.register_dumper(BinaryVector, _BinaryDumper)


class EmbeddingField(VectorField):
    """pgvector's ``VectorField`` whose values go to the database as ``BinaryVector``."""

    def get_prep_value(self, value):
        if value is None or isinstance(value, (str, BinaryVector)):
            return value
        return BinaryVector(value)
