"""The memory_core services the portal calls, looked up by their contract names.

The write path, read path and deletion are built alongside the portal; a page whose service is
not installed says so instead of failing. Once every service exists this is a plain lookup.
"""

from importlib import import_module

CONTRACTS = {
    "memory_correct": "memory_core.services.writes",
    "memory_revoke": "memory_core.services.writes",
    "consent_withdraw": "memory_core.services.writes",
    "review_approve": "memory_core.services.reviews",
    "review_reject": "memory_core.services.reviews",
    "conflict_resolve": "memory_core.services.conflicts",
    "deletion_request": "memory_core.deletion.services",
    "deletion_get": "memory_core.deletion.selectors",
    "deletion_list": "memory_core.deletion.selectors",
    "export_create": "memory_core.exports",
    "export_path": "memory_core.exports",
}


def contract(name: str):
    """Return the service called ``name``, or None while its module does not provide it."""
    path = CONTRACTS[name]
    try:
        module = import_module(path)
    except ModuleNotFoundError as error:
        # Only a missing contract module means "not there yet"; any other error is a bug.
        if error.name and path.startswith(error.name):
            return None
        raise
    return getattr(module, name, None)
