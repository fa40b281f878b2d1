"""Reading /metrics as Prometheus would: {(sample name, labels): value}."""

from prometheus_client.parser import text_string_to_metric_families

TOKEN = "metrics-test-token-" + "x" * 20


def parse(text: str) -> dict:
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def value(samples: dict, name: str, **labels) -> float:
    """The sample's value; 0 when it is not there yet (a counter not incremented since the start)."""
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)
