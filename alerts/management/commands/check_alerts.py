from django.core.management.base import BaseCommand, CommandError

from alerts.checks import CHECKS
from alerts.services import alerts_check


class Command(BaseCommand):
    help = "Run the alert checks now (all, or those named) and print what each found and opened."

    def add_arguments(self, parser):
        parser.add_argument("checks", nargs="*", help=f"Any of: {', '.join(CHECKS)}.")

    def handle(self, *args, checks, **options):
        unknown = sorted(set(checks) - set(CHECKS))
        if unknown:
            raise CommandError(f"Unknown check(s): {', '.join(unknown)}. Known: {', '.join(CHECKS)}.")
        for name, (found, opened) in alerts_check(checks or None).items():
            self.stdout.write(f"{name}: {found} finding(s), {opened} alert(s) opened")
