"""Why each bet won or lost, wherever the admin shows bets: its event on the round and the multiplier
it was paid at ("lost", "push"), the paytable it settled on in the title; the bet's page shows a side
bet's paytable; the bets and ledger exports carry the event. The deals are chosen
(tests/games/side_bet_rounds.py), so every event and payment below is written out by hand."""

import csv
import io
import re
from decimal import Decimal
from html import unescape

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from games import services as game_services
from games.choices import BetStatus
from games.models import Bet
from tests.admin.helpers import admin_url
from tests.games.side_bet_rounds import DEALS, deal_as, enable_side_bets, open_with_bets, play_side_bets
from wallet.models import LedgerEntry

pytestmark = pytest.mark.django_db

# What each bet (10.00 on each type) shows on each deal: "event: paid".
SHOWN = {
    "pair_and_natural": {"PLAYER": "Banker: lost", "BANKER": "Banker: × 1.95", "PLAYER_PAIR": "Pair: × 12",
                         "DRAGON_BONUS_BANKER": "Natural win: × 2"},
    "natural_tie": {"PLAYER": "Tie: push", "BANKER": "Tie: push", "PLAYER_PAIR": "No pair: lost",
                    "DRAGON_BONUS_BANKER": "Natural tie: push"},
    "banker_by_five": {"PLAYER": "Banker: lost", "BANKER": "Banker: × 1.95", "PLAYER_PAIR": "No pair: lost",
                       "DRAGON_BONUS_BANKER": "Win by 5: lost"},
}
# The paytable each bet settles on, on hover.
PAYTABLES = {
    "PLAYER": "Player × 2 · Tie push · otherwise lost",
    "BANKER": "Banker × 1.95 · Tie push · otherwise lost",
    "PLAYER_PAIR": "Pair × 12 · otherwise lost",
    "DRAGON_BONUS_BANKER": "Natural win × 2 · Win by 9 × 31 · Natural tie push · otherwise lost",
}
OUTCOME = re.compile(r'<span class="pf-bet-outcome" data-event="([A-Z0-9_]+)" title="([^"]*)">([^<]*)</span>')


@pytest.fixture
def side_game(game):
    return enable_side_bets(game)


@pytest.fixture
def played(side_game, integration, player):
    """One settled round of each deal, player-1 betting 10.00 on each bet type."""
    return {deal: play_side_bets(side_game, integration, player, deal) for deal in DEALS}


def outcomes_by_bet(content: str, tag: str = "tr") -> dict:
    """{bet id: (event, title, text)} of each table row (or list item) linking a bet's page and
    showing its outcome."""
    content = re.sub(r"\s+", " ", content)
    shown = {}
    for row in re.finditer(rf"<{tag}[^>]*>(?:(?!</{tag}>).)*?</{tag}>", content):
        bet = re.search(r"/admin/games/bet/(\d+)/change/", row.group(0))
        outcome = OUTCOME.search(row.group(0))
        if bet and outcome:
            event, title, text = outcome.groups()
            shown[int(bet.group(1))] = (event, unescape(title), unescape(text))
    return shown


def assert_paid_as_shown(bet: Bet, text: str):
    """The page's "paid" agrees with the bet's settlement: its status, and its payout at the multiplier."""
    paid = text.rsplit(": ", 1)[1]
    if paid == "lost":
        assert bet.status == BetStatus.LOST and bet.payout == 0
    elif paid == "push":
        assert bet.status == BetStatus.PUSH and bet.payout == bet.stake
    else:
        assert bet.status == BetStatus.WON and bet.payout == bet.stake * Decimal(paid.removeprefix("× "))


# --- The round page -----------------------------------------------------------------------------

def test_the_round_page_shows_each_bets_event_and_what_it_was_paid_at(as_support, played):
    for deal, round_ in played.items():
        content = as_support.get(admin_url(round_, "change")).content.decode()

        shown = outcomes_by_bet(content)
        bets = list(Bet.objects.filter(round=round_))
        assert set(shown) == {bet.pk for bet in bets}
        for bet in bets:
            event, title, text = shown[bet.pk]
            assert event == DEALS[deal]["events"][bet.bet_type]
            assert text == SHOWN[deal][bet.bet_type], (deal, bet.bet_type)
            assert title == PAYTABLES[bet.bet_type]
            assert_paid_as_shown(bet, text)


def test_a_bet_dealt_but_not_settled_shows_what_it_will_be_paid(as_support, side_game, integration, player):
    round_ = deal_as(open_with_bets(side_game, integration, player), integration, "pair_and_natural")

    shown = outcomes_by_bet(as_support.get(admin_url(round_, "change")).content.decode())

    texts = {Bet.objects.get(pk=bet_id).bet_type: text for bet_id, (_event, _title, text) in shown.items()}
    assert texts["PLAYER_PAIR"] == "Pair: × 12 once settled"
    assert texts["PLAYER"] == "Banker: lost once settled"


def test_a_bet_on_a_dealt_round_voided_shows_its_event_and_the_refund(as_support, side_game, integration, operator,
                                                                      player):
    round_ = deal_as(open_with_bets(side_game, integration, player), integration, "pair_and_natural")
    game_services.round_void(round_id=round_.pk, actor=operator, reason="Misdeal")

    shown = outcomes_by_bet(as_support.get(admin_url(round_, "change")).content.decode())

    assert {Bet.objects.get(pk=bet_id).bet_type: text for bet_id, (_event, _title, text) in shown.items()} == {
        "PLAYER": "Banker: refunded", "BANKER": "Banker: refunded", "PLAYER_PAIR": "Pair: refunded",
        "DRAGON_BONUS_BANKER": "Natural win: refunded"}


def test_a_bet_on_a_round_not_yet_dealt_shows_no_event(as_support, side_game, integration, player):
    round_ = open_with_bets(side_game, integration, player, bet_types=("PLAYER_PAIR",))

    content = as_support.get(admin_url(round_, "change")).content.decode()

    assert "pf-bet-outcome" not in content
    assert re.search(r'<td class="field-event_paid">\s*<p>—</p>', content)


def test_the_round_page_reads_no_more_for_more_bets(as_support, side_game, integration, player):
    one = play_side_bets(side_game, integration, player, "natural_tie", bet_types=("PLAYER_PAIR",))
    four = play_side_bets(side_game, integration, player, "natural_tie")

    counts = []
    for round_ in (one, four):
        with CaptureQueriesContext(connection) as queries:
            assert as_support.get(admin_url(round_, "change")).status_code == 200
        counts.append(len(queries.captured_queries))

    assert counts[0] == counts[1]


# --- The bet's page -------------------------------------------------------------------------------

def test_a_side_bets_page_shows_its_paytable_and_its_event(as_support, played):
    bet = Bet.objects.get(round=played["pair_and_natural"], bet_type="DRAGON_BONUS_BANKER")

    content = re.sub(r"\s+", " ", as_support.get(admin_url(bet, "change")).content.decode())

    table = re.search(r'<table class="pf-bet-paytable">.*?</table>', content).group(0)
    rows = re.findall(r'<tr data-event="([A-Z0-9_]+)"><th scope="row">(.*?)</th><td>(.*?)</td></tr>', table)
    assert [(event, label, unescape(paid)) for event, label, paid in rows] == [
        ("NATURAL_WIN", "Natural win", "× 2"), ("WIN_BY_9", "Win by 9", "× 31"), ("NATURAL_TIE", "Natural tie", "push")]
    assert "Any other event loses." in content
    [(event, _title, text)] = OUTCOME.findall(content)
    assert (event, unescape(text)) == ("NATURAL_WIN", "Natural win: × 2")
    assert 'name="paytable"' not in content  # read-only


def test_a_main_bets_page_shows_no_paytable_of_its_own(as_support, played):
    bet = Bet.objects.get(round=played["natural_tie"], bet_type="PLAYER")

    content = as_support.get(admin_url(bet, "change")).content.decode()

    assert "pf-bet-paytable" not in content
    [(event, title, text)] = OUTCOME.findall(content)
    assert (event, unescape(title), unescape(text)) == ("TIE", PAYTABLES["PLAYER"], "Tie: push")


# --- The account's history ------------------------------------------------------------------------

def test_the_account_history_shows_why_each_bet_won_or_lost(as_support, played, player):
    content = as_support.get(admin_url(player, "account_history")).content.decode()

    shown = outcomes_by_bet(content)
    bets = {bet.pk: bet for bet in Bet.objects.filter(account=player).select_related("round")}
    assert set(shown) == set(bets)
    deal_of = {round_.pk: deal for deal, round_ in played.items()}
    for bet_id, (event, title, text) in shown.items():
        bet = bets[bet_id]
        deal = deal_of[bet.round_id]
        assert (event, title, text) == (DEALS[deal]["events"][bet.bet_type], PAYTABLES[bet.bet_type],
                                        SHOWN[deal][bet.bet_type])
    # Each ledger row of a bet names its outcome too: in the bets table and the ledger, once each.
    assert len(OUTCOME.findall(content)) == len(bets) + LedgerEntry.objects.filter(bet_id__in=bets).count()


# --- Exports -------------------------------------------------------------------------------------

def csv_rows(response) -> list[dict]:
    assert response.status_code == 200
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


def test_the_bets_export_carries_each_bets_event_once_dealt(as_support, played, side_game, integration, player):
    waiting = open_with_bets(side_game, integration, player, bet_types=("PLAYER_PAIR",))

    rows = csv_rows(as_support.get(admin_url(Bet, "export")))

    assert list(rows[0])[-3:] == ["round_status", "round_outcome", "event"]
    deal_of = {round_.pk: deal for deal, round_ in played.items()}
    for row in rows:
        round_id = int(row["round_id"])
        expected = "" if round_id == waiting.pk else DEALS[deal_of[round_id]]["events"][row["bet_type"]]
        assert row["event"] == expected
    assert len(rows) == Bet.objects.count()


@pytest.mark.parametrize("url", ["ledger", "statement"])
def test_the_ledger_exports_carry_the_event_of_each_entrys_bet(as_support, played, player, url):
    url = (admin_url(LedgerEntry, "export") if url == "ledger"
           else reverse("admin:wallet_account_statement", args=[player.pk]))

    rows = csv_rows(as_support.get(url))

    assert list(rows[0])[-2:] == ["bet_event", "reason"]
    bets = {bet.pk: bet for bet in Bet.objects.all()}
    deal_of = {round_.pk: deal for deal, round_ in played.items()}
    for row in rows:
        bet = bets.get(int(row["bet_id"])) if row["bet_id"] else None
        assert row["bet_event"] == ("" if bet is None else DEALS[deal_of[bet.round_id]]["events"][bet.bet_type])
    assert {row["bet_event"] for row in rows} >= {"", "PAIR", "NATURAL_TIE", "WIN_BY_5", "TIE"}


def test_the_bet_list_shows_why_each_bet_won_or_lost_without_a_query_per_bet(as_support, played):
    with CaptureQueriesContext(connection) as queries:
        content = as_support.get(admin_url(Bet)).content.decode()

    shown = outcomes_by_bet(content)
    bets = list(Bet.objects.all())
    assert set(shown) == {bet.pk for bet in bets}
    deal_of = {round_.pk: deal for deal, round_ in played.items()}
    for bet in bets:
        assert shown[bet.pk][2] == SHOWN[deal_of[bet.round_id]][bet.bet_type]
    assert len(queries.captured_queries) < len(bets)


# --- Round recall ----------------------------------------------------------------------------------

def test_recall_by_account_shows_the_accounts_bets_on_each_round_and_why(as_support, played, side_game,
                                                                         integration, player, funded_account):
    other = funded_account("player-2", "500.00")
    deal_as(open_with_bets(side_game, integration, other, bet_types=("DRAGON_BONUS_BANKER",)), integration,
            "natural_tie")

    response = as_support.get(reverse("admin:games_round_recall"), {"account": "player-1"})

    rows = response.context["rows"]
    assert {row["round"].pk for row in rows} == {round_.pk for round_ in played.values()}
    deal_of = {round_.pk: deal for deal, round_ in played.items()}
    for row in rows:
        bets = Bet.objects.filter(round=row["round"], account=player).order_by("pk")
        assert [bet.pk for _url, bet, _stake, _outcome in row["account_bets"]] == [bet.pk for bet in bets]
    shown = outcomes_by_bet(response.content.decode(), tag="li")
    for bet in Bet.objects.filter(account=player):
        assert shown[bet.pk][2] == SHOWN[deal_of[bet.round_id]][bet.bet_type]
    assert not Bet.objects.filter(account=other, pk__in=shown).exists()
    assert "The account's bets: event · paid" in response.content.decode()


def test_recall_without_an_account_lists_no_bets(as_support, played):
    response = as_support.get(reverse("admin:games_round_recall"), {"game": "main-table"})

    assert response.context["rows"] and all(row["account_bets"] == [] for row in response.context["rows"])
    assert "pf-recall-bets" not in response.content.decode()
