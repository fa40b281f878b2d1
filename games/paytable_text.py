"""A game's side bets as people read them: the same text on the game's admin page, in a four-eyes
request and its "changed since it was proposed" answer."""

from games.engine import REGISTRY, SIDE_BET_TYPES


def side_bets_text(side_bets: dict) -> str:
    """Side bets as people read them, in the registry's order: "Player pair: PAIR 12; Either pair:
    TWO_PAIRS 6, ONE_PAIR 6" ("none" for none)."""
    if not side_bets:
        return "none"
    ordered = sorted(side_bets, key=lambda name: _position(SIDE_BET_TYPES, name))
    return "; ".join(f"{REGISTRY[name].label if name in SIDE_BET_TYPES else name}: "
                     f"{_paytable_text(name, side_bets[name])}" for name in ordered)


def _position(names, name) -> int:
    return names.index(name) if name in names else len(names)


def _paytable_text(name: str, paytable) -> str:
    if not isinstance(paytable, dict):
        return str(paytable)
    events = REGISTRY[name].events if name in SIDE_BET_TYPES else ()
    return ", ".join(f"{event} {multiplier}" for event, multiplier
                     in sorted(paytable.items(), key=lambda item: _position(events, item[0])))
