"""The shipped Prometheus rules and Grafana dashboard: promtool checks the rules and runs their unit
tests (deploy/prometheus/rules.test.yml), and every metric they name is one the application exports.

promtool comes with Debian's prometheus package (.ci/run installs it); without it these skip, but
fail under REQUIRE_SERVICES=1. PROMTOOL names another binary.
"""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.test import Client

from tests.conftest import service_missing
from tests.monitoring.helpers import TOKEN

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
RULES = DEPLOY / "prometheus" / "rules.yml"
RULE_TESTS = DEPLOY / "prometheus" / "rules.test.yml"
DASHBOARD = DEPLOY / "grafana" / "baccarat.json"
NAME = re.compile(r"\bbaccarat_[a-z_]+\b")  # a metric (recorded series are baccarat:…)


@pytest.fixture
def promtool() -> str:
    found = os.environ.get("PROMTOOL") or shutil.which("promtool")
    if not found:
        service_missing("needs promtool (apt-get install prometheus)")
    return found


def run(promtool: str, *args: str) -> str:
    result = subprocess.run([promtool, *args], cwd=RULES.parent, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_promtool_checks_the_rules(promtool):
    assert "SUCCESS" in run(promtool, "check", "rules", RULES.name)


def test_promtool_runs_the_rules_unit_tests(promtool):
    assert "SUCCESS" in run(promtool, "test", "rules", RULE_TESTS.name)


def exported_names(text: str) -> set:
    """The series names a scrape can hold: a counter's _total, a histogram's _bucket, _count and _sum."""
    from prometheus_client.parser import text_string_to_metric_families

    suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_count", "_sum"]}
    return {family.name + suffix for family in text_string_to_metric_families(text)
            for suffix in suffixes.get(family.type, [""])}


@pytest.mark.django_db
def test_every_metric_the_rules_and_the_dashboard_name_is_exported(settings):
    settings.METRICS_TOKEN = TOKEN
    response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    exported = exported_names(response.content.decode())
    dashboard = json.loads(DASHBOARD.read_text())
    expressions = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    assert expressions
    named = set(NAME.findall(RULES.read_text())) | set(NAME.findall(RULE_TESTS.read_text()))
    named |= {name for expression in expressions for name in NAME.findall(expression)}
    assert "baccarat_bets_accepted_total" in named and "baccarat_settlement_lag_seconds_bucket" in named
    assert named - exported == set()
