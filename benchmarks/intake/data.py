"""The bench database's content: an integration client with its token (read and bets), one game, funded accounts
(each with the ledger entry that funded it, so the ledger still equals the balances) and open rounds."""

from decimal import Decimal

from django.contrib.auth.models import Group, User
from django.db.models import Sum

from apitokens.choices import Scope
from apitokens.services import token_create
from backoffice.roles import Role
from games import services
from games.models import GameInstance
from wallet.choices import LedgerKind
from wallet.models import Account, LedgerEntry

ACTOR = "system:bench-intake"
GAME_SLUG = "bench-table"
FUNDS = Decimal("1000000.00")


def client_token() -> str:
    user = User.objects.create_user(username="bench-game-server", password=None)
    user.groups.add(Group.objects.get(name=Role.INTEGRATION.group_name))
    return token_create(owner=user, actor=ACTOR, scopes=[Scope.READ, Scope.BETS], label="bench")[1]


def game() -> GameInstance:
    return services.game_create(actor=ACTOR, slug=GAME_SLUG, name="Bench table", min_bet=Decimal("1.00"),
                                max_bet=Decimal("1000.00"))


def accounts(count: int) -> list:
    """External ids of ``count`` accounts holding FUNDS each."""
    made = Account.objects.bulk_create(
        Account(external_id=f"bench-{index:06d}", balance=FUNDS) for index in range(count))
    LedgerEntry.objects.bulk_create(
        LedgerEntry(account=account, kind=LedgerKind.ADJUSTMENT, amount=FUNDS, balance_after=FUNDS,
                    reason="bench funding") for account in made)
    return [account.external_id for account in made]


def account_id_range() -> tuple[int, int]:
    ids = Account.objects.order_by("pk").values_list("pk", flat=True)
    return ids.first(), ids.last()


def open_rounds(game_id: int, count: int) -> list:
    return [services.round_open(game_id=game_id, actor=ACTOR).pk for _ in range(count)]


def ledger_problems() -> list:
    """Accounts whose ledger does not add up to their balance (there should be none)."""
    sums = dict(LedgerEntry.objects.values("account").annotate(total=Sum("amount")).values_list("account", "total"))
    return [account.external_id for account in Account.objects.all() if sums.get(account.pk) != account.balance]
