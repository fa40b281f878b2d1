"""bench_pages: never touches the configured database."""

import pytest

from benchmarks.pages.database import bench_database_name
from benchmarks.pages.report import percentile


def test_its_own_database():
    assert bench_database_name("baccarat") == "baccarat_pages_bench"
    assert bench_database_name("baccarat_pages_bench") == "baccarat_pages_bench"


def test_percentile_is_nearest_rank():
    values = list(range(1, 101))
    assert percentile(values, 0.5) == 50
    assert percentile(values, 0.95) == 95
    assert percentile([7.0], 0.95) == 7.0
    assert percentile([3, 1, 2], 0.5) == 2
    with pytest.raises(ValueError):
        percentile([], 0.5)
