import json

from django.core.management.base import BaseCommand, CommandError

from audit.selectors import audit_chain_check, audit_head


class Command(BaseCommand):
    help = ("Walk the audit trail's hash chain from the first event and name the first broken link, "
            "or confirm the head hash (publish it outside the database to pin the whole history).")

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print the result as one JSON object")

    def handle(self, *args, **options):
        checked, last_good_hash, problem = audit_chain_check()
        if problem:
            if options["json"]:
                self.stdout.write(json.dumps({"ok": False, "checked": checked, "problem": problem}))
            raise CommandError(f"audit chain broken after {checked} good events: {problem}", returncode=1)
        head = audit_head()
        if options["json"]:
            self.stdout.write(json.dumps({
                "ok": True, "events": checked, "head_id": head["id"], "head_hash": head["hash"],
                "head_created_at": head["created_at"].isoformat() if head["created_at"] else None,
            }))
        else:
            self.stdout.write(f"OK: {checked} events chained; head event {head['id']} hash {head['hash']}")
