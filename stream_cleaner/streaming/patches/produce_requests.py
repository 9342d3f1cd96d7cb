"""Kafka produce requests framed with one copy of their record batches instead of eight.

aiokafka (0.14) encodes a request by joining bytes at every level of its schema: ``Bytes``
prefixes the record batch with its length, then each ``Schema`` and ``Array`` around it joins
its parts; ``AIOKafkaConnection.send`` then adds the header and the size, two more copies. A
produce request's record batches, nearly all of its bytes, are copied at each step. The
worker sends a request of a few MiB for every batch of pages, on the event loop that shares
the GIL with the cleaning thread. `bench/record_batches.py` frames the CleanEval test pages'
sentence records as the connection sends them (requests of 4 MiB): 0.041-0.044 ms a page
with aiokafka's encoding, 0.019-0.020 with one join in the encoding and the connection's two
copies after it (`tests/streaming/test_produce_requests.py` checks the bytes are the same).
In a worker those two copies of requests of a few MiB were a tenth of the event loop's time
with the GIL (py-spy), so the connection now writes such a request as one join too.

`install` makes aiokafka's sender build its ``ProduceRequest`` structs from subclasses whose
``encode`` joins the pieces once, and makes the connection frame them (size, header, request)
in that same join. Every version aiokafka has (v0 to v7) shares the layout; a struct of any
other layout keeps aiokafka's own ``encode`` and framing.

Private names: the name ``ProduceRequest`` in ``aiokafka.producer.sender`` (replaced by a
subclass whose ``build`` makes one-pass structs), and ``aiokafka.conn.AIOKafkaConnection.send``
(aiokafka 0.14's, copied for a one-pass request), whose ``_writer``, ``_versions``,
``_next_correlation_id``, ``_client_id``, ``_requests``, ``_loop``, ``_request_timeout``,
``_host`` and ``_port`` it uses. Without it nothing breaks: requests cost more copies.

Tests: ``tests/streaming/test_produce_requests.py`` compares the bytes with aiokafka's for every
version (``test_one_pass_writes_the_bytes_aiokafka_writes``,
``test_the_connection_frames_one_pass_requests_as_aiokafka_does``) and checks that an
unexpected sender is left alone; every broker test sends through it.
"""

from __future__ import annotations

import struct
from functools import cache
from typing import Any

from .versions import require_checked

# the field names of the produce request's schema, and of its topics and partitions
_REQUEST_FIELDS = (("required_acks", "timeout", "topics"),
                   ("transactional_id", "required_acks", "timeout", "topics"))  # fmt: skip
_TOPIC_FIELDS = ("topic", "partitions")
_PARTITION_FIELDS = ("partition", "messages")

_INT16 = struct.Struct(">h").pack
_INT32 = struct.Struct(">i").pack


def _string(value: str | None) -> bytes:
    """Kafka's nullable STRING, as aiokafka's ``String("utf-8")`` writes it."""
    if value is None:
        return _INT16(-1)
    data = str(value).encode("utf-8")
    return _INT16(len(data)) + data


class OnePassEncode:
    """Mixed into a produce request struct: `encode` writes the same bytes in one join."""

    SCHEMA: Any
    __dict__: dict[str, Any]

    def encode(self) -> bytes:
        return b"".join(self.pieces())

    def frame(self, header: bytes) -> bytes:
        """The request as a connection sends it: its size, ``header``, then the request."""
        pieces = self.pieces()
        return b"".join([_INT32(len(header) + sum(map(len, pieces))), header, *pieces])

    def pieces(self) -> list[Any]:
        """The bytes of the request, in order: short pieces and the record batches."""
        fields = self.__dict__
        pieces = []
        if "transactional_id" in self.SCHEMA.names:
            pieces.append(_string(fields["transactional_id"]))
        topics = fields["topics"]
        pieces += [_INT16(fields["required_acks"]), _INT32(fields["timeout"]),
                   _INT32(-1 if topics is None else len(topics))]  # fmt: skip
        for topic, partitions in topics or ():
            pieces += [_string(topic), _INT32(-1 if partitions is None else len(partitions))]
            for partition, records in partitions or ():
                pieces.append(_INT32(partition))
                if records is None:
                    pieces.append(_INT32(-1))
                else:
                    pieces += [_INT32(len(records)), records]
        return pieces


def _names(schema: Any) -> tuple[str, ...]:
    return tuple(getattr(schema, "names", ()))


def same_layout(struct_class: type) -> bool:
    """Whether ``struct_class``'s schema is the produce request's that `OnePassEncode` writes."""
    schema = getattr(struct_class, "SCHEMA", None)
    if _names(schema) not in _REQUEST_FIELDS:
        return False
    topics = getattr(schema.fields[-1], "array_of", None)
    if _names(topics) != _TOPIC_FIELDS:
        return False
    partitions = getattr(topics.fields[-1], "array_of", None)
    return _names(partitions) == _PARTITION_FIELDS


@cache
def one_pass(struct_class: type) -> type:
    """``struct_class`` with `OnePassEncode`'s ``encode``, or itself if its layout differs."""
    if not same_layout(struct_class):
        return struct_class
    return type(struct_class.__name__, (OnePassEncode, struct_class), {})


def install() -> bool:
    """Make aiokafka's producers encode and frame produce requests in one pass; idempotent.

    Returns:
        False when aiokafka's sender does not look as expected (another version): it is
        then left alone.
    """
    from aiokafka.producer import sender
    from aiokafka.protocol.produce import ProduceRequest

    require_checked()

    current = getattr(sender, "ProduceRequest", None)
    if current is not ProduceRequest:
        return current is not None and getattr(current, "one_pass", False)

    class OnePassProduceRequest(ProduceRequest):
        one_pass = True

        def build(self, request_struct_class: Any) -> Any:
            return super().build(one_pass(request_struct_class))

    _frame_in_one_join()
    sender.ProduceRequest = OnePassProduceRequest  # type: ignore[misc]
    return True


def _frame_in_one_join() -> None:
    """Make ``AIOKafkaConnection.send`` write a one-pass produce request in one join (its
    own code otherwise: every other request, and any connection it does not know)."""
    from aiokafka import conn

    original = conn.AIOKafkaConnection.send
    if getattr(original, "one_join", False):
        return

    def send(self: Any, request: Any, expect_response: bool = True) -> Any:
        # aiokafka 0.14's send, but for the one join and the debug line with the request
        if self._writer is None or not getattr(request, "one_pass", False):
            return original(self, request, expect_response)
        request_struct = request.prepare(self._versions)
        if not isinstance(request_struct, OnePassEncode):
            return original(self, request, expect_response)
        correlation_id = self._next_correlation_id()
        header = request_struct.build_request_header(
            correlation_id=correlation_id, client_id=self._client_id
        )
        try:
            self._writer.write(request_struct.frame(header.encode()))
        except OSError as err:
            self.close(reason=conn.CloseReason.CONNECTION_BROKEN)
            raise conn.Errors.KafkaConnectionError(
                f"Connection at {self._host}:{self._port} broken: {err}"
            ) from err
        if not expect_response:
            return self._writer.drain()
        fut = self._loop.create_future()
        self._requests.append((correlation_id, request_struct, fut))
        return conn.wait_for(fut, self._request_timeout)

    send.one_join = True  # type: ignore[attr-defined]
    send.original = original  # type: ignore[attr-defined]
    conn.AIOKafkaConnection.send = send
