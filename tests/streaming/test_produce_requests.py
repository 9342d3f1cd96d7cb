import asyncio
import random

import pytest
from aiokafka import conn
from aiokafka.producer import sender
from aiokafka.protocol.fetch import FetchRequest
from aiokafka.protocol.produce import ProduceRequest

from stream_cleaner.streaming.patches.produce_requests import OnePassEncode, install, one_pass
from stream_cleaner.streaming.patches.versions import require_tested


@pytest.fixture(autouse=True)
def _clients_checked() -> None:
    """The patches install only once the client version gate let the process run."""
    require_tested()


def random_topics(rng: random.Random):
    """Topics as aiokafka's sender passes them, with what the schema allows at each level."""
    if rng.random() < 0.05:
        return []
    topics = []
    for _ in range(rng.randint(1, 3)):
        name = rng.choice(["clean.documents.v1", "clean.sentence-scores.v1", "tëst", ""])
        partitions = []
        for _ in range(rng.randint(0, 4)):
            size = rng.choice([0, 1, 70, 5000, 300_000])
            records = rng.randbytes(size)
            kind = rng.random()
            if kind < 0.1:
                records = None
            elif kind < 0.4:
                records = bytearray(records)  # what aiokafka's builder hands the sender
            elif kind < 0.5:
                records = memoryview(records)
            partitions.append((rng.randrange(64), records))
        topics.append((name, partitions))
    return topics


@pytest.mark.parametrize("struct_class", ProduceRequest._CLASSES, ids=lambda c: c.__name__)
def test_one_pass_writes_the_bytes_aiokafka_writes(struct_class):
    rng = random.Random(struct_class.API_VERSION)
    fast_class = one_pass(struct_class)
    assert fast_class is not struct_class and issubclass(fast_class, struct_class)
    for _ in range(30):
        request = ProduceRequest(
            transactional_id=rng.choice([None, "txn-ä"]) if struct_class.API_VERSION >= 3 else None,
            required_acks=rng.choice([-1, 0, 1]),
            timeout=rng.randrange(1 << 31),
            topics=random_topics(rng),
        )
        expected = request.build(struct_class).encode()
        assert request.build(fast_class).encode() == expected


def test_other_layouts_keep_aiokafkas_encoding():
    for struct_class in FetchRequest._CLASSES:
        assert one_pass(struct_class) is struct_class


def test_install_makes_the_sender_build_one_pass_requests(monkeypatch):
    monkeypatch.setattr(sender, "ProduceRequest", ProduceRequest)  # undone after the test
    monkeypatch.setattr(conn.AIOKafkaConnection, "send", aiokafka_send())
    assert install() is True
    assert install() is True  # idempotent: the class stays
    substitute = sender.ProduceRequest
    assert substitute is not ProduceRequest and issubclass(substitute, ProduceRequest)
    topics = [("t", [(0, b"records"), (3, bytearray(b"more"))])]
    request = substitute(transactional_id=None, required_acks=-1, timeout=100, topics=topics)
    built = request.prepare({0: (0, 7)})  # what the connection calls, with the broker's range
    assert isinstance(built, OnePassEncode) and built.API_VERSION == 7
    plain = ProduceRequest(transactional_id=None, required_acks=-1, timeout=100, topics=topics)
    assert built.encode() == plain.prepare({0: (0, 7)}).encode()


def test_install_leaves_an_unexpected_sender_alone(monkeypatch):
    class Other:
        pass

    monkeypatch.setattr(sender, "ProduceRequest", Other)
    assert install() is False
    assert sender.ProduceRequest is Other


def aiokafka_send():
    """aiokafka's own ``AIOKafkaConnection.send``, whether or not `install` replaced it."""
    send = conn.AIOKafkaConnection.send
    return getattr(send, "original", send)


class Writer:
    """Stands in for a connection's stream writer: keeps what is written."""

    def __init__(self) -> None:
        self.written: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.written.append(bytes(data))

    async def drain(self) -> None:
        pass


def sent(send, request, version: int, expect_response: bool) -> tuple[list[bytes], int]:
    """What ``send`` writes for ``request`` on a new connection to a broker of one produce
    request version, and how many responses the connection then waits for."""

    async def run() -> tuple[list[bytes], int]:
        connection = conn.AIOKafkaConnection("127.0.0.1", 9, client_id="stream-cleaner-test")
        connection._writer = Writer()
        connection._versions = {ProduceRequest.API_KEY: (version, version)}
        waiting = send(connection, request, expect_response)
        n_waiting = len(connection._requests)
        waiting.close()  # a coroutine: the response it would wait for never comes
        return connection._writer.written, n_waiting

    return asyncio.run(run())


@pytest.mark.parametrize("struct_class", ProduceRequest._CLASSES, ids=lambda c: c.__name__)
def test_the_connection_frames_one_pass_requests_as_aiokafka_does(monkeypatch, struct_class):
    monkeypatch.setattr(sender, "ProduceRequest", ProduceRequest)
    monkeypatch.setattr(conn.AIOKafkaConnection, "send", aiokafka_send())
    assert install() is True
    send = conn.AIOKafkaConnection.send
    assert send is not aiokafka_send() and send.original is aiokafka_send()
    install()
    assert conn.AIOKafkaConnection.send is send  # idempotent: wrapped once
    version = struct_class.API_VERSION
    rng = random.Random(version)
    for _ in range(20):
        fields = {
            "transactional_id": rng.choice([None, "txn-ä"]) if version >= 3 else None,
            "required_acks": rng.choice([-1, 0, 1]),
            "timeout": rng.randrange(1 << 31),
            "topics": random_topics(rng),
        }
        expect_response = fields["required_acks"] != 0
        ours = sent(send, sender.ProduceRequest(**fields), version, expect_response)
        theirs = sent(aiokafka_send(), ProduceRequest(**fields), version, expect_response)
        assert len(ours[0]) == 1  # one write of one join
        assert ours == (theirs[0], 1 if expect_response else 0)
        assert b"".join(ours[0]) == b"".join(theirs[0])
        # any other request goes through aiokafka's own send
        assert sent(send, ProduceRequest(**fields), version, expect_response) == theirs
