import json

from django.core.management.base import BaseCommand, CommandError

from audit.services import audit_head_sign
from core.errors import Conflict


class Command(BaseCommand):
    help = ("Sequence pending audit events, sign a tree head of the whole log unless one covers it, publish it "
            "to the head sink, and print it as one JSON line: tree_size, root_hash, timestamp, signature, key_id.")

    def handle(self, *args, **options):
        try:
            head = audit_head_sign()
        except Conflict as error:
            raise CommandError(f"FAILED: {error.message}") from None
        self.stdout.write(json.dumps(head.as_json()))
