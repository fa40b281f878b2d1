"""Four eyes through the API: held requests (202), the queue, approving and rejecting."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.utils import timezone

from approvals.models import Approval
from audit.models import AuditEvent
from backoffice.roles import Role
from games import services as game_services
from games.choices import RoundStatus
from games.models import GameInstance, Round
from tests.api.helpers import API, assert_names_field
from tests.conftest import make_user
from wallet.models import Account, LedgerEntry

pytestmark = pytest.mark.django_db


@pytest.fixture
def second_operator(db):
    return make_user("oscar-operator", Role.OPERATOR)


@pytest.fixture
def as_second(api_as, second_operator):
    return api_as(second_operator)


@pytest.fixture
def game_with_bets(game, open_round, player, integration):
    game_services.bet_place(round_id=open_round.pk, account_external_id=player.external_id, bet_type="BANKER",
                            stake="10.00", idempotency_key="k-1", client=integration)
    return game


@pytest.fixture
def dealt_round(game_with_bets, open_round, integration):
    return game_services.round_deal(round_id=open_round.pk, actor=integration)


def grant(user, *permissions: str) -> None:
    for permission in permissions:
        app_label, codename = permission.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))


def held(response) -> dict:
    assert response.status_code == 202, response.content
    approval = response.json()["approval"]
    assert approval["status"] == "pending"
    return approval


class TestHolding:
    def test_a_change_to_a_game_that_has_taken_bets_waits_for_a_second_person(self, as_operator, game_with_bets,
                                                                               operator):
        approval = held(as_operator.patch(f"{API}/games/main-table/",
                                          {"banker_multiplier": "1.9000", "reason": "promo"}))
        assert approval["action"] == "game.update" and approval["proposed_by"] == operator.username
        assert approval["reason"] == "promo" and approval["proposed_at"]
        assert approval["changes"] == {"banker_multiplier": {"before": "1.9500", "after": "1.9000"}}
        # The title the admin's queue shows (Approval.title), in the API too.
        assert approval["title"] == "Change game main-table: banker multiplier"
        assert as_operator.get(f"{API}/approvals/{approval['id']}/").json()["title"] == approval["title"]
        assert GameInstance.objects.get().banker_multiplier == Decimal("1.95")
        assert AuditEvent.objects.filter(action="approval.requested", object_id=str(approval["id"])).exists()
        assert not AuditEvent.objects.filter(action="game.configured").exists()

    def test_a_game_without_bets_and_a_rename_change_at_once(self, as_operator, game, game_with_bets):
        response = as_operator.patch(f"{API}/games/main-table/", {"name": "Salon", "reason": "rename"})
        assert response.status_code == 200 and response.json()["name"] == "Salon"

    def test_a_game_that_took_no_bets_changes_at_once(self, as_operator, game):
        response = as_operator.patch(f"{API}/games/main-table/", {"banker_multiplier": "1.9000", "reason": "launch"})
        assert response.status_code == 200 and response.json()["banker_multiplier"] == "1.9000"
        assert not Approval.objects.exists()

    def test_bad_input_is_still_a_400_and_writes_nothing(self, as_operator, game_with_bets, unchanged):
        with unchanged():
            response = as_operator.patch(f"{API}/games/main-table/", {"min_bet": "5000.00", "reason": "x"})
        assert_names_field(response, 400, "max_bet")
        assert not Approval.objects.exists()

    def test_an_adjustment_from_the_threshold(self, as_operator, player, funded_account):
        approval = held(as_operator.post(f"{API}/accounts/player-1/adjust/",
                                         {"amount": "10000.00", "reason": "jackpot"}))
        assert approval["changes"]["amount"] == "10000.00"
        assert approval["changes"]["balance"] == {"before": "500.00", "after": "10500.00"}
        funded_account("fresh", "0")  # no adjustment in the window yet
        below = as_operator.post(f"{API}/accounts/fresh/adjust/", {"amount": "9999.99", "reason": "bonus"})
        assert below.status_code == 201
        assert Account.objects.get(external_id="fresh").balance == Decimal("9999.99")

    def test_an_adjustment_the_ledger_refuses_is_a_400_not_a_request(self, as_operator, player, unchanged):
        with unchanged():
            response = as_operator.post(f"{API}/accounts/player-1/adjust/", {"amount": "-20000.00", "reason": "x"})
        assert_names_field(response, 400, "amount")
        assert not Approval.objects.exists()

    def test_the_threshold_is_a_setting(self, as_operator, player, settings):
        settings.APPROVAL_ADJUSTMENT_THRESHOLD = Decimal("100.00")
        held(as_operator.post(f"{API}/accounts/player-1/adjust/", {"amount": "100.00", "reason": "bonus"}))

    def test_voiding_a_dealt_round_waits_an_open_one_does_not(self, as_operator, dealt_round, game, integration):
        approval = held(as_operator.post(f"{API}/rounds/{dealt_round.pk}/void/", {"reason": "misdeal"}))
        assert approval["changes"]["status"] == {"before": "DEALT", "after": "VOID"}
        assert approval["changes"]["bets_refunded"] == 1
        assert Round.objects.get(pk=dealt_round.pk).status == RoundStatus.DEALT
        second = game_services.round_open(game_id=game.pk, actor=integration)
        assert as_operator.post(f"{API}/rounds/{second.pk}/void/", {"reason": "x"}).status_code == 200

    def test_actions_left_out_of_the_setting_run_at_once(self, as_operator, player, settings):
        settings.APPROVAL_ACTIONS = ["game.update"]
        assert as_operator.post(f"{API}/accounts/player-1/adjust/",
                                {"amount": "50000.00", "reason": "x"}).status_code == 201


class TestDeciding:
    def test_a_second_operator_applies_it(self, as_operator, as_second, second_operator, game_with_bets):
        approval = held(as_operator.patch(f"{API}/games/main-table/", {"max_bet": "900.00", "reason": "audit"}))
        response = as_second.post(f"{API}/approvals/{approval['id']}/approve/", {"reason": "checked"})
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["approval"]["status"] == "applied" and body["approval"]["decided_by"] == second_operator.username
        assert body["result"]["max_bet"] == "900.00"
        assert GameInstance.objects.get().max_bet == Decimal("900.00")
        changed = AuditEvent.objects.get(action="game.configured")
        assert changed.actor == second_operator.username and f"approval #{approval['id']}" in changed.reason
        assert AuditEvent.objects.filter(action="approval.applied", reason="checked").exists()

    def test_the_proposer_cannot_approve_their_own(self, as_operator, game_with_bets):
        approval = held(as_operator.patch(f"{API}/games/main-table/", {"max_bet": "900.00", "reason": "audit"}))
        response = as_operator.post(f"{API}/approvals/{approval['id']}/approve/", {"reason": "me"})
        assert response.status_code == 403
        assert Approval.objects.get().status == "pending"
        assert GameInstance.objects.get().max_bet == Decimal("1000.00")

    def test_support_cannot_approve(self, as_operator, as_support, game_with_bets):
        approval = held(as_operator.patch(f"{API}/games/main-table/", {"max_bet": "900.00", "reason": "audit"}))
        assert as_support.post(f"{API}/approvals/{approval['id']}/approve/", {"reason": "x"}).status_code == 403
        assert as_support.get(f"{API}/approvals/").status_code == 200

    @pytest.mark.parametrize(("propose", "permission"), [
        (lambda api, round_: api.patch(f"{API}/games/main-table/", {"max_bet": "900.00", "reason": "audit"}),
         "games.change_gameinstance"),
        (lambda api, round_: api.post(f"{API}/accounts/player-1/adjust/", {"amount": "25000.00", "reason": "win"}),
         "wallet.adjust_account"),
        (lambda api, round_: api.post(f"{API}/rounds/{round_.pk}/void/", {"reason": "misdeal"}), "games.void_round"),
    ])
    def test_the_approver_needs_the_permission_of_the_action_too(self, api_as, as_operator, dealt_round, propose,
                                                                 permission):
        approval = held(propose(as_operator, dealt_round))
        approver = make_user("only-approves", None)
        grant(approver, "approvals.view_approval", "approvals.approve_approval")
        before = (GameInstance.objects.get().max_bet, Account.objects.get().balance, Round.objects.get().status)
        response = api_as(approver).post(f"{API}/approvals/{approval['id']}/approve/", {"reason": "looks fine"})
        assert response.status_code == 403
        assert permission in response.json()["detail"]
        assert Approval.objects.get().status == "pending"
        assert (GameInstance.objects.get().max_bet, Account.objects.get().balance, Round.objects.get().status) == before
        grant(approver, permission)
        response = api_as(approver).post(f"{API}/approvals/{approval['id']}/approve/", {"reason": "looks fine"})
        assert response.status_code == 200, response.content
        assert Approval.objects.get().status == "applied"

    def test_an_adjustment_applied_answers_with_the_entry(self, as_operator, as_admin, player):
        approval = held(as_operator.post(f"{API}/accounts/player-1/adjust/", {"amount": "25000.00", "reason": "win"}))
        body = as_admin.post(f"{API}/approvals/{approval['id']}/approve/", {"reason": "ok"}).json()
        assert body["result"]["entry"]["amount"] == "25000.00"
        assert body["result"]["account"]["balance"] == "25500.00"

    def test_what_no_longer_applies_is_a_409_and_changes_nothing(self, as_operator, as_second, dealt_round,
                                                                 operator):
        approval = held(as_operator.post(f"{API}/rounds/{dealt_round.pk}/void/", {"reason": "misdeal"}))
        game_services.round_void(round_id=dealt_round.pk, actor=operator, reason="voided meanwhile")
        entries = LedgerEntry.objects.count()
        response = as_second.post(f"{API}/approvals/{approval['id']}/approve/", {"reason": "ok"})
        assert_names_field(response, 409, "approval")
        assert "no longer applies" in response.json()["approval"][0]
        assert Approval.objects.get().status == "pending" and LedgerEntry.objects.count() == entries

    def test_a_debit_that_the_balance_no_longer_covers(self, as_operator, as_second, funded_account, operator):
        funded_account("whale", "30000.00")
        approval = held(as_operator.post(f"{API}/accounts/whale/adjust/", {"amount": "-25000.00", "reason": "x"}))
        held(as_operator.post(f"{API}/accounts/whale/adjust/", {"amount": "-20000.00", "reason": "y"}))
        assert as_second.post(f"{API}/approvals/{approval['id']}/approve/", {"reason": "ok"}).status_code == 200
        later = Approval.objects.exclude(pk=approval["id"]).get()
        assert_names_field(as_second.post(f"{API}/approvals/{later.pk}/approve/", {"reason": "ok"}), 409, "approval")
        assert Account.objects.get(external_id="whale").balance == Decimal("5000.00")

    def test_rejected_never_applies(self, as_operator, as_second, dealt_round):
        approval = held(as_operator.post(f"{API}/rounds/{dealt_round.pk}/void/", {"reason": "misdeal"}))
        # A field the decision does not take is refused, never silently dropped (schemathesis found it).
        assert_names_field(as_second.post(f"{API}/approvals/{approval['id']}/reject/",
                                          {"reason": "fine", "": None}, format="json"), 400, "")
        response = as_second.post(f"{API}/approvals/{approval['id']}/reject/", {"reason": "the deal was fine"})
        assert response.status_code == 200 and response.json()["status"] == "rejected"
        assert_names_field(as_second.post(f"{API}/approvals/{approval['id']}/approve/", {"reason": "x"}),
                           409, "approval")
        assert Round.objects.get(pk=dealt_round.pk).status == RoundStatus.DEALT
        assert AuditEvent.objects.filter(action="approval.rejected", reason="the deal was fine").exists()

    def test_an_expired_request_cannot_be_approved(self, as_operator, as_second, dealt_round):
        approval = held(as_operator.post(f"{API}/rounds/{dealt_round.pk}/void/", {"reason": "misdeal"}))
        Approval.objects.update(proposed_at=timezone.now() - timedelta(days=2),
                                expires_at=timezone.now() - timedelta(days=1))
        assert as_second.get(f"{API}/approvals/", {"status": "pending"}).json()["results"] == []
        assert_names_field(as_second.post(f"{API}/approvals/{approval['id']}/approve/", {"reason": "x"}),
                           409, "approval")
        assert Approval.objects.get().status == "expired"
        assert AuditEvent.objects.filter(action="approval.expired").count() == 1

    @pytest.mark.parametrize("body", [{}, {"reason": ""}, {"reason": "  "}])
    def test_a_decision_needs_a_reason(self, as_operator, as_second, game_with_bets, body):
        approval = held(as_operator.patch(f"{API}/games/main-table/", {"max_bet": "900.00", "reason": "audit"}))
        for verb in ("approve", "reject"):
            assert_names_field(as_second.post(f"{API}/approvals/{approval['id']}/{verb}/", body), 400, "reason")
        assert Approval.objects.get().status == "pending"

    def test_unknown_approval_is_404(self, as_second):
        assert as_second.post(f"{API}/approvals/999/approve/", {"reason": "x"}).status_code == 404


class TestQueue:
    def test_filters(self, as_operator, as_support, game_with_bets, dealt_round):
        held(as_operator.patch(f"{API}/games/main-table/", {"max_bet": "900.00", "reason": "a"}))
        void = held(as_operator.post(f"{API}/rounds/{dealt_round.pk}/void/", {"reason": "b"}))

        def ids(**params):
            return [item["id"] for item in as_support.get(f"{API}/approvals/", params).json()["results"]]

        assert len(ids()) == 2 and len(ids(status="pending")) == 2 and ids(status="applied") == []
        assert ids(action="round.void") == [void["id"]]
        assert ids(object_type="round", object_id=str(dealt_round.pk)) == [void["id"]]

    @pytest.mark.parametrize("params", [{"status": "done"}, {"action": "x"}, {"object_id": "abc"}])
    def test_bad_filters_name_the_field(self, as_support, params):
        assert_names_field(as_support.get(f"{API}/approvals/", params), 400, next(iter(params)))


class TestPolicyAssignment:
    def test_assigning_a_policy_is_held_then_applied_by_name(self, as_operator, as_second, game_with_bets,
                                                              administrator):
        game_services.rtp_policy_create(actor=administrator, name="MGA", min_banker_rtp=Decimal("97"))
        approval = held(as_operator.patch(f"{API}/games/main-table/", {"rtp_policy": "MGA", "reason": "licence"}))
        assert approval["changes"] == {"rtp_policy": {"before": None, "after": "MGA"}}
        body = as_second.post(f"{API}/approvals/{approval['id']}/approve/", {"reason": "ok"}).json()
        assert body["result"]["rtp_policy"] == "MGA"
        assert GameInstance.objects.get().rtp_policy.name == "MGA"

    def test_a_policy_tightened_meanwhile_makes_the_change_a_409(self, as_operator, as_second, game_with_bets,
                                                                 administrator):
        policy = game_services.rtp_policy_create(actor=administrator, name="MGA", min_tie_rtp=Decimal("80"))
        game_services.game_update(game_id=game_with_bets.pk, actor=administrator, reason="x",
                                  changes={"rtp_policy": policy})
        approval = held(as_operator.patch(f"{API}/games/main-table/", {"tie_multiplier": "8.5", "reason": "promo"}))
        game_services.rtp_policy_update(policy_id=policy.pk, actor=administrator, reason="stricter",
                                        changes={"min_tie_rtp": Decimal("85")})
        response = as_second.post(f"{API}/approvals/{approval['id']}/approve/", {"reason": "ok"})
        assert_names_field(response, 409, "approval")
        assert "is below the minimum of 85.0000 %" in response.json()["approval"][0]
        assert GameInstance.objects.get().tie_multiplier == Decimal("9")


class TestStaleRequests:
    def test_an_approval_over_newer_state_is_a_409_naming_the_fields_that_moved(self, as_operator, as_second,
                                                                                 game_with_bets, api_as):
        stale = held(as_operator.patch(f"{API}/games/main-table/", {"max_bet": "999.00", "reason": "a"}))
        other = held(as_operator.patch(f"{API}/games/main-table/", {"tie_multiplier": "8.5", "reason": "b"}))
        cut = held(as_operator.patch(f"{API}/games/main-table/", {"max_bet": "600.00", "reason": "c"}))
        assert as_second.post(f"{API}/approvals/{cut['id']}/approve/", {"reason": "ok"}).status_code == 200
        response = as_second.post(f"{API}/approvals/{stale['id']}/approve/", {"reason": "ok"})
        assert_names_field(response, 409, "max_bet")
        assert_names_field(response, 409, "approval")
        assert "1000.00" in response.json()["max_bet"][0] and "600.00" in response.json()["max_bet"][0]
        assert GameInstance.objects.get().max_bet == Decimal("600.00")
        assert Approval.objects.get(pk=stale["id"]).status == "pending"
        # A request whose own fields did not move still applies.
        assert as_second.post(f"{API}/approvals/{other['id']}/approve/", {"reason": "ok"}).status_code == 200
        assert GameInstance.objects.get().tie_multiplier == Decimal("8.5")


class TestAdjustmentWindow:
    def test_an_adjustment_split_below_the_threshold_needs_a_second_person(self, as_operator, funded_account):
        funded_account("p1", "0")
        first = as_operator.post(f"{API}/accounts/p1/adjust/", {"amount": "9999.99", "reason": "one"})
        assert first.status_code == 201, first.content
        approval = held(as_operator.post(f"{API}/accounts/p1/adjust/", {"amount": "-9999.99", "reason": "two"}))
        assert approval["changes"]["adjusted_in_window"] == {"before": "9999.99", "after": "19999.98"}
        assert Account.objects.get(external_id="p1").balance == Decimal("9999.99")

    def test_pending_requests_do_not_count_applied_ones_do(self, as_operator, as_second, funded_account):
        funded_account("p1", "0")
        big = held(as_operator.post(f"{API}/accounts/p1/adjust/", {"amount": "50000.00", "reason": "jackpot"}))
        assert as_operator.post(f"{API}/accounts/p1/adjust/", {"amount": "100.00", "reason": "x"}).status_code == 201
        assert as_second.post(f"{API}/approvals/{big['id']}/approve/", {"reason": "ok"}).status_code == 200
        held(as_operator.post(f"{API}/accounts/p1/adjust/", {"amount": "100.00", "reason": "y"}))

    def test_the_window_is_a_setting(self, as_operator, funded_account, settings):
        funded_account("p1", "9999.00")  # an adjustment
        held(as_operator.post(f"{API}/accounts/p1/adjust/", {"amount": "1.00", "reason": "x"}))
        settings.APPROVAL_ADJUSTMENT_WINDOW_HOURS = 0  # the window holds nothing made before now
        assert as_operator.post(f"{API}/accounts/p1/adjust/", {"amount": "1.00", "reason": "x"}).status_code == 201


# 10× / 10× / 100× on 8 decks: an exact RTP of 456 %, 468 % and 952 %.
GENEROUS = {"player_multiplier": "10", "banker_multiplier": "10", "tie_multiplier": "100"}
NEW_GAME = {"slug": "vip", "name": "VIP", "min_bet": "1.00", "max_bet": "500.00"}


class TestGameCeilingAndCreation:
    def test_a_game_paying_more_than_it_takes_is_refused_whatever_its_policy(self, as_operator, administrator,
                                                                              game, unchanged):
        game_services.rtp_policy_create(actor=administrator, name="Lax", max_rtp=Decimal("9999"))
        with unchanged():
            created = as_operator.post(f"{API}/games/", {**NEW_GAME, **GENEROUS, "rtp_policy": "Lax", "reason": "x"})
            changed = as_operator.patch(f"{API}/games/main-table/", {"banker_multiplier": "2.2", "reason": "x"})
        for field in GENEROUS:
            assert_names_field(created, 400, field)
        assert "above the ceiling of 100.0000 %" in created.json()["tie_multiplier"][0]
        assert_names_field(changed, 400, "banker_multiplier")
        with pytest.raises(ValidationError) as refused:
            game_services.game_update(game_id=game.pk, actor=administrator, reason="x",
                                      changes={"tie_multiplier": Decimal("11")})
        assert set(refused.value.message_dict) == {"tie_multiplier"}

    def test_the_ceiling_is_a_setting(self, as_operator, game, settings):
        settings.MAX_GAME_RTP = Decimal("1.05")  # tie 11 returns 104.6716 %
        response = as_operator.patch(f"{API}/games/main-table/", {"tie_multiplier": "11", "reason": "x"})
        assert response.status_code == 200, response.content

    def test_creating_an_active_game_waits_for_a_second_person(self, as_operator, as_second, operator):
        approval = held(as_operator.post(f"{API}/games/", {**NEW_GAME, "client_seed": "vip-seed",
                                                           "reason": "new VIP table"}))
        assert approval["action"] == "game.create" and approval["changes"]["slug"] == "vip"
        assert approval["changes"]["tie_multiplier"] == "9.0000" and approval["object_id"] == ""
        assert not GameInstance.objects.filter(slug="vip").exists()
        assert as_operator.post(f"{API}/approvals/{approval['id']}/approve/", {"reason": "me"}).status_code == 403
        response = as_second.post(f"{API}/approvals/{approval['id']}/approve/", {"reason": "checked"})
        assert response.status_code == 200, response.content
        game = GameInstance.objects.get(slug="vip")
        assert response.json()["result"]["slug"] == "vip" and game.status == "active"
        assert game.seed_pairs.get().client_seed == "vip-seed"
        assert Approval.objects.get().object_id == str(game.pk)

    def test_creating_one_needs_a_reason_when_held(self, as_operator, unchanged):
        with unchanged():
            assert_names_field(as_operator.post(f"{API}/games/", NEW_GAME), 400, "reason")

    def test_a_suspended_game_is_created_at_once_and_its_activation_waits(self, as_operator, as_second):
        created = as_operator.post(f"{API}/games/", {**NEW_GAME, "status": "suspended"})
        assert created.status_code == 201, created.content
        approval = held(as_operator.patch(f"{API}/games/vip/", {"status": "active", "reason": "open it"}))
        assert approval["action"] == "game.activate"
        assert approval["changes"] == {"status": {"before": "suspended", "after": "active"}}
        assert GameInstance.objects.get(slug="vip").status == "suspended"
        assert as_second.post(f"{API}/approvals/{approval['id']}/approve/", {"reason": "ok"}).status_code == 200
        assert GameInstance.objects.get(slug="vip").status == "active"

    def test_suspending_a_game_never_needs_a_second_person(self, as_operator, game_with_bets):
        response = as_operator.patch(f"{API}/games/main-table/", {"status": "suspended", "reason": "incident"})
        assert response.status_code == 200, response.content
        assert GameInstance.objects.get().status == "suspended" and not Approval.objects.exists()
        assert as_operator.patch(f"{API}/games/main-table/", {"status": "retired", "reason": "closed"}
                                 ).status_code == 200

    def test_left_out_of_the_setting_a_game_is_created_at_once(self, as_operator, settings):
        settings.APPROVAL_ACTIONS = ["game.update"]
        assert as_operator.post(f"{API}/games/", NEW_GAME).status_code == 201


class TestRefusalsNameThePermission:
    def test_support_is_told_it_lacks_the_approve_permission(self, as_operator, as_support, game_with_bets):
        approval = held(as_operator.patch(f"{API}/games/main-table/", {"max_bet": "900.00", "reason": "audit"}))
        response = as_support.post(f"{API}/approvals/{approval['id']}/approve/", {"reason": "x"})
        assert response.status_code == 403
        assert "approvals.approve_approval" in response.json()["detail"]
        assert "view_approval" not in response.json()["detail"]
