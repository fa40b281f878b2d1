"""Currencies and their minor units: the one place that says how many decimal places an amount of
a currency has.

ISO 4217 gives the places of national currencies (JPY 0, USD 2, KWD 3, ...); any other code (a
crypto-currency, a casino's token) is known only when ``settings.CURRENCY_MINOR_UNITS`` configures
it, e.g. ``{"BTC": 8, "USDT": 6}``, with up to ``MAX_PLACES`` places. A code neither in ISO 4217 nor
configured is refused where a game or an account is created. Stakes and limits may not have more
places than their currency; payouts and every computed amount round down to its minor unit.
"""

import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, ValidationError

MAX_PLACES = 8  # the money columns' scale (wallet.validators.MONEY_DECIMAL_PLACES)

# ISO 4217 (list one, active codes of money; the fund and metal codes without minor units left out).
_ISO_BY_PLACES = {
    0: "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF",
    3: "BHD IQD JOD KWD LYD OMR TND",
    4: "CLF UYW",
    2: "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD "
       "CAD CDF CHE CHF CHW CNY COP COU CRC CUC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL "
       "GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD "
       "LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN "
       "PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL "
       "THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG ZWL",
}
_CODE = re.compile(r"[A-Z][A-Z0-9]{2,7}")
ISO_4217 = {code: places for places, codes in _ISO_BY_PLACES.items() for code in codes.split()}



def iso_codes_by_places() -> dict:
    """{places: [codes]} of ISO 4217, sorted (for the database's checks of a game's limits)."""
    return {places: sorted(codes.split()) for places, codes in sorted(_ISO_BY_PLACES.items())}


CURRENCY_RULE = ("an ISO 4217 code (three capital letters, e.g. USD) or a code configured in "
                 "CURRENCY_MINOR_UNITS (3 to 8 capital letters or digits, e.g. BTC)")


def configured() -> dict:
    """``settings.CURRENCY_MINOR_UNITS``, checked: codes outside ISO 4217 with 0 to MAX_PLACES places."""
    units = getattr(settings, "CURRENCY_MINOR_UNITS", {}) or {}
    for code, places in units.items():
        if not isinstance(code, str) or not _CODE.fullmatch(code):
            raise ImproperlyConfigured(f"CURRENCY_MINOR_UNITS: {code!r} is not 3 to 8 capital letters or digits.")
        if code in ISO_4217 and places != ISO_4217[code]:
            raise ImproperlyConfigured(f"CURRENCY_MINOR_UNITS: {code} is ISO 4217's, with {ISO_4217[code]} places.")
        if isinstance(places, bool) or not isinstance(places, int) or not 0 <= places <= MAX_PLACES:
            raise ImproperlyConfigured(f"CURRENCY_MINOR_UNITS: {code} needs 0 to {MAX_PLACES} places.")
    return units


def places_of(code: str) -> int | None:
    """The decimal places of a currency, or None for a code that is neither ISO 4217 nor configured."""
    if code in ISO_4217:
        return ISO_4217[code]
    return configured().get(code)


def minor_places(code: str) -> int:
    """The places of a known currency; a currency stored before this rule existed and unknown now
    is read with two places, as all money was then."""
    places = places_of(code)
    return 2 if places is None else places


def minor_unit(code: str) -> Decimal:
    """The smallest amount of a currency: JPY 1, USD 0.01, KWD 0.001, BTC (8 places) 0.00000001."""
    return Decimal(1).scaleb(-minor_places(code))


def in_places(amount, code: str) -> Decimal:
    """An amount at its currency's places (USD 10.00, JPY 100, KWD 1.250), never losing a digit it
    has beyond them (an amount stored before the rule)."""
    amount = Decimal(str(amount))
    return amount.quantize(Decimal(1).scaleb(-max(minor_places(code), places_in(amount))))


def amount_text(amount, code: str | None = None) -> str:
    """An amount as data carries it (the API, audit events): plain digits at its currency's places,
    or, without a currency, with the places it needs and at least two ("10.00", "0.00012345")."""
    amount = Decimal(str(amount))
    return format(in_places(amount, code) if code else trimmed(amount), "f")


_UNITS = [Decimal(1).scaleb(-places) for places in range(MAX_PLACES + 1)]


def trimmed(amount: Decimal) -> Decimal:
    """The same amount with the places it needs and at least two: a money column's 10.01000000 is
    10.01, its 0E-8 is 0.00, its 0.00012345 stays (wallet.fields.MoneyField reads amounts so)."""
    try:
        for unit in _UNITS[2:]:
            shorter = amount.quantize(unit)
            if shorter == amount:
                return shorter
    except InvalidOperation:  # beyond the context's precision (a sum of 27 digits): as it is
        pass
    return amount


def validate_known_currency(code) -> None:
    if not isinstance(code, str) or places_of(code) is None:
        raise ValidationError(f"Unknown currency: enter {CURRENCY_RULE}.", code="unknown_currency")


def places_in(amount: Decimal) -> int:
    """The decimal places an amount needs: 100.50 → 1, 100 → 0, 1E+2 → 0."""
    exponent = amount.normalize().as_tuple().exponent if amount else 0
    return max(0, -exponent)


def places_problem(amount: Decimal, code: str) -> str | None:
    """Why ``amount`` cannot be an amount of ``code`` (more places than its minor unit), or None."""
    places = minor_places(code)
    if places_in(amount) > places:
        return (f"{code} has {places} decimal places: {amount:f} is not a whole number of {minor_unit(code):f}."
                if places else f"{code} has no decimal places: {amount:f} is not a whole number.")
    return None


def coarser_than(places: int) -> tuple:
    """The codes with fewer than ``places`` places, sorted: a stake with ``places`` places is refused
    in any of them (games.writes, where no Python reads the game's currency first)."""
    if places == 0:
        return ()
    return _coarser(places, tuple(sorted(configured().items())))


@lru_cache(maxsize=64)
def _coarser(places: int, configured_units: tuple) -> tuple:
    known = {**ISO_4217, **dict(configured_units)}
    return tuple(sorted(code for code, own in known.items() if own < places))
