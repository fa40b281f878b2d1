"""Webhooks: endpoints and their secrets, recording events into the outbox, and delivering them.

Recording runs inside the transaction of the change (receivers): the event and its deliveries commit
or roll back with it, and the deliveries are handed to the workers once it commits. A worker claims a
delivery by pushing its next attempt past the HTTP timeout (a lease), posts it, and logs the attempt;
a failure is tried again after an exponential backoff, up to WEBHOOK_MAX_ATTEMPTS. The periodic sweep
hands over whatever is due, so a delivery whose message or worker was lost is sent all the same: at
least once. Receivers de-duplicate by the event id. Before each attempt the URL is checked again
under the current settings (webhooks.validators.refused_destination), and redirects are not followed.

Only an active endpoint of an active integration client is sent anything: deactivating the client
(the user) disables its endpoints and cancels their pending deliveries (``endpoints_disable_for_owner``,
called on the user's save by webhooks.receivers), and a delivery that comes due for an inactive
endpoint or client is cancelled rather than posted. Reactivating the user turns nothing back on.
"""

import json
import re
import secrets
import time
import urllib.error
import urllib.request
from datetime import timedelta

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from audit.choices import AuditAction
from audit.services import audit_record
from audit.validators import required_reason
from core.errors import ApplicationError, Conflict
from core.services import model_update
from webhooks.choices import DeliveryStatus
from webhooks.models import Delivery, DeliveryAttempt, Endpoint, EndpointSecret, Event
from webhooks.signals import deliveries_ready
from webhooks.signing import signature_header
from webhooks.validators import refused_destination

EXCERPT = 500
LEASE_MARGIN_SECONDS = 30
CANCELLED = "Cancelled: the endpoint or its client was disabled before it was sent."
# What a client reads of a failed attempt (the API): the detail (a refused destination names the
# address its host resolved to, a connection error the network's own words) is for staff alone.
CLIENT_NOT_REACHED = "Not delivered: the destination was refused or could not be reached."
CLIENT_TIMED_OUT = "Not delivered: the destination did not answer in time."


# --- Endpoints and secrets --------------------------------------------------------------------------

def _new_secret(endpoint: Endpoint, now) -> EndpointSecret:
    return EndpointSecret.objects.create(endpoint=endpoint, secret=f"whsec_{secrets.token_hex(24)}", created_at=now)


def _check_owner(owner) -> None:
    """An endpoint belongs to an active integration client: a user without staff status (staff
    configure a client's endpoints, in the admin, but never own one)."""
    if owner.is_staff or owner.is_superuser:
        raise ApplicationError("owner", "Endpoints belong to an integration client: staff configure a client's "
                                        "endpoints in the admin (Webhooks > Endpoints), for that client.")
    if not owner.is_active:
        raise ApplicationError("owner", f"The integration client {owner.get_username()} is deactivated.")


@transaction.atomic
def endpoint_create(*, actor, owner, url: str, events: list, reason: str, description: str = "",
                    active: bool = True) -> tuple[Endpoint, str]:
    """A new endpoint and its first secret (returned once: shown to the client, never again), for
    ``reason`` (required, audited)."""
    reason = required_reason(reason)
    _check_owner(owner)
    endpoint = Endpoint(owner=owner, url=url, events=events, description=description, active=active)
    endpoint.full_clean()
    endpoint.save()
    secret = _new_secret(endpoint, timezone.now())
    audit_record(actor=actor, action=AuditAction.WEBHOOK_ENDPOINT_CREATED, obj=endpoint,
                 after={"owner": owner.get_username(), "url": url, "events": events, "active": active},
                 reason=reason)
    return endpoint, secret.secret


def _lock_endpoint(endpoint_id: int) -> Endpoint:
    """FOR NO KEY UPDATE, never FOR UPDATE: every transaction that records an event for the endpoint
    inserts a delivery whose foreign key is checked at its commit with FOR KEY SHARE, which FOR
    UPDATE would make wait (a settlement batch, with its rounds and accounts locked)."""
    return Endpoint.objects.select_for_update(no_key=True).get(pk=endpoint_id)


def _refuse_activation_for_inactive_owner(endpoint: Endpoint) -> None:
    if endpoint.active and not endpoint.owner.is_active:
        raise ApplicationError("active", f"The integration client {endpoint.owner.get_username()} is deactivated: "
                                         "reactivate the user first.")


@transaction.atomic
def endpoint_update(*, endpoint_id: int, actor, changes: dict) -> Endpoint:
    endpoint = _lock_endpoint(endpoint_id)
    update = model_update(endpoint, changes, check=_refuse_activation_for_inactive_owner)
    if update:
        audit_record(actor=actor, action=AuditAction.WEBHOOK_ENDPOINT_CHANGED, obj=endpoint, before=update.before,
                     after=update.after)
    return endpoint


@transaction.atomic
def endpoint_rotate_secret(*, endpoint_id: int, actor) -> str:
    """Start signing with a new secret; the current one stays valid for WEBHOOK_SECRET_OVERLAP_HOURS.

    Secrets that had already expired are dropped, so at most two are ever valid."""
    endpoint = _lock_endpoint(endpoint_id)
    now = timezone.now()
    endpoint.secrets.filter(expires_at__lte=now).delete()
    overlap_ends = now + timedelta(hours=settings.WEBHOOK_SECRET_OVERLAP_HOURS)
    endpoint.secrets.filter(expires_at__isnull=True).update(expires_at=overlap_ends)
    endpoint.secrets.filter(expires_at__gt=overlap_ends).update(expires_at=overlap_ends)
    secret = _new_secret(endpoint, now)
    audit_record(actor=actor, action=AuditAction.WEBHOOK_SECRET_ROTATED, obj=endpoint,
                 after={"previous_valid_until": overlap_ends.isoformat()})
    return secret.secret


@transaction.atomic
def endpoints_disable_for_owner(*, owner, actor, reason: str) -> int:
    """The owner may receive nothing (deactivated): each of its endpoints still active, or holding
    pending deliveries, is disabled and those deliveries cancelled, one audit event per endpoint.
    Idempotent; returns how many endpoints it changed. Nothing undoes it by itself: reactivating the
    user leaves the endpoints disabled until someone turns each on again."""
    changed = 0
    # Every endpoint of the owner locked, then judged as it stands: a change that turned one on
    # meanwhile is waited for and seen.
    for endpoint in Endpoint.objects.filter(owner=owner).select_for_update(no_key=True).order_by("pk"):
        cancelled = Delivery.objects.filter(endpoint=endpoint, status=DeliveryStatus.PENDING).update(
            status=DeliveryStatus.CANCELLED, last_error=CANCELLED)
        was_active = endpoint.active
        if not (was_active or cancelled):
            continue
        if was_active:
            endpoint.active = False
            endpoint.save(update_fields=["active"])
        audit_record(actor=actor, action=AuditAction.WEBHOOK_ENDPOINT_CHANGED, obj=endpoint, reason=reason,
                     before={"active": was_active}, after={"active": False, "cancelled_deliveries": cancelled})
        changed += 1
    return changed


def valid_secrets(endpoint_id: int, now) -> list:
    """Newest first; two while a rotation's overlap lasts."""
    return list(EndpointSecret.objects.filter(endpoint_id=endpoint_id).exclude(expires_at__lte=now)
                .order_by("-created_at", "-id").values_list("secret", flat=True)[:2])


# --- Recording events (inside the change's transaction) ---------------------------------------------

def subscribers(event_type: str) -> list:
    """The active endpoints of active clients whose events (a JSON array of types) hold ``event_type``."""
    return list(Endpoint.objects.filter(active=True, owner__is_active=True, events__contains=[event_type]))


def events_record(event_type: str, items: list) -> int:
    """Write one event per item of data, and its deliveries; hand them over once the transaction commits."""
    endpoints = subscribers(event_type)
    if not endpoints or not items:
        return 0
    now = timezone.now()
    events = Event.objects.bulk_create(Event(type=event_type, data=data, created_at=now) for data in items)
    deliveries = Delivery.objects.bulk_create(
        Delivery(event=event, endpoint=endpoint, next_attempt_at=now) for event in events for endpoint in endpoints)
    ids = [delivery.pk for delivery in deliveries]
    transaction.on_commit(lambda: deliveries_ready.send(sender=Delivery, delivery_ids=ids))
    return len(ids)


# --- Delivering --------------------------------------------------------------------------------------

def backoff_seconds(attempts: int) -> float:
    return min(settings.WEBHOOK_BACKOFF_SECONDS * 2 ** (attempts - 1), settings.WEBHOOK_BACKOFF_MAX_SECONDS)


def deliveries_due(limit: int = 500) -> list:
    return list(Delivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=timezone.now())
                .order_by("next_attempt_at", "pk").values_list("pk", flat=True)[:limit])


def _claim(delivery_id: int):
    """The delivery, its attempts counted and under a lease; cancelled (and not to be posted) when
    its endpoint or client is no longer active; None when it is not due (another worker has it)."""
    with transaction.atomic():
        # The delivery's row alone (of "self"): locking its endpoint too would skip every other
        # delivery to that endpoint claimed at the same moment, and any while the endpoint changes.
        delivery = (Delivery.objects.select_for_update(skip_locked=True, of=("self",), no_key=True)
                    .select_related("event", "endpoint", "endpoint__owner")
                    .filter(pk=delivery_id, status=DeliveryStatus.PENDING, next_attempt_at__lte=timezone.now())
                    .first())
        if delivery is None:
            return None
        if not (delivery.endpoint.active and delivery.endpoint.owner.is_active):
            # Recorded before the endpoint was disabled, or its client deactivated without a save
            # (a bulk update): never posted.
            delivery.status, delivery.last_error = DeliveryStatus.CANCELLED, CANCELLED
            delivery.save(update_fields=["status", "last_error"])
            return delivery
        delivery.attempts += 1
        delivery.next_attempt_at = timezone.now() + timedelta(
            seconds=settings.WEBHOOK_TIMEOUT_SECONDS + LEASE_MARGIN_SECONDS)
        delivery.save(update_fields=["attempts", "next_attempt_at"])
        return delivery


def _body(delivery: Delivery) -> bytes:
    event = delivery.event
    return json.dumps({"id": str(event.pk), "type": event.type, "created": event.created_at.isoformat(),
                       "data": event.data}, cls=DjangoJSONEncoder, separators=(",", ":")).encode()


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is the receiver's answer, not a new destination (it could point inside the network)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


_OPENER = urllib.request.build_opener(_NoRedirects)


def _post(delivery: Delivery, body: bytes) -> tuple[int | None, str, str]:
    """(HTTP status or None, error, response excerpt)."""
    refused = refused_destination(delivery.endpoint.url)
    if refused:
        return None, f"Destination refused: {refused}"[:EXCERPT], ""
    timestamp = int(time.time())
    request = urllib.request.Request(delivery.endpoint.url, data=body, method="POST", headers={
        "Content-Type": "application/json",
        "User-Agent": "baccarat-backoffice-webhooks/1",
        "Baccarat-Event-Id": str(delivery.event_id),
        "Baccarat-Event-Type": delivery.event.type,
        "Baccarat-Signature": signature_header(valid_secrets(delivery.endpoint_id, timezone.now()), timestamp, body),
    })
    try:
        with _OPENER.open(request, timeout=settings.WEBHOOK_TIMEOUT_SECONDS) as response:
            return response.status, "", response.read(EXCERPT).decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, f"HTTP {error.code}", error.read(EXCERPT).decode(errors="replace")
    except (urllib.error.URLError, OSError) as error:  # refused, DNS, timeout, reset
        reason = getattr(error, "reason", error)
        return None, f"{type(reason).__name__}: {reason}"[:EXCERPT], ""


def error_for_client(error: str) -> str:
    """A delivery's last error as its client may read it: an HTTP status of its own server's answer,
    a cancellation or a timeout as such, anything else (a refused destination, a name that did not
    resolve, a refused connection, TLS) one generic reason: the detail would tell the client which
    addresses the network's resolver gives its host names (an internal-DNS oracle)."""
    if not error or re.fullmatch(r"HTTP [0-9]{3}", error) or error == CANCELLED:
        return error
    if error.startswith(("TimeoutError:", "timeout:")):
        return CLIENT_TIMED_OUT
    return CLIENT_NOT_REACHED


def delivery_attempt(delivery_id: int) -> str | None:
    """Try one delivery now if it is due; returns its status afterwards (None when it was not due)."""
    delivery = _claim(delivery_id)
    if delivery is None or delivery.status != DeliveryStatus.PENDING:
        return None if delivery is None else delivery.status
    started, clock = timezone.now(), time.monotonic()
    status_code, error, excerpt = _post(delivery, _body(delivery))
    duration_ms = int((time.monotonic() - clock) * 1000)
    with transaction.atomic():
        delivery = Delivery.objects.select_for_update().get(pk=delivery_id)
        # Numbered across redeliveries (``attempts`` counts those since the last one).
        number = delivery.attempt_log.count() + 1
        DeliveryAttempt.objects.create(delivery=delivery, number=number, started_at=started,
                                       duration_ms=duration_ms, status_code=status_code, error=error,
                                       response_excerpt=excerpt)
        if status_code is not None and 200 <= status_code < 300:
            delivery.status, delivery.delivered_at, delivery.last_error = (
                DeliveryStatus.DELIVERED, timezone.now(), "")
        elif delivery.status == DeliveryStatus.CANCELLED:
            pass  # cancelled while this attempt was on its way: not tried again
        elif delivery.attempts >= settings.WEBHOOK_MAX_ATTEMPTS:
            delivery.status, delivery.last_error = DeliveryStatus.FAILED, error
        else:
            delivery.next_attempt_at = timezone.now() + timedelta(seconds=backoff_seconds(delivery.attempts))
            delivery.last_error = error
        delivery.save(update_fields=["status", "delivered_at", "last_error", "next_attempt_at"])
        return delivery.status


@transaction.atomic
def delivery_redeliver(*, delivery_id: int, actor) -> Delivery:
    """Send a delivery again from now, with a fresh count of attempts (a delivered one too, on request)."""
    delivery = Delivery.objects.select_for_update(of=("self",)).select_related("endpoint__owner").get(pk=delivery_id)
    if delivery.status == DeliveryStatus.PENDING and delivery.attempts == 0:
        raise Conflict("delivery", "The delivery has not been tried yet.")
    if not (delivery.endpoint.active and delivery.endpoint.owner.is_active):
        raise Conflict("delivery", "Its endpoint is disabled (or its client deactivated): turn the endpoint on "
                                   "again first.")
    before = delivery.status
    delivery.status, delivery.attempts, delivery.next_attempt_at = DeliveryStatus.PENDING, 0, timezone.now()
    delivery.delivered_at = None
    delivery.save(update_fields=["status", "attempts", "next_attempt_at", "delivered_at"])
    audit_record(actor=actor, action=AuditAction.WEBHOOK_REDELIVERED, obj=delivery, before={"status": before},
                 after={"status": delivery.status, "event": str(delivery.event_id)})
    transaction.on_commit(lambda: deliveries_ready.send(sender=Delivery, delivery_ids=[delivery.pk]))
    return delivery
