"""The rough edges a new user met in the back-office, each as it would fail before."""

import csv
import io
import json
import re
from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from approvals.models import Approval
from backoffice.admin.html import money
from backoffice.roles import Role
from games import services as game_services
from games.choices import RoundStatus
from games.models import Round
from settlement.reports import duration_text
from tests.admin.conftest import client_for
from tests.admin.helpers import admin_url
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def dealt(play, player, integration):
    round_ = play(bets=[(player, "BANKER", "10.00")], deal=False)
    return game_services.round_deal(round_id=round_.pk, actor=integration)


# 1, 2: the index's support tools are styled; every page has the site's icon; /favicon.ico answers.

def test_the_index_loads_the_stylesheet_that_lays_out_its_support_tools(as_operator):
    page = as_operator.get("/admin/").content.decode()
    assert "backoffice/admin.css" in page and 'id="support-tools"' in page


def test_admin_and_public_pages_link_the_icon_and_favicon_ico_leads_to_it(as_operator, client):
    for page in (as_operator.get("/admin/"), Client().get("/admin/login/"), client.get("/")):
        assert 'rel="icon" href="/static/backoffice/favicon.svg"' in page.content.decode()
    response = client.get("/favicon.ico")
    assert (response.status_code, response["Location"]) == (301, "/static/backoffice/favicon.svg")


# 3: /api/v1/ is an index of the API's collections, the same for anyone, with nothing per object.

def test_the_api_root_is_a_json_index_that_leaks_nothing(api_as, operator):
    anonymous = api_as(None).get("/api/v1/")
    assert anonymous.status_code == 200 and anonymous["Content-Type"].startswith("application/json")
    index = anonymous.json()
    assert index["resources"]["game-list"] == "http://testserver/api/v1/games/"
    assert index["resources"]["account-list"] == "http://testserver/api/v1/accounts/"
    assert index["schema"] == "http://testserver/api/schema/" and index["docs"] == "http://testserver/api/docs/"
    assert not any("<" in url for url in index["resources"].values())  # no route with an id or a name
    assert api_as(operator).get("/api/v1/").json() == index


# 4: four eyes, discoverable.

def test_forms_whose_change_may_be_held_say_so(as_operator, game, dealt, player, settings):
    hint = "Four eyes:"
    assert hint in as_operator.get(admin_url(game, "change")).content.decode()
    assert "10,000.00 or more" in as_operator.get(admin_url(player, "adjust")).content.decode()
    assert hint in as_operator.get(admin_url(dealt, "void")).content.decode()
    settings.APPROVAL_ACTIONS = []
    assert hint not in as_operator.get(admin_url(player, "adjust")).content.decode()


def test_approvals_have_human_titles_a_count_on_the_index_and_no_approve_for_the_proposer(
        as_operator, dealt, player):
    as_operator.post(admin_url(player, "adjust"), {"amount": "12000.00", "reason": "Jackpot"})
    as_operator.post(admin_url(dealt, "void"), {"reason": "Misdeal"})
    adjustment = Approval.objects.get(action="account.adjust")
    queue = as_operator.get(admin_url(Approval)).content.decode()
    assert f"Adjust account {player.external_id} by 12,000.00 {player.currency}" in queue
    assert f"Void round #{dealt.pk} of game {dealt.game.slug}" in queue
    own = as_operator.get(admin_url(adjustment, "change")).content.decode()
    assert "You proposed this request" in own and admin_url(adjustment, "approve") not in own
    second = client_for(make_user("oscar-operator", Role.OPERATOR))
    page = second.get(admin_url(adjustment, "change")).content.decode()
    assert "You proposed this request" not in page and admin_url(adjustment, "approve") in page
    assert "2 requests wait for a second person" in second.get("/admin/").content.decode()


# 5: an applied request shows in the changed object's History.

def test_an_approved_adjustment_is_in_the_accounts_change_log(as_operator, player):
    as_operator.post(admin_url(player, "adjust"), {"amount": "12000.00", "reason": "Jackpot"})
    approval = Approval.objects.get()
    second = client_for(make_user("oscar-operator", Role.OPERATOR))
    second.post(admin_url(approval, "approve"), {"reason": "Seen the win"})
    assert Approval.objects.get().status == "applied"
    history = as_operator.get(admin_url(player, "history")).content.decode()
    assert f"Adjust account {player.external_id} by 12,000.00 {player.currency}" in history
    assert f"request #{approval.pk} by olivia-operator, approved: Seen the win" in history


# 6: the round page links the public page of its pair once revealed.

def test_the_round_page_links_the_public_pair_page_once_revealed(as_support, operator, game, play, player):
    round_ = play(bets=[(player, "BANKER", "10.00")])
    public = f'href="/pairs/{round_.seed_pair.server_seed_hash}/"'
    assert public not in as_support.get(admin_url(round_, "change")).content.decode()
    game_services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
    assert public in as_support.get(admin_url(round_, "change")).content.decode()


# 7: money in lists with separators.

def test_money_in_lists_has_thousands_separators():
    assert money(Decimal("58131.4")) == "58,131.40"
    assert money(Decimal("-120")) == "−120.00" and money(None) == "0.00"


def test_the_game_form_writes_its_limit_with_separators(as_operator, game):
    assert "At most 1,000,000.00." in as_operator.get(admin_url(game, "change")).content.decode()


def test_the_ledger_list_shows_amounts_with_separators_and_currency(as_operator, funded_account):
    funded_account("player-rich", "58131.40")
    page = as_operator.get("/admin/wallet/ledgerentry/").content.decode()
    assert "58,131.40 USD" in page and "58131.40" not in page


def test_recall_and_account_history_write_times_with_their_zone(as_support, play, player):
    play(bets=[(player, "BANKER", "10.00")])
    recall = as_support.get("/admin/games/round/recall/", {"account": player.external_id}).content.decode()
    history = as_support.get(admin_url(player, "account_history")).content.decode()
    for page in (recall, history):
        assert re.search(r"<td>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC</td>", page)
        assert not re.search(r"<td>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}</td>", page)


# 8: the admin and the public page count a pair's rounds alike, the voided ones labelled.

def test_admin_and_public_page_count_a_pairs_rounds_alike(as_support, operator, game, play, player, client):
    rounds = [play(bets=[(player, "BANKER", "1.00")]) for _ in range(3)]
    voided_at = rounds[1].dealt_at  # voided after its deal (the void itself waits for a second person)
    Round.objects.filter(pk=rounds[1].pk).update(status=RoundStatus.VOID, voided_at=voided_at)
    pair, _new = game_services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
    assert "3 rounds, 1 voided" in client.get("/").content.decode()
    assert "3 rounds, 1 voided" in client.get(f"/pairs/{pair.server_seed_hash}/").content.decode()
    assert "3 rounds, 1 voided" in as_support.get(admin_url(pair, "change")).content.decode()
    assert "3 rounds, 1 voided" in as_support.get(admin_url(game, "change")).content.decode()


def test_the_seed_pair_list_counts_no_rounds(as_support, game, play, player):
    """Only a pair's own page shows its rounds: the list would count every round of every pair."""
    play(bets=[(player, "BANKER", "1.00")])
    with CaptureQueriesContext(connection) as queries:
        page = as_support.get(reverse("admin:games_seedpair_changelist"))
    assert page.status_code == 200 and game.seed_pairs.get().server_seed_hash[:16] in page.content.decode()
    assert not [query["sql"] for query in queries if '"games_round"' in query["sql"]]


def test_api_index_json_has_no_secret(api_as, game):
    assert game.seed_pairs.get().server_seed not in json.dumps(api_as(None).get("/api/v1/").json())


# 10: the settlement lag in seconds, in the table as in the chart.

def test_the_lag_is_written_in_seconds():
    assert duration_text(42) == "0.042 s" and duration_text(95_000) == "95.0 s"


# 11: an account's whole history in one CSV, linked from its Ledger history page.

def test_the_account_statement_has_every_entry_with_its_bets_stake_and_payout(as_support, play, player):
    round_ = play(bets=[(player, "BANKER", "10.00")])
    bet = round_.bets.get()
    history = as_support.get(admin_url(player, "account_history")).content.decode()
    url = reverse("admin:wallet_account_statement", args=[player.pk])
    assert f'href="{url}"' in history
    response = as_support.get(url)
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0][:5] == ["entry_id", "created_at", "kind", "amount", "balance_after"]
    assert rows[1][2] == "ADJUSTMENT" and rows[1][-1] == "test deposit"  # oldest first: the deposit
    stake_row = rows[2]
    assert stake_row[5:10] == [str(bet.pk), str(round_.pk), round_.game.slug, "BANKER", "10.00"]
    assert len(rows) == 1 + player.ledger.count()
