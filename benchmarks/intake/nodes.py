"""bench_intake against running web nodes (``--url URL --url URL``): bets per second through the first
node alone beside all of them in turn (round-robin), then the settlement lag while they take bets.

Nothing is dropped or started: the nodes, their workers and beat are already running (``make
cluster``), and DATABASE_URL and API_TOKEN_PEPPERS are theirs (the cluster's cluster.env), so that the
integration client, game, accounts and rounds made here (under a name of the run's own) are the
nodes'. Settlement is the cluster's workers' work, as in production.
"""

import secrets
from decimal import Decimal

from django.contrib.auth.models import Group, User
from django.db import connections

from apitokens.choices import Scope
from apitokens.services import token_create
from backoffice.roles import Role
from benchmarks.pages.report import percentile
from games import services
from wallet.choices import LedgerKind
from wallet.models import Account, LedgerEntry

from . import data
from .client import Nodes, closed_loop
from .run import LAG_ROUNDS, WARM_UP_SECONDS, Plan, Traffic, dealing_under_load

ACTOR = "system:bench-intake"
FUNDS = Decimal("1000000.00")


def seed(label: str, *, accounts: int, rounds: int) -> dict:
    """An integration client with its token, a game, funded accounts (each with the ledger entry
    that funded it) and open rounds, all named after ``label``; what a load client needs of them."""
    user = User.objects.create_user(username=f"{label}-game-server", password=None)
    user.groups.add(Group.objects.get(name=Role.INTEGRATION.group_name))
    token = token_create(owner=user, actor=ACTOR, scopes=[Scope.READ, Scope.BETS], label=label)[1]
    game = services.game_create(actor=ACTOR, slug=label, name=label, min_bet=Decimal("1.00"),
                                max_bet=Decimal("1000.00"))
    made = Account.objects.bulk_create(
        Account(external_id=f"{label}-{index:06d}", balance=FUNDS) for index in range(accounts))
    LedgerEntry.objects.bulk_create(
        LedgerEntry(account=account, kind=LedgerKind.ADJUSTMENT, amount=FUNDS, balance_after=FUNDS,
                    reason="bench funding") for account in made)
    return {"token": token, "slug": game.slug, "accounts": [account.external_id for account in made],
            "rounds": data.open_rounds(game.pk, rounds)}


def run_nodes(urls: list, plan: Plan, *, say, write) -> None:
    label = f"nodes-{secrets.token_hex(4)}"
    made = seed(label, accounts=plan.accounts, rounds=plan.rounds + LAG_ROUNDS + 1)
    connections.close_all()
    traffic = Traffic(made["token"], made["accounts"], made["slug"])
    betting, lag_rounds = made["rounds"][:plan.rounds], made["rounds"][plan.rounds:]
    rounds = {"lag": lag_rounds[:LAG_ROUNDS], "big": lag_rounds[LAG_ROUNDS:]}
    phases = {"one": (f"single bets through one node ({urls[0]})", Nodes(urls[:1])),
              "all": (f"single bets through {len(urls)} nodes, round-robin", Nodes(urls))}
    for url in urls:
        closed_loop(Nodes([url]), traffic.single(betting), clients=plan.clients, seconds=WARM_UP_SECONDS,
                    expected={201})
    say(f"{len(urls)} web nodes, {plan.clients} clients, {plan.seconds:.0f} s a phase in {plan.slices} slices")
    measured = {}
    for _turn in range(plan.slices):
        for key, (_label, nodes) in phases.items():
            part = closed_loop(nodes, traffic.single(betting), clients=plan.clients,
                               seconds=plan.seconds / plan.slices, expected={201})
            measured[key] = measured[key].joined(part) if key in measured else part
    write(f"{'phase':<60} {'bets/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
    for key, (phase_label, _nodes) in phases.items():
        phase = measured[key]
        unexpected = f"  unexpected statuses {phase.unexpected}" if phase.unexpected else ""
        write(f"{phase_label:<60} {phase.per_second:8.0f} {percentile(phase.latencies, 0.5):8.1f} "
              f"{percentile(phase.latencies, 0.99):8.1f}{unexpected}")
    if measured["one"].per_second:
        write(f"{len(urls)} nodes / one node: {measured['all'].per_second / measured['one'].per_second:.2f}")
    if plan.lag_seconds:
        lag = dealing_under_load(Nodes(urls), traffic, plan, rounds, measured["all"].per_second, say)
        bets = lag["bets"]
        write(f"dealing under load through {len(urls)} nodes: {bets.per_second:.0f} bets/s for {lag['seconds']:.0f} s "
              f"(refused as their round was dealt: {lag['refused']}; unexpected {bets.unexpected or 'none'})")
        if lag["lags"]:
            write(f"  {len(lag['lags'])} rounds dealt: settlement lag p50 {percentile(lag['lags'], 0.5):.2f} s, "
                  f"p99 {percentile(lag['lags'], 0.99):.2f} s, max {max(lag['lags']):.2f} s; "
                  f"a round of {lag['big_bets']:,} bets settled {lag['big_lag']:.2f} s after its deal")
    problems = data.ledger_problems()
    write(f"ledger equal to every balance: {'yes' if not problems else 'NO: ' + ', '.join(problems[:5])}")
