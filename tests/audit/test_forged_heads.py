"""A tree head written into the database without the signing key (the application's role may insert
heads) is never shown or used: the public page, the API and the proofs pass over it, it is not
published, an alert names it, and no proof request answers 500."""

import base64
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from alerts import checks, services
from alerts.models import Alert
from audit import heads
from audit.models import AuditHead, AuditLeaf
from audit.services import audit_head_sign, audit_record, audit_sequence
from tests.admin.conftest import client_for
from tests.api.helpers import API

pytestmark = pytest.mark.django_db
HEAD, INCLUSION = f"{API}/audit/head/", f"{API}/audit/proofs/inclusion/"
CONSISTENCY = f"{API}/audit/proofs/consistency/"


@pytest.fixture
def signed(db, settings):
    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    events = [audit_record(actor="system:test", action="test.event", object_type="t", object_id=str(i))
              for i in range(5)]
    audit_sequence()
    return events, audit_head_sign()


def forge(tree_size: int, **fields) -> AuditHead:
    """What the application's role can do: insert a head, signed by nobody."""
    values = {"tree_size": tree_size, "root_hash": "ab" * 32, "timestamp": 1_900_000_000_000,
              "signature": base64.b64encode(b"\0" * 64).decode(), "key_id": heads.key_id(heads.public_key_bytes())}
    return AuditHead.objects.create(**{**values, **fields})


@pytest.fixture
def as_support(api_as, support):
    return api_as(support)


def test_a_forged_latest_head_is_neither_shown_nor_used(signed, as_support, client):
    """Before, it was the latest head on the public page and in the API, and the proofs answered 500."""
    events, genuine = signed
    forged = forge(genuine.tree_size + 1000)
    status = as_support.get(HEAD).json()
    assert status["head"] == genuine.as_json()
    page = client.get("/").content.decode()
    assert genuine.root_hash in page and forged.root_hash not in page
    inclusion = as_support.get(INCLUSION, {"event_id": events[2].pk})
    assert inclusion.status_code == 200 and inclusion.json()["head"] == genuine.as_json()
    consistency = as_support.get(CONSISTENCY, {"first": 2})
    assert consistency.status_code == 200 and consistency.json()["second"] == genuine.tree_size


def test_a_forged_head_of_a_size_the_log_has_is_not_handed_out(signed, as_support):
    events, genuine = signed
    forged = forge(3)
    body = as_support.get(INCLUSION, {"event_id": events[0].pk, "tree_size": 3}).json()
    assert body["head"] is None and body["root_hash"] != forged.root_hash  # the proof stands on its own
    body = as_support.get(CONSISTENCY, {"first": 3}).json()
    assert body["first_head"] is None and body["second_head"] == genuine.as_json()


def test_a_forged_head_raises_an_alert(signed):
    _events, genuine = signed
    assert checks.audit_heads() == []
    forged = forge(genuine.tree_size + 7)
    [finding] = checks.audit_heads()
    assert finding.kind == "audit_heads" and finding.details["head_ids"] == [forged.pk]
    assert services.alerts_check(["audit_heads"]) == {"audit_heads": (1, 1)}
    assert Alert.objects.get(kind="audit_heads").severity == "critical"


def test_a_forged_head_holding_the_logs_size_is_not_published(signed, administrator, audit_head_sink):
    admin_client = client_for(administrator)  # its log-in is an event (auth.logged_in): before the forged size
    audit_record(actor="system:test", action="test.event", object_type="t", object_id="late")
    audit_sequence()
    forge(AuditLeaf.objects.count())  # the size of the whole log, which audit_head would sign
    published = sorted(audit_head_sink.iterdir())
    with pytest.raises(CommandError, match="not signed by our key"):
        call_command("audit_head", stdout=StringIO())
    response = admin_client.get(reverse("admin:audit_auditevent_head"))
    assert response.status_code == 409 and "not signed by our key" in response.json()["head"][0]
    assert sorted(audit_head_sink.iterdir()) == published


@pytest.mark.parametrize("query", [
    {"event_id": 2**70}, {"event_id": 1, "tree_size": 2**70}, {"event_id": -1}, {"event_id": "1e3"},
])
def test_no_inclusion_request_answers_500(signed, as_support, query):
    assert as_support.get(INCLUSION, query).status_code == 400


@pytest.mark.parametrize("query", [{"first": 2**70}, {"first": 0, "second": 2**70}, {"first": 1, "second": 0}])
def test_no_consistency_request_answers_500(signed, as_support, query):
    assert as_support.get(CONSISTENCY, query).status_code in (400, 409)


@pytest.mark.owner
def test_a_damaged_log_is_a_conflict_not_a_500(signed, as_support):
    from tests.audit.test_verify import as_insider

    events, genuine = signed
    with as_insider() as cursor:
        cursor.execute('DELETE FROM audit_auditleaf WHERE "index" = 4')
        cursor.execute('DELETE FROM audit_auditnode')
    for url, query in ((INCLUSION, {"event_id": events[0].pk}), (CONSISTENCY, {"first": 3})):
        response = as_support.get(url, query)
        assert response.status_code == 409 and "damaged" in str(response.json())
