import json

from django.core.management.base import BaseCommand

from audit.services import audit_head_sign


class Command(BaseCommand):
    help = ("Sequence pending audit events, sign a tree head of the whole log unless one covers it, publish it "
            "to the head sink, and print it as one JSON line: tree_size, root_hash, timestamp, signature, key_id.")

    def handle(self, *args, **options):
        self.stdout.write(json.dumps(audit_head_sign().as_json()))
