"""A game's side bets on the admin form: a paytable editor (one row per side bet, an input per event)
and the reading of side bets from it or from JSON (the live preview's request), every problem named
by its side bet and event.

The rule is the engine's (``side_bets_problems``), the API's and the model's too: a multiplier
given as text is decimal text in ASCII digits ("12", "1.5"), never "NaN" or "1e3".
"""

import json

from django import forms
from django.core.exceptions import ValidationError
from django.utils.html import format_html, format_html_join

from games.engine import REGISTRY, SIDE_BET_TYPES, side_bets_as_json, side_bets_problems

EXAMPLE = '{"PLAYER_PAIR": {"PAIR": "12"}, "EITHER_PAIR": {"ONE_PAIR": "6", "TWO_PAIRS": "6"}}'


def where(name: str, event: str | None = None) -> str:
    """A side bet (and event) as a message names it: "Player pair (PLAYER_PAIR), event PAIR"."""
    kind = REGISTRY.get(name) if name in SIDE_BET_TYPES else None
    bet = f"{kind.label} ({name})" if kind else f"Side bet {name}"
    return bet if event is None else f"{bet}, event {event}"


def checked_side_bets(raw) -> tuple:
    """(side bets normalised for storage, []) or (None, [messages naming each side bet and event]).

    ``raw`` is {side bet: {event: multiplier}} (from the editor, or stored), JSON text of it, or empty."""
    if raw in (None, ""):
        return {}, []
    if isinstance(raw, str):
        try:
            # Numbers are kept as the text they are written in (checked as such): no float on the way.
            raw = json.loads(raw, parse_float=str, parse_int=str, parse_constant=str)
        except (ValueError, RecursionError) as error:
            return None, [f"The side bets are not valid JSON ({error}). For example: {EXAMPLE}"]
    problems = side_bets_problems(raw)
    if problems:
        messages = []
        for key, problem in problems.items():
            name, _dot, event = key.partition(".")
            messages.append(f"The side bets {problem}." if key == "side_bets"
                            else f"{where(name, event or None)}: {problem}.")
        return None, messages
    return side_bets_as_json(raw), []


class PaytablesWidget(forms.Widget):
    """One row per side bet: a box to offer it and an input per event that can pay (its push events
    return the stake whatever is entered, so they are shown, not asked for). An empty input: the
    event loses. A side bet not offered shows its default paytable, offered as it is once ticked."""

    def value_from_datadict(self, data, files, name):
        if name in data:  # the whole mapping as JSON text (a script's post), not the editor's rows
            return data[name]
        side_bets = {}
        for bet in SIDE_BET_TYPES:
            if data.get(f"{name}-{bet}"):
                kind = REGISTRY[bet]
                typed = {event: str(data.get(f"{name}-{bet}-{event}", "")).strip()
                         for event in kind.events if event not in kind.push_events}
                side_bets[bet] = {event: text for event, text in typed.items() if text}
        return side_bets

    def value_omitted_from_data(self, data, files, name):
        return False  # no box ticked: no side bet offered

    def id_for_label(self, id_):
        return ""  # many inputs: the label names the table, each row labels its own

    def render(self, name, value, attrs=None, renderer=None):
        offered = value if isinstance(value, dict) else {}
        rows = []
        for bet in SIDE_BET_TYPES:
            kind = REGISTRY[bet]
            paytable = offered.get(bet) if isinstance(offered.get(bet), dict) else None
            shown = paytable if paytable is not None else kind.default_paytable
            box = f"id_{name}-{bet}"
            inputs = format_html_join(" ", '<label class="pf-paytable-event">{} <input type="text" name="{}" '
                                      'value="{}" size="7" inputmode="decimal" class="vTextField rtp-input" '
                                      'placeholder="loses" data-event="{}"></label>',
                                      ((event, f"{name}-{bet}-{event}", shown.get(event, ""), event)
                                       for event in kind.events if event not in kind.push_events))
            pushes = ", ".join(sorted(kind.push_events, key=kind.events.index))
            rows.append(format_html(
                '<tr data-side-bet="{}"><td><input type="checkbox" name="{}" id="{}" value="on" class="rtp-input"{}>'
                '</td><th scope="row"><label for="{}">{}</label><div class="help">{}</div></th><td>{}{}</td></tr>',
                bet, f"{name}-{bet}", box, " checked" if paytable is not None else "", box, kind.label,
                kind.description, inputs,
                format_html(' <span class="help">{}: a push, the stake back.</span>', pushes) if pushes else "",
            ))
        return format_html(
            '<table class="pf-table pf-paytables" id="id_{}"><thead><tr><th>Offer</th><th>Side bet</th>'
            "<th>Multiplier per event, stake included</th></tr></thead><tbody>{}</tbody></table>",
            name, format_html_join("", "{}", ((row,) for row in rows)))


PAYTABLES_HELP = (
    "Tick a side bet to offer it. Each event's multiplier is what a winning bet returns per unit staked, the "
    "stake included (12 pays 11 to 1): from 1.0 to 1,000, at most 4 decimal places; leave an event empty "
    f"and it loses. Stored as JSON, for example {EXAMPLE}."
)


class SideBetsFormField(forms.Field):
    """The side bets from the editor, checked and normalised (``checked_side_bets``)."""

    widget = PaytablesWidget

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("help_text", PAYTABLES_HELP)
        super().__init__(**kwargs)

    def to_python(self, value):
        side_bets, messages = checked_side_bets(value)
        if messages:
            raise ValidationError(messages, code="invalid_side_bets")
        return side_bets

    def has_changed(self, initial, data):
        try:
            return self.to_python(data) != (initial or {})
        except ValidationError:
            return True
