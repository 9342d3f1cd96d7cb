"""Kafka connection settings and the project's topics: their names, specs and creation.

Topics are created explicitly through the broker's admin API (`create_topics`), never by
auto-creation: an auto-created topic gets the broker's default partition count and retention,
which silently caps parallelism and may drop input before it is cleaned. Nothing here is
specific to one broker; the tests run it against Tansu, production runs Apache Kafka.
"""

from __future__ import annotations

import asyncio
import logging
import re
import socket
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ..settings import values_from_env

if TYPE_CHECKING:
    from aiokafka.admin import AIOKafkaAdminClient

# Topic names follow <domain>.<entity>.v<N>; a breaking schema change bumps the version.
RAW_HTML_TOPIC = "crawl.raw-html.v1"
DOCUMENTS_TOPIC = "clean.documents.v1"
SENTENCE_SCORES_TOPIC = "clean.sentence-scores.v1"
DEAD_LETTER_TOPIC = "clean.dead-letter.v1"
# input messages re-keyed by their site (site templates): same schema as the input topic
SITE_TOPIC = "crawl.raw-html.by-site.v1"

# Partitions bound the worker processes that can share the load: 12 divides evenly over 1, 2,
# 3, 4, 6 and 12 workers.
PARTITIONS_DEFAULT = 12
DAY_MS = 24 * 60 * 60 * 1000
RETENTION_MS_DEFAULT = 7 * DAY_MS
# Dead letters wait for a person to look at them: they are kept longer than the input.
DEAD_LETTER_RETENTION_MS_DEFAULT = 30 * DAY_MS
# Pages up to 10 MiB are accepted. A JSON envelope carrying one as base64 is 4/3 of it
# (13.3 MiB); 14 MiB leaves room for the envelope. Outputs are bounded by their input's size,
# not by Kafka's 1 MB default, so every topic gets the same limit.
MAX_MESSAGE_BYTES_DEFAULT = 14 * 1024 * 1024
# A replication factor of None means min(3, brokers in the cluster), resolved at creation.
MAX_DEFAULT_REPLICATION_FACTOR = 3
CLEANUP_POLICIES = ("delete", "compact", "compact,delete")

BOOTSTRAP_SERVERS_DEFAULT = ("127.0.0.1:9092",)
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
KAFKA_ENV_PREFIX = "STREAM_CLEANER_KAFKA_"
# How long an admin call may take, connecting included, before the broker counts as
# unreachable: a command line must fail with a message, not hang.
ADMIN_TIMEOUT_SECONDS_DEFAULT = 10.0
# How long a worker waits at start for its cluster to answer (`wait_for_brokers`): a pod
# scheduled while Kafka restarts waits rather than exits. Below the chart's startup probe
# (120 s), which also covers loading the models.
BROKER_WAIT_SECONDS_DEFAULT = 60.0
# Kafka's codecs for record batches (the producers' compression.type): the sentence records of
# a CleanEval page take 59 KiB of batches as they are, 14 KiB in zstd, for 0.25 ms a page of
# the worker's (bench/compression.py).
COMPRESSION_TYPES = ("none", "gzip", "snappy", "lz4", "zstd")
# Kafka's own rule for topic names (kafka.common.internals.Topic).
_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]{1,249}")

CreateOutcome = Literal["created", "exists"]

log = logging.getLogger(__name__)
T = TypeVar("T")


class BrokerUnavailable(RuntimeError):
    """No broker answered at the bootstrap servers within the time allowed."""


class TopicCreationError(RuntimeError):
    """The broker refused to create a topic for a reason other than that it exists."""


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """What a topic is created with.

    Attributes:
        name: the topic name, ``[a-zA-Z0-9._-]``, at most 249 characters.
        partitions: number of partitions; the most worker processes that can share the topic.
        replication_factor: copies of each partition; ``None`` means min(3, brokers).
        retention_ms: how long records are kept (``retention.ms``); ``-1`` keeps them forever.
        cleanup_policy: ``delete``, ``compact`` or ``compact,delete`` (``cleanup.policy``).
        max_message_bytes: the largest record batch the topic accepts
            (``max.message.bytes``); ``None`` keeps the broker's default.
    """

    name: str
    partitions: int
    replication_factor: int | None
    retention_ms: int
    cleanup_policy: str = "delete"
    max_message_bytes: int | None = None

    def __post_init__(self) -> None:
        if not _TOPIC_NAME.fullmatch(self.name) or self.name in (".", ".."):
            raise ValueError(f"invalid topic name {self.name!r}: use [a-zA-Z0-9._-], 1-249")
        if self.partitions < 1:
            raise ValueError(f"{self.name}: partitions must be at least 1")
        if self.replication_factor is not None and self.replication_factor < 1:
            raise ValueError(f"{self.name}: replication_factor must be at least 1")
        if self.retention_ms < -1 or self.retention_ms == 0:
            raise ValueError(f"{self.name}: retention_ms must be positive, or -1 (forever)")
        if self.cleanup_policy not in CLEANUP_POLICIES:
            raise ValueError(f"{self.name}: cleanup_policy must be one of {CLEANUP_POLICIES}")
        if self.max_message_bytes is not None and self.max_message_bytes < 1:
            raise ValueError(f"{self.name}: max_message_bytes must be positive")

    def configs(self) -> dict[str, str]:
        """The topic-level configuration entries, as the admin API takes them."""
        configs = {"retention.ms": str(self.retention_ms), "cleanup.policy": self.cleanup_policy}
        if self.max_message_bytes is not None:
            configs["max.message.bytes"] = str(self.max_message_bytes)
        return configs


def default_topic_specs(
    *,
    partitions: int = PARTITIONS_DEFAULT,
    retention_ms: int = RETENTION_MS_DEFAULT,
    dead_letter_retention_ms: int = DEAD_LETTER_RETENTION_MS_DEFAULT,
    replication_factor: int | None = None,
    max_message_bytes: int = MAX_MESSAGE_BYTES_DEFAULT,
    input_topic: str = RAW_HTML_TOPIC,
    documents_topic: str = DOCUMENTS_TOPIC,
    sentence_scores_topic: str = SENTENCE_SCORES_TOPIC,
    dead_letter_topic: str = DEAD_LETTER_TOPIC,
) -> tuple[TopicSpec, ...]:
    """The four topics of the worker: input, cleaned documents, sentence scores, dead letters.

    All four get the same partition count: outputs are keyed by document id, so any count
    works, and the same one keeps a document's records at the same partition index everywhere.

    Args:
        partitions: partitions of every topic.
        retention_ms: retention of the input and the two output topics.
        dead_letter_retention_ms: retention of the dead-letter topic.
        replication_factor: copies of each partition; ``None`` means min(3, brokers).
        max_message_bytes: ``max.message.bytes`` of every topic.
        input_topic: name of the raw HTML input topic.
        documents_topic: name of the cleaned-documents topic.
        sentence_scores_topic: name of the per-sentence scores topic.
        dead_letter_topic: name of the dead-letter topic.

    Returns:
        The specs in the order input, documents, sentence scores, dead letters.

    Raises:
        ValueError: a name or a number is not valid for a topic.
    """
    names = (input_topic, documents_topic, sentence_scores_topic, dead_letter_topic)
    if len(set(names)) != len(names):
        raise ValueError(f"the four topics need four different names, not {names}")
    return tuple(
        TopicSpec(
            name=name,
            partitions=partitions,
            replication_factor=replication_factor,
            retention_ms=dead_letter_retention_ms if name == dead_letter_topic else retention_ms,
            max_message_bytes=max_message_bytes,
        )
        for name in names
    )


@dataclass(frozen=True, slots=True)
class KafkaSettings:
    """How to reach the Kafka cluster; the same for the admin client, producers and consumers.

    Attributes:
        bootstrap_servers: ``host:port`` of one or more brokers; a list, or one string with
            commas, is kept as a tuple.
        security_protocol: ``PLAINTEXT``, ``SSL``, ``SASL_PLAINTEXT`` or ``SASL_SSL``.
        sasl_mechanism: ``PLAIN``, ``SCRAM-SHA-256`` or ``SCRAM-SHA-512`` (SASL protocols).
        sasl_username: the SASL user; required by the SASL protocols.
        sasl_password: the SASL password; required by the SASL protocols, never printed.
        ssl_cafile: PEM file of the CA that signed the brokers' certificates (TLS protocols);
            ``None`` trusts the system's CAs.
    """

    bootstrap_servers: Sequence[str] = BOOTSTRAP_SERVERS_DEFAULT
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str = "PLAIN"
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)
    ssl_cafile: str | None = None

    def __post_init__(self) -> None:
        servers = self.bootstrap_servers
        if isinstance(servers, str):
            servers = servers.split(",")
        servers = tuple(s.strip() for s in servers if s.strip())
        # frozen: __post_init__ is the one place allowed to normalise a field
        object.__setattr__(self, "bootstrap_servers", servers)
        object.__setattr__(self, "security_protocol", self.security_protocol.upper())
        object.__setattr__(self, "sasl_mechanism", self.sasl_mechanism.upper())
        if not servers:
            raise ValueError("bootstrap_servers is empty: give at least one host:port")
        if self.security_protocol not in SECURITY_PROTOCOLS:
            raise ValueError(f"security_protocol must be one of {SECURITY_PROTOCOLS}")
        if self.sasl_mechanism not in SASL_MECHANISMS:
            raise ValueError(f"sasl_mechanism must be one of {SASL_MECHANISMS}")
        sasl = self.security_protocol.startswith("SASL_")
        if sasl and (not self.sasl_username or self.sasl_password is None):
            raise ValueError(f"{self.security_protocol} needs a SASL username and password")
        if not sasl and (self.sasl_username or self.sasl_password):
            raise ValueError(
                f"a SASL username or password is set but security_protocol is "
                f"{self.security_protocol}: use SASL_PLAINTEXT or SASL_SSL"
            )
        if self.ssl_cafile and not self.uses_tls:
            raise ValueError(
                f"ssl_cafile is set but security_protocol is {self.security_protocol}: "
                "use SSL or SASL_SSL"
            )

    @property
    def uses_tls(self) -> bool:
        """Whether connections to the brokers are encrypted."""
        return self.security_protocol in ("SSL", "SASL_SSL")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> KafkaSettings:
        """Settings from ``STREAM_CLEANER_KAFKA_<FIELD>`` variables, defaults for the rest.

        ``STREAM_CLEANER_KAFKA_BOOTSTRAP_SERVERS`` is a comma-separated list. Empty variables
        count as unset.

        Args:
            environ: the variables to read; ``os.environ`` when ``None``.

        Returns:
            The settings.

        Raises:
            ValueError: a variable has a value the settings do not accept.
        """
        return cls(**values_from_env(cls, KAFKA_ENV_PREFIX, environ))

    def ssl_context(self) -> ssl.SSLContext:
        """A TLS client context that verifies the brokers against ``ssl_cafile``."""
        return ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=self.ssl_cafile)

    def client_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for any aiokafka client (producer, consumer, admin).

        Returns:
            ``bootstrap_servers`` and ``security_protocol``, plus ``ssl_context`` for the TLS
            protocols and the ``sasl_*`` arguments for the SASL ones.
        """
        kwargs: dict[str, Any] = {
            "bootstrap_servers": list(self.bootstrap_servers),
            "security_protocol": self.security_protocol,
        }
        if self.uses_tls:
            kwargs["ssl_context"] = self.ssl_context()
        if self.security_protocol.startswith("SASL_"):
            kwargs["sasl_mechanism"] = self.sasl_mechanism
            kwargs["sasl_plain_username"] = self.sasl_username
            kwargs["sasl_plain_password"] = self.sasl_password
        return kwargs


async def create_topics_async(
    settings: KafkaSettings,
    specs: Sequence[TopicSpec],
    *,
    timeout: float = ADMIN_TIMEOUT_SECONDS_DEFAULT,
) -> dict[str, CreateOutcome]:
    """Create topics that do not exist yet; the coroutine behind `create_topics`."""
    from aiokafka.admin import NewTopic
    from aiokafka.errors import TopicAlreadyExistsError, for_code

    async def create(admin: AIOKafkaAdminClient) -> dict[str, CreateOutcome]:
        default_rf = None
        if any(spec.replication_factor is None for spec in specs):
            brokers = (await admin.describe_cluster())["brokers"]
            default_rf = max(1, min(MAX_DEFAULT_REPLICATION_FACTOR, len(brokers)))
        response = await admin.create_topics(
            [
                NewTopic(
                    spec.name,
                    spec.partitions,
                    spec.replication_factor or default_rf,
                    topic_configs=spec.configs(),
                )
                for spec in specs
            ],
            timeout_ms=int(timeout * 1000),
        )
        outcomes: dict[str, CreateOutcome] = {}
        failures = []
        for name, code, *rest in response.topic_errors:
            if code == 0:
                outcomes[name] = "created"
            elif code == TopicAlreadyExistsError.errno:
                outcomes[name] = "exists"
            else:
                message = rest[0] if rest and rest[0] else for_code(code).description
                failures.append(f"{name}: {for_code(code).__name__} ({message})")
        if failures:
            raise TopicCreationError("could not create " + "; ".join(failures))
        # the response's order is the broker's; give the caller the order it asked for
        return {spec.name: outcomes[spec.name] for spec in specs}

    if not specs:
        return {}
    return await _with_admin(settings, timeout, create)


def create_topics(
    settings: KafkaSettings,
    specs: Sequence[TopicSpec],
    *,
    timeout: float = ADMIN_TIMEOUT_SECONDS_DEFAULT,
) -> dict[str, CreateOutcome]:
    """Create the topics that do not exist yet, through the broker's admin API.

    Idempotent: a topic that exists is reported as ``"exists"`` and left as it is, even when
    its partitions or configuration differ from the spec (`describe_topics` shows them).

    Args:
        settings: how to reach the cluster.
        specs: the topics to create.
        timeout: seconds the whole call may take, connecting included.

    Returns:
        ``{name: "created" | "exists"}`` in the order of ``specs``.

    Raises:
        BrokerUnavailable: no broker answered within ``timeout``.
        TopicCreationError: the broker refused a topic (bad replication factor, ACLs, ...).
    """
    return asyncio.run(create_topics_async(settings, specs, timeout=timeout))


async def describe_topics_async(
    settings: KafkaSettings,
    names: Sequence[str] | None = None,
    *,
    timeout: float = ADMIN_TIMEOUT_SECONDS_DEFAULT,
) -> dict[str, int]:
    """Partition counts of existing topics; the coroutine behind `describe_topics`."""

    async def describe(admin: AIOKafkaAdminClient) -> dict[str, int]:
        # A metadata request naming a topic may auto-create it (Kafka's default, and Tansu's),
        # so ask for every topic and pick the names out.
        found = {
            t["topic"]: len(t["partitions"])
            for t in await admin.describe_topics()
            if t["error_code"] == 0 and not t["is_internal"]
        }
        if names is None:
            return dict(sorted(found.items()))
        return {name: found[name] for name in names if name in found}

    if names is not None and not names:
        return {}
    return await _with_admin(settings, timeout, describe)


def describe_topics(
    settings: KafkaSettings,
    names: Sequence[str] | None = None,
    *,
    timeout: float = ADMIN_TIMEOUT_SECONDS_DEFAULT,
) -> dict[str, int]:
    """The partition count of each existing topic, without creating any.

    Args:
        settings: how to reach the cluster.
        names: the topics to look up; ``None`` means every non-internal topic.
        timeout: seconds the whole call may take, connecting included.

    Returns:
        ``{name: partitions}`` for the names that exist (in the order given, or sorted by
        name when ``names`` is ``None``); a missing topic is absent.

    Raises:
        BrokerUnavailable: no broker answered within ``timeout``.
    """
    return asyncio.run(describe_topics_async(settings, names, timeout=timeout))


def wait_for_brokers(
    settings: KafkaSettings,
    timeout: float = BROKER_WAIT_SECONDS_DEFAULT,
    *,
    interval: float = 1.0,
    log_every: float = 10.0,
) -> None:
    """Return once a broker at the bootstrap servers answers; wait ``timeout`` seconds at most.

    While no bootstrap server accepts a TCP connection no client is made (aiokafka logs an
    error for every bootstrap that fails); then an admin client must bootstrap, a metadata
    request with the settings' security. Says every ``log_every`` seconds that it waits.
    aiokafka reports a refused login or a failed TLS handshake as a failed connection, so
    those are waited out too (its log says why at each try).

    Raises:
        BrokerUnavailable: no broker answered within ``timeout``; the message ends with the
            last failure.
    """
    servers = ",".join(settings.bootstrap_servers)
    started = time.monotonic()
    deadline = started + timeout
    said = started
    while True:
        left = deadline - time.monotonic()
        last = "nothing accepts connections there"
        if accepts_connections(settings.bootstrap_servers, min(max(left, 0.1), 2.0)):
            try:
                asyncio.run(_with_admin(settings, min(max(left, 0.1), 10.0), _no_work))
                return
            except BrokerUnavailable as exc:
                last = str(exc)
        now = time.monotonic()
        if now >= deadline:
            raise BrokerUnavailable(
                f"no Kafka broker answered at {servers} in {timeout:g} s (the last try: {last})"
            )
        if now - said >= log_every or said == started:
            log.warning("waiting for a Kafka broker at %s (%.0f s so far, %g s at most)",
                        servers, now - started, timeout)  # fmt: skip
            said = now
        time.sleep(min(interval, max(deadline - now, 0)))


async def _no_work(admin: AIOKafkaAdminClient) -> None:
    """Nothing: an admin client that started has bootstrapped."""


def accepts_connections(servers: Sequence[str], timeout: float) -> bool:
    """Whether any of ``servers`` (``host:port``, ``[v6]:port``) accepts a TCP connection."""
    for server in servers:
        host, _, port = server.rpartition(":")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
        except (OSError, ValueError):
            continue
        return True
    return False


async def _with_admin(
    settings: KafkaSettings,
    timeout: float,
    work: Callable[[AIOKafkaAdminClient], Awaitable[T]],
) -> T:
    """Run ``await work(admin)`` with a started admin client, all within ``timeout`` seconds."""
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.errors import KafkaConnectionError, KafkaTimeoutError

    servers = ",".join(settings.bootstrap_servers)
    admin = AIOKafkaAdminClient(
        client_id="stream-cleaner-admin",
        request_timeout_ms=max(1, int(timeout * 1000)),
        **settings.client_kwargs(),
    )
    try:
        async with asyncio.timeout(timeout):
            await admin.start()
            return await work(admin)
    except (TimeoutError, KafkaTimeoutError) as exc:
        raise BrokerUnavailable(
            f"no answer from a Kafka broker at {servers} within {timeout:g} s"
        ) from exc
    except KafkaConnectionError as exc:
        raise BrokerUnavailable(
            f"cannot connect to a Kafka broker at {servers} ({settings.security_protocol})"
        ) from exc
    finally:
        await admin.close()
