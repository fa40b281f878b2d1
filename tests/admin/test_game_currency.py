"""A game's currency is frozen once it has taken a bet, in the admin too; and the dashboard never adds
amounts of two currencies."""

from contextlib import suppress
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from approvals.models import Approval
from games import services as game_services
from games.models import GameInstance
from tests.admin.helpers import admin_url, change_form, snapshot
from tests.aggregates_helpers import settle  # noqa: F401

pytestmark = pytest.mark.django_db

DASHBOARD = "/admin/dashboard/"


def test_the_change_form_refuses_a_new_currency_once_the_game_has_taken_a_bet(as_operator, game, player, play):
    play(bets=[(player, "BANKER", "10.00")])
    before = snapshot()
    response = as_operator.post(admin_url(game, "change"), change_form(game, currency="EUR", reason="euro table"))
    assert response.status_code == 200, "the form is shown again with its error"
    errors = response.context["adminform"].form.errors
    assert list(errors) == ["currency"] and "USD" in errors["currency"][0]
    assert snapshot() == before and not Approval.objects.exists()


def test_the_change_form_changes_the_currency_of_a_game_that_took_no_bet(as_operator, game):
    response = as_operator.post(admin_url(game, "change"), change_form(game, currency="EUR", reason="euro table"))
    assert response.status_code == 302
    assert GameInstance.objects.get().currency == "EUR"


def test_the_dashboard_keeps_each_currency_to_its_own_games(as_operator, operator, game, funded_account, play,
                                                            settle):  # noqa: F811
    euro_table = game_services.game_create(actor=operator, slug="euro-table", name="Euro table", currency="EUR",
                                           min_bet=Decimal("1.00"), max_bet=Decimal("100.00"))
    dollars, euros = funded_account("dollars", "500.00"), funded_account("euros", "500.00", currency="EUR")
    play(bets=[(dollars, "BANKER", "10.00")])
    play(bets=[(euros, "PLAYER", "7.00")], game_=euro_table)
    settle()
    # What an approved change would apply: the USD game, with its bets, moved to EUR. Refused.
    with suppress(ValidationError):
        game_services.game_update(game_id=game.pk, actor=operator, reason="x", changes={"currency": "EUR"})

    boards = {currency: as_operator.get(DASHBOARD, {"currency": currency}).context["board"]
              for currency in ("USD", "EUR")}
    assert {row.slug for row in boards["USD"].per_game} == {"main-table"}
    assert {row.slug for row in boards["EUR"].per_game} == {"euro-table"}
    assert boards["USD"].overall.handle == Decimal("10.00") and boards["USD"].overall.bets == 1
    assert boards["EUR"].overall.handle == Decimal("7.00") and boards["EUR"].overall.bets == 1
    assert sum(boards["EUR"].series["handle"]) == 7
    # One game alone is shown in its own currency, whatever currency the filter names.
    alone = as_operator.get(DASHBOARD, {"currency": "USD", "game": "euro-table"}).context["board"]
    assert alone.currency == "EUR" and alone.overall.handle == Decimal("7.00")
