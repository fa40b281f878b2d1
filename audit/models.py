from django.conf import settings
from django.db import models
from django.db.models import Q

from audit.choices import AuditAction

HASH_HEX = r"^[0-9a-f]{64}$"


class AuditEvent(models.Model):
    """One row of the append-only event log, written inside the transaction of the change.

    Tamper-evident: ``hash`` is the SHA-256 of ``prev_hash`` (the previous event's hash) and this
    event's canonical content, so altering, deleting or inserting an event breaks the chain
    (``manage.py audit_verify`` walks it). The table keeps the name it had when the model lived in
    the games app.
    """

    created_at = models.DateTimeField(db_index=True)
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True,
        related_name="audit_events",
    )
    actor = models.CharField(max_length=150, help_text="User name, or system:<worker> for the system.")
    action = models.CharField(max_length=64, db_index=True, choices=AuditAction.choices)
    object_type = models.CharField(max_length=64)
    object_id = models.CharField(max_length=64)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    reason = models.TextField(blank=True)
    request_id = models.CharField(max_length=64, blank=True)
    source_ip = models.GenericIPAddressField(null=True, blank=True)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64, unique=True)

    class Meta:
        db_table = "games_auditevent"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["object_type", "object_id"], name="audit_object_idx"),
            # The admin's searches look these up exactly; the actor also by its beginning
            # (LIKE 'olivia%'), which a PostgreSQL btree serves only with the pattern operator class.
            models.Index(fields=["object_id"], name="audit_object_id_idx"),
            models.Index(fields=["request_id"], name="audit_request_id_idx"),
            models.Index(fields=["actor"], name="audit_actor_idx", opclasses=["varchar_pattern_ops"]),
        ]
        constraints = [
            models.UniqueConstraint(fields=["prev_hash"], name="audit_chain_has_no_forks"),
            models.CheckConstraint(condition=Q(hash__regex=HASH_HEX), name="audit_hash_hex"),
        ]

    def __str__(self):
        return f"{self.created_at:%Y-%m-%d %H:%M:%S} {self.actor} {self.action} {self.object_type} {self.object_id}"
