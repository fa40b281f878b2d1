"""No key to check heads with (neither AUDIT_PUBLIC_KEY nor a signing key): the admin still lists the
events under a notice naming the setting, and the API answers a JSON 503 naming it, never a 500."""

import pytest
from django.urls import reverse

from audit.services import audit_record, audit_sequence
from tests.admin.conftest import client_for
from tests.api.helpers import API

pytestmark = pytest.mark.django_db
HEAD, INCLUSION = f"{API}/audit/head/", f"{API}/audit/proofs/inclusion/"
CONSISTENCY = f"{API}/audit/proofs/consistency/"


@pytest.fixture
def events(db, settings):
    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    recorded = [audit_record(actor="system:test", action="test.event", object_type="t", object_id=f"no-key-{i}")
                for i in range(3)]
    audit_sequence()
    return recorded


@pytest.fixture(params=["none", "missing file"])
def no_key(request, settings, tmp_path):
    settings.AUDIT_SIGNING_KEY, settings.AUDIT_PUBLIC_KEY, settings.DEBUG = "", "", False
    settings.AUDIT_SIGNING_KEY_FILE = "" if request.param == "none" else str(tmp_path / "absent.pem")


def test_the_admin_lists_the_events_with_a_notice(events, no_key, administrator):
    admin_client = client_for(administrator)
    response = admin_client.get(reverse("admin:audit_auditevent_changelist"))
    assert response.status_code == 200
    page = response.content.decode()
    assert "Heads cannot be verified" in page and "AUDIT_PUBLIC_KEY" in page
    assert all(event.object_id in page for event in events)
    head = admin_client.get(reverse("admin:audit_auditevent_head"))
    assert head.status_code == 503 and "AUDIT_SIGNING_KEY" in head.json()


def test_the_api_answers_503_naming_the_setting(events, no_key, api_as, support):
    client = api_as(support)
    for url, query in ((HEAD, {}), (INCLUSION, {"event_id": events[0].pk}), (CONSISTENCY, {"first": 1})):
        response = client.get(url, query)
        assert response.status_code == 503, (url, response.content)
        assert "Heads cannot be verified" in response.json()["AUDIT_PUBLIC_KEY"][0]
    # A proof of a size given needs no key: it stands on its own, with no head.
    proof = client.get(INCLUSION, {"event_id": events[0].pk, "tree_size": 3})
    assert proof.status_code == 200 and proof.json()["head"] is None
