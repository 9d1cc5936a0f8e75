"""Domain errors. Each has a stable code; the API maps them to HTTP answers."""


class DomainError(Exception):
    """Base class: a domain rule refused the operation."""

    code = "memory_error"
    status = 400

    def __init__(self, message: str, *, code: str | None = None, details=None):
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        self.details = details or {}


class NotFound(DomainError):
    """The object does not exist or lies outside the caller's scope (the same answer)."""

    code = "not_found"
    status = 404


class ValidationFailed(DomainError):
    """The input is malformed."""

    code = "invalid_input"
    status = 400


class PermissionDenied(DomainError):
    """The caller's grant does not allow the operation."""

    code = "forbidden"
    status = 403


class Conflict(DomainError):
    """The operation conflicts with the current state."""

    code = "conflict"
    status = 409


class Busy(DomainError):
    """Other work kept holding what the operation needs; nothing changed, retry it later."""

    code = "busy"
    status = 503


class SubjectBeingDeleted(Busy):
    """The subject's memories are being deleted: a deletion held the subject's lock past
    MEMLEDGER_SUBJECT_LOCK_WAIT, or a deletion of it (the whole subject's or a key's) is
    queued for a worker.
    Nothing changed; retry later."""

    code = "subject_being_deleted"

    def __init__(self, message: str = "", **kwargs):
        super().__init__(
            message
            or "A deletion of this subject's memories is under way; nothing was changed. "
            "Retry in a few seconds.",
            **kwargs,
        )


class OverBudget(DomainError):
    """The operation would run longer than the request may wait for it; nothing changed.
    Retrying as it is does not help: the work must be split, or run where time is not
    bounded (a management command)."""

    code = "over_budget"
    status = 422


class ReasonRefused(DomainError):
    """A revocation's reason the injection guard refuses: it is kept in the memory's events,
    which agents read. Nothing changed."""

    code = "reason_refused"
    status = 422


class SubjectRefused(DomainError):
    """A new subject's id that a write about it would be refused for (an instruction, business
    state): a subject token is not issued for it, and no subject is created."""

    code = "subject_refused"
    status = 422


class EmbeddingUnavailable(DomainError):
    """The embedding model failed; a write that needs a vector is not stored (retry later)."""

    code = "embedding_unavailable"
    status = 503


class ExportUnavailable(DomainError):
    """A subject's export file could not be written (its disk full or read-only, its folder
    not writable): nothing was exported; retry later. A part of the service is down, as when
    the database is, not a fault of the request (the API would answer 503 with Retry-After)."""

    code = "export_unavailable"
    status = 503

    def __init__(self, message: str = "", **kwargs):
        super().__init__(
            message or "The export could not be written, so nothing was exported. Try again later.",
            **kwargs,
        )


class RateLimiterUnavailable(DomainError):
    """The cache that counts each key's requests is down: an agent's request is refused
    rather than let through unmetered (the rate limit and write quota are security controls);
    the agent carries on without memory and retries later."""

    code = "rate_limiter_unavailable"
    status = 503


class IdempotencyKeyReused(DomainError):
    """An ``Idempotency-Key`` came back with another request than the one it was first used
    for (another body, path or endpoint): answering the first one's outcome would be wrong,
    and processing it would break the key's promise."""

    code = "idempotency_key_reused"
    status = 422


def is_tenant_deleted(exc: BaseException) -> bool:
    """Return whether ``exc`` is the database refusing a row of a deleted tenant (the trigger
    ``tenant_not_deleted`` of migration 0011: a request that raced its tenant's deletion)."""
    diag = getattr(getattr(exc, "__cause__", None), "diag", None)
    return getattr(diag, "constraint_name", None) == "tenant_not_deleted"


def is_read_only_database(exc: BaseException) -> bool:
    """Return whether ``exc`` is a database that takes no writes (SQLSTATE 25006, which Django
    raises as an InternalError): a failover to a standby, ``default_transaction_read_only``.
    Transient: the API answers 503, and tasks retry it (``tasks.read_only_is_transient``)."""
    from django.db import DatabaseError
    from psycopg.errors import ReadOnlySqlTransaction

    return isinstance(exc, DatabaseError) and isinstance(exc.__cause__, ReadOnlySqlTransaction)
