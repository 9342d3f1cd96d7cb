"""The real broker for the streaming tests: a Tansu process on a free 127.0.0.1 port.

One broker serves the whole session (memory storage, gone when it stops); tests keep apart by
using their own topic names. Install the binary with ``bash scripts/install-tansu.sh``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from stream_cleaner.streaming.stack import tansu_broker
from stream_cleaner.streaming.topics import KafkaSettings

from ..conftest import REPO

TANSU = REPO / ".cache" / "tansu" / "bin" / "tansu"


def tansu_binary() -> str:
    """The Tansu binary scripts/install-tansu.sh installs: the test is skipped without it,
    but fails in CI (``CI`` set), where scripts/setup.sh installs it."""
    if not os.access(TANSU, os.X_OK):
        message = f"{TANSU} not installed: run bash scripts/install-tansu.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return str(TANSU)


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A running Tansu broker; yields its bootstrap address ``127.0.0.1:PORT``.

    Skipped when the binary is not installed, but a failure in CI (``CI`` set), where
    scripts/setup.sh installs it.
    """
    binary = tansu_binary()
    log = tmp_path_factory.mktemp("tansu") / "tansu.log"
    try:
        broker = tansu_broker(log, binary=binary)
        address = broker.__enter__()
    except RuntimeError as exc:
        pytest.fail(str(exc))
    try:
        yield address
    finally:
        broker.__exit__(None, None, None)


async def batch_codecs(settings: KafkaSettings, topic: str, partition: int) -> list[int]:
    """The codec bits of each record batch the broker holds in a partition, in order: a raw
    fetch, since consumers hand over records without their batch."""
    from aiokafka import TopicPartition
    from aiokafka.client import AIOKafkaClient
    from aiokafka.protocol.fetch import FetchRequest
    from aiokafka.record.memory_records import MemoryRecords

    client = AIOKafkaClient(**settings.client_kwargs())
    await client.bootstrap()
    try:
        client.add_topic(topic)
        await client.force_metadata_update()
        node = client.cluster.leader_for_partition(TopicPartition(topic, partition))
        request = FetchRequest(500, 1, 64 << 20, 0, [(topic, [(partition, 0, 64 << 20)])])
        response = await client.send(node, request)
    finally:
        await client.close()
    records = MemoryRecords(response.topics[0][1][0][-1])  # the last field in every version
    codecs = []
    while (batch := records.next_batch()) is not None:
        codecs.append(batch.compression_type)
    return codecs
