from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from audit.heads import parse_head
from audit.selectors import audit_chain_check
from audit.verification import check_log


class Command(BaseCommand):
    help = ("Recompute every leaf and the root of the audit log, check them against every signed head and each "
            "head's signature; with --against FILE (a head audit_head printed earlier) also prove the log "
            "consistent with it. Exit 0 with one summary line, or 1 with a line naming the first problem.")

    def add_arguments(self, parser):
        parser.add_argument("--against", metavar="FILE", help="a head saved earlier (the JSON line audit_head printed)")

    def handle(self, *args, against=None, **options):
        given = None
        if against:
            try:
                given = parse_head(Path(against).read_text())
            except (OSError, ValueError) as error:
                raise CommandError(f"FAILED: cannot read the head in {against}: {error}", returncode=1) from None
        check = check_log(given)
        if check.problem is None:
            chained, _head, chain_problem = audit_chain_check()
            if chain_problem:
                check.problem = f"altered event: the hash chain of the events before the Merkle log: {chain_problem}"
        if check.problem:
            raise CommandError(f"FAILED: {check.problem}", returncode=1)
        consistent = f"; consistent with the head given of {given['tree_size']} events" if given else ""
        self.stdout.write(
            f"OK: {check.tree_size} events in the log, root {check.root_hash}; {check.heads_checked} signed heads "
            f"hold{consistent}; {check.pending} events pending")
