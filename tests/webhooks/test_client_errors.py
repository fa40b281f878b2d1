"""A delivery's last error: the client reads a generic reason (the detail would tell it which internal
address its host name resolves to), staff read the detail in the admin."""

import socket

import pytest
from django.db import transaction

from tests.admin.conftest import client_for
from tests.admin.helpers import admin_url
from webhooks import services
from webhooks.models import Delivery

pytestmark = pytest.mark.django_db


def resolves_inside(host, port, **kwargs):
    return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.20.30.40", 0))]


def does_not_resolve(host, port, **kwargs):
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


@pytest.mark.parametrize("resolver,detail", [(resolves_inside, "10.20.30.40"), (does_not_resolve, "not known")])
def test_the_client_reads_one_generic_reason_and_staff_the_detail(api_as, integration, operator, settings,
                                                                   monkeypatch, resolver, detail):
    settings.WEBHOOK_ALLOW_HTTP, settings.WEBHOOK_BLOCK_PRIVATE = False, True
    hook, _secret = services.endpoint_create(actor=integration, reason="new receiver", owner=integration,
                                             url="https://billing.corp.example/hook", events=["round.voided"])
    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    with transaction.atomic():
        services.events_record("round.voided", [{"round": 1}])
    delivery = Delivery.objects.get()
    assert services.delivery_attempt(delivery.pk) == "pending"
    delivery.refresh_from_db()
    assert detail in delivery.last_error and detail in delivery.attempt_log.get().error

    response = api_as(integration).get(f"/api/v1/webhooks/endpoints/{hook.pk}/deliveries/")
    assert response.status_code == 200
    assert response.json()["results"][0]["last_error"] == services.CLIENT_NOT_REACHED
    assert detail not in response.content.decode()
    page = client_for(operator).get(admin_url(delivery, "change")).content.decode()
    assert detail in page


@pytest.mark.parametrize("error,shown", [
    ("", ""), ("HTTP 503", "HTTP 503"), ("TimeoutError: timed out", services.CLIENT_TIMED_OUT),
    (services.CANCELLED, services.CANCELLED),
    ("ConnectionRefusedError: [Errno 111] Connection refused", services.CLIENT_NOT_REACHED),
    ("Destination refused: The host resolves to a non-public address (10.0.0.1: not public); "
     "WEBHOOK_BLOCK_PRIVATE is on.", services.CLIENT_NOT_REACHED),
    ("Host not resolved: [Errno -2] Name or service not known", services.CLIENT_NOT_REACHED),
    ("SSLCertVerificationError: certificate verify failed: Hostname mismatch", services.CLIENT_NOT_REACHED),
    ("HTTP 500 from 10.0.0.1", services.CLIENT_NOT_REACHED),
])
def test_what_a_client_may_read_of_each_error(error, shown):
    assert services.error_for_client(error) == shown
