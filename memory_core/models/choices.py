"""Enumerations of the memory record (DESIGN.md, "The memory record")."""

from django.db import models


class MemoryClass(models.TextChoices):
    WORKING = "working"
    EPISODIC = "episodic"
    PREFERENCE = "preference"


class MemoryType(models.TextChoices):
    USER_PREFERENCE = "user_preference"
    PROJECT_CONSTRAINT = "project_constraint"
    REPOSITORY_RULE = "repository_rule"
    TASK_STATE = "task_state"
    PREVIOUS_DECISION = "previous_decision"
    INCIDENT = "incident"
    SUCCESSFUL_PROCEDURE = "successful_procedure"
    EPISODE = "episode"


# The class each type belongs to; retention follows the class.
TYPE_CLASS = {
    MemoryType.USER_PREFERENCE: MemoryClass.PREFERENCE,
    MemoryType.PROJECT_CONSTRAINT: MemoryClass.PREFERENCE,
    MemoryType.REPOSITORY_RULE: MemoryClass.PREFERENCE,
    MemoryType.TASK_STATE: MemoryClass.WORKING,
    MemoryType.PREVIOUS_DECISION: MemoryClass.EPISODIC,
    MemoryType.INCIDENT: MemoryClass.EPISODIC,
    MemoryType.SUCCESSFUL_PROCEDURE: MemoryClass.EPISODIC,
    MemoryType.EPISODE: MemoryClass.EPISODIC,
}


class ScopeKind(models.TextChoices):
    GLOBAL = "global"
    USER = "user"
    PROJECT = "project"
    REPO = "repo"
    TASK = "task"


class SourceType(models.TextChoices):
    USER_INPUT = "user_input"
    VERIFIED_TOOL_OUTPUT = "verified_tool_output"
    MODEL_INFERENCE = "model_inference"
    ADMIN = "admin"


class Authority(models.TextChoices):
    EXPLICIT_USER = "explicit_user"
    EXPLICIT_ADMIN = "explicit_admin"
    CONFIRMED_SYSTEM = "confirmed_system"
    TOOL_OBSERVATION = "tool_observation"
    MODEL_INFERENCE = "model_inference"


# Higher is stronger. A writer can never raise authority along a chain.
AUTHORITY_RANK = {
    Authority.EXPLICIT_ADMIN: 5,
    Authority.EXPLICIT_USER: 4,
    Authority.CONFIRMED_SYSTEM: 3,
    Authority.TOOL_OBSERVATION: 2,
    Authority.MODEL_INFERENCE: 1,
}


class Consent(models.TextChoices):
    EXPLICIT = "explicit"
    WORKFLOW = "workflow"


class Sensitivity(models.TextChoices):
    PUBLIC = "public"
    PERSONAL = "personal"
    SENSITIVE = "sensitive"
    RESTRICTED = "restricted"


SENSITIVITY_RANK = {
    Sensitivity.PUBLIC: 0,
    Sensitivity.PERSONAL: 1,
    Sensitivity.SENSITIVE: 2,
    Sensitivity.RESTRICTED: 3,
}


def sensitivities_up_to(max_sensitivity: str) -> list[str]:
    """The sensitivity levels at or below ``max_sensitivity`` (an unknown value reads as
    sensitive): what an agent with that maximum may see."""
    ceiling = SENSITIVITY_RANK.get(max_sensitivity, SENSITIVITY_RANK[Sensitivity.SENSITIVE])
    return sorted(level for level, rank in SENSITIVITY_RANK.items() if rank <= ceiling)


class Status(models.TextChoices):
    PENDING_APPROVAL = "pending_approval"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    REVOKED = "revoked"
    EXPIRED = "expired"
    DELETED = "deleted"
    REJECTED = "rejected"


def choices_check(
    field: str, choices: type[models.TextChoices], name: str
) -> models.CheckConstraint:
    """Return a CHECK constraint that limits ``field`` to the values of ``choices``."""
    return models.CheckConstraint(condition=models.Q(**{f"{field}__in": choices.values}), name=name)
