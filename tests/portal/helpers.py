"""Helpers shared by the portal tests."""

import pytest

from portal.contracts import contract


def needs(*names):
    """Skip a test while a contract service it drives is not installed yet."""
    missing = [name for name in names if contract(name) is None]
    return pytest.mark.skipif(bool(missing), reason=f"not installed yet: {', '.join(missing)}")
