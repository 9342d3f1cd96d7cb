"""The Helm chart: every ci/ values file renders, lints and validates against Kubernetes 1.30
(strict), and the rendered objects do what the worker needs: probes, a hardened pod, every
setting wired to the variable the worker reads, consistent selectors, one autoscaler at most.
"""

from __future__ import annotations

import copy
import re
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import pytest

from stream_cleaner.settings import ENV_PREFIX, CleanerSettings
from stream_cleaner.sites import SiteSettings
from stream_cleaner.streaming.settings import SITE_ENV_PREFIX, WORKER_ENV_PREFIX, WorkerSettings
from stream_cleaner.streaming.topics import KAFKA_ENV_PREFIX, KafkaSettings
from stream_cleaner.web.config import WEB_ENV_PREFIX, WebSettings

from ..conftest import REPO
from .conftest import (
    CHART,
    CI_VALUES,
    KUBERNETES_VERSION,
    container,
    container_env,
    kinds,
    load_values,
    need_module,
    objects,
    only,
    render,
    render_from_chart,
)

BOOTSTRAP = {"kafka": {"bootstrapServers": "kafka:9092"}}
# Kinds of the optional operators' CRDs, which kubernetes-validate has no schema for; the
# tests below check their fields instead.
CUSTOM_KINDS = {
    "ScaledObject": "keda.sh/v1alpha1",
    "TriggerAuthentication": "keda.sh/v1alpha1",
    "ServiceMonitor": "monitoring.coreos.com/v1",
    "PrometheusRule": "monitoring.coreos.com/v1",
}
# Worker settings the chart does not set (extraEnv can): the bind address (all interfaces in
# a pod), Faust's data directory (under the writable /tmp), how often the consumer lag is
# measured; the CA file is set with TLS only (test_sasl_tls_and_keda_authentication).
LEFT_TO_THE_WORKER = {
    "web_host", "datadir", "lag_interval_seconds", "ssl_cafile",
    "max_blocks_per_page", "path_entropy",  # the site statistics' memory cap and labeller hook
}  # fmt: skip
# Web demo settings the chart does not set (extraEnv can): the demo's extras, which a worker's
# demo seldom needs: longer texts, more models, URL fetching, annotation folders
WEB_LEFT_TO_THE_WORKER = {
    "max_text_chars", "models", "fetch_urls", "fetch_private", "fetch_timeout_seconds",
    "max_fetch_bytes", "pages_dir", "annotations_dir",
}  # fmt: skip
SASL_SECRETS = {
    ("kafka-credentials", "user"): "crawler",
    ("kafka-credentials", "username"): "crawler",
    ("kafka-credentials", "password"): "s3cret",
}


def _with(**changes: Any) -> dict[str, Any]:
    """The bootstrap value plus ``changes`` (top-level keys, merged one level deep)."""
    values = copy.deepcopy(BOOTSTRAP)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(values.get(key), dict):
            values[key].update(value)
        else:
            values[key] = value
    return values


def _scalar_fields(settings: object) -> list[str]:
    """The fields of a settings dataclass that hold a value, not nested settings."""
    return [f.name for f in fields(settings) if not is_dataclass(getattr(settings, f.name))]


def _worker_variables() -> set[str]:
    """Every STREAM_CLEANER_* variable the worker reads (`WorkerSettings.from_env`)."""
    names = {ENV_PREFIX + name.upper() for name in _scalar_fields(CleanerSettings())}
    names |= {KAFKA_ENV_PREFIX + name.upper() for name in _scalar_fields(KafkaSettings())}
    names |= {WORKER_ENV_PREFIX + name.upper() for name in _scalar_fields(WorkerSettings())}
    names |= {SITE_ENV_PREFIX + name.upper() for name in _scalar_fields(SiteSettings())}
    names |= {WEB_ENV_PREFIX + name.upper() for name in _scalar_fields(WebSettings())}
    return names


@pytest.mark.parametrize("values_file", CI_VALUES, ids=lambda p: p.name)
def test_ci_values_render_lint_and_validate(values_file: Path) -> None:
    helm = need_module("helm_python")
    kubernetes_validate = need_module("kubernetes_validate")
    values = load_values(values_file)
    with helm.Chart.load(CHART) as chart:
        chart.validate_schema(values)
    report = helm.lint(CHART, values, strict=True, kube_version=f"v{KUBERNETES_VERSION}")
    assert report["errors"] == []
    # severity 1 is information ("icon is recommended"); warnings and errors are not allowed
    assert [m for m in report["messages"] if m["severity"] >= 2] == []

    objs = objects(values)
    assert "Deployment" in kinds(objs)
    for obj in objs:
        if obj["kind"] in CUSTOM_KINDS:
            assert obj["apiVersion"] == CUSTOM_KINDS[obj["kind"]]
            continue
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


def test_every_toggle_has_its_ci_values_file() -> None:
    defaults = load_values(CHART / "values.yaml")
    toggles = {
        key for key, value in defaults.items() if isinstance(value, dict) and "enabled" in value
    }
    assert toggles == {"topicsJob", "podDisruptionBudget", "autoscaling", "keda"} | {
        "serviceMonitor",
        "prometheusRule",
        "siteTemplates",
        "webDemo",
    }
    flipped: dict[str, list[str]] = {toggle: [] for toggle in toggles}
    for path in CI_VALUES:
        values = load_values(path)
        for toggle in toggles:
            wanted = not defaults[toggle]["enabled"]
            if values.get(toggle, {}).get("enabled", defaults[toggle]["enabled"]) == wanted:
                flipped[toggle].append(path.name)
    assert all(flipped.values()), flipped


# Values no ci file changes yet (the pod's pass-through plumbing, mostly): a value added to
# values.yaml must be changed by some ci/*-values.yaml file, which renders, lints and
# validates it, and be checked by a test.
NOT_IN_CI = {
    "nameOverride", "fullnameOverride", "image.digest", "image.pullPolicy",
    "kafka.passwordKey", "kafka.caKey",
    "topicsJob.retentionMs", "topicsJob.deadLetterRetentionMs", "topicsJob.timeoutSeconds",
    "topicsJob.backoffLimit", "topicsJob.activeDeadlineSeconds",
    "topicsJob.resources.requests.cpu", "topicsJob.resources.requests.memory",
    "topicsJob.resources.limits.memory",
    "resources.requests.cpu", "resources.requests.memory", "resources.limits.memory",
    "tmpSizeLimit",
    "podSecurityContext.runAsNonRoot", "podSecurityContext.runAsUser",
    "podSecurityContext.runAsGroup", "podSecurityContext.fsGroup",
    "podSecurityContext.seccompProfile.type",
    "securityContext.runAsNonRoot", "securityContext.runAsUser", "securityContext.runAsGroup",
    "securityContext.allowPrivilegeEscalation", "securityContext.readOnlyRootFilesystem",
    "securityContext.privileged", "securityContext.capabilities.drop",
    "securityContext.seccompProfile.type",
    "startupProbe.httpGet.path", "startupProbe.httpGet.port", "startupProbe.periodSeconds",
    "startupProbe.failureThreshold",
    "livenessProbe.httpGet.path", "livenessProbe.httpGet.port", "livenessProbe.periodSeconds",
    "livenessProbe.timeoutSeconds", "livenessProbe.failureThreshold",
    "readinessProbe.httpGet.path", "readinessProbe.httpGet.port",
    "readinessProbe.periodSeconds", "readinessProbe.timeoutSeconds",
    "readinessProbe.failureThreshold",
    "terminationGracePeriodSeconds",
    "serviceAccount.annotations", "serviceAccount.automountServiceAccountToken",
    "service.type", "service.annotations",
    "podDisruptionBudget.maxUnavailable",
    "podAnnotations", "podLabels", "priorityClassName", "nodeSelector", "tolerations",
    "affinity", "topologySpreadConstraints",
    "autoscaling.targetCPUUtilizationPercentage",
    "serviceMonitor.scrapeTimeout",
}  # fmt: skip


def _leaves(values: Any, path: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    """Every value of a values tree by its dotted path; an empty map or a list is a value."""
    if isinstance(values, dict) and values:
        return [leaf for key, value in values.items() for leaf in _leaves(value, (*path, key))]
    return [(".".join(path), values)]


def test_every_value_is_changed_by_a_ci_values_file() -> None:
    defaults = dict(_leaves(load_values(CHART / "values.yaml")))
    changed = set()
    for values_file in CI_VALUES:
        for path, value in _leaves(load_values(values_file)):
            if path in defaults:
                if value != defaults[path]:
                    changed.add(path)
            else:  # inside a default that is an empty map (model.volume: {configMap: ...})
                changed.update(p for p in defaults if path.startswith(p + "."))
    assert set(defaults) - changed - NOT_IN_CI == set()
    assert NOT_IN_CI - set(defaults) == set()  # no stale names
    assert NOT_IN_CI & changed == set()  # covered since: take it off the list


def test_the_readme_documents_every_value() -> None:
    """helm/stream-cleaner/README.md's table has a row for every value of values.yaml, or for
    a map that holds it, with its comment, and is what scripts/render_from_chart.py writes."""
    render = render_from_chart()
    text = (CHART / "values.yaml").read_text()
    rows = render.values_rows(text)
    whole = [path for path, _, _, is_whole in rows if is_whole]
    undocumented = [
        path
        for path, _ in _leaves(load_values(CHART / "values.yaml"))
        if not any(path == row or path.startswith(row + ".") for row in whole)
    ]
    assert undocumented == []
    assert all(comment for _, _, comment, _ in rows)
    readme = (CHART / "README.md").read_text()
    assert readme == render.chart_readme_text()
    for path, _, _, _ in rows:
        assert f"| `{path}` |" in readme
    assert "| `keda.cooldownPeriod` | `300` |" in readme
    cooldown = render.value_comments(text)["keda.cooldownPeriod"]
    assert "from 1 to 0" in cooldown and "does not slow any other scale-down" in cooldown


def test_value_comments_follow_helm_docs() -> None:
    render = render_from_chart()
    text = (
        "# a plain comment\n"
        "a:\n"
        "  # -- the b of a,\n"
        "  # on two lines\n"
        "  b: 1\n"
        "  c:\n"
        "    - x\n"
        "\n"
        "# -- d | e\n"
        "d: {}\n"
    )
    assert render.value_comments(text) == {"a.b": "the b of a, on two lines", "d": "d | e"}
    table = render.values_table(text)
    assert "| `a.b` | `1` | the b of a, on two lines |" in table
    assert "| `d` | `{}` | d \\| e |" in table


def test_the_validator_catches_a_misspelt_field() -> None:
    kubernetes_validate = need_module("kubernetes_validate")
    deployment = only(objects(BOOTSTRAP), "Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["livenesProbe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError, match="livenesProbe"):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSION, strict=True)


def test_default_objects_and_worker_pod() -> None:
    objs = objects(BOOTSTRAP)
    assert kinds(objs) == [
        "ConfigMap", "Deployment", "PodDisruptionBudget", "Service", "ServiceAccount"
    ]  # fmt: skip
    deployment = only(objs, "Deployment")
    assert deployment["spec"]["replicas"] == 2
    pod = deployment["spec"]["template"]["spec"]
    worker = container(objs)
    assert worker["args"] == ["worker", "--loglevel", "info", "--no-create-topics"]
    assert worker["ports"] == [{"name": "http", "containerPort": 6066, "protocol": "TCP"}]
    assert worker["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert worker["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert worker["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert worker["resources"]["requests"]["cpu"] == "1"

    # hardened: non-root with the image's UID, read-only root, no capabilities, seccomp
    dockerfile_user = re.search(r"^USER (\d+):(\d+)$", (REPO / "Dockerfile").read_text(), re.M)
    assert dockerfile_user is not None
    uid, gid = map(int, dockerfile_user.groups())
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == uid
    assert pod["securityContext"]["runAsGroup"] == gid
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    security = worker["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert security["seccompProfile"] == {"type": "RuntimeDefault"}
    assert {"name": "tmp", "mountPath": "/tmp"} in worker["volumeMounts"]
    assert {"name": "tmp", "emptyDir": {"sizeLimit": "256Mi"}} in pod["volumes"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["serviceAccountName"] == only(objs, "ServiceAccount")["metadata"]["name"]


def test_chart_defaults_are_the_workers_defaults() -> None:
    env = container_env(objects(BOOTSTRAP))
    assert WorkerSettings.from_env(env) == WorkerSettings(
        kafka=KafkaSettings(bootstrap_servers="kafka:9092")
    )


def test_every_setting_reaches_the_worker() -> None:
    values = load_values(CHART / "ci" / "all-settings-values.yaml")
    objs = objects(values)
    env = container_env(objs, secrets=SASL_SECRETS)
    extra = {entry["name"] for entry in values["extraEnv"]}
    assert {name: env[name] for name in extra} == {"TZ": "UTC"}
    chart_variables = set(env) - extra
    # every variable the chart sets is one the worker reads...
    assert chart_variables <= _worker_variables(), chart_variables - _worker_variables()

    # ...and arrives as the setting it names
    settings = WorkerSettings.from_env(env)
    assert settings == WorkerSettings(
        kafka=KafkaSettings(
            bootstrap_servers="a:9092,b:9092",
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="SCRAM-SHA-256",
            sasl_username="crawler",
            sasl_password="s3cret",
        ),
        cleaner=CleanerSettings(
            mode="article",
            sentence_filter="on",
            content_guard=False,
            labeller_path="/srv/models/labeller-article.json",
            site_labeller_path="/srv/models/labeller-article-sites.json",
            multilingual_labeller="on",
            multilingual_labeller_path="/srv/models/labeller-multilingual.json",
            page_type_model_path="/srv/models/page-types.json",
            max_sentence_perplexity=1500.5,
            max_sentence_tokens=5000,
            max_word_chars=500,
            parser="html5lib",
            model_path="/srv/models/en.klm",
            models="de=/srv/models/de.klm,zh=/srv/models/zh.klm",
            max_document_bytes=16777216,
            max_blocks=50000,
            time_budget_seconds=2.5,
        ),
        input_topic="test.raw-html.v1",
        documents_topic="test.documents.v1",
        sentence_scores_topic="test.sentence-scores.v1",
        dead_letter_topic="test.dead-letter.v1",
        group_id="test-group",
        batch_size=24,
        batch_within_seconds=0.25,
        batch_max_bytes=8388608,
        max_page_bytes=5242880,
        max_message_bytes=20971520,
        web_port=8080,
        session_timeout_seconds=45,
        heartbeat_interval_seconds=5,
        request_timeout_seconds=60,
        commit_interval_seconds=2.5,
        fetch_max_wait_seconds=0.25,
        compression="zstd",
        broker_wait_seconds=30,
        site_templates=True,
        site_partitions=6,
        sites=SiteSettings(
            site_key="domain",
            window_pages=40,
            min_pages=4,
            min_share=0.6,
            max_sites=500,
            rule_with_labeller=True,
        ),
        rekey="all",
        site_topic="crawl.raw-html.by-site-all.v1",
        warmup_seconds=20,
        warmup_max_pages=300,
        web=WebSettings(
            enabled=True,
            max_body_bytes=1048576,
            max_request_seconds=5.5,
            max_pending_requests=3,
            max_busy_share=0.5,
            header_timeout_seconds=5,
            max_connections=50,
        ),
        allow_untested_clients=True,
        offset_reset="latest",
    )
    # the values file changes every setting the chart manages, so each one is proven wired;
    # a setting the worker gains later must be wired too, or be named here
    unchanged = {
        name
        for obj, default in (
            (settings, WorkerSettings()),
            (settings.kafka, KafkaSettings()),
            (settings.cleaner, CleanerSettings()),
            (settings.sites, SiteSettings()),
        )
        for name in _scalar_fields(obj)
        if getattr(obj, name) == getattr(default, name)
    }
    assert unchanged - LEFT_TO_THE_WORKER == set()
    web_unchanged = {
        name
        for name in _scalar_fields(settings.web)
        if getattr(settings.web, name) == getattr(WebSettings(), name)
    }
    assert web_unchanged == WEB_LEFT_TO_THE_WORKER

    worker = container(objs)
    assert worker["args"] == ["worker", "--loglevel", "warning"]  # createTopics: true
    assert worker["ports"][0]["containerPort"] == 8080
    service = only(objs, "Service")
    assert service["spec"]["ports"] == [
        {"name": "http", "port": 8080, "targetPort": "http", "protocol": "TCP"}
    ]
    assert {"name": "model", "mountPath": "/srv/models", "readOnly": True} in worker["volumeMounts"]


def test_model_volume() -> None:
    objs = objects(load_values(CHART / "ci" / "model-volume-values.yaml"))
    env = container_env(objs)
    assert env["STREAM_CLEANER_MODEL_PATH"] == "/models/de-wiki-bigram.klm"
    pod = only(objs, "Deployment")["spec"]["template"]["spec"]
    assert {
        "name": "model",
        "persistentVolumeClaim": {"claimName": "language-models", "readOnly": True},
    } in pod["volumes"]
    assert {"name": "model", "mountPath": "/models", "readOnly": True} in container(objs)[
        "volumeMounts"
    ]
    # without a model file the worker uses the model baked into the image
    assert "STREAM_CLEANER_MODEL_PATH" not in container_env(objects(BOOTSTRAP))


def test_sasl_tls_and_keda_authentication() -> None:
    values = load_values(CHART / "ci" / "sasl-tls-values.yaml")
    objs = objects(values)
    env = container_env(objs, secrets=SASL_SECRETS)
    kafka = WorkerSettings.from_env(env).kafka
    assert kafka.security_protocol == "SASL_SSL"
    assert kafka.sasl_mechanism == "SCRAM-SHA-512"
    assert (kafka.sasl_username, kafka.sasl_password) == ("crawler", "s3cret")
    assert kafka.ssl_cafile == "/etc/stream-cleaner/kafka-ca/ca.crt"
    worker = container(objs)
    secret_refs = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in worker["env"]}
    assert secret_refs == {
        "STREAM_CLEANER_KAFKA_SASL_USERNAME": {"name": "kafka-credentials", "key": "user"},
        "STREAM_CLEANER_KAFKA_SASL_PASSWORD": {"name": "kafka-credentials", "key": "password"},
    }
    # the password is never in the ConfigMap
    configmap = only(objs, "ConfigMap")["data"]
    assert not any("PASSWORD" in key or "USERNAME" in key for key in configmap)
    mount = next(m for m in worker["volumeMounts"] if m["name"] == "kafka-ca")
    assert kafka.ssl_cafile == f"{mount['mountPath']}/ca.crt"
    pod = only(objs, "Deployment")["spec"]["template"]["spec"]
    ca_volume = next(v for v in pod["volumes"] if v["name"] == "kafka-ca")
    assert ca_volume["secret"] == {
        "secretName": "kafka-ca",
        "items": [{"key": "ca.crt", "path": "ca.crt"}],
    }

    (trigger,) = only(objs, "ScaledObject")["spec"]["triggers"]
    assert trigger["metadata"]["sasl"] == "scram_sha512"
    assert trigger["metadata"]["tls"] == "enable"
    auth = only(objs, "TriggerAuthentication")
    assert trigger["authenticationRef"] == {"name": auth["metadata"]["name"]}
    assert auth["spec"]["secretTargetRef"] == [
        {"parameter": "username", "name": "kafka-credentials", "key": "user"},
        {"parameter": "password", "name": "kafka-credentials", "key": "password"},
        {"parameter": "ca", "name": "kafka-ca", "key": "ca.crt"},
    ]
    # the topic Job connects the same way
    job_env = container_env(objs, "Job", secrets=SASL_SECRETS)
    assert WorkerSettings.from_env(job_env).kafka == kafka
    assert any(m["name"] == "kafka-ca" for m in container(objs, "Job")["volumeMounts"])


def test_extra_env_comes_after_the_charts_own() -> None:
    values = load_values(CHART / "ci" / "extra-env-values.yaml")
    objs = objects(values)
    env = container(objs)["env"]
    assert env == values["extraEnv"]  # no secret env without SASL: the extra ones alone
    settings = WorkerSettings.from_env(
        container_env(objs, secrets={("egress-proxy", "url"): "http://proxy:3128"})
        | {"NODE_NAME": "node-1"}
    )
    assert settings.lag_interval_seconds == 15
    # with SASL the chart's secret variables come first, the extra ones after them
    sasl = load_values(CHART / "ci" / "sasl-tls-values.yaml") | {"extraEnv": values["extraEnv"]}
    names = [entry["name"] for entry in container(objects(sasl))["env"]]
    assert names == [
        "STREAM_CLEANER_KAFKA_SASL_USERNAME", "STREAM_CLEANER_KAFKA_SASL_PASSWORD",
        "STREAM_CLEANER_WORKER_LAG_INTERVAL_SECONDS", "HTTPS_PROXY", "NODE_NAME",
    ]  # fmt: skip
    # the topics Job keeps the chart's settings only
    job_env = container(objects(sasl | {"topicsJob": {"enabled": True}}), "Job")["env"]
    assert not {entry["name"] for entry in job_env} & {"HTTPS_PROXY", "NODE_NAME"}


def test_extra_args_reach_the_workers_command_line() -> None:
    from stream_cleaner.cli import parse_args

    args = container(objects(load_values(CHART / "ci" / "extra-args-values.yaml")))["args"]
    assert args == [
        "worker", "--loglevel", "info", "--no-create-topics", "--lag-interval", "10", "--verbose"
    ]  # fmt: skip
    parsed = parse_args(args)  # the image's entrypoint is stream-cleaner
    assert (parsed.lag_interval_seconds, parsed.verbose, parsed.no_create_topics) == (
        10.0,
        True,
        True,
    )


def test_extra_volumes_and_mounts() -> None:
    values = load_values(CHART / "ci" / "extra-volumes-values.yaml")
    objs = objects(values)
    pod = only(objs, "Deployment")["spec"]["template"]["spec"]
    worker = container(objs)
    assert values["extraVolumes"][0] in pod["volumes"]
    assert values["extraVolumeMounts"][0] in worker["volumeMounts"]
    # beside the chart's own
    assert {"name": "tmp", "mountPath": "/tmp"} in worker["volumeMounts"]
    assert [v["name"] for v in pod["volumes"]] == ["tmp", "labellers"]
    mount = values["extraVolumeMounts"][0]["mountPath"]
    assert container_env(objs)["STREAM_CLEANER_LABELLER_PATH"].startswith(mount + "/")


def test_image_pull_secrets_for_the_workers_and_the_topics_job() -> None:
    objs = objects(load_values(CHART / "ci" / "image-pull-secrets-values.yaml"))
    for kind in ("Deployment", "Job"):
        pod = only(objs, kind)["spec"]["template"]["spec"]
        assert pod["imagePullSecrets"] == [{"name": "registry-credentials"}], kind
        assert container(objs, kind)["image"] == "registry.example.org/crawl/stream-cleaner:0.1.0"
    assert (
        "imagePullSecrets" not in only(objects(BOOTSTRAP), "Deployment")["spec"]["template"]["spec"]
    )


def test_keda_scales_on_the_input_topic_lag() -> None:
    objs = objects(load_values(CHART / "ci" / "keda-values.yaml"))
    assert "HorizontalPodAutoscaler" not in kinds(objs)
    deployment = only(objs, "Deployment")
    assert "replicas" not in deployment["spec"]  # the autoscaler owns the count
    scaled = only(objs, "ScaledObject")["spec"]
    assert scaled["scaleTargetRef"] == {"name": deployment["metadata"]["name"]}
    assert (scaled["minReplicaCount"], scaled["maxReplicaCount"]) == (1, 12)
    (trigger,) = scaled["triggers"]
    env = container_env(objs)
    assert trigger["type"] == "kafka"
    assert trigger["metadata"] == {
        "bootstrapServers": env["STREAM_CLEANER_KAFKA_BOOTSTRAP_SERVERS"],
        "consumerGroup": env["STREAM_CLEANER_WORKER_GROUP_ID"],
        "topic": env["STREAM_CLEANER_WORKER_INPUT_TOPIC"],
        "lagThreshold": "200",
        "activationLagThreshold": "0",
        "offsetResetPolicy": "earliest",
        "allowIdleConsumers": "false",
    }
    assert "authenticationRef" not in trigger  # PLAINTEXT
    # how fast the HPA KEDA makes removes workers (each one a rebalance): keda.behavior
    assert scaled["advanced"] == {
        "horizontalPodAutoscalerConfig": {
            "behavior": {
                "scaleDown": {
                    "stabilizationWindowSeconds": 600,
                    "policies": [{"type": "Pods", "value": 1, "periodSeconds": 300}],
                }
            }
        }
    }
    assert "advanced" not in only(objects(_with(keda={"enabled": True})), "ScaledObject")["spec"]


def test_keda_scales_to_zero_after_its_cooldown() -> None:
    """cooldownPeriod only governs KEDA's step from one worker to none (minReplicas 0)."""
    scaled = only(
        objects(load_values(CHART / "ci" / "keda-scale-to-zero-values.yaml")), "ScaledObject"
    )
    spec = scaled["spec"]
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (0, 6)
    assert (spec["cooldownPeriod"], spec["pollingInterval"]) == (600, 30)
    assert spec["triggers"][0]["metadata"]["activationLagThreshold"] == "10"


def test_hpa() -> None:
    objs = objects(load_values(CHART / "ci" / "hpa-values.yaml"))
    assert "ScaledObject" not in kinds(objs)
    deployment = only(objs, "Deployment")
    assert "replicas" not in deployment["spec"]
    hpa = only(objs, "HorizontalPodAutoscaler")["spec"]
    assert hpa["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": deployment["metadata"]["name"],
    }
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (2, 6)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            _with(autoscaling={"enabled": True}, keda={"enabled": True}),
            "autoscaling.enabled and keda.enabled are both true: choose one",
        ),
        ({}, "kafka.bootstrapServers is required"),
        (
            _with(keda={"enabled": True, "maxReplicas": 13}),
            r"keda.maxReplicas \(13\) is above topics.partitions \(12\)",
        ),
        (
            _with(autoscaling={"enabled": True, "maxReplicas": 7}, topics={"partitions": 6}),
            r"autoscaling.maxReplicas \(7\) is above topics.partitions \(6\)",
        ),
        (
            _with(kafka={"securityProtocol": "SASL_SSL"}),
            "kafka.securityProtocol is SASL_SSL: set kafka.existingSecret",
        ),
        (
            _with(kafka={"caSecret": "ca"}),
            "kafka.caSecret is set but kafka.securityProtocol is PLAINTEXT",
        ),
        (
            _with(extraVolumes=[{"name": "tmp", "emptyDir": {}}]),
            "extraVolumes: the name tmp is the chart's own volume",
        ),
        (
            _with(serviceMonitor={"enabled": True, "labels": {"release": "prometheus"}}),
            "serviceMonitor.labels is now serviceMonitor.additionalLabels",
        ),
        (
            _with(prometheusRule={"labels": {"release": "prometheus"}}),
            "prometheusRule.labels is now prometheusRule.additionalLabels",
        ),
    ],
    ids=[
        "keda-and-hpa",
        "no-brokers",
        "keda-above-partitions",
        "hpa-above-partitions",
        "sasl-without-secret",
        "ca-without-tls",
        "extra-volume-named-as-the-charts",
        "servicemonitor-labels-renamed",
        "prometheusrule-labels-renamed",
    ],
)
def test_values_that_cannot_work_fail_clearly(values: dict, message: str) -> None:
    helm = need_module("helm_python")
    with pytest.raises(helm.HelmError, match=message):
        render(values)


@pytest.mark.parametrize(
    "values",
    [
        _with(worker={"batchsize": 8}),  # misspelt
        _with(cleaner={"parser": "lxml"}),
        _with(kafka={"securityProtocol": "TLS"}),
        _with(topics={"input": "has spaces"}),
        _with(worker={"webPort": 70000}),
        _with(web={"maxConnections": 0}),
        _with(webDemo={"maxBusyShare": 0}),
        _with(imagePullSecrets=["registry-credentials"]),  # {name: ...} objects
        _with(extraVolumeMounts=[{"name": "labellers"}]),  # no mountPath
        _with(keda={"behavior": {"scaleDwn": {}}}),
    ],
    ids=[
        "misspelt-key",
        "unknown-parser",
        "unknown-protocol",
        "bad-topic-name",
        "bad-port",
        "no-connections",
        "no-busy-share",
        "pull-secret-not-an-object",
        "mount-without-path",
        "misspelt-behavior",
    ],
)
def test_schema_rejects_values_the_worker_would_refuse(values: dict) -> None:
    helm = need_module("helm_python")
    with helm.Chart.load(CHART) as chart, pytest.raises(helm.HelmError):
        chart.validate_schema(values)


@pytest.mark.parametrize("values_file", CI_VALUES, ids=lambda p: p.name)
def test_labels_and_selectors_agree(values_file: Path) -> None:
    objs = objects(load_values(values_file))
    deployment = only(objs, "Deployment")
    selector = deployment["spec"]["selector"]["matchLabels"]
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert selector.items() <= pod_labels.items()
    assert selector["app.kubernetes.io/instance"] == "stream-cleaner"
    for obj in objs:
        labels = obj["metadata"]["labels"]
        assert labels["app.kubernetes.io/instance"] == "stream-cleaner"
        assert labels["app.kubernetes.io/name"] == "stream-cleaner"
        assert obj["metadata"]["namespace"] == "crawl"
    service = only(objs, "Service")
    assert service["spec"]["selector"] == selector
    assert service["spec"]["ports"][0]["targetPort"] == container(objs)["ports"][0]["name"]
    for obj in objs:
        if obj["kind"] == "PodDisruptionBudget":
            assert obj["spec"]["selector"]["matchLabels"] == selector
        if obj["kind"] == "ServiceMonitor":
            assert obj["spec"]["selector"]["matchLabels"].items() <= (
                service["metadata"]["labels"].items()
            )
            assert obj["spec"]["endpoints"][0]["port"] == service["spec"]["ports"][0]["name"]
            assert obj["spec"]["endpoints"][0]["path"] == "/metrics"
        if obj["kind"] == "Job":
            # the Job's pod is no worker: the Service and the PDB must not select it
            job_labels = obj["spec"]["template"]["metadata"]["labels"]
            assert not selector.items() <= job_labels.items()


def test_topic_job_is_a_hook_with_the_workers_settings() -> None:
    values = load_values(CHART / "ci" / "topics-job-values.yaml")
    objs = objects(values)
    job = only(objs, "Job")
    annotations = job["metadata"]["annotations"]
    assert annotations["helm.sh/hook"] == "pre-install,pre-upgrade"
    assert annotations["helm.sh/hook-delete-policy"] == "before-hook-creation,hook-succeeded"
    topics = container(objs, "Job")
    assert topics["args"] == [
        "topics", "create", "--partitions", "24", "--replication-factor", "3",
        "--retention-ms", "604800000", "--dead-letter-retention-ms", "2592000000",
        "--max-message-bytes", "14680064", "--timeout", "30",
    ]  # fmt: skip
    # the same settings as the workers (a pre-install hook cannot use the release's ConfigMap)
    assert container_env(objs, "Job") == only(objs, "ConfigMap")["data"]
    assert topics["securityContext"] == container(objs)["securityContext"]
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"


def test_prometheus_rule_and_service_monitor() -> None:
    objs = objects(load_values(CHART / "ci" / "prometheusrule-values.yaml"))
    rule = only(objs, "PrometheusRule")
    assert rule["metadata"]["labels"]["release"] == "prometheus"  # additionalLabels
    exprs = {r["alert"]: r["expr"] for r in rule["spec"]["groups"][0]["rules"]}
    assert "> 50000" in exprs["StreamCleanerLagGrowing"]
    assert "> 900" in exprs["StreamCleanerStalled"]
    assert "> 0.5" in exprs["StreamCleanerDeadLetterRateHigh"]
    monitor = only(
        objects(load_values(CHART / "ci" / "servicemonitor-values.yaml")), "ServiceMonitor"
    )
    assert monitor["metadata"]["labels"]["release"] == "prometheus"  # additionalLabels
    assert monitor["metadata"]["labels"]["app.kubernetes.io/instance"] == "stream-cleaner"
    assert monitor["spec"]["endpoints"][0]["interval"] == "15s"
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["crawl"]}


def test_the_readmes_values_render() -> None:
    """The README's my-values.yaml renders: the image, SASL, KEDA on the lag, the monitors."""
    yaml = need_module("yaml")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```yaml\n# my-values.yaml\n(.*?)```", readme, re.S)
    objs = objects(yaml.safe_load(block))
    assert container(objs)["image"] == "registry.example.org/stream-cleaner:0.1.0"
    assert {"ScaledObject", "ServiceMonitor", "PrometheusRule", "Job"} <= set(kinds(objs))
    secrets = {("kafka-credentials", "username"): "u", ("kafka-credentials", "password"): "p"}
    env = container_env(objs, secrets=secrets)
    assert env["STREAM_CLEANER_KAFKA_BOOTSTRAP_SERVERS"] == "kafka-0.kafka:9093,kafka-1.kafka:9093"
    assert env["STREAM_CLEANER_KAFKA_SECURITY_PROTOCOL"] == "SASL_SSL"
