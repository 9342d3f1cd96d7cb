"""Write the files made from the chart, or check that they are up to date.

- ``deploy/prometheus/alerts.yaml``: the chart's PrometheusRule rules rendered with
  ``prometheusRule.selector: ""`` (the workers found by their metrics' names, whatever their
  scrape job is called) and the other defaults, for a Prometheus without the Operator.
- The values table of ``helm/stream-cleaner/README.md`` (between its ``values`` markers):
  one row per value of ``values.yaml`` with a ``# --`` comment (helm-docs' convention), its
  default and that comment. A map whose entries have no comment of their own is one row,
  its whole default shown.

Rendering uses Helm's Go SDK (``helm-python-sdk``, the ``deploy`` extra), as tests/deploy does.

Usage: .venv/bin/python scripts/render_from_chart.py [--check]
    --check: write nothing; exit 1 and name the files that differ from what the chart gives.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
CHART = REPO / "helm" / "stream-cleaner"
ALERTS = REPO / "deploy" / "prometheus" / "alerts.yaml"
VALUES = CHART / "values.yaml"
CHART_README = CHART / "README.md"
TABLE_START = "<!-- values table: scripts/render_from_chart.py writes it from values.yaml -->"
TABLE_END = "<!-- end of the values table -->"
_KEY = re.compile(r"^( *)([A-Za-z0-9_]+):")
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


def value_comments(text: str) -> dict[str, str]:
    """The ``# --`` comment of each key of a values file, by dotted path (helm-docs' rule: the
    comment lines right above the key, the first one starting with ``# --``)."""
    found: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    comment: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            comment.append(stripped.lstrip("#").strip())
            continue
        match = _KEY.match(line)
        if match is None:
            comment = []
            continue
        indent, key = len(match.group(1)), match.group(2)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, key))
        path = ".".join(k for _, k in stack)
        starts = [i for i, c in enumerate(comment) if c.startswith("--")]
        if starts:
            lines = comment[starts[-1] :]
            lines[0] = lines[0][2:].strip()
            found[path] = " ".join(part for part in lines if part)
        comment = []
    return found


def _lookup(values: Any, path: str) -> Any:
    for key in path.split("."):
        values = values[key]
    return values


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def values_rows(text: str) -> list[tuple[str, Any, str, bool]]:
    """(path, default, comment, whole) per documented value, in the file's order; ``whole``:
    the row stands for the value and everything in it (no entry of it has a comment)."""
    values = yaml.safe_load(text)
    comments = value_comments(text)
    rows = []
    for path, comment in comments.items():
        inner = any(other.startswith(path + ".") for other in comments)
        rows.append((path, _lookup(values, path), comment, not inner))
    return rows


def values_table(text: str) -> str:
    """The Markdown table of the documented values of a values file."""
    lines = ["| Key | Default | Description |", "|---|---|---|"]
    for path, default, comment, whole in values_rows(text):
        shown = f"`{_cell(json.dumps(default))}`" if whole else ""
        lines.append(f"| `{path}` | {shown} | {_cell(comment)} |")
    return "\n".join(lines) + "\n"


def chart_readme_text() -> str:
    """What helm/stream-cleaner/README.md must hold: itself with the table made again."""
    readme = CHART_README.read_text()
    start = readme.index(TABLE_START) + len(TABLE_START)
    end = readme.index(TABLE_END)
    return readme[:start] + "\n\n" + values_table(VALUES.read_text()) + "\n" + readme[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="check, write nothing")
    args = parser.parse_args(argv)
    stale = []
    for path, text in ((ALERTS, alerts_text()), (CHART_README, chart_readme_text())):
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
