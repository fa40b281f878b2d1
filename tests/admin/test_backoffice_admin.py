"""The shared admin infrastructure (backoffice.admin): object pages of missing objects, service errors
as text, and list filters that walk an index only where an admin asks for them."""

import pytest
from django.contrib.admin.filters import AllValuesFieldListFilter
from django.core.exceptions import ValidationError
from django.urls import reverse

from backoffice.admin.filters import IndexedValuesFieldListFilter
from backoffice.admin.html import service_error_messages, service_error_text
from core.errors import Conflict
from games.models import GameInstance, Round
from tests.admin.helpers import admin_url
from wallet.models import Account

pytestmark = pytest.mark.django_db

MISSING = 987654


@pytest.mark.parametrize("model, action", [
    (GameInstance, "rotate_seed"), (Round, "void"), (Round, "verify"), (Account, "adjust"),
    (Account, "account_history"),
])
def test_an_object_page_of_a_missing_object_sends_to_the_index_with_a_message(as_admin, model, action):
    response = as_admin.get(admin_url(model, action, MISSING), follow=True)

    assert response.redirect_chain == [(reverse("admin:index"), 302)]
    messages = [str(message) for message in response.context["messages"]]
    assert messages == [f"{model._meta.verbose_name} with ID “{MISSING}” doesn’t exist. Perhaps it was deleted?"]


def test_an_object_page_without_its_permission_is_forbidden(as_support, game):
    assert as_support.get(admin_url(game, "rotate_seed")).status_code == 403


def test_service_errors_read_the_same_whatever_raised_them():
    conflict = Conflict("round", "The round is no longer open.")
    assert service_error_messages(conflict) == {"round": ["The round is no longer open."]}
    assert service_error_text(conflict) == "round: The round is no longer open."
    by_field = ValidationError({"client_seed": ["Too long."], "__all__": ["Nothing changed."]})
    assert service_error_text(by_field) == "client seed: Too long.; Nothing changed."
    assert service_error_messages(ValidationError("No.")) == {None: ["No."]}


def filters_of(client, model) -> dict:
    changelist = client.get(admin_url(model)).context["cl"]
    return {spec.field_path: type(spec) for spec in changelist.filter_specs if hasattr(spec, "field_path")}


def test_only_the_columns_an_admin_names_list_their_values_by_index(as_admin, game):
    assert filters_of(as_admin, Round)["decks"] is IndexedValuesFieldListFilter
    assert filters_of(as_admin, GameInstance)["currency"] is AllValuesFieldListFilter
    assert filters_of(as_admin, Account)["currency"] is AllValuesFieldListFilter
