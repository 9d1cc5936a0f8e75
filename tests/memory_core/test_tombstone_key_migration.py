"""Migration 0043: ``Tombstone.memory_key_sha256``, the digest of a deleted memory's key, with a
database default for the rows the previous release inserts during a deployment."""

import uuid

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def test_a_tombstone_inserted_without_the_key_column_names_no_key(tenant):
    """Stop 57's review of its own fixes found migration 0043's default in place: the previous
    release's INSERT, which names no ``memory_key_sha256`` column, still works while a
    deployment runs both releases, and its tombstone names no key ("")."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_core_tombstone (tenant_id, subject_id, memory_id, content_hash,"
            " operation_id, deleted_at) VALUES (%s, NULL, %s, 'x', NULL, now())"
            " RETURNING memory_key_sha256",
            [tenant.id, uuid.uuid4()],
        )
        assert cursor.fetchone()[0] == ""
