"""Celery beat runs these (schedules from audit's migrations): the sequencer every second, a
signed head every minute, the partitions of the months ahead every day, the compaction of the months
closed every day, and every day the archive of the months past RETENTION_MONTHS_ONLINE (only where
PARTITIONS_ARCHIVE_DIR is set)."""

from celery import shared_task
from django.conf import settings

from audit.partitioning import partitions_archive, partitions_compact, partitions_ensure, retention_start
from audit.services import audit_head_sign, audit_sequence


@shared_task(name="audit.sequence")
def sequence() -> int:
    return audit_sequence()


@shared_task(name="audit.sign_head")
def sign_head() -> int:
    return audit_head_sign().tree_size


@shared_task(name="audit.partitions_ensure")
def ensure_partitions() -> list:
    """As the tables' owner (PARTITIONS_DATABASE_URL): the application role cannot attach."""
    return partitions_ensure(using=settings.PARTITIONS_DATABASE)


@shared_task(name="audit.partitions_compact")
def compact_partitions() -> list:
    """The months closed and not yet compacted, as the tables' owner (REINDEX is the owner's)."""
    return [done["partition"] for done in partitions_compact(using=settings.PARTITIONS_DATABASE)]


@shared_task(name="audit.partitions_archive")
def archive_partitions() -> list:
    """The months before the RETENTION_MONTHS_ONLINE kept online, archived into
    PARTITIONS_ARCHIVE_DIR as the tables' owner; the partitions written. Off (nothing done) while
    that directory is not set: where the files go is the operator's choice."""
    if not settings.PARTITIONS_ARCHIVE_DIR:
        return []
    archived = partitions_archive(before=retention_start(), to=settings.PARTITIONS_ARCHIVE_DIR,
                                  using=settings.PARTITIONS_DATABASE)
    return [manifest["partition"] for manifest in archived.manifests]
