from django.conf import settings
from django.contrib.postgres.indexes import HashIndex
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models
from django.db.models import Func, Q

from audit.choices import AUTH_ACTIONS, AuditAction

HASH_HEX = r"^[0-9a-f]{64}$"
hex_hash = RegexValidator(HASH_HEX, "A SHA-256 hash as 64 lower-case hex digits.")


class CurrentTransactionId(Func):
    """The inserting transaction's 64-bit id (PostgreSQL's xid8 as a bigint), as a column default:
    the sequencer takes an event only once its transaction has ended (audit.sequencer)."""

    template = "(pg_current_xact_id()::text::bigint)"
    output_field = models.BigIntegerField()


class AuditEvent(models.Model):
    """One row of the append-only event log, written inside the transaction of the change.

    Written without any lock shared with other writers; the sequencer (audit.sequencer) later gives
    it its leaf in the Merkle log (``leaf``, an AuditLeaf), where signed tree heads pin it. Events
    written before the Merkle log also carry the hash chain they were written with (``prev_hash`` and
    ``hash``, verified by ``audit_chain_check``); later events leave them empty. The table keeps the
    name it had when the model lived in the games app.
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
    # NULL, not "", on later events: both are unique (the chain has no forks), and NULLs never collide.
    prev_hash = models.CharField(max_length=64, null=True, blank=True, editable=False,  # noqa: DJ001
                                 help_text="Hash chain of events written before the Merkle log.")
    hash = models.CharField(max_length=64, null=True, blank=True, unique=True, editable=False,  # noqa: DJ001
                            help_text="Hash chain of events written before the Merkle log.")
    xact_id = models.BigIntegerField(null=True, editable=False, db_default=CurrentTransactionId(),
                                     help_text="The inserting transaction (PostgreSQL), for the sequencer.")

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
            # The sequencer reads the events of transactions past its horizon by this one.
            models.Index(fields=["xact_id"], name="audit_xact_id_idx"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["prev_hash"], name="audit_chain_has_no_forks"),
            models.CheckConstraint(condition=Q(hash__regex=HASH_HEX), name="audit_hash_hex"),
        ]

    def __str__(self):
        return f"{self.created_at:%Y-%m-%d %H:%M:%S} {self.actor} {self.action} {self.object_type} {self.object_id}"


class AuthEventManager(models.Manager):
    def get_queryset(self):
        return super().get_queryset().filter(action__in=AUTH_ACTIONS)


class AuthEvent(AuditEvent):
    """The authentication log: the audit events of AUTH_ACTIONS (audit.selectors.auth_event_list),
    tamper-evident as every audit event is. A model of its own only for its permission
    (``audit.view_authevent``: administrators and regulators) and its admin list."""

    objects = AuthEventManager()

    class Meta:
        proxy = True
        verbose_name = "authentication event"
        default_permissions = ("view",)
        ordering = ["-id"]


class AuditLeaf(models.Model):
    """An event's position in the Merkle log: leaf ``index`` (0, 1, 2, … with no gap) and its leaf
    hash, SHA-256(0x00 ‖ the event's canonical entry) as in RFC 6962. Append-only."""

    index = models.BigIntegerField(primary_key=True, validators=[MinValueValidator(0)])
    # No foreign key in the database: an archived month of events is detached from the table, its
    # leaves stay (audit.verification checks each leaf's event, online or in an archived month).
    event = models.OneToOneField(AuditEvent, on_delete=models.PROTECT, related_name="leaf", db_constraint=False)
    hash = models.CharField(max_length=64, validators=[hex_hash])

    class Meta:
        ordering = ["index"]
        # The admin's search by leaf hash: a hash index is a quarter of the leaves' size (256 MB at
        # 10 million, a B-tree 911 MB) and finds one in 0.6 ms, where a scan of them took 0.4 s.
        indexes = [HashIndex(fields=["hash"], name="audit_leaf_hash_idx")]
        constraints = [
            models.CheckConstraint(condition=Q(index__gte=0), name="audit_leaf_index_not_negative"),
            models.CheckConstraint(condition=Q(hash__regex=HASH_HEX), name="audit_leaf_hash_hex"),
        ]

    def __str__(self):
        return f"leaf {self.index}: event {self.event_id}"


class AuditNode(models.Model):
    """The hash of a complete subtree of the log: 2**level leaves from leaf index × 2**level.
    Kept as the log grows (a complete subtree never changes), so a root or a proof at any tree size
    reads a few dozen of them instead of every leaf. Append-only."""

    level = models.PositiveSmallIntegerField(validators=[MinValueValidator(1)])
    index = models.BigIntegerField(validators=[MinValueValidator(0)])
    hash = models.CharField(max_length=64, validators=[hex_hash])

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["level", "index"], name="audit_node_position"),
            models.CheckConstraint(condition=Q(level__gte=1, index__gte=0), name="audit_node_position_valid"),
            models.CheckConstraint(condition=Q(hash__regex=HASH_HEX), name="audit_node_hash_hex"),
        ]

    def __str__(self):
        return f"node {self.level}/{self.index}"


class AuditHead(models.Model):
    """A signed tree head: the root of the log's first ``tree_size`` events, signed with Ed25519
    over the RFC 6962 TreeHeadSignature (version, type, ``timestamp`` in milliseconds, size, root).
    Each is also published outside the database (AUDIT_HEAD_SINK_DIR). Append-only."""

    tree_size = models.BigIntegerField(unique=True, validators=[MinValueValidator(0)])
    root_hash = models.CharField(max_length=64, validators=[hex_hash])
    timestamp = models.BigIntegerField(help_text="Milliseconds since 1970-01-01 UTC.")
    signature = models.CharField(max_length=88, help_text="Ed25519 signature, base64.")
    key_id = models.CharField(max_length=64, validators=[hex_hash],
                              help_text="SHA-256 of the raw Ed25519 public key, hex.")

    class Meta:
        ordering = ["-tree_size"]
        constraints = [
            models.CheckConstraint(condition=Q(tree_size__gte=0), name="audit_head_size_not_negative"),
            models.CheckConstraint(condition=Q(root_hash__regex=HASH_HEX), name="audit_head_root_hex"),
        ]

    def __str__(self):
        return f"head of {self.tree_size} events"

    def as_json(self) -> dict:
        """The head as published: the exact keys ``audit_head`` prints and ``audit_verify --against`` reads."""
        return {"tree_size": self.tree_size, "root_hash": self.root_hash, "timestamp": self.timestamp,
                "signature": self.signature, "key_id": self.key_id}


class AuditSequencerState(models.Model):
    """The sequencer's one row: how many leaves the log has, and the transactions it has settled:
    every one below ``horizon`` but those in ``open_xacts`` (still running at its last run) has had
    its events sequenced. Its row lock lets one sequencer run at a time."""

    tree_size = models.BigIntegerField(default=0)
    horizon = models.BigIntegerField(
        default=0, help_text="Every event of a transaction below it, but those in open_xacts, is sequenced.")
    open_xacts = models.JSONField(
        default=list, blank=True,
        help_text="Transactions below the horizon still running at the last run (any database of the server).")

    def __str__(self):
        return f"sequencer at {self.tree_size} leaves"
