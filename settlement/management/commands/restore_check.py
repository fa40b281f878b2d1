"""The restore drill: a backup restored into a fresh database and proved (docs/operations/backup-restore.md)."""

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connections
from django.db.migrations.executor import MigrationExecutor

from audit.heads import published_heads
from dbutils import backup
from dbutils.postgresql import urls
from settlement import aggregates
from wallet.models import Account
from wallet.selectors import accounts_off_their_ledger

ALIAS = "restore_check"
DATABASE_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
MANAGE = Path(__file__).resolve().parents[3] / "manage.py"


class Command(BaseCommand):
    help = ("Restore a backup (a pg_dump -Fc archive, or one taken now of the current database) into a fresh "
            "database and prove it: migrations current, every balance equal to its ledger, the aggregates equal to "
            "what the raw rows give before and after a rebuild, and audit_verify --against the newest published "
            "head. Prints each check and the times taken; exits 1 when a check fails. The restored database is "
            "dropped afterwards unless --keep.")

    def add_arguments(self, parser):
        parser.add_argument("--dump", metavar="FILE", help="a pg_dump -Fc archive (default: dump the database now)")
        parser.add_argument("--database-url", metavar="URL",
                            help="the database to dump, and the server to restore on, as a role that may create "
                                 "databases: the tables' owner (MIGRATION_DATABASE_URL). Default: DATABASE_URL")
        parser.add_argument("--target", metavar="NAME",
                            help="the fresh database to restore into, which must not exist (default: "
                                 "<name>_restore_check)")
        parser.add_argument("--heads", metavar="DIR", help="the published heads (default: AUDIT_HEAD_SINK_DIR)")
        parser.add_argument("--keep", action="store_true", help="keep the restored database")

    def handle(self, *args, dump=None, database_url=None, target=None, heads=None, keep=False, **options):
        params = urls.parse(database_url) if database_url else dict(connections["default"].settings_dict)
        target = target or f"{params['NAME']}_restore_check"
        if not DATABASE_NAME.match(target):
            raise CommandError(f"--target: {target!r} is not a plain database name (a-z, 0-9, _)")
        if backup.database_exists(params, target):
            raise CommandError(f"--target: the database {target} exists; the drill restores into a fresh one")
        tools = backup.tools_dir(backup.server_major(params))
        with tempfile.TemporaryDirectory() as work:
            archive = Path(dump) if dump else Path(work) / "backup.dump"
            if not dump:
                taken = backup.dump(params, archive, tools)
                self.stdout.write(f"dump: {taken.seconds:.2f} s, {taken.size_bytes / 1e6:.1f} MB "
                                  f"(pg_dump -Fc of {params['NAME']}, {tools})")
            backup.create_database(params, target)
            try:
                restored = backup.restore(params, archive, target, tools)
                self.stdout.write(f"restore: {restored.seconds:.2f} s into {target}")
                started = time.perf_counter()
                results = self._checks(params, target, Path(heads or settings.AUDIT_HEAD_SINK_DIR))
            finally:
                self._forget_alias()
                if not keep:
                    backup.drop_database(params, target)
        for passed, name, detail in results:
            self.stdout.write(f"{'ok  ' if passed else 'FAIL'} {name}: {detail}")
        failed = [name for passed, name, _detail in results if not passed]
        if failed:
            raise CommandError(f"restore_check: FAILED ({', '.join(failed)})", returncode=1)
        self.stdout.write(f"restore_check: passed (checks {time.perf_counter() - started:.2f} s)")

    def _checks(self, params: dict, target: str, heads: Path) -> list:
        connections.databases[ALIAS] = {**connections.databases["default"], "NAME": target,
                                        **{key: params.get(key) for key in ("USER", "PASSWORD", "HOST", "PORT")}}
        return [self._migrations(), self._balances(), self._aggregates(), self._audit(params, target, heads)]

    def _forget_alias(self) -> None:
        if ALIAS in connections.databases:
            connections[ALIAS].close()
            del connections[ALIAS]
            del connections.databases[ALIAS]

    def _migrations(self):
        executor = MigrationExecutor(connections[ALIAS])
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
        return not plan, "migrations current", f"{len(plan)} to apply" + (
            f" (first {plan[0][0].app_label}.{plan[0][0].name})" if plan else "")

    def _balances(self):
        off = accounts_off_their_ledger(using=ALIAS)
        accounts = Account.objects.using(ALIAS).count()
        detail = f"{accounts} accounts" + (f"; off their ledger: {off[:5]}" if off else "")
        return not off, "every balance equals its ledger", detail

    def _aggregates(self):
        before = aggregates.check(using=ALIAS)
        rows = aggregates.rebuild(using=ALIAS)
        after = aggregates.check(using=ALIAS)
        disagree = [check.label for check in before + after if not check.agrees]
        stored = {check.label: check.stored for check in before}
        detail = (f"{len(rows)} tables, stored rows as restored {stored}, rebuilt {rows}"
                  + (f"; disagree: {disagree}" if disagree else ""))
        return not disagree and stored == rows, "aggregates rebuild equal", detail

    def _audit(self, params: dict, target: str, heads: Path):
        published = [(head["tree_size"], heads / name) for name, head in published_heads(heads) if head is not None]
        if not published:
            return False, "audit_verify --against the newest published head", f"no published head in {heads}"
        newest = max(published)[1]
        owner_url = urls.to_url(params, name=target, application_name="restore_check")
        run = subprocess.run([sys.executable, str(MANAGE), "audit_verify", f"--against={newest}", f"--heads={heads}"],
                             env={**os.environ, "DATABASE_URL": owner_url}, capture_output=True, text=True)
        said = (run.stdout + run.stderr).strip().splitlines()
        return run.returncode == 0, f"audit_verify --against {newest.name}", said[-1] if said else run.returncode
