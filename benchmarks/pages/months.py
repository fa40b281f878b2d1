"""The pages benchmark's database as if it had run since the data's first day: each row in the
partition of its own month, as production writes it (an id carries the month it was written in,
dbutils.partitions), so that reads prune and an archive has whole past months to move."""

from datetime import UTC, datetime

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
        if partitions.legacy_end(table) > partitions.month_start_id(first):
            partitions.move_legacy_end(table, partitions.month_start_id(first))
        partitions.ensure(table, ahead=months_between(start, now) + MONTHS_AHEAD, today=first)
