"""The directory where every process of a host writes its metrics (prometheus_client's multiprocess
mode: PROMETHEUS_MULTIPROC_DIR, set before prometheus_client is imported). No Django here: the
gunicorn configuration imports it."""

import os
import re
from pathlib import Path

# prometheus_client names each file <kind>_<pid>.db
_FILE = re.compile(r"^[a-z_]+_(\d+)\.db$")


def ensure_directory() -> None:
    """Make PROMETHEUS_MULTIPROC_DIR, if set and missing."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        os.makedirs(directory, exist_ok=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: running
        return True
    return True


def remove_dead_files(directory: str) -> int:
    """Delete the files of processes that no longer run (a previous start's), so that a restarted
    server's counters start again from zero (Prometheus takes that as a counter reset); the files
    of running processes (the Celery workers beside gunicorn) are kept. The number deleted."""
    removed = 0
    for path in Path(directory).glob("*.db"):
        match = _FILE.match(path.name)
        if match and not _running(int(match[1])):
            path.unlink(missing_ok=True)
            removed += 1
    return removed
