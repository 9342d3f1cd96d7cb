"""Write the files made from the chart, or check that they are up to date.

- ``deploy/prometheus/alerts.yaml``: the chart's PrometheusRule rules rendered with
  ``prometheusRule.selector: ""`` (the workers found by their metrics' names, whatever their
  scrape job is called) and the other defaults, for a Prometheus without the Operator.

Rendering uses Helm's Go SDK (``helm-python-sdk``, the ``deploy`` extra), as tests/deploy does.

Usage: .venv/bin/python scripts/render_from_chart.py [--check]
    --check: write nothing; exit 1 and name the files that differ from what the chart gives.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
CHART = REPO / "helm" / "stream-cleaner"
ALERTS = REPO / "deploy" / "prometheus" / "alerts.yaml"
ALERTS_HEADER = """\
# Prometheus alert rules of the stream-cleaner workers, for a Prometheus without the
# Operator (rule_files: [alerts.yaml]). Generated from the chart by
# scripts/render_from_chart.py: the chart's PrometheusRule (prometheusRule.enabled) renders
# the same rules with prometheusRule.selector "" and the default thresholds; tests/deploy keeps
# them equal and runs `promtool check rules` and `promtool test rules` (alerts.test.yaml) on
# this file. The rules find the workers by their metrics' names (stream_cleaner_*), whatever
# the scrape job is called: StreamCleanerWorkerDown counts a target that is down as a worker
# when it exported stream_cleaner_documents_received_total in the last hour. Each rule's
# runbook_url is its section of docs/runbook.md: replace the prefix with where your team
# reads it.
"""


class _Dumper(yaml.SafeDumper):
    """Block style, long strings folded (``>-``) as a person would write them."""


def _string(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = ">" if len(value) > 80 and "\n" not in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _string)


def render_chart(values: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The chart rendered with ``values`` (release ``stream-cleaner``): {template: [objects]}."""
    import helm_python

    with helm_python.Chart.load(CHART) as chart:
        files = chart.render(values, name="stream-cleaner", namespace="default", is_install=True)
    return {
        path: [doc for doc in yaml.safe_load_all(text) if doc]
        for path, text in files.items()
        if path.endswith(".yaml")
    }


def alerts_text() -> str:
    """What deploy/prometheus/alerts.yaml must hold."""
    values = {
        "kafka": {"bootstrapServers": "kafka:9092"},
        "prometheusRule": {"enabled": True, "selector": ""},
    }
    (rule,) = render_chart(values)["stream-cleaner/templates/prometheusrule.yaml"]
    body = yaml.dump(
        rule["spec"], Dumper=_Dumper, sort_keys=False, width=100, default_flow_style=False
    )
    return ALERTS_HEADER + body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="check, write nothing")
    args = parser.parse_args(argv)
    stale = []
    for path, text in ((ALERTS, alerts_text()),):
        if path.read_text() != text:
            stale.append(path)
            if not args.check:
                path.write_text(text)
    for path in stale:
        verb = "differs from what the chart gives" if args.check else "written"
        print(f"{path.relative_to(REPO)}: {verb}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
