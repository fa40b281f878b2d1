from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    """The benchmark commands (no models): each measures the product against a floor in one run."""

    name = "benchmarks"
    verbose_name = "Benchmarks"
