"""The Grafana dashboard and the Prometheus alert rules under deploy/.

Every metric they name must be one the worker exports: checked against the worker's registry,
and against the /metrics page of a real worker that the chart's own settings start (after the
chart's topic Job created its topics on a real broker). promtool checks the rules and runs
their unit tests (deploy/prometheus/alerts.test.yaml).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from ..conftest import REPO
from .conftest import (
    CHART,
    container,
    container_env,
    load_values,
    need_module,
    need_prometheus,
    need_promtool,
    objects,
    only,
    render_from_chart,
)

DASHBOARD = REPO / "deploy" / "grafana" / "stream-cleaner.json"
RULES = REPO / "deploy" / "prometheus" / "alerts.yaml"
RULE_TESTS = REPO / "deploy" / "prometheus" / "alerts.test.yaml"
RUNBOOK = REPO / "docs" / "runbook.md"
ALERTS = {
    "StreamCleanerLagGrowing",
    "StreamCleanerStalled",
    "StreamCleanerDeadLetterRateHigh",
    "StreamCleanerOffsetReset",
    "StreamCleanerWorkerDown",
    "StreamCleanerAbsent",
}
# series that Prometheus itself makes for every target
PROMETHEUS_SERIES = {"up"}
# a metric name: the word before a selector, a range or the end of a sub-expression
_NAME = re.compile(r"\b((?:stream_cleaner|process)_[a-z0-9_]+|up)\b(?=\s*(?:\{|\[|\)|$|\s))")
WORKER_SECONDS = 90.0
LAG_SECONDS = 20.0


def _dashboard_exprs() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    exprs += [v["definition"] for v in dashboard["templating"]["list"] if v.get("type") == "query"]
    return exprs


def _rule_exprs() -> list[str]:
    yaml = need_module("yaml")
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule["expr"] for group in groups for rule in group["rules"]]


def _names(exprs: list[str]) -> set[str]:
    return {name for expr in exprs for name in _NAME.findall(expr)}


def _sample_names(registry: Any) -> set[str]:
    """Every sample name the registry's families can expose, labelled or not yet."""
    suffixes = {
        "counter": ("_total", "_created"),
        "histogram": ("_bucket", "_count", "_sum", "_created"),
        "summary": ("", "_count", "_sum", "_created"),
        "gauge": ("",),
    }
    names = set()
    for family in registry.collect():
        names.update(family.name + s for s in suffixes.get(family.type, ("",)))
        names.update(sample.name for sample in family.samples)
    return names


def _scraped_names(text: str) -> set[str]:
    return {
        re.split(r"[{ ]", line, maxsplit=1)[0]
        for line in text.splitlines()
        if line and not line.startswith("#")
    }


def test_the_name_pattern_finds_metric_names() -> None:
    expr = (
        "histogram_quantile(0.9, sum by (le) "
        '(rate(stream_cleaner_stage_duration_seconds_bucket{job=~"$job"}[5m])))'
        " / up + process_resident_memory_bytes"
    )
    assert _names([expr]) == {
        "stream_cleaner_stage_duration_seconds_bucket",
        "up",
        "process_resident_memory_bytes",
    }


def test_dashboard_and_rules_use_metrics_the_worker_registers() -> None:
    need_module("faust")
    from stream_cleaner.streaming.app import WorkerSettings, create_app, runtime_of

    app = create_app(WorkerSettings(group_id=f"names-{uuid.uuid4().hex[:8]}"))
    exported = _sample_names(runtime_of(app).metrics.registry)
    used = _names(_dashboard_exprs()) | _names(_rule_exprs())
    assert len(used) >= 15
    assert used - exported - PROMETHEUS_SERIES == set()


def test_dashboard_shows_what_operators_need() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    titles = {p["title"] for p in panels}
    for title in (
        "Documents per second",
        "Bytes per second",
        "Kept-sentence ratio",
        "Sentence perplexity",
        "Stage latency p50",
        "Stage latency p95",
        "Stage latency p99",
        "Dead letters by reason",
        "Consumer lag per partition",
        "Workers",
        "Memory (resident)",
    ):
        assert title in titles
    heatmap = next(p for p in panels if p["title"] == "Sentence perplexity")
    assert heatmap["type"] == "heatmap"
    assert heatmap["targets"][0]["format"] == "heatmap"
    assert "_bucket" in heatmap["targets"][0]["expr"]
    for panel in panels:
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        for target in panel["targets"]:
            # every query is scoped to the selected workers
            assert 'job=~"$job"' in target["expr"], target["expr"]
    names = {v["name"] for v in dashboard["templating"]["list"]}
    assert names == {"datasource", "job"}


def test_every_metric_of_the_worker_has_a_panel() -> None:
    """Each family of the worker's own metrics is read by some panel (Faust's sensors and the
    process collector's beyond memory and CPU are extras)."""
    need_module("faust")
    from stream_cleaner.streaming.app import WorkerSettings, create_app, runtime_of

    app = create_app(WorkerSettings(group_id=f"panels-{uuid.uuid4().hex[:8]}"))
    used = _names(_dashboard_exprs())
    families = [
        family
        for family in runtime_of(app).metrics.registry.collect()
        if family.name.startswith("stream_cleaner_")
        and not family.name.startswith("stream_cleaner_faust_")
    ]
    assert len(families) >= 20
    missing = [
        family.name
        for family in families
        if not used & _sample_names(_OneFamily(family))
    ]  # fmt: skip
    assert missing == []


class _OneFamily:
    """A registry-like holder of one collected family, for `_sample_names`."""

    def __init__(self, family: Any) -> None:
        self.family = family

    def collect(self) -> list[Any]:
        return [self.family]


@pytest.mark.parametrize(
    ("title", "metric", "label"),
    [
        ("Documents by page type", "stream_cleaner_documents_by_page_type_total", "page_type"),
        ("Content-loss guard", "stream_cleaner_documents_guarded_total", "guard"),
        ("Offset resets by reason", "stream_cleaner_offset_resets_total", "reason"),
    ],
)
def test_the_panels_of_the_newer_metrics_split_them_by_their_label(
    title: str, metric: str, label: str
) -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    (panel,) = [p for p in dashboard["panels"] if p["title"] == title]
    (target,) = [t for t in panel["targets"] if metric in t["expr"]]
    assert f"by ({label})" in target["expr"]
    assert target["legendFormat"] == "{{" + label + "}}"
    assert panel["description"]


def test_dashboard_queries_parse(tmp_path: Path) -> None:
    """promtool parses every query of the dashboard (as recording rules, Grafana's variables
    given values)."""
    promtool = need_promtool()
    yaml = need_module("yaml")
    exprs = [
        expr.replace("$__rate_interval", "5m").replace("$job", ".+")
        for expr in _dashboard_exprs()
        if not expr.startswith("label_values(")
    ]
    rules = [{"record": f"dashboard:query{n}", "expr": expr} for n, expr in enumerate(exprs)]
    path = tmp_path / "dashboard-queries.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    result = subprocess.run(
        [promtool, "check", "rules", str(path)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_panels_do_not_overlap() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    taken: dict[tuple[int, int], str] = {}
    for panel in dashboard["panels"]:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]
        for x in range(grid["x"], grid["x"] + grid["w"]):
            for y in range(grid["y"], grid["y"] + grid["h"]):
                assert (x, y) not in taken, (panel["title"], taken.get((x, y)))
                taken[x, y] = panel["title"]


def test_the_rebalance_panel_counts_the_workers_rebalances() -> None:
    """Faust's ``total_rebalances`` gauge counts rebalances in progress: 0 after one, when
    ``stream_cleaner_rebalances_total`` says 1."""
    dashboard = json.loads(DASHBOARD.read_text())
    (panel,) = [p for p in dashboard["panels"] if p["title"].startswith("Rebalances")]
    exprs = [target["expr"] for target in panel["targets"]]
    assert _names(exprs) == {"stream_cleaner_rebalances_total"}


def _check_metrics(text: str) -> None:
    """``promtool check metrics``: the exposition's names and units follow Prometheus'
    conventions (base units, counters ending in _total...)."""
    result = subprocess.run(
        [need_promtool(), "check", "metrics"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_workers_exposition_passes_promtool_check_metrics() -> None:
    need_module("faust")
    from stream_cleaner.streaming.app import WorkerSettings, create_app, runtime_of

    app = create_app(WorkerSettings(group_id=f"lint-{uuid.uuid4().hex[:8]}"))
    _check_metrics(runtime_of(app).metrics.exposition().decode())


def test_rules_file_is_what_the_chart_renders() -> None:
    """deploy/prometheus/alerts.yaml is the chart's rules with selector "" (the workers found
    by their metrics' names), as scripts/render_from_chart.py writes it."""
    yaml = need_module("yaml")
    rule = only(
        objects(
            {
                "kafka": {"bootstrapServers": "k:9092"},
                "prometheusRule": {"enabled": True, "selector": ""},
            }
        ),
        "PrometheusRule",
    )
    assert yaml.safe_load(RULES.read_text()) == rule["spec"]
    assert RULES.read_text() == render_from_chart().alerts_text()
    alerts = {r["alert"] for r in rule["spec"]["groups"][0]["rules"]}
    assert alerts == ALERTS


def test_the_rules_file_names_no_scrape_job() -> None:
    """A plain Prometheus may scrape the workers under any job name."""
    matcher = re.compile(r"\bjob\s*(?:=~|!=|!~|=)")
    assert [expr for expr in _rule_exprs() if matcher.search(expr)] == []
    assert matcher.findall('up{job="x"} and on (job) {job!~"y"}') == ["job=", "job!~"]


def test_the_charts_rules_select_the_release_or_what_the_values_say() -> None:
    values = {"kafka": {"bootstrapServers": "k:9092"}, "prometheusRule": {"enabled": True}}
    rule = only(objects(values, release="crawl"), "PrometheusRule")
    exprs = {r["alert"]: r["expr"] for r in rule["spec"]["groups"][0]["rules"]}
    assert (
        'stream_cleaner_consumer_lag{job="crawl-stream-cleaner"}' in exprs["StreamCleanerStalled"]
    )
    assert exprs["StreamCleanerWorkerDown"] == 'up{job="crawl-stream-cleaner"} == 0'
    assert exprs["StreamCleanerAbsent"] == 'absent(up{job="crawl-stream-cleaner"})'
    values = load_values(CHART / "ci" / "prometheusrule-selector-values.yaml")
    assert values["prometheusRule"]["selector"] == 'namespace="crawl", job=~"cleaners-.*"'
    rule = only(objects(values), "PrometheusRule")
    exprs = {r["alert"]: r["expr"] for r in rule["spec"]["groups"][0]["rules"]}
    assert exprs["StreamCleanerAbsent"] == 'absent(up{namespace="crawl", job=~"cleaners-.*"})'
    assert (
        'stream_cleaner_documents_dead_lettered_total{namespace="crawl", job=~"cleaners-.*", '
        'reason!="not_a_page"}' in exprs["StreamCleanerDeadLetterRateHigh"]
    )


def test_every_alert_links_its_runbook_section() -> None:
    """Each rule's runbook_url is its section of docs/runbook.md, which says what the alert
    means and what to do; the chart's prometheusRule.runbookUrl says where the file is read."""
    yaml = need_module("yaml")
    rules = yaml.safe_load(RULES.read_text())["groups"][0]["rules"]
    runbook = RUNBOOK.read_text()
    sections = dict(
        (match.group(1), match.group(2))
        for match in re.finditer(r"^## (\w+)\n(.*?)(?=^## |\Z)", runbook, re.M | re.S)
    )
    assert set(sections) == ALERTS
    for rule in rules:
        anchor = rule["alert"].lower()  # the anchor Markdown renderers give the heading
        assert rule["annotations"]["runbook_url"] == f"docs/runbook.md#{anchor}"
        section = sections[rule["alert"]]
        assert "**What it means.**" in section and "**What to do.**" in section, rule["alert"]
        assert rule["labels"]["severity"].capitalize() in section  # *Warning.*, *Critical.*
    values = load_values(CHART / "ci" / "prometheusrule-values.yaml")
    url = values["prometheusRule"]["runbookUrl"]
    assert url.startswith("https://")
    rule = only(objects(values), "PrometheusRule")
    for chart_rule in rule["spec"]["groups"][0]["rules"]:
        assert chart_rule["annotations"]["runbook_url"] == f"{url}#{chart_rule['alert'].lower()}"


def test_promtool_checks_the_rules_and_runs_their_unit_tests(tmp_path: Path) -> None:
    promtool = need_promtool()
    yaml = need_module("yaml")
    # the chart's rules with other thresholds and another release name check out too
    values = load_values(CHART / "ci" / "prometheusrule-values.yaml")
    rule = only(objects(values, release="crawl-cleaner"), "PrometheusRule")
    exprs = [r["expr"] for r in rule["spec"]["groups"][0]["rules"]]
    assert all('job="crawl-cleaner-stream-cleaner"' in expr for expr in exprs)
    chart_rules = tmp_path / "chart-rules.yaml"
    chart_rules.write_text(yaml.safe_dump(rule["spec"]))
    values = load_values(CHART / "ci" / "prometheusrule-selector-values.yaml")
    selected_rules = tmp_path / "selected-rules.yaml"
    selected_rules.write_text(yaml.safe_dump(only(objects(values), "PrometheusRule")["spec"]))
    for path in (RULES, chart_rules, selected_rules):
        result = subprocess.run(
            [promtool, "check", "rules", str(path)], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert "SUCCESS: 6 rules found" in result.stdout
    result = subprocess.run(
        [promtool, "test", "rules", str(RULE_TESTS)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


# --- a real worker, started with the chart's settings ---------------------------------------


def _check_with_prometheus(tmp_path: Path, worker_port: int, cleaned: int) -> None:
    """Prometheus 2.42 on 127.0.0.1, scraping the worker every second as job "crawl-cleaners"
    (the rules name no job) with deploy/prometheus/alerts.yaml loaded: the target is up, a
    query over the scraped series gives the worker's count, and every rule evaluates."""
    binary = need_prometheus()
    port = _free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: [{REPO / 'deploy' / 'prometheus' / 'alerts.yaml'}]\n"
        "scrape_configs:\n"
        "- job_name: crawl-cleaners\n"
        f"  static_configs: [{{targets: ['127.0.0.1:{worker_port}']}}]\n"
    )
    log = tmp_path / "prometheus.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path,
        )  # fmt: skip
    api = f"http://127.0.0.1:{port}/api/v1"
    try:
        deadline = time.monotonic() + WORKER_SECONDS
        cleaned_seen, rules = None, []
        while time.monotonic() < deadline:
            assert server.poll() is None, _tail(log)
            try:
                query = "sum(stream_cleaner_documents_cleaned_total{job='crawl-cleaners'})"
                status, body = _get(f"{api}/query?query=" + urllib.request.quote(query))
                result = json.loads(body)["data"]["result"] if status == 200 else []
                cleaned_seen = float(result[0]["value"][1]) if result else None
                status, body = _get(f"{api}/rules")
                groups = json.loads(body)["data"]["groups"] if status == 200 else []
                rules = [rule for group in groups for rule in group["rules"]]
            except OSError:
                pass
            evaluated = rules and all(r.get("lastEvaluation", "").startswith("20") for r in rules)
            if cleaned_seen == cleaned and evaluated:
                break
            time.sleep(0.5)
        assert cleaned_seen == cleaned, _tail(log)
        assert len(rules) >= 4
        assert all(rule["health"] == "ok" for rule in rules), [
            (rule["name"], rule.get("lastError")) for rule in rules
        ]
        status, body = _get(f"{api}/query?query=up%7Bjob%3D%22crawl-cleaners%22%7D")
        assert json.loads(body)["data"]["result"][0]["value"][1] == "1"
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:
        return 0, b""


def _metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0


def _tail(path: Path) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-30:])


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The image's entrypoint (``stream-cleaner``) with ``args``, under this interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "stream_cleaner", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def _produce(servers: str, topic: str, pages: list[bytes]) -> None:
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=servers)
    await producer.start()
    try:
        for n, page in enumerate(pages):
            await producer.send_and_wait(topic, page, headers=[("id", f"p{n}".encode())])
    finally:
        await producer.stop()


@pytest.mark.broker
def test_chart_job_and_worker_on_a_real_broker(broker: str, tmp_path: Path) -> None:
    """The Job's command creates the topics; the worker's command and environment clean pages;
    the probes answer; /metrics has every metric of the dashboard and the rules."""
    tag = uuid.uuid4().hex[:8]
    values = load_values(CHART / "ci" / "topics-job-values.yaml")
    values["kafka"]["bootstrapServers"] = broker
    values["topics"] = {
        "input": f"d{tag}.raw-html.v1",
        "documents": f"d{tag}.documents.v1",
        "sentenceScores": f"d{tag}.sentence-scores.v1",
        "deadLetter": f"d{tag}.dead-letter.v1",
        "partitions": 2,
    }
    values["topicsJob"]["replicationFactor"] = None
    values["worker"] = {"groupId": f"g{tag}", "webPort": _free_port(), "batchWithinSeconds": 0.2}
    objs = objects(values)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("STREAM_CLEANER_")}

    job = container(objs, "Job")
    result = _run(job["args"], {**base_env, **container_env(objs, "Job")})
    assert result.returncode == 0, result.stderr
    created = [line.split() for line in result.stdout.splitlines()]
    assert [(name, outcome, n) for name, outcome, n, *_ in created] == [
        (values["topics"][role], "created", "2")
        for role in ("input", "documents", "sentenceScores", "deadLetter")
    ]

    worker = container(objs)
    env = {
        **base_env,
        **container_env(objs),
        "STREAM_CLEANER_WORKER_WEB_HOST": "127.0.0.1",
        "STREAM_CLEANER_WORKER_LAG_INTERVAL_SECONDS": "1",  # the first lag measure sooner
        "TMPDIR": str(tmp_path),  # the pod's emptyDir /tmp: Faust's data directory goes there
    }
    base = f"http://127.0.0.1:{values['worker']['webPort']}"
    log = tmp_path / "worker.log"
    samples = sorted((REPO / "stream_cleaner" / "samples").glob("*.html"))
    pages = [path.read_bytes() for path in samples] + [b""]  # an empty page: a dead letter
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "stream_cleaner", *worker["args"]],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
        )
    try:
        asyncio.run(_produce(broker, values["topics"]["input"], pages))
        deadline = time.monotonic() + WORKER_SECONDS
        text = ""
        while time.monotonic() < deadline:
            assert proc.poll() is None, _tail(log)
            status, body = _get(f"{base}/metrics")
            text = body.decode()
            done = _metric(text, "stream_cleaner_documents_cleaned_total")
            done += sum(
                float(line.split()[-1])
                for line in text.splitlines()
                if line.startswith("stream_cleaner_documents_dead_lettered_total{")
            )
            if status == 200 and done == len(pages):
                break
            time.sleep(0.3)
        else:
            pytest.fail(f"the worker did not clean {len(pages)} pages:\n{_tail(log)}")

        # the probes of the chart answer on the worker's port
        for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
            assert worker[probe]["httpGet"]["path"] == path
            status, body = _get(base + path)
            assert status == 200, body

        # labelled series appear with their first value: the lag with its first measure
        used = _names(_dashboard_exprs()) | _names(_rule_exprs())
        deadline = time.monotonic() + LAG_SECONDS
        while (missing := used - _scraped_names(text) - PROMETHEUS_SERIES) and (
            time.monotonic() < deadline
        ):
            time.sleep(0.5)
            text = _get(f"{base}/metrics")[1].decode()
        assert missing == set()
        assert _metric(text, "process_resident_memory_bytes") > 0
        # after documents were published: no Faust producer sensor reading 0 (the worker
        # publishes without Faust), and names and units as Prometheus wants them
        assert "stream_cleaner_faust_total_sent_messages" not in text
        assert "stream_cleaner_faust_topic_messages_sent" not in text
        _check_metrics(text)

        # a real Prometheus scrapes the worker and evaluates the alert rules
        _check_with_prometheus(tmp_path, values["worker"]["webPort"], len(pages) - 1)

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, _tail(log)
        # the pod's root is read-only: Faust kept its data under /tmp, the emptyDir
        assert (tmp_path / f"stream-cleaner-g{tag}-data").is_dir()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
