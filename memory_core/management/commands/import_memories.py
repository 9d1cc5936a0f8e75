"""Import memories from a JSONL file of full records (a migration path from other stores).

    python manage.py import_memories FILE [--dry-run] [--screen]

Trusted path: records keep the authority, status and dates they state, without admission.
Every field of every line is validated first; any error is reported with its line number and
nothing is imported. ``--screen`` also runs the class and injection guards over each record
and reports the ones they refuse as errors. The format is in docs/api.md.
"""

import io
import json
from collections import defaultdict

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from memory_core.admission import check_content, parse_candidate
from memory_core.admission.candidate import FieldErrors, parse_datetime_value
from memory_core.admission.policy import REFUSING
from memory_core.embeddings import EmbeddingError
from memory_core.exceptions import ValidationFailed
from memory_core.models import Agent, Authority, Memory, PolicyVersion, Status, Subject, Tenant
from memory_core.principals import SystemPrincipal
from memory_core.rls import platform_command
from memory_core.services.memories import MemoryDraft, memory_store_many
from memory_core.text import content_hash

IMPORT_FIELDS = ("tenant", "agent", "status", "valid_from", "created_at")
IMPORT_STATUSES = (Status.ACTIVE, Status.REVOKED, Status.EXPIRED)
CHUNK = 256


class Command(BaseCommand):
    help = "Import memories from a JSONL file of full records; per-line errors, all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--dry-run", action="store_true", help="Validate only.")
        parser.add_argument(
            "--screen", action="store_true", help="Refuse records the content guards refuse."
        )

    @platform_command
    def handle(self, *args, file, dry_run, screen, **options):
        try:
            with open(file, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise CommandError(f"Cannot read {file}: {exc}") from exc
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise CommandError(
                f"{file} is not UTF-8 text: line {line} holds the byte 0x{data[exc.start]:02x}. "
                "Save the file as UTF-8; nothing imported."
            ) from exc
        # Lines as a text-mode read splits them (\n, \r\n, \r): not str.splitlines, which
        # also splits at U+2028, valid inside a JSON string.
        lines = io.StringIO(text, newline=None).readlines()
        records, errors = self._validate(lines, screen=screen)
        for error in errors:
            self.stderr.write(error)
        if errors:
            raise CommandError(f"{len(errors)} error(s) in {file}; nothing imported.")
        if dry_run:
            self.stdout.write(f"{len(records)} record(s) valid; dry run, nothing imported.")
            return
        try:
            imported, skipped = self._store(records, file)  # one transaction
        except EmbeddingError as exc:
            raise CommandError(f"The embedding model failed ({exc}); nothing imported.") from exc
        self.stdout.write(f"Imported {imported} memories, skipped {skipped} already present.")

    def _validate(self, lines, *, screen: bool):
        records, errors = [], []
        tenants = {t.slug: t for t in Tenant.objects.all()}
        agents = set(Agent.objects.values_list("tenant_id", "name"))
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"line {number}"
            try:
                data = json.loads(line)
            except (json.JSONDecodeError, ValueError) as exc:
                errors.append(f"{where}: invalid JSON ({exc.msg if hasattr(exc, 'msg') else exc})")
                continue
            if not isinstance(data, dict):
                errors.append(f"{where}: must be a JSON object")
                continue
            extra = {key: data.pop(key) for key in IMPORT_FIELDS if key in data}
            line_errors = FieldErrors()
            tenant = (
                tenants.get(extra.get("tenant")) if isinstance(extra.get("tenant"), str) else None
            )
            if tenant is None:
                line_errors.add(
                    "tenant", "unknown_tenant", "Must be the slug of an existing tenant."
                )
            status = extra.get("status", Status.ACTIVE)
            if status not in IMPORT_STATUSES:
                line_errors.add(
                    "status", "invalid_choice", f"Must be one of {', '.join(IMPORT_STATUSES)}."
                )
            valid_from = parse_datetime_value(extra.get("valid_from"), line_errors, "valid_from")
            created_at = parse_datetime_value(extra.get("created_at"), line_errors, "created_at")
            if data.get("authority") in (None, ""):
                line_errors.add("authority", "required", "Imports state their authority.")
            agent = extra.get("agent")
            if agent is not None and not isinstance(agent, str):
                line_errors.add("agent", "invalid_type", "Must be an agent's name or null.")
            elif agent and tenant is not None and (tenant.id, agent) not in agents:
                line_errors.add("agent", "unknown_agent", "No agent of this name in the tenant.")
            try:
                candidate = parse_candidate(data)
            except ValidationFailed as exc:
                for name, items in exc.details.items():
                    line_errors.by_field.setdefault(name, []).extend(items)
                candidate = None
            if candidate is not None:
                # Without valid_from or created_at the memory is valid from the import.
                start = valid_from or created_at or timezone.now()
                if candidate.valid_until and candidate.valid_until <= start:
                    line_errors.add(
                        "valid_until",
                        "invalid_interval",
                        "Must be after valid_from (or created_at, or the import's time when "
                        "neither is given).",
                    )
                if screen:
                    refused = [c for c in check_content(candidate) if c in REFUSING]
                    if refused:
                        line_errors.add("content", "screened", ", ".join(refused))
            for name, items in line_errors.by_field.items():
                for item in items:
                    errors.append(f"{where}: {name}: {item['message']} ({item['code']})")
            if not line_errors.by_field:
                records.append(
                    {
                        "tenant": tenant,
                        "agent": extra.get("agent"),
                        "status": status,
                        "valid_from": valid_from,
                        "created_at": created_at,
                        "candidate": candidate,
                        "line": number,
                    }
                )
        return records, errors

    @transaction.atomic
    def _store(self, records, file):
        by_tenant = defaultdict(list)
        for record in records:
            by_tenant[record["tenant"]].append(record)
        imported = skipped = 0
        for tenant, items in by_tenant.items():
            policy = PolicyVersion.objects.filter(tenant=tenant, is_active=True).first()
            principal = SystemPrincipal(tenant_id=tenant.id, name=f"import:{file}"[:200])
            agents = {a.name: a for a in Agent.objects.filter(tenant=tenant)}
            existing = set(
                Memory.objects.filter(
                    tenant=tenant,
                    source_conversation_id__in={
                        r["candidate"].source_conversation_id for r in items
                    },
                ).values_list(
                    "subject__external_id",
                    "source_conversation_id",
                    "source_message_id",
                    "content_hash",
                )
            )
            drafts = []
            for record in items:
                candidate = record["candidate"]
                fingerprint = (
                    candidate.subject,
                    candidate.source_conversation_id,
                    candidate.source_message_id,
                    content_hash(candidate.content),
                )
                if fingerprint in existing:
                    skipped += 1
                    continue
                existing.add(fingerprint)
                agent_name = record["agent"]  # checked by _validate
                subject, _ = Subject.objects.get_or_create(
                    tenant=tenant,
                    external_id=candidate.subject,
                    defaults={"display_name": candidate.subject},
                )
                drafts.append(
                    MemoryDraft(
                        subject=subject,
                        memory_type=candidate.memory_type,
                        content=candidate.content,
                        authority=candidate.authority or Authority.EXPLICIT_USER,
                        source_type=candidate.source_type,
                        scope_kind=candidate.scope_kind,
                        scope_ref=candidate.scope_ref,
                        memory_key=candidate.memory_key,
                        agent_id=agents[agent_name].id if agent_name else None,
                        value=candidate.value,
                        session_id=candidate.session_id,
                        task_id=candidate.task_id,
                        source_conversation_id=candidate.source_conversation_id,
                        source_message_id=candidate.source_message_id,
                        source_tool=candidate.source_tool,
                        confidence=1.0 if candidate.confidence is None else candidate.confidence,
                        consent=candidate.consent or "explicit",
                        sensitivity=candidate.sensitivity or "personal",
                        valid_from=record["valid_from"],
                        valid_until=candidate.valid_until,
                        created_at=record["created_at"],
                        status=record["status"],
                    )
                )
            for start in range(0, len(drafts), CHUNK):
                memory_store_many(
                    drafts=drafts[start : start + CHUNK],
                    principal=principal,
                    policy_version=policy.version if policy else None,
                )
            imported += len(drafts)
        return imported, skipped
