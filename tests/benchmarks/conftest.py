"""Fixtures of the benchmarks' tests."""

import pytest
from django.db import connection

from benchmarks.settlement import data


@pytest.fixture
def events_table():
    """The benchmark's events table, which the test database's flush does not know of, dropped after."""
    yield data.T_EVENTS
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {data.T_EVENTS}")
