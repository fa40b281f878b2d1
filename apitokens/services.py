"""Making, rotating and revoking API tokens. Each is one transaction with its event of the
authentication log inside it (the owner's name, the token's id, scopes, expiry and addresses: never
the token nor any part of it). The token itself is returned once, to be shown once."""

import ipaddress
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from apitokens import digests
from apitokens.choices import Scope
from apitokens.models import ApiToken, validate_label
from audit.choices import AuditAction, AuthOutcome
from audit.services import auth_event_record
from core.errors import Conflict
from core.permissions import is_read_permission

MAX_ALLOWED_IPS = 50


def clean_scopes(owner, scopes) -> list:
    """Known scopes, in a fixed order; only ``read`` for an owner whose role only reads (a regulator,
    support), whatever was asked."""
    scopes = {str(scope).strip() for scope in scopes or ()} - {""}
    unknown = sorted(scopes - set(Scope.values))
    if not scopes or unknown:
        raise ValidationError({"scopes": [f"Give one or more of {', '.join(Scope.values)}"
                                          + (f"; unknown: {', '.join(unknown)}." if unknown else ".")]})
    if not owner.is_superuser and all(is_read_permission(code) for code in owner.get_all_permissions()):
        return [Scope.READ.value]
    return [scope for scope in Scope.values if scope in scopes]


def _network(text: str) -> str:
    """One CIDR, normalised. A client's address is compared without an IPv6 zone and with an
    IPv4-mapped IPv6 address read as IPv4 (backoffice.addresses), so a CIDR with a zone or of mapped
    addresses could never match: each is refused, naming what to write instead."""
    if "%" in text:
        raise ValidationError({"allowed_ips": [f"{text[:60]!r}: an IPv6 zone (%...) names an interface of this "
                                               "server, not a client; leave it out."]})
    try:
        network = ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise ValidationError({"allowed_ips": [f"{text[:60]!r} is not an address or a CIDR."]}) from None
    if network.version == 6 and network.network_address.ipv4_mapped is not None and network.prefixlen >= 96:
        raise ValidationError({"allowed_ips": [f"{text[:60]!r} is an IPv4-mapped IPv6 address: write the IPv4 "
                                               "address or CIDR."]})
    return str(network)


def clean_allowed_ips(values) -> list:
    """CIDRs (or single addresses), normalised: ``10.0.0.7/8`` -> ``10.0.0.0/8``."""
    texts = [text for text in (str(value).strip() for value in values or ()) if text]
    if len(texts) > MAX_ALLOWED_IPS:
        raise ValidationError({"allowed_ips": [f"At most {MAX_ALLOWED_IPS} CIDRs."]})
    return list(dict.fromkeys(_network(text) for text in texts))


def clean_label(label) -> str:
    label = str(label or "")
    if len(label) > ApiToken._meta.get_field("label").max_length:
        raise ValidationError({"label": ["At most 100 characters."]})
    try:
        validate_label(label)
    except ValidationError as error:
        raise ValidationError({"label": error.messages}) from None
    return label


def default_expiry(owner, now=None):
    """A person's token (staff) expires STAFF_TOKEN_DAYS after it is made; a game server's
    (integration, not staff) does not expire unless asked: an expiry nobody planned would stop
    every bet at once, and its exposure is bounded by its scopes, addresses and rotation instead."""
    if owner.is_staff and settings.STAFF_TOKEN_DAYS > 0:
        return (now or timezone.now()) + timedelta(days=settings.STAFF_TOKEN_DAYS)
    return None


def _clean_expiry(expires_at, now):
    if expires_at is not None and expires_at <= now:
        raise ValidationError({"expires_at": ["Give a time in the future."]})
    return expires_at


def _details(token: ApiToken, **more) -> dict:
    return {"token_id": token.pk, "scopes": token.scopes, "allowed_ips": token.allowed_ips,
            "expires_at": token.expires_at.isoformat() if token.expires_at else None, **more}


def _new(owner, *, scopes, expires_at, allowed_ips, label, now, rotated_from=None) -> tuple[ApiToken, str]:
    secret = digests.new_token()
    token = ApiToken.objects.create(owner=owner, label=label, digest=digests.digest(secret),
                                    prefix=digests.visible_prefix(secret), scopes=scopes, expires_at=expires_at,
                                    allowed_ips=allowed_ips, created_at=now, rotated_from=rotated_from)
    return token, secret


def token_create(*, owner, actor, scopes=(Scope.READ,), expires_at=None, allowed_ips=(), label: str = "",
                 default_expiry_applies: bool = True) -> tuple[ApiToken, str]:
    """A new token of ``owner``: (the row, the token to show once). Without ``expires_at`` a staff
    token gets the default expiry (``default_expiry_applies=False``: none)."""
    now = timezone.now()
    scopes, allowed_ips, label = clean_scopes(owner, scopes), clean_allowed_ips(allowed_ips), clean_label(label)
    expires_at = _clean_expiry(expires_at, now)
    if expires_at is None and default_expiry_applies:
        expires_at = default_expiry(owner, now)
    with transaction.atomic():
        token, secret = _new(owner, scopes=scopes, expires_at=expires_at, allowed_ips=allowed_ips,
                             label=label, now=now)
        auth_event_record(actor=actor, action=AuditAction.TOKEN_CREATED, outcome=AuthOutcome.TOKEN_CREATED,
                          username=owner.get_username(), details=_details(token))
    return token, secret


def token_rotate(*, token_id: int, actor, overlap_hours: Decimal | float | None = None) -> tuple[ApiToken, str]:
    """A new token beside the old one, with its owner, label, scopes and addresses and the owner's
    default expiry; the old one keeps working for ``overlap_hours`` (API_TOKEN_ROTATION_OVERLAP_HOURS)
    and then expires, so clients can move over without a gap. A token is rotated once: a second
    rotation of it (two at once included: the row lock orders them) is a Conflict naming its successor,
    so one rotation leaves exactly one new token."""
    hours = settings.API_TOKEN_ROTATION_OVERLAP_HOURS if overlap_hours is None else overlap_hours
    if not 0 <= hours <= 24 * 30:
        raise ValidationError({"overlap_hours": ["Give 0 to 720 hours."]})
    now = timezone.now()
    with transaction.atomic():
        old = _locked(token_id)
        if not old.enabled or old.expired(now):
            raise ValidationError({"token": ["A revoked or expired token cannot be rotated; make a new one."]})
        successor = ApiToken.objects.filter(rotated_from=old).values_list("pk", flat=True).first()
        if successor is not None:
            raise Conflict("token", f"API token #{old.pk} was already rotated: rotate its successor, #{successor}.",
                           code="already_rotated")
        token, secret = _new(old.owner, scopes=clean_scopes(old.owner, old.scopes),
                             expires_at=default_expiry(old.owner, now),
                             allowed_ips=old.allowed_ips, label=old.label, now=now, rotated_from=old)
        overlap_end = now + timedelta(hours=float(hours))
        if old.expires_at is None or old.expires_at > overlap_end:
            old.expires_at = overlap_end
            old.save(update_fields=["expires_at"])
        auth_event_record(actor=actor, action=AuditAction.TOKEN_ROTATED, outcome=AuthOutcome.TOKEN_ROTATED,
                          username=old.owner.get_username(),
                          details=_details(token, rotated_token_id=old.pk,
                                           rotated_token_expires_at=old.expires_at.isoformat()))
    return token, secret


def token_revoke(*, token_id: int, actor) -> ApiToken:
    """Disable the token for good (its row stays, so its use is still recognised and logged)."""
    with transaction.atomic():
        token = _locked(token_id)
        if token.enabled:
            token.enabled = False
            token.save(update_fields=["enabled"])
            auth_event_record(actor=actor, action=AuditAction.TOKEN_REVOKED, outcome=AuthOutcome.TOKEN_REVOKED,
                              username=token.owner.get_username(), details=_details(token))
    return token


def _locked(token_id) -> ApiToken:
    token = ApiToken.objects.select_for_update(of=("self",)).select_related("owner").filter(pk=token_id).first()
    if token is None:
        raise ValidationError({"token": [f"No API token #{token_id}."]})
    return token
