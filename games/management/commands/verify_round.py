"""Recompute PF-1 rounds from their seeds, as a player's verifier does (provably-fair.md).

    manage.py verify_round --server-seed S --client-seed C --nonce N [--decks D]
    manage.py verify_round --input FILE        (FILE may be "-" for standard input)

Each round is printed as one line of JSON in the form of ``expected`` in pf1-vectors.json. With
--input, every non-blank line is a JSON object with the keys server_seed, client_seed, nonce and
decks (others are ignored), and the output has one line per input line, in order. A bad input ends
the command with exit status 2 and one line on standard error naming the field (and, with --input,
the line number); the rounds of the lines before it have been printed.
"""

import json
import sys

from django.core.management.base import BaseCommand

from games.command_arguments import integer_option, usage_error
from games.engine import (
    Dealer,
    Pf1InputError,
    validate_client_seed,
    validate_decks,
    validate_nonce,
    validate_server_seed,
    verify_round,
)

INPUT_FIELDS = ("server_seed", "client_seed", "nonce", "decks")
DEFAULT_DECKS = 8
# Output is written this many rounds at a time; dealers kept for this many seed pairs.
CHUNK_LINES = 4096
DEALER_CACHE_SIZE = 1024

# json.dumps(obj, ensure_ascii=False) with the encoder built once instead of once per call.
_encode = json.JSONEncoder(ensure_ascii=False).encode


class Command(BaseCommand):
    help = "Recompute provably fair (PF-1) rounds from server seed, client seed, nonce and decks."
    # Pure computation: no database, so no system checks (they would import every app).
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--server-seed", help="the revealed server seed, 64 lowercase hex characters")
        parser.add_argument("--client-seed", help="the client seed, 1 to 64 characters")
        parser.add_argument("--nonce", help="the round's nonce, an integer from 0")
        parser.add_argument("--decks", help=f"decks in the shoe, 1 to 8 (default {DEFAULT_DECKS})")
        parser.add_argument(
            "--input", metavar="FILE",
            help='JSON lines {"server_seed", "client_seed", "nonce", "decks"}; "-" reads standard input',
        )

    def handle(self, *args, **options):
        given = [field for field in INPUT_FIELDS if options[field] is not None]
        if options["input"] is not None:
            if given:
                raise usage_error(f"{given[0]}: give either --input or one round's options, not both")
            self.verify_lines(options["input"])
            return
        for field in ("server_seed", "client_seed", "nonce"):
            if options[field] is None:
                raise usage_error(f"{field}: required (--{field.replace('_', '-')}) unless --input is given")
        try:
            server_seed = validate_server_seed(options["server_seed"])
            client_seed = validate_client_seed(options["client_seed"])
        except Pf1InputError as error:
            raise usage_error(str(error)) from None
        nonce = integer_option(options["nonce"], validate_nonce)
        decks = options["decks"] if options["decks"] is not None else DEFAULT_DECKS
        decks = integer_option(decks, validate_decks)
        self.stdout.write(_encode(verify_round(server_seed, client_seed, nonce, decks)))

    def verify_lines(self, path: str) -> None:
        if path == "-":
            self.verify_stream(sys.stdin.buffer)
            return
        try:
            stream = open(path, "rb")  # noqa: SIM115 - closed by the with below; only open() may fail here
        except OSError as error:
            raise usage_error(f"input: cannot open {path}: {error.strerror}") from None
        with stream:
            self.verify_stream(stream)

    def verify_stream(self, stream) -> None:
        """One output line per input line; a Dealer is keyed once per seed pair and reused."""
        dealers = {}
        output = []
        try:
            for number, raw in enumerate(stream, 1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise _line_error(number, "not valid UTF-8") from None
                if not text.strip():
                    continue
                try:
                    item = json.loads(text)
                except ValueError as error:
                    raise _line_error(number, f"not valid JSON ({error.msg}, column {error.colno})") from None
                if not isinstance(item, dict):
                    raise _line_error(number, "must be a JSON object")
                for field in INPUT_FIELDS:
                    if field not in item:
                        raise _line_error(number, f"{field}: missing")
                try:
                    dealer = _dealer(dealers, item["server_seed"], item["client_seed"])
                    output.append(_encode(dealer.verify(validate_nonce(item["nonce"]),
                                                        validate_decks(item["decks"]))))
                except Pf1InputError as error:
                    raise _line_error(number, str(error)) from None
                if len(output) == CHUNK_LINES:
                    self.write_lines(output)
        finally:
            # The rounds of the lines before a bad one are printed, then the error.
            self.write_lines(output)

    def write_lines(self, output: list) -> None:
        if output:
            output.append("")
            self.stdout.write("\n".join(output), ending="")
            output.clear()


def _dealer(dealers: dict, server_seed, client_seed) -> Dealer:
    if type(server_seed) is str and type(client_seed) is str:
        dealer = dealers.get((server_seed, client_seed))
        if dealer is not None:
            return dealer
    validate_server_seed(server_seed)
    validate_client_seed(client_seed)
    if len(dealers) >= DEALER_CACHE_SIZE:
        dealers.clear()
    dealer = dealers[server_seed, client_seed] = Dealer(server_seed, client_seed)
    return dealer


def _line_error(number: int, message: str):
    return usage_error(f"line {number}: {message}")
