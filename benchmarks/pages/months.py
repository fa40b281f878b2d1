"""The pages benchmark's database as if it had run since the data's first day: each row in the
partition of its own month, as production writes it (an id carries the month it was written in,
dbutils.partitions), so that reads prune and an archive has whole past months to move."""

from datetime import UTC, datetime

from django.db import connection
from psycopg import sql

from audit.partitioning import MONTHS_AHEAD, PARTITIONED_TABLES
from dbutils import partitions


def months_between(first: datetime, last: datetime) -> int:
    return (last.year - first.year) * 12 + last.month - first.month


def open_months(start: datetime, now: datetime) -> None:
    """Every partitioned table's legacy partition made to end where ``start``'s month begins (a
    fresh database's ends at the month it was migrated in, so no earlier month could be attached;
    it holds no row below that bound), then a partition for each month from ``start``'s on."""
    first = start.astimezone(UTC).date().replace(day=1)
    for table in PARTITIONED_TABLES:
        legacy = sql.Identifier(f"{table}_legacy")
        with connection.cursor() as cursor:
            raw = cursor.cursor
            if partitions.legacy_end(table) > partitions.month_start_id(first):
                raw.execute(sql.SQL("ALTER TABLE {} DETACH PARTITION {}").format(sql.Identifier(table), legacy))
                raw.execute(sql.SQL("ALTER TABLE {} ATTACH PARTITION {} FOR VALUES FROM (MINVALUE) TO ({})").format(
                    sql.Identifier(table), legacy, sql.Literal(partitions.month_start_id(first))))
        partitions.ensure(table, ahead=months_between(start, now) + MONTHS_AHEAD, today=first)


def month_id_sql(moment: str, table: str) -> str:
    """SQL of an id for a row of ``table`` written at the timestamp expression ``moment``: its month
    (UTC) and the table's sequence, as the table's own default does with the database's clock."""
    month = f"(({moment}) AT TIME ZONE 'UTC')"
    return (f"((((extract(year from {month})::int - {partitions.EPOCH_YEAR}) * 12 + extract(month from {month})::int"
            f" - 1)::bigint << {partitions.MONTH_SHIFT}) + nextval('{table}_id_seq'))")
