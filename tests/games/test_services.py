"""The business actions on games, seed pairs, rounds and bets."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from audit.models import AuditEvent
from audit.services import audit_sequence
from core.errors import Conflict
from games import services
from games.choices import BetStatus, GameStatus, RoundStatus
from games.engine import play_round, server_seed_hash
from games.models import Bet, GameInstance, Round, SeedPair
from wallet.choices import LedgerKind
from wallet.models import LedgerEntry

pytestmark = pytest.mark.django_db


def place(round_, account, bet_type="PLAYER", stake="10.00", key=None, client=None):
    return services.bet_place(
        round_id=round_.pk, account_external_id=account.external_id, bet_type=bet_type, stake=stake,
        idempotency_key=key or f"{round_.pk}-{account.external_id}-{bet_type}-{stake}", client=client,
    )


class TestGameConfiguration:
    def test_create_starts_one_active_seed_pair_and_audits(self, game):
        pair = SeedPair.objects.get(game=game)
        assert pair.revealed_at is None
        assert pair.server_seed_hash == server_seed_hash(pair.server_seed)
        assert AuditEvent.objects.filter(action="game.created", object_id=str(game.pk)).exists()

    def test_update_requires_a_reason_and_writes_nothing_without_one(self, game, operator):
        with pytest.raises(ValidationError) as error:
            services.game_update(game_id=game.pk, actor=operator, reason="  ", changes={"tie_multiplier": "8"})
        assert "reason" in error.value.message_dict
        game.refresh_from_db()
        assert game.tie_multiplier == Decimal("9.0")
        assert not AuditEvent.objects.filter(action="game.configured").exists()

    def test_update_records_before_after_and_reason(self, game, operator):
        services.game_update(game_id=game.pk, actor=operator, reason="promo",
                             changes={"tie_multiplier": Decimal("8.5"), "status": GameStatus.SUSPENDED})
        configured = AuditEvent.objects.get(action="game.configured")
        assert configured.before == {"tie_multiplier": "9.0000"}
        assert configured.after == {"tie_multiplier": "8.5000"}
        assert configured.reason == "promo"
        assert configured.actor == operator.username
        status = AuditEvent.objects.get(action="game.status_changed")
        assert status.after == {"status": "suspended"}

    @pytest.mark.parametrize("field,value", [
        ("player_multiplier", Decimal("0.99")),
        ("banker_multiplier", Decimal("1000.0001")),
        ("tie_multiplier", Decimal("1.23456")),
        ("decks", 9),
        ("decks", 0),
        ("min_bet", Decimal("0")),
        ("max_bet", Decimal("0.50")),  # below min_bet 1.00
        ("currency", "usd"),
    ])
    def test_update_rejects_invalid_configuration(self, game, operator, field, value):
        with pytest.raises(ValidationError) as error:
            services.game_update(game_id=game.pk, actor=operator, reason="x", changes={field: value})
        assert field in error.value.message_dict
        assert GameInstance.objects.get(pk=game.pk).configuration() == game.configuration()

    def test_update_rejects_fields_that_are_not_configuration(self, game, operator):
        with pytest.raises(ValidationError) as error:
            services.game_update(game_id=game.pk, actor=operator, reason="x", changes={"slug": "other"})
        assert "slug" in error.value.message_dict


class TestSeedLifecycle:
    def test_rounds_take_consecutive_nonces_from_the_active_pair(self, game, integration):
        rounds = [services.round_open(game_id=game.pk, actor=integration) for _ in range(3)]
        assert [r.nonce for r in rounds] == [0, 1, 2]
        assert {r.seed_pair_id for r in rounds} == {SeedPair.objects.get(game=game).pk}
        assert SeedPair.objects.get(game=game).next_nonce == 3

    def test_rotation_with_a_round_open_retires_now_and_reveals_after_the_deal(self, game, operator, integration):
        round_ = services.round_open(game_id=game.pk, actor=integration)
        retired, new = services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
        assert retired.retired_at and not retired.is_revealed and retired.revealed_server_seed is None
        assert services.round_open(game_id=game.pk, actor=integration).seed_pair_id == new.pk
        assert retired.server_seed not in repr(list(AuditEvent.objects.values()))
        services.round_deal(round_id=round_.pk, actor=integration)
        retired.refresh_from_db()
        assert retired.is_revealed and retired.revealed_at >= retired.retired_at
        reveal = AuditEvent.objects.get(action="seed_pair.revealed")
        assert (reveal.actor, reveal.after["server_seed"]) == ("system:seed-rotation", retired.server_seed)
        assert AuditEvent.objects.get(action="seed_pair.retired").after["open_rounds"] == 1

    def test_the_reveal_waits_for_the_last_open_round_voided_or_dealt(self, game, operator, integration):
        first, second = (services.round_open(game_id=game.pk, actor=integration) for _ in range(2))
        retired, _new = services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
        services.round_void(round_id=first.pk, actor=operator, reason="table fault")
        retired.refresh_from_db()
        assert not retired.is_revealed
        services.round_void(round_id=second.pk, actor=operator, reason="table fault")
        retired.refresh_from_db()
        assert retired.is_revealed

    def test_a_round_of_a_revealed_pair_is_never_dealt(self, game, operator, integration):
        round_ = services.round_open(game_id=game.pk, actor=integration)
        SeedPair.objects.filter(pk=round_.seed_pair_id).update(retired_at=timezone.now(),
                                                               revealed_at=timezone.now())
        with pytest.raises(Conflict):
            services.round_deal(round_id=round_.pk, actor=integration)
        round_.refresh_from_db()
        assert round_.status == "OPEN" and round_.cards == []

    def test_rotation_reveals_and_starts_a_new_pair(self, game, operator, integration):
        round_ = services.round_open(game_id=game.pk, actor=integration)
        services.round_deal(round_id=round_.pk, actor=integration)
        revealed, new = services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation",
                                             client_seed="new-client")
        assert revealed.revealed_server_seed == revealed.server_seed
        assert new.revealed_server_seed is None
        assert new.client_seed == "new-client"
        assert new.server_seed_hash != revealed.server_seed_hash
        assert SeedPair.objects.filter(game=game, revealed_at__isnull=True).get() == new
        round_.refresh_from_db()
        assert round_.seed_pair_id == revealed.pk  # rounds keep their pair
        next_round = services.round_open(game_id=game.pk, actor=integration)
        assert (next_round.seed_pair_id, next_round.nonce) == (new.pk, 0)

    def test_rotation_rejects_a_bad_client_seed(self, game, operator):
        with pytest.raises(ValidationError) as error:
            services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation", client_seed="bad\x00seed")
        assert "client_seed" in error.value.message_dict
        assert SeedPair.objects.filter(game=game).count() == 1

    def test_unrevealed_seed_is_not_in_the_audit_trail(self, game, operator, integration):
        round_ = services.round_open(game_id=game.pk, actor=integration)
        services.round_deal(round_id=round_.pk, actor=integration)
        active = SeedPair.objects.get(game=game)
        services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
        new = SeedPair.objects.get(game=game, revealed_at__isnull=True)
        dump = repr(list(AuditEvent.objects.values()))
        assert active.server_seed in dump  # revealed: may be published
        assert new.server_seed not in dump
        assert new.server_seed not in repr(new) + str(new)


class TestRounds:
    def test_suspended_game_opens_no_rounds(self, game, operator, integration):
        services.game_update(game_id=game.pk, actor=operator, reason="maintenance",
                             changes={"status": GameStatus.SUSPENDED})
        with pytest.raises(Conflict):
            services.round_open(game_id=game.pk, actor=integration)
        assert not Round.objects.exists()

    def test_deal_plays_pf1_from_the_rounds_own_inputs(self, game, integration):
        round_ = services.round_open(game_id=game.pk, actor=integration)
        services.round_deal(round_id=round_.pk, actor=integration)
        round_.refresh_from_db()
        pair = round_.seed_pair
        expected = play_round(pair.server_seed, pair.client_seed, round_.nonce, round_.decks).as_dict()
        assert round_.cards == expected["cards"]
        assert round_.player_cards == expected["player"]["cards"]
        assert round_.banker_score == expected["banker"]["score"]
        assert round_.outcome == expected["outcome"]
        assert round_.status in (RoundStatus.DEALT, RoundStatus.SETTLED)

    def test_dealing_twice_changes_nothing(self, game, integration):
        round_ = services.round_open(game_id=game.pk, actor=integration)
        first = services.round_deal(round_id=round_.pk, actor=integration)
        again = services.round_deal(round_id=round_.pk, actor=integration)
        assert again.cards == first.cards
        assert AuditEvent.objects.filter(action="round.dealt").count() == 1

    def test_deal_settles_on_commit(self, game, integration, funded_account, django_capture_on_commit_callbacks):
        account = funded_account("p1", "100.00")
        round_ = services.round_open(game_id=game.pk, actor=integration)
        bet, _ = place(round_, account, "BANKER", "10.01", client=integration)
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            services.round_deal(round_id=round_.pk, actor=integration)
        # One settlement task (beside the audit sequencer and the metrics' observers of the settled batch).
        assert len([callback for callback in callbacks if callback is not audit_sequence
                    and callback.__module__ != "monitoring.receivers"]) == 1
        round_.refresh_from_db()
        bet.refresh_from_db()
        assert round_.status == RoundStatus.SETTLED
        expected = {"BANKER": Decimal("19.51"), "TIE": Decimal("10.01"), "PLAYER": Decimal("0.00")}[round_.outcome]
        assert bet.payout == expected
        account.refresh_from_db()
        assert account.balance == Decimal("100.00") - Decimal("10.01") + expected

    def test_void_refunds_every_pending_bet(self, game, integration, operator, funded_account):
        alice, bob = funded_account("alice", "50.00"), funded_account("bob", "50.00")
        round_ = services.round_open(game_id=game.pk, actor=integration)
        place(round_, alice, "TIE", "5.00", client=integration)
        place(round_, bob, "PLAYER", "20.00", client=integration)
        services.round_void(round_id=round_.pk, actor=operator, reason="table fault")
        round_.refresh_from_db()
        assert (round_.status, round_.void_reason) == (RoundStatus.VOID, "table fault")
        assert set(Bet.objects.values_list("status", flat=True)) == {BetStatus.REFUNDED}
        for account in (alice, bob):
            account.refresh_from_db()
            assert account.balance == Decimal("50.00")
        assert LedgerEntry.objects.filter(kind=LedgerKind.REFUND).count() == 2
        assert AuditEvent.objects.get(action="round.voided").reason == "table fault"

    def test_void_needs_a_reason_and_an_unsettled_round(self, game, integration, operator):
        round_ = services.round_open(game_id=game.pk, actor=integration)
        with pytest.raises(ValidationError):
            services.round_void(round_id=round_.pk, actor=operator, reason="")
        services.round_void(round_id=round_.pk, actor=operator, reason="x")
        with pytest.raises(Conflict):
            services.round_void(round_id=round_.pk, actor=operator, reason="again")
        with pytest.raises(Conflict):
            services.round_deal(round_id=round_.pk, actor=integration)


class TestBets:
    def test_accepting_debits_the_stake_and_records_the_multiplier(self, game, integration, funded_account):
        account = funded_account("p1", "100.00")
        round_ = services.round_open(game_id=game.pk, actor=integration)
        bet, created = place(round_, account, "BANKER", "10.50", client=integration)
        assert created
        assert (bet.status, bet.multiplier, bet.payout) == (BetStatus.PENDING, Decimal("1.95"), None)
        account.refresh_from_db()
        assert account.balance == Decimal("89.50")
        entry = LedgerEntry.objects.get(bet_id=bet.pk)
        assert (entry.kind, entry.amount, entry.balance_after) == (
            LedgerKind.STAKE, Decimal("-10.50"), Decimal("89.50"))

    def test_replay_returns_the_original_and_debits_once(self, game, integration, funded_account):
        account = funded_account("p1", "100.00")
        round_ = services.round_open(game_id=game.pk, actor=integration)
        first, created = place(round_, account, "TIE", "3.00", key="k-1", client=integration)
        again, created_again = place(round_, account, "TIE", "3.00", key="k-1", client=integration)
        assert created and not created_again
        assert again.pk == first.pk
        account.refresh_from_db()
        assert account.balance == Decimal("97.00")

    def test_same_key_other_content_conflicts(self, game, integration, funded_account):
        account = funded_account("p1", "100.00")
        round_ = services.round_open(game_id=game.pk, actor=integration)
        place(round_, account, "TIE", "3.00", key="k-1", client=integration)
        with pytest.raises(Conflict) as error:
            place(round_, account, "TIE", "4.00", key="k-1", client=integration)
        assert error.value.field == "idempotency_key"
        assert Bet.objects.count() == 1

    def test_multiplier_change_never_alters_an_accepted_bet(self, game, integration, operator, funded_account,
                                                            django_capture_on_commit_callbacks):
        account = funded_account("p1", "100.00")
        round_ = services.round_open(game_id=game.pk, actor=integration)
        bet, _ = place(round_, account, "TIE", "10.00", client=integration)
        services.game_update(game_id=game.pk, actor=operator, reason="change",
                             changes={"tie_multiplier": Decimal("5")})
        bet.refresh_from_db()
        assert bet.multiplier == Decimal("9.0")

    @pytest.mark.parametrize("changes,stake,field", [
        ({}, "0", "stake"),
        ({}, "-1.00", "stake"),
        ({}, "1.001", "stake"),
        ({}, "0.99", "stake"),        # below min_bet
        ({}, "1000.01", "stake"),     # above max_bet
        ({}, "200.00", "stake"),      # above the balance of 100
        ({}, "NaN", "stake"),
        ({}, "abc", "stake"),
        ({"bet_type": "DRAGON"}, "5.00", "bet_type"),
        ({"account": "nobody-here"}, "5.00", "account"),
        ({"account": "eur-player"}, "5.00", "account"),  # currency differs from the game's
    ])
    def test_bad_bets_write_nothing(self, game, integration, funded_account, changes, stake, field):
        account = funded_account("p1", "100.00")
        funded_account("eur-player", "100.00", currency="EUR")
        round_ = services.round_open(game_id=game.pk, actor=integration)
        ledger_before = LedgerEntry.objects.count()
        with pytest.raises(ValidationError) as error:
            services.bet_place(round_id=round_.pk, account_external_id=changes.get("account", account.external_id),
                               bet_type=changes.get("bet_type", "PLAYER"), stake=stake,
                               idempotency_key="k", client=integration)
        assert field in error.value.message_dict
        assert not Bet.objects.exists()
        assert LedgerEntry.objects.count() == ledger_before
        account.refresh_from_db()
        assert account.balance == Decimal("100.00")

    def test_no_bets_on_a_dealt_round_or_a_suspended_game(self, game, integration, operator, funded_account):
        account = funded_account("p1", "100.00")
        dealt = services.round_open(game_id=game.pk, actor=integration)
        services.round_deal(round_id=dealt.pk, actor=integration)
        with pytest.raises(Conflict) as error:
            place(dealt, account, client=integration)
        assert error.value.field == "round"
        open_round = services.round_open(game_id=game.pk, actor=integration)
        services.game_update(game_id=game.pk, actor=operator, reason="x", changes={"status": GameStatus.SUSPENDED})
        with pytest.raises(Conflict):
            place(open_round, account, client=integration)
        assert not Bet.objects.exists()
