"""Who configures a client's endpoints: the client itself through the API, or operators (and
administrators) in the admin, for an integration client. The owner is always an active integration
client: the admin offers no one else, and the service refuses anyone else."""

import pytest
from django.contrib.auth.models import User

from audit.models import AuditEvent
from backoffice.roles import Role
from tests.admin.conftest import client_for
from tests.admin.helpers import admin_url
from tests.conftest import make_user
from webhooks.models import Endpoint

pytestmark = pytest.mark.django_db
URL = "/api/v1/webhooks/endpoints/"


@pytest.fixture
def everyone(operator, support, integration, administrator, nobody):
    retired = make_user("retired-server", Role.INTEGRATION)
    User.objects.filter(pk=retired.pk).update(is_active=False)
    return [operator, support, integration, administrator, nobody, retired]


def test_an_operator_configures_an_endpoint_for_an_integration_client(operator, integration, everyone):
    client = client_for(operator)
    page = client.get(admin_url(Endpoint, "add"))
    assert page.status_code == 200
    assert list(page.context["adminform"].form.fields["owner"].queryset) == [integration]  # no staff, no retired
    form = {"owner": integration.pk, "url": "https://hooks.example/", "events": ["round.voided"], "description": "",
            "active": "on"}
    for blank in ("", "   "):
        refused = client.post(admin_url(Endpoint, "add"), {**form, "reason": blank})
        assert refused.status_code == 200 and refused.context["adminform"].form.errors["reason"]
    assert not Endpoint.objects.exists()
    response = client.post(admin_url(Endpoint, "add"), {**form, "reason": " New receiver "}, follow=True)
    assert "shown once" in response.content.decode()
    endpoint = Endpoint.objects.get()
    assert endpoint.owner == integration
    created = AuditEvent.objects.get(action="webhook.endpoint_created")
    assert created.actor == operator.username and created.reason == "New receiver"
    change = client.get(admin_url(endpoint, "change"))
    assert change.status_code == 200 and "owner" not in change.context["adminform"].form.fields  # fixed now
    assert "reason" not in change.context["adminform"].form.fields  # asked when the endpoint is made


@pytest.mark.parametrize("owner_name", ["operator", "support", "administrator", "nobody", "retired"])
def test_the_admin_offers_no_one_but_integration_clients(administrator, everyone, owner_name):
    owner = {user.username: user for user in everyone}[{
        "operator": "olivia-operator", "support": "sam-support", "administrator": "ada-admin", "nobody": "nobody",
        "retired": "retired-server"}[owner_name]]
    form = {"owner": owner.pk, "url": "https://hooks.example/", "events": ["round.voided"], "description": "",
            "active": "on"}
    response = client_for(administrator).post(admin_url(Endpoint, "add"), form)
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert not Endpoint.objects.exists()


def test_staff_registering_through_the_api_are_told_where_to_configure_one(api_as, operator):
    response = api_as(operator).post(URL, {"reason": "new receiver",
                                           "url": "https://hooks.example/", "events": ["round.voided"]})
    assert response.status_code == 403 and "in the admin" in response.json()["detail"], response.content
    assert not Endpoint.objects.exists()
