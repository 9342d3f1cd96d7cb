"""Helpers of the deployment tests: the chart rendered offline, the tools the tests run.

The chart is rendered and linted by Helm's own Go SDK through ``helm-python-sdk`` (a bundled
shared library, no helm binary); manifests are validated by ``kubernetes-validate``. All of it
comes with the ``deploy`` extra that scripts/setup.sh installs. A missing tool skips its
tests, except in CI (``CI`` set), where it fails them.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from ..conftest import REPO
from ..streaming.conftest import broker  # noqa: F401  (the real broker, for the Job and worker test)

CHART = REPO / "helm" / "stream-cleaner"
CI_VALUES = sorted((CHART / "ci").glob("*-values.yaml"))
RELEASE = "stream-cleaner"
NAMESPACE = "crawl"
KUBERNETES_VERSION = "1.30.0"
PROMTOOL = REPO / ".cache" / "prometheus" / "bin" / "promtool"
PROMETHEUS = REPO / ".cache" / "prometheus" / "bin" / "prometheus"


def missing(message: str) -> None:
    """Skip the test, or fail it in CI, where scripts/setup.sh installs everything."""
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def need_module(name: str) -> Any:
    try:
        return __import__(name)
    except ImportError:
        missing(f"{name} is not installed: pip install -e '.[deploy]' (scripts/setup.sh does)")


def need_tool(name: str) -> str:
    """A console script of the venv (hadolint), or one on PATH."""
    path = Path(sys.executable).parent / name
    if path.is_file():
        return str(path)
    found = shutil.which(name)
    if found is None:
        missing(f"{name} is not installed: pip install -e '.[deploy]' (scripts/setup.sh does)")
    return str(found)


def need_promtool() -> str:
    if not os.access(PROMTOOL, os.X_OK):
        missing(f"{PROMTOOL} not installed: run bash scripts/install-prometheus.sh")
    return str(PROMTOOL)


def need_prometheus() -> str:
    """The Prometheus server binary (unpacked from Debian's package, never run as a service)."""
    if not os.access(PROMETHEUS, os.X_OK):
        missing(f"{PROMETHEUS} not installed: run bash scripts/install-prometheus.sh")
    return str(PROMETHEUS)


def render_from_chart() -> Any:
    """scripts/render_from_chart.py as a module."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "render_from_chart", REPO / "scripts" / "render_from_chart.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_values(path: Path) -> dict[str, Any]:
    yaml = need_module("yaml")
    return yaml.safe_load(path.read_text()) or {}


def render(values: dict[str, Any] | None = None, *, release: str = RELEASE) -> dict[str, list]:
    """The chart rendered with ``values``: {template path: [objects]} (empty files left out).

    Raises:
        helm_python.HelmError: the chart refuses the values (``fail``) or cannot render.
    """
    helm = need_module("helm_python")
    yaml = need_module("yaml")
    with helm.Chart.load(CHART) as chart:
        files = chart.render(values or {}, name=release, namespace=NAMESPACE, is_install=True)
    out = {}
    for path, text in files.items():
        if path.endswith(".yaml"):
            objects = [doc for doc in yaml.safe_load_all(text) if doc]
            if objects:
                out[path] = objects
    return out


def objects(values: dict[str, Any] | None = None, **kwargs: Any) -> list[dict[str, Any]]:
    """Every object the chart renders with ``values``, in template order."""
    rendered = render(values, **kwargs)
    return [obj for path in sorted(rendered) for obj in rendered[path]]


def only(objs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """The one object of ``kind``; fails when there is none or several."""
    found = [obj for obj in objs if obj["kind"] == kind]
    assert len(found) == 1, f"{len(found)} objects of kind {kind}"
    return found[0]


def kinds(objs: list[dict[str, Any]]) -> list[str]:
    return sorted(obj["kind"] for obj in objs)


def container(objs: list[dict[str, Any]], kind: str = "Deployment") -> dict[str, Any]:
    (one,) = only(objs, kind)["spec"]["template"]["spec"]["containers"]
    return one


def container_env(
    objs: list[dict[str, Any]], kind: str = "Deployment", secrets: dict | None = None
) -> dict[str, str]:
    """The environment the container of ``kind`` starts with: its ConfigMap (envFrom), then
    its env; secretKeyRef values come from ``secrets`` ({(secret, key): value}); values only
    the pod knows (fieldRef, resourceFieldRef) are left out."""
    spec = container(objs, kind)
    configmaps = {
        obj["metadata"]["name"]: obj["data"] for obj in objs if obj["kind"] == "ConfigMap"
    }
    env: dict[str, str] = {}
    for source in spec.get("envFrom", []):
        env.update(configmaps[source["configMapRef"]["name"]])
    for entry in spec.get("env", []):
        if "value" in entry:
            env[entry["name"]] = entry["value"]
        elif "secretKeyRef" in entry["valueFrom"]:
            ref = entry["valueFrom"]["secretKeyRef"]
            env[entry["name"]] = (secrets or {})[(ref["name"], ref["key"])]
    return env
