"""The games of the pages benchmark, and the configuration changes they go through mid-way."""

from datetime import datetime
from decimal import Decimal

from django.db import connection

from games.models import GameInstance

# (slug, name, decks, player, banker, tie, max bet)
GAMES = [
    ("bench-main", "Main table", 8, "2.0", "1.95", "9.0", "1000.00"),
    ("bench-six", "Six decks", 6, "2.0", "1.95", "8.0", "1000.00"),
    ("bench-single", "Single deck", 1, "2.0", "1.95", "11.0", "500.00"),
    ("bench-high", "High limit", 8, "2.0", "1.95", "9.0", "10000.00"),
    ("bench-promo", "Promotion table", 8, "2.0", "1.96", "8.5", "1000.00"),
]
# (game index, share of the period, {field: (before, after)}, reason)
CHANGES = [
    (0, 0.5, {"tie_multiplier": ("9.0000", "8.0000")}, "tie pays 8 from today"),
    (1, 0.66, {"decks": (6, 8), "banker_multiplier": ("1.9500", "1.9600")}, "new shoe, banker promotion"),
]


def create_games(count: int) -> list:
    games = []
    for slug, name, decks, player, banker, tie, max_bet in GAMES[:count]:
        games.append(GameInstance.objects.create(
            slug=slug, name=name, decks=decks, player_multiplier=Decimal(player),
            banker_multiplier=Decimal(banker), tie_multiplier=Decimal(tie), min_bet=Decimal("1.00"),
            max_bet=Decimal(max_bet), currency="USD"))
    return games


def configuration_at(game_index: int, share: float) -> dict:
    """The game's decks and multipliers at ``share`` (0 to 1) of the period."""
    _slug, _name, decks, player, banker, tie, _max = GAMES[game_index]
    config = {"decks": decks, "player_multiplier": player, "banker_multiplier": banker, "tie_multiplier": tie}
    for index, at, changes, _reason in CHANGES:
        if index == game_index and share >= at:
            for field, (_before, after) in changes.items():
                config[field] = after
    return config


def set_final_configuration(games: list, created_at: datetime) -> None:
    """The games hold the configuration of the end of the period."""
    with connection.cursor() as cursor:
        for game_index, game in enumerate(games):
            config = configuration_at(game_index, 1.0)
            cursor.execute("UPDATE games_gameinstance SET decks = %s, player_multiplier = %s, banker_multiplier = %s, "
                           "tie_multiplier = %s, created_at = %s WHERE id = %s",
                           [config["decks"], config["player_multiplier"], config["banker_multiplier"],
                            config["tie_multiplier"], created_at, game.pk])
