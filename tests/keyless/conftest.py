"""Fixtures of the keyless conflicts' tests."""

from tests.api.conftest import reviewer  # noqa: F401
from tests.portal.conftest import alice, alice_client, alice_subject  # noqa: F401
