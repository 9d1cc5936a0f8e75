"""The embedding column's values travel in binary and are stored exactly (models/fields.py)."""

import numpy as np
import psycopg
import pytest
from django.db import connection
from psycopg.adapt import PyFormat
from psycopg.pq import Format

from memory_core.models import Memory
from memory_core.models.fields import BinaryVector
from tests.factories import MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db


def awkward_vector(seed: int) -> np.ndarray:
    """float4 values a careless literal would round: tiny, huge, negative zero, subnormal."""
    vector = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
    vector[:5] = [1e-38, -3.4028235e38, -0.0, 1.4e-45, 0.1]
    return vector


def stored(memory_id) -> np.ndarray:
    with connection.cursor() as cursor:  # the server's own text of the stored value
        cursor.execute("SELECT embedding::text FROM memory_core_memory WHERE id = %s", [memory_id])
        text = cursor.fetchone()[0]
    return np.array([float(x) for x in text[1:-1].split(",")], dtype=np.float32)


def test_a_written_vector_is_sent_in_binary_and_stored_exactly(tenant):
    connection.ensure_connection()
    dumper = connection.connection.adapters.get_dumper(BinaryVector, PyFormat.AUTO)
    assert dumper.format == Format.BINARY
    vector = awkward_vector(1)
    assert isinstance(Memory._meta.get_field("embedding").get_prep_value(vector), BinaryVector)
    memory = MemoryFactory(subject=SubjectFactory(tenant=tenant), embedding=vector.tolist())
    assert np.array_equal(stored(memory.id), vector)

    batch = [
        MemoryFactory.build(subject=memory.subject, embedding=awkward_vector(seed))
        for seed in (2, 3)
    ]
    Memory.objects.bulk_create(batch)
    for row, seed in zip(batch, (2, 3), strict=True):
        assert np.array_equal(stored(row.id), awkward_vector(seed))

    Memory.objects.filter(pk=memory.pk).update(embedding=awkward_vector(4))
    assert np.array_equal(stored(memory.id), awkward_vector(4))


def test_the_text_literal_holds_the_same_float4_values(tenant):
    vector = awkward_vector(5)
    literal = BinaryVector(vector).to_text()
    with connection.cursor() as cursor:
        cursor.execute("SELECT vector_send(%s::vector)", [literal])
        sent = bytes(cursor.fetchone()[0])
    assert sent == BinaryVector(vector).data
    # A client-side binding cursor cannot send binary: it gets the literal.
    connection.ensure_connection()
    client = psycopg.ClientCursor(connection.connection)
    client.execute("SELECT vector_send(%s::vector)", [BinaryVector(vector)])
    assert bytes(client.fetchone()[0]) == sent


def test_a_vector_of_the_wrong_shape_is_refused_before_the_database():
    with pytest.raises(ValueError, match="one dimension"):
        BinaryVector(np.zeros((2, 384)))
