"""How fast the game core deals, next to the floor that the PF-1 cut itself sets.

The engine figure is whole rounds with every bet type's event (``round_events(Dealer.play(…))``,
consecutive nonces, a fresh random server seed: a round's side bets are settled from these events);
Dealer.play alone is reported beside it.
The floor is the one HMAC-SHA256 block that a round needs (Dealer.block(nonce, 0): a copy of the
pre-keyed HMAC per round), measured in the same run. The two are measured R times, interleaved,
and the best of each is reported, because machines are noisy (many short runs, 25 of 20,000
rounds by default: on a shared virtual machine a short run more often falls in a quiet spell, so
their best repeats better than that of a few long ones); times are the CPU time of this
process, so that other processes sharing the machine do not count (on an idle machine it equals
the elapsed time of these single-threaded loops). Then exact odds are timed for every
deck count 1–8, each with the cache cleared first, and once each the exact odds of every bet type
(bet_odds). Targets: the engine, every bet type evaluated, at 40 % of the floor
or more; odds under 50 ms.
"""

import secrets
from time import process_time

from games.engine import MAX_DECKS, MIN_DECKS, Dealer, bet_odds, deal_counts, exact_odds, round_events

ENGINE_TARGET_RATIO = 0.40
ODDS_TARGET_MS = 50.0


def engine_rate(dealer: Dealer, rounds: int, decks: int) -> float:
    """Rounds per second of ``Dealer.play`` with every registered bet type's event."""
    play = dealer.play
    events = round_events
    start = process_time()
    for nonce in range(rounds):
        events(play(nonce, decks))
    return rounds / max(process_time() - start, 1e-9)


def play_rate(dealer: Dealer, rounds: int, decks: int) -> float:
    """Rounds per second of ``Dealer.play`` alone."""
    play = dealer.play
    start = process_time()
    for nonce in range(rounds):
        play(nonce, decks)
    return rounds / max(process_time() - start, 1e-9)


def floor_rate(dealer: Dealer, rounds: int) -> float:
    """HMAC blocks per second: the part of a round no implementation of PF-1 can skip."""
    block = dealer.block
    start = process_time()
    for nonce in range(rounds):
        block(nonce, 0)
    return rounds / max(process_time() - start, 1e-9)


def odds_milliseconds(repeats: int) -> dict:
    """Best time of exact_odds(decks) from a cleared cache, per deck count, in milliseconds."""
    best = {}
    for _ in range(repeats):
        for decks in range(MIN_DECKS, MAX_DECKS + 1):
            exact_odds.cache_clear()
            start = process_time()
            exact_odds(decks)
            elapsed = (process_time() - start) * 1000
            best[decks] = min(best.get(decks, elapsed), elapsed)
    exact_odds.cache_clear()
    return best


def bet_odds_milliseconds() -> dict:
    """Time of bet_odds(decks) from cleared caches, per deck count, in milliseconds."""
    taken = {}
    for decks in range(MIN_DECKS, MAX_DECKS + 1):
        bet_odds.cache_clear()
        deal_counts.cache_clear()
        start = process_time()
        bet_odds(decks)
        taken[decks] = (process_time() - start) * 1000
    bet_odds.cache_clear()
    deal_counts.cache_clear()
    return taken


def measure(rounds: int, decks: int, repeats: int) -> dict:
    dealer = Dealer(secrets.token_hex(32), "bench-engine")
    engine = play = floor = 0.0
    for _ in range(repeats):
        engine = max(engine, engine_rate(dealer, rounds, decks))
        play = max(play, play_rate(dealer, rounds, decks))
        floor = max(floor, floor_rate(dealer, rounds))
    odds = odds_milliseconds(repeats)
    bets = bet_odds_milliseconds()
    return {
        "rounds": rounds,
        "decks": decks,
        "repeats": repeats,
        "engine_rounds_per_second": engine,
        "floor_blocks_per_second": floor,
        "engine_to_floor": engine / floor,
        "play_rounds_per_second": play,
        "play_to_floor": play / floor,
        "odds_ms": {str(d): ms for d, ms in odds.items()},
        "odds_max_ms": max(odds.values()),
        "bet_odds_ms": {str(d): ms for d, ms in bets.items()},
        "bet_odds_max_ms": max(bets.values()),
    }


def report_lines(figures: dict) -> list:
    rounds, decks, repeats = figures["rounds"], figures["decks"], figures["repeats"]
    ratio = figures["engine_to_floor"]
    odds_ms = figures["odds_max_ms"]
    return [
        f"{rounds:,} rounds of {decks} deck{'s' if decks > 1 else ''}, best of {repeats} (interleaved, CPU time)",
        f"engine: {figures['engine_rounds_per_second']:>12,.0f} rounds/s   (Dealer.play and every bet type's event)",
        f"play:   {figures['play_rounds_per_second']:>12,.0f} rounds/s   (Dealer.play alone, "
        f"{figures['play_to_floor']:.1%} of the floor)",
        f"floor:  {figures['floor_blocks_per_second']:>12,.0f} blocks/s   (one HMAC-SHA256 block per round)",
        f"ratio:  {ratio:>12.1%}            (engine / floor, target ≥ {ENGINE_TARGET_RATIO:.0%}: "
        f"{'met' if ratio >= ENGINE_TARGET_RATIO else 'not met'})",
        f"odds:   {odds_ms:>12.1f} ms max for 1–8 decks, cache cleared (target < {ODDS_TARGET_MS:.0f} ms: "
        f"{'met' if odds_ms < ODDS_TARGET_MS else 'not met'})",
        f"bets:   {figures['bet_odds_max_ms']:>12.1f} ms max for 1–8 decks: every bet type's exact odds",
    ]
