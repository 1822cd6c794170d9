"""Just enough of the Kubernetes protobuf encoding to accept what kubectl's typed clients send.

kubectl's imperative commands (``create namespace``, ``create configmap``, ``create secret
generic``, ``create priorityclass``, ``auth can-i``) POST ``application/vnd.kubernetes.protobuf``
bodies: the ``k8s\\x00`` magic, then a runtime.Unknown envelope (typeMeta=1 {apiVersion=1, kind=2},
raw=2) around the object's own message. This module decodes the protobuf wire format and maps the
field numbers of those few messages (k8s.io/api generated.proto) to their JSON names. Anything
else raises ``ProtobufUnsupported`` (the server answers 415, as before). Responses are always JSON
(kubectl also accepts application/json).
"""

from __future__ import annotations

import base64
from typing import Any, cast

MAGIC = b"k8s\x00"


class ProtobufUnsupported(ValueError):
    pass


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ProtobufUnsupported("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def fields(buf: bytes) -> list[tuple[int, int | bytes]]:
    """(field number, value) pairs: ints for varints, bytes for length-delimited fields."""
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
            out.append((number, value))
        elif wire == 2:
            length, pos = _varint(buf, pos)
            out.append((number, buf[pos : pos + length]))
            pos += length
        elif wire == 1:
            out.append((number, int.from_bytes(buf[pos : pos + 8], "little")))
            pos += 8
        elif wire == 5:
            out.append((number, int.from_bytes(buf[pos : pos + 4], "little")))
            pos += 4
        else:
            raise ProtobufUnsupported(f"unsupported wire type {wire}")
    return out


# A schema maps field number -> (json name, type); types: "str", "int", "bool", "bytes",
# ("msg", schema), ("map", value type), ("list", type).
_STR, _INT, _BOOL, _BYTES = "str", "int", "bool", "bytes"
OBJECT_META = {
    1: ("name", _STR),
    2: ("generateName", _STR),
    3: ("namespace", _STR),
    11: ("labels", ("map", _STR)),
    12: ("annotations", ("map", _STR)),
    14: ("finalizers", ("list", _STR)),
}
SCHEMAS: dict[tuple[str, str], dict] = {
    ("v1", "Namespace"): {
        1: ("metadata", ("msg", OBJECT_META)),
        2: ("spec", ("msg", {1: ("finalizers", ("list", _STR))})),
    },
    ("v1", "ConfigMap"): {
        1: ("metadata", ("msg", OBJECT_META)),
        2: ("data", ("map", _STR)),
        3: ("binaryData", ("map", _BYTES)),
        4: ("immutable", _BOOL),
    },
    ("v1", "Secret"): {
        1: ("metadata", ("msg", OBJECT_META)),
        2: ("data", ("map", _BYTES)),
        3: ("type", _STR),
        4: ("stringData", ("map", _STR)),
        5: ("immutable", _BOOL),
    },
    ("scheduling.k8s.io/v1", "PriorityClass"): {
        1: ("metadata", ("msg", OBJECT_META)),
        2: ("value", _INT),
        3: ("globalDefault", _BOOL),
        4: ("description", _STR),
        5: ("preemptionPolicy", _STR),
    },
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): {
        1: ("metadata", ("msg", OBJECT_META)),
        2: (
            "spec",
            (
                "msg",
                {
                    1: (
                        "resourceAttributes",
                        (
                            "msg",
                            {
                                1: ("namespace", _STR),
                                2: ("verb", _STR),
                                3: ("group", _STR),
                                4: ("version", _STR),
                                5: ("resource", _STR),
                                6: ("subresource", _STR),
                                7: ("name", _STR),
                            },
                        ),
                    ),
                    2: ("nonResourceAttributes", ("msg", {1: ("path", _STR), 2: ("verb", _STR)})),
                },
            ),
        ),
    },
}


def _value(raw: int | bytes, type_: Any) -> Any:
    if type_ == _STR:
        return raw.decode() if isinstance(raw, bytes) else str(raw)
    if type_ == _INT:
        value = int(raw)  # int64/int32 varints: two's complement for negatives
        return value - (1 << 64) if value >= 1 << 63 else value
    if type_ == _BOOL:
        return bool(raw)
    if type_ == _BYTES:
        return base64.b64encode(cast(bytes, raw)).decode()  # JSON carries []byte as base64
    if isinstance(type_, tuple) and type_[0] == "msg":
        return decode_message(cast(bytes, raw), type_[1])
    raise ProtobufUnsupported(f"unsupported field type {type_!r}")


def decode_message(buf: bytes, schema: dict) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, raw in fields(buf):
        if number not in schema:
            continue  # fields we do not model (defaults, empty strings kubectl always sends)
        name, type_ = schema[number]
        if isinstance(type_, tuple) and type_[0] == "map":
            entry = dict(fields(cast(bytes, raw)))  # map entries: key=1, value=2
            key = entry.get(1, b"")
            out.setdefault(name, {})[key.decode() if isinstance(key, bytes) else str(key)] = _value(
                entry.get(2, b""), type_[1]
            )
        elif isinstance(type_, tuple) and type_[0] == "list":
            out.setdefault(name, []).append(_value(raw, type_[1]))
        else:
            out[name] = _value(raw, type_)
    # proto3 sends empty strings for unset fields; JSON omits them.
    return {k: v for k, v in out.items() if v not in ("", {}, None)}


def decode(body: bytes) -> dict[str, Any]:
    """Decode a ``application/vnd.kubernetes.protobuf`` request body into a JSON object.
    Raises ProtobufUnsupported for kinds this module does not model."""
    if not body.startswith(MAGIC):
        raise ProtobufUnsupported("missing the k8s protobuf magic prefix")
    envelope: dict[int, Any] = dict(fields(body[len(MAGIC) :]))
    type_meta: dict[int, Any] = dict(fields(envelope.get(1, b"")))
    api_version = type_meta.get(1, b"").decode()
    kind = type_meta.get(2, b"").decode()
    schema = SCHEMAS.get((api_version, kind))
    if schema is None:
        raise ProtobufUnsupported(f"protobuf bodies for {api_version} {kind} are not supported; send JSON")
    obj = decode_message(envelope.get(2, b""), schema)
    return {"apiVersion": api_version, "kind": kind, **obj}
