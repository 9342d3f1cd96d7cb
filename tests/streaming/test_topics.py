import asyncio
import socket
import ssl
import subprocess
import sys
import time
import uuid
from types import SimpleNamespace

import pytest

from stream_cleaner.cli import main
from stream_cleaner.streaming import topics
from stream_cleaner.streaming.topics import (
    DEAD_LETTER_TOPIC,
    DOCUMENTS_TOPIC,
    RAW_HTML_TOPIC,
    SENTENCE_SCORES_TOPIC,
    KafkaSettings,
    TopicCreationError,
    TopicSpec,
    create_topics,
    default_topic_specs,
    describe_topics,
)

from ..conftest import DATA

CA_FILE = str(DATA / "test-ca.pem")  # a self-signed CA certificate (no key): loads, trusts nothing
DAY_MS = 24 * 3600 * 1000


def unique_specs(partitions: int) -> tuple[TopicSpec, ...]:
    """The four default topics under names no other test uses (the broker is shared)."""
    tag = uuid.uuid4().hex[:8]
    return default_topic_specs(
        partitions=partitions,
        input_topic=f"t{tag}.{RAW_HTML_TOPIC}",
        documents_topic=f"t{tag}.{DOCUMENTS_TOPIC}",
        sentence_scores_topic=f"t{tag}.{SENTENCE_SCORES_TOPIC}",
        dead_letter_topic=f"t{tag}.{DEAD_LETTER_TOPIC}",
    )


# --- specs and settings: no broker needed ---


def test_default_topic_specs():
    specs = default_topic_specs()
    assert [s.name for s in specs] == [
        "crawl.raw-html.v1",
        "clean.documents.v1",
        "clean.sentence-scores.v1",
        "clean.dead-letter.v1",
    ]
    assert {s.partitions for s in specs} == {12}
    assert [s.retention_ms for s in specs] == [7 * DAY_MS] * 3 + [30 * DAY_MS]
    assert {s.cleanup_policy for s in specs} == {"delete"}
    # a 10 MiB page in a base64 JSON envelope must fit
    assert all(s.max_message_bytes > 10 * 2**20 * 4 / 3 + 64 * 1024 for s in specs)
    assert specs[0].configs() == {
        "retention.ms": str(7 * DAY_MS),
        "cleanup.policy": "delete",
        "max.message.bytes": str(14 * 2**20),
    }


def test_default_topic_specs_take_partitions_retention_size_and_names():
    specs = default_topic_specs(
        partitions=3,
        retention_ms=1000,
        dead_letter_retention_ms=-1,
        max_message_bytes=2**20,
        replication_factor=2,
        input_topic="in.v2",
    )
    assert specs[0].name == "in.v2"
    assert [(s.partitions, s.retention_ms) for s in specs] == [(3, 1000)] * 3 + [(3, -1)]
    assert {(s.max_message_bytes, s.replication_factor) for s in specs} == {(2**20, 2)}
    with pytest.raises(ValueError, match="different names"):
        default_topic_specs(input_topic=DOCUMENTS_TOPIC)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": "a/b"}, "invalid topic name"),
        ({"name": ""}, "invalid topic name"),
        ({"name": "x" * 250}, "invalid topic name"),
        ({"partitions": 0}, "partitions"),
        ({"replication_factor": 0}, "replication_factor"),
        ({"retention_ms": 0}, "retention_ms"),
        ({"cleanup_policy": "forever"}, "cleanup_policy"),
        ({"max_message_bytes": 0}, "max_message_bytes"),
    ],
)
def test_topic_spec_rejects_bad_values(changes, message):
    fields = {"name": "a.b-c_1", "partitions": 1, "replication_factor": None, "retention_ms": -1}
    TopicSpec(**fields)
    with pytest.raises(ValueError, match=message):
        TopicSpec(**{**fields, **changes})


def test_kafka_settings_default_to_local_plaintext():
    settings = KafkaSettings.from_env({})
    assert settings.bootstrap_servers == ("127.0.0.1:9092",)
    assert settings.client_kwargs() == {
        "bootstrap_servers": ["127.0.0.1:9092"],
        "security_protocol": "PLAINTEXT",
    }


def test_kafka_settings_from_env_with_sasl_ssl():
    settings = KafkaSettings.from_env(
        {
            "STREAM_CLEANER_KAFKA_BOOTSTRAP_SERVERS": "k1:9093, k2:9093,",
            "STREAM_CLEANER_KAFKA_SECURITY_PROTOCOL": "sasl_ssl",
            "STREAM_CLEANER_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
            "STREAM_CLEANER_KAFKA_SASL_USERNAME": "cleaner",
            "STREAM_CLEANER_KAFKA_SASL_PASSWORD": "s3cret",
            "STREAM_CLEANER_KAFKA_SSL_CAFILE": CA_FILE,
            "STREAM_CLEANER_KAFKA_UNRELATED": "ignored",
        }
    )
    assert settings.bootstrap_servers == ("k1:9093", "k2:9093")
    assert "s3cret" not in repr(settings)
    kwargs = settings.client_kwargs()
    context = kwargs.pop("ssl_context")
    assert kwargs == {
        "bootstrap_servers": ["k1:9093", "k2:9093"],
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "cleaner",
        "sasl_plain_password": "s3cret",
    }
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert [c["subject"] for c in context.get_ca_certs()] == [
        ((("commonName", "stream-cleaner test CA"),),)
    ]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"bootstrap_servers": " , "}, "empty"),
        ({"security_protocol": "TLS"}, "security_protocol"),
        ({"security_protocol": "SASL_SSL", "sasl_mechanism": "GSSAPI"}, "sasl_mechanism"),
        ({"security_protocol": "SASL_PLAINTEXT", "sasl_username": "u"}, "username and password"),
        ({"sasl_username": "u", "sasl_password": "p"}, "SASL_PLAINTEXT or SASL_SSL"),
        ({"ssl_cafile": CA_FILE}, "SSL or SASL_SSL"),
    ],
)
def test_kafka_settings_reject_inconsistent_values(values, message):
    with pytest.raises(ValueError, match=message):
        KafkaSettings(**values)


def test_topics_commands_do_not_import_kafka_until_they_run():
    code = (
        "import sys, stream_cleaner, stream_cleaner.cli as cli\n"
        "cli.parse_args(['topics', 'create', '--partitions', '2'])\n"
        "loaded = [m for m in ('aiokafka', 'faust', 'prometheus_client') "
        "if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.mark.parametrize("command", [["topics"], ["topics", "create"], ["topics", "list"]])
def test_topics_commands_have_help(command):
    done = subprocess.run(
        [sys.executable, "-m", "stream_cleaner", *command, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert "usage: stream-cleaner topics" in done.stdout
    if command[-1] == "create":
        # the help states the defaults as literals: keep them true
        help_text = " ".join(done.stdout.split())
        assert f"(default {topics.PARTITIONS_DEFAULT})" in help_text
        assert f"(default {topics.RETENTION_MS_DEFAULT}, 7 days)" in help_text
        assert f"(default {topics.DEAD_LETTER_RETENTION_MS_DEFAULT}, 30 days)" in help_text
        assert f"(default {topics.MAX_MESSAGE_BYTES_DEFAULT}, 14 MiB" in help_text
        assert f"(default {topics.ADMIN_TIMEOUT_SECONDS_DEFAULT:g})" in help_text


def test_create_topics_reports_what_the_broker_refuses(monkeypatch):
    # Tansu accepts any replication factor, so the refusal path is checked with a stand-in
    import aiokafka.admin

    class RefusingAdmin:
        def __init__(self, **kwargs):
            self.kwargs = kwargs

        async def start(self):
            pass

        async def close(self):
            pass

        async def describe_cluster(self):
            return {"brokers": [{"node_id": 1}, {"node_id": 2}]}

        async def create_topics(self, new_topics, timeout_ms):
            self.asked = new_topics

            return SimpleNamespace(
                topic_errors=[
                    (new_topics[0].name, 0, None),
                    (new_topics[1].name, 38, "Replication factor: 2 larger than brokers: 1."),
                ]
            )

    monkeypatch.setattr(aiokafka.admin, "AIOKafkaAdminClient", RefusingAdmin)
    specs = default_topic_specs(partitions=2)[:2]
    with pytest.raises(TopicCreationError) as exc:
        create_topics(KafkaSettings(), specs)
    assert str(exc.value) == (
        "could not create clean.documents.v1: InvalidReplicationFactorError "
        "(Replication factor: 2 larger than brokers: 1.)"
    )


# --- against the real broker ---


@pytest.mark.broker
def test_create_topics_with_given_partitions_and_again(broker):
    settings = KafkaSettings(bootstrap_servers=[broker])
    specs = unique_specs(partitions=3)
    names = [s.name for s in specs]
    assert create_topics(settings, specs) == dict.fromkeys(names, "created")
    assert describe_topics(settings, names) == dict.fromkeys(names, 3)
    # idempotent; an existing topic is left as it is, whatever the spec says now
    bigger = [TopicSpec(s.name, 5, None, s.retention_ms) for s in specs]
    assert create_topics(settings, bigger) == dict.fromkeys(names, "exists")
    assert describe_topics(settings, names) == dict.fromkeys(names, 3)
    assert set(names) <= set(describe_topics(settings))


@pytest.mark.broker
def test_describe_topics_does_not_create_what_it_looks_up(broker):
    settings = KafkaSettings(bootstrap_servers=[broker])
    missing = f"missing-{uuid.uuid4().hex[:8]}"
    assert describe_topics(settings, [missing]) == {}
    assert missing not in describe_topics(settings)


@pytest.mark.broker
def test_round_trip_on_the_input_topic_keeps_keys_and_headers(broker):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    settings = KafkaSettings(bootstrap_servers=[broker])
    spec = unique_specs(partitions=3)[0]
    assert create_topics(settings, [spec]) == {spec.name: "created"}
    sent = {
        f"doc-{i}".encode(): (
            f"<html><body><p>page {i}</p></body></html>".encode(),
            [("url", f"https://example.org/{i}".encode()), ("content-type", b"text/html")],
        )
        for i in range(30)
    }

    async def round_trip() -> list:
        producer = AIOKafkaProducer(**settings.client_kwargs(), acks="all")
        await producer.start()
        try:
            for key, (value, headers) in sent.items():
                await producer.send(spec.name, value, key=key, headers=headers)
            await producer.flush()
        finally:
            await producer.stop()
        # no group: plain assignment of every partition, no join to wait for
        consumer = AIOKafkaConsumer(
            spec.name, **settings.client_kwargs(), group_id=None, auto_offset_reset="earliest"
        )
        await consumer.start()
        received = []
        try:
            async with asyncio.timeout(15):
                while len(received) < len(sent):
                    batches = await consumer.getmany(timeout_ms=500)
                    for messages in batches.values():
                        received.extend(messages)
        finally:
            await consumer.stop()
        return received

    received = asyncio.run(round_trip())
    assert len(received) == len(sent)
    assert {m.key: (m.value, list(m.headers)) for m in received} == {
        k: (v, h) for k, (v, h) in sent.items()
    }
    assert {m.partition for m in received} == {0, 1, 2}  # keys spread over the partitions
    for messages in _by_partition(received).values():
        assert [m.offset for m in messages] == list(range(len(messages)))


def _by_partition(messages: list) -> dict[int, list]:
    parts: dict[int, list] = {}
    for m in sorted(messages, key=lambda m: (m.partition, m.offset)):
        parts.setdefault(m.partition, []).append(m)
    return parts


@pytest.mark.broker
def test_cli_creates_and_lists_the_topics(broker, capsys, monkeypatch):
    monkeypatch.delenv("STREAM_CLEANER_KAFKA_BOOTSTRAP_SERVERS", raising=False)
    args = ["--bootstrap-servers", broker]
    assert main(["topics", "create", *args, "--partitions", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split() for line in out] == [
        [name, "created", "2", "partitions"]
        for name in (RAW_HTML_TOPIC, DOCUMENTS_TOPIC, SENTENCE_SCORES_TOPIC, DEAD_LETTER_TOPIC)
    ]

    assert main(["topics", "create", *args]) == 0  # 12 asked, 2 there: said, and left alone
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{RAW_HTML_TOPIC:<32} exists   2 partitions (not 12: left as is)"
    assert all(" exists " in line for line in out)

    monkeypatch.setenv("STREAM_CLEANER_KAFKA_BOOTSTRAP_SERVERS", broker)
    assert main(["topics", "list", "--input-topic", "other.raw-html.v1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split() for line in out] == [
        ["other.raw-html.v1", "missing"],
        [DOCUMENTS_TOPIC, "2", "partitions"],
        [SENTENCE_SCORES_TOPIC, "2", "partitions"],
        [DEAD_LETTER_TOPIC, "2", "partitions"],
    ]

    assert main(["topics", "create", "--input-topic", "other.raw-html.v1"]) == 0
    assert capsys.readouterr().out.split()[:3] == ["other.raw-html.v1", "created", "12"]
    assert main(["topics", "list", "--all"]) == 0
    listed = dict(line.split(maxsplit=1) for line in capsys.readouterr().out.splitlines())
    assert listed["other.raw-html.v1"] == "12 partitions"
    assert listed[RAW_HTML_TOPIC] == "2 partitions"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_cli_exits_1_at_once_when_nothing_listens(capsys):
    started = time.monotonic()
    code = main(["topics", "list", "--bootstrap-servers", f"127.0.0.1:{_closed_port()}"])
    assert code == 1
    assert time.monotonic() - started < 15
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("stream-cleaner topics: error: cannot connect to a Kafka broker at")


def test_cli_exits_1_within_its_timeout_when_the_broker_does_not_answer(capsys):
    # a socket that accepts connections (the kernel's backlog does) and never answers: a
    # hung broker or a proxy in the way
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        code = main(["topics", "create", "--bootstrap-servers", address, "--timeout", "3"])
        elapsed = time.monotonic() - started
    assert code == 1
    assert 2.5 < elapsed < 15
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("stream-cleaner topics: error:")
    assert address in err


@pytest.mark.broker
def test_cli_creates_the_site_template_topics_too(broker, capsys, monkeypatch):
    """With site templates: the table's compacted changelog and the site topic that
    re-keyed pages go through, both partitioned as the input."""
    monkeypatch.setenv("STREAM_CLEANER_WORKER_SITE_TEMPLATES", "true")
    monkeypatch.setenv("STREAM_CLEANER_WORKER_GROUP_ID", "sites-cli")
    monkeypatch.setenv("STREAM_CLEANER_WORKER_INPUT_TOPIC", "sites.raw-html.v1")
    monkeypatch.setenv("STREAM_CLEANER_WORKER_SITE_TOPIC", "sites.raw-html.by-site.v1")
    args = ["topics", "create", "--bootstrap-servers", broker, "--partitions", "3"]
    assert main(args) == 0
    created = {line.split()[0]: line.split()[2] for line in capsys.readouterr().out.splitlines()}
    assert created["sites.raw-html.by-site.v1"] == "3"
    assert created["sites-cli-site-templates-changelog"] == "3"
    monkeypatch.setenv("STREAM_CLEANER_WORKER_REKEY", "off")
    monkeypatch.setenv("STREAM_CLEANER_WORKER_SITE_TOPIC", "sites.raw-html.unused.v1")
    assert main(args) == 0
    assert "sites.raw-html.unused.v1" not in capsys.readouterr().out


def test_waiting_for_brokers_that_never_listen_gives_up_with_the_reason(caplog):
    """Nothing listening at the bootstrap servers: `wait_for_brokers` says it waits, makes no
    client (no aiokafka error at each try), and gives up after its timeout."""
    from stream_cleaner.streaming.stack import free_port
    from stream_cleaner.streaming.topics import BrokerUnavailable, wait_for_brokers

    address = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    with caplog.at_level("DEBUG"), pytest.raises(BrokerUnavailable) as raised:
        wait_for_brokers(KafkaSettings(bootstrap_servers=address), 1.5, interval=0.2)
    assert 1.5 <= time.monotonic() - started < 5
    assert str(raised.value) == (f"no Kafka broker answered at {address} in 1.5 s "
                                 "(the last try: nothing accepts connections there)")  # fmt: skip
    assert [r.getMessage() for r in caplog.records if r.name.startswith("aiokafka")] == []
    assert any("waiting for a Kafka broker at " + address in r.getMessage()
               for r in caplog.records)  # fmt: skip
