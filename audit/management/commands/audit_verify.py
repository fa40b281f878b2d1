from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from audit.heads import parse_head, parse_public_key, public_key_bytes
from audit.selectors import audit_chain_check
from audit.verification import check_log


class Command(BaseCommand):
    help = ("Recompute every leaf and the root of the audit log, check them against every signed head (stored, and "
            "published to the head sink) and each head's signature with the public key alone; with --against FILE "
            "(a head audit_head printed earlier) also prove the log consistent with it. Exit 0 with one summary line, "
            "1 with a line naming the first problem, 2 when no public key is at hand.")

    def add_arguments(self, parser):
        parser.add_argument("--against", metavar="FILE", help="a head saved earlier (the JSON line audit_head printed)")
        parser.add_argument("--public-key", metavar="KEY",
                            help="the Ed25519 public key, base64 of its raw 32 bytes (default: AUDIT_PUBLIC_KEY, or "
                                 "the signing key's)")
        parser.add_argument("--heads", metavar="DIR",
                            help="the published heads to check the log against (default: AUDIT_HEAD_SINK_DIR)")
        parser.add_argument("--no-published-heads", action="store_true",
                            help="check the stored heads only, not those published outside the database")
        parser.add_argument("--archives", metavar="DIR",
                            help="the files of archived months (partitions archive --to DIR): each checked against "
                                 "the manifest in the log, and the leaves of its events against its rows")

    def _public_key(self, given: str | None) -> bytes:
        try:
            return parse_public_key(given) if given else public_key_bytes()
        except (ValueError, ImproperlyConfigured) as error:
            raise CommandError(f"cannot verify: {error}", returncode=2) from None

    def handle(self, *args, against=None, public_key=None, heads=None, no_published_heads=False, archives=None,
               **options):
        key = self._public_key(public_key)
        given = None
        if against:
            try:
                given = parse_head(Path(against).read_text())
            except (OSError, ValueError) as error:
                raise CommandError(f"FAILED: cannot read the head in {against}: {error}", returncode=1) from None
        published = "" if no_published_heads else (heads or settings.AUDIT_HEAD_SINK_DIR)
        check = check_log(given, published=published, public_key=key, archives=archives)
        if check.problem is None:
            chained, _head, chain_problem = audit_chain_check()
            if chain_problem:
                check.problem = f"altered event: the hash chain of the events before the Merkle log: {chain_problem}"
        if check.problem:
            raise CommandError(f"FAILED: {check.problem}", returncode=1)
        consistent = f"; consistent with the head given of {given['tree_size']} events" if given else ""
        archived = (f"; {check.archived} leaves of archived events, {check.archived_checked} of them checked "
                    f"against their archive files" if check.archived else "")
        self.stdout.write(
            f"OK: {check.tree_size} events in the log, root {check.root_hash}; {check.heads_checked} signed heads "
            f"hold, {check.published_checked} published heads hold{consistent}; {check.pending} events pending"
            f"{archived}")
