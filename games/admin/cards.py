"""Cards as cards on the admin pages, and a stored round dealt back into positions and hands."""

from django.utils.html import format_html, format_html_join

from backoffice.formatting import EMPTY
from games.engine import RoundResult, dealt_hands, is_red, label_symbol, result_from_labels


def card_html(label: str):
    colour = "red" if is_red(label) else "black"
    return format_html('<span class="pf-card pf-card-{}">{}</span>', colour, label_symbol(label))


def cards_html(labels):
    if not labels:
        return EMPTY
    return format_html('<span class="pf-cards">{}</span>',
                       format_html_join(" ", "{}", ((card_html(label),) for label in labels)))


def hand_html(cards, score):
    if not cards:
        return EMPTY
    return format_html("{} &nbsp;→ <strong>{}</strong>", cards_html(cards), score)


def round_result(round_) -> RoundResult | None:
    """The stored deal as the engine's RoundResult; None for a round never dealt."""
    if not round_.cards:
        return None
    return result_from_labels(round_.cards, round_.player_cards, round_.banker_cards)


def dealt_positions(round_) -> list:
    """Each card of a dealt round as (position, hand, label): "Player", "Banker", … in dealt order."""
    result = round_result(round_)
    if result is None:
        return []
    return [(position, hand.title(), label)
            for position, (hand, label) in enumerate(zip(dealt_hands(result), round_.cards, strict=True), start=1)]
