"""Currencies in the admin: the game form refuses an unknown currency and limits finer than the
currency's unit, each on its field; the dashboard of a currency adds its own games only, and writes
its amounts at the currency's places: yen without decimals, dinars with three."""

from decimal import Decimal

import pytest

from games import services as game_services
from games.models import GameInstance
from tests.admin.helpers import GAME_FORM, admin_url, snapshot
from tests.aggregates_helpers import settle  # noqa: F401

pytestmark = pytest.mark.django_db

DASHBOARD = "/admin/dashboard/"


@pytest.mark.parametrize("overrides,field", [
    ({"currency": "XYZ"}, "currency"),
    ({"currency": "JPY", "min_bet": "100.5", "max_bet": "1000"}, "min_bet"),
    ({"currency": "KWD", "min_bet": "1", "max_bet": "10.0005"}, "max_bet"),
])
def test_the_game_form_refuses_on_the_field(as_operator, overrides, field):
    before = snapshot()
    response = as_operator.post(admin_url(GameInstance, "add"), {**GAME_FORM, "reason": "new", **overrides})
    assert response.status_code == 200, "the form is shown again with its error"
    assert list(response.context["adminform"].form.errors) == [field]
    assert snapshot() == before


def test_each_currency_has_its_board_at_its_own_places(as_operator, operator, funded_account, play,
                                                       settle):  # noqa: F811
    yen = game_services.game_create(actor=operator, slug="yen-table", name="Yen table", currency="JPY",
                                    min_bet=Decimal("100"), max_bet=Decimal("100000"))
    dinar = game_services.game_create(actor=operator, slug="dinar-table", name="Dinar table", currency="KWD",
                                      min_bet=Decimal("0.5"), max_bet=Decimal("1000"))
    yen_player = funded_account("yen-player", "50000", currency="JPY")
    dinar_player = funded_account("dinar-player", "50", currency="KWD")
    play(bets=[(yen_player, "BANKER", "1234"), (yen_player, "PLAYER", "100")], game_=yen)
    play(bets=[(dinar_player, "TIE", "1.001")], game_=dinar)
    settle()

    page = as_operator.get(DASHBOARD, {"currency": "JPY"})
    board = page.context["board"]
    assert [row.slug for row in board.per_game] == ["yen-table"]
    assert board.overall.handle == Decimal("1334") and board.overall.bets == 2
    overall = page.content.decode().split('id="dashboard-overall"')[1].split("</tr>")[0]
    assert "1,334<" in overall and "1,334.00" not in overall

    page = as_operator.get(DASHBOARD, {"currency": "KWD"})
    board = page.context["board"]
    assert [row.slug for row in board.per_game] == ["dinar-table"]
    assert board.overall.handle == Decimal("1.001")
    assert ">1.001<" in page.content.decode().split('id="dashboard-overall"')[1].split("</tr>")[0]
