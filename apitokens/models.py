import ipaddress
import re
from functools import lru_cache

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone

from apitokens.choices import Scope, scopes_allow

# Characters that would make a label read other than it is: control characters (C0, DEL, C1) and the
# bidirectional overrides and isolates, which reorder the text shown after them. One pattern for Python
# and PostgreSQL (a NUL is refused before, as text the database cannot store).
MISLEADING_LABEL_CHARACTERS = r"[\x01-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
LABEL_MESSAGE = "A label may not hold control characters or bidirectional overrides."


def validate_label(value: str) -> None:
    if re.search(MISLEADING_LABEL_CHARACTERS, value):
        raise ValidationError(LABEL_MESSAGE, code="invalid")


@lru_cache(maxsize=256)
def _networks(cidrs: tuple) -> tuple:
    return tuple(ipaddress.ip_network(cidr, strict=False) for cidr in cidrs)


class ApiToken(models.Model):
    """An API token: only its keyed digest and a short visible prefix are kept (apitokens.digests);
    the token itself is shown once, when it is made."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    label = models.CharField(max_length=100, blank=True, validators=[validate_label],
                             help_text="What the token is for (a server, a script).")
    digest = models.CharField(max_length=64, editable=False)  # unique by a constraint: no pattern index
    prefix = models.CharField(max_length=12, editable=False, help_text="Its first characters, for support.")
    scopes = ArrayField(models.CharField(max_length=8, choices=Scope.choices))
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Empty: never expires.")
    allowed_ips = ArrayField(models.CharField(max_length=49), default=list, blank=True,
                             help_text="CIDRs the client's address must be in (empty: any address).")
    enabled = models.BooleanField(default=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    # Written at most once a minute per token (apitokens.authentication), and noticed by no cache.
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The token this one replaced: a token is rotated once (its one successor is rotated next).
    rotated_from = models.OneToOneField("self", null=True, blank=True, editable=False, on_delete=models.SET_NULL,
                                        related_name="rotated_to")

    class Meta:
        verbose_name = "API token"
        ordering = ["-id"]
        permissions = [("rotate_apitoken", "Can rotate and revoke API tokens")]
        constraints = [
            models.UniqueConstraint(fields=["digest"], name="apitoken_digest_unique"),
            models.CheckConstraint(
                condition=Q(scopes__len__gt=0) & Q(scopes__contained_by=list(Scope.values)),
                name="apitoken_known_scopes"),
            models.CheckConstraint(condition=~Q(label__regex=MISLEADING_LABEL_CHARACTERS),
                                   name="apitoken_label_printable"),
        ]

    def __str__(self) -> str:
        return f"API token #{self.pk} of {self.owner_id and self.owner}"

    def allows(self, permission: str) -> bool:
        """Whether the token's scopes cover ``permission`` (which the owner's role must also hold)."""
        return scopes_allow(self.scopes, permission)

    def allows_address(self, address: str | None) -> bool:
        if not self.allowed_ips:
            return True
        if address is None:
            return False
        parsed = ipaddress.ip_address(address)
        return any(parsed.version == network.version and parsed in network
                   for network in _networks(tuple(self.allowed_ips)))

    def expired(self, now=None) -> bool:
        return self.expires_at is not None and self.expires_at <= (now or timezone.now())
