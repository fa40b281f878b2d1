import pytest

from monitoring import readiness


@pytest.fixture(autouse=True)
def no_earlier_readiness():
    """No readiness answer reused from an earlier test (READINESS_CACHE_SECONDS)."""
    readiness._Last.at = float("-inf")
