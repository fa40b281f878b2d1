"""The daily task that archives the months past RETENTION_MONTHS_ONLINE (off while
PARTITIONS_ARCHIVE_DIR is not set)."""

from django.db import migrations

from dbutils.periodic_tasks import Periodic, SchedulePeriodicTasks


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0010_partition_actions_and_schedule'),
        ('django_celery_beat', '0019_alter_periodictasks_options'),
    ]

    operations = [
        SchedulePeriodicTasks(Periodic(
            "Archive of the months past retention", "audit.partitions_archive", 86400,
            "Archive every month before the RETENTION_MONTHS_ONLINE kept online into PARTITIONS_ARCHIVE_DIR "
            "(nothing is done while it is not set).")),
    ]
