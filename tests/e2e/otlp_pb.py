#!/usr/bin/env python3
"""otlp_pb.py - writes an OTLP ExportLogsServiceRequest in protobuf to
stdout for tests/e2e/http.sh, encoded by hand (field numbers of
opentelemetry-proto logs/v1, common/v1, resource/v1; no protobuf package
needed): ROWS records of service SERVICE, record i with body "pb record i",
time 1758585600000000000 + i, severity 13 WARN, trace id bytes 1..16, span
id bytes 1..8, attribute "i" = i (an int)."""
import struct
import sys


def vi(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def fld(num, wt, payload):
    tag = vi((num << 3) | wt)
    return tag + vi(len(payload)) + payload if wt == 2 else tag + payload


def s(num, v):
    return fld(num, 2, v.encode() if isinstance(v, str) else v)


def kv(k, v):
    return s(1, k) + fld(2, 2, v)


rows, service = int(sys.argv[1]), sys.argv[2]
recs = b""
for i in range(rows):
    rec = (fld(1, 1, struct.pack("<Q", 1758585600000000000 + i)) + fld(2, 0, vi(13)) + s(3, "WARN")
           + fld(5, 2, s(1, "pb record %d" % i)) + fld(6, 2, kv("i", fld(3, 0, vi(i))))
           + fld(8, 5, struct.pack("<I", 1)) + s(9, bytes(range(1, 17))) + s(10, bytes(range(1, 9))))
    recs += fld(2, 2, rec)
scope = s(1, "pb.scope") + s(2, "0.9")
sl = fld(1, 2, scope) + recs + s(3, "https://scope/1")
res = fld(1, 2, kv("service.name", s(1, service))) + fld(1, 2, kv("host.name", s(1, "h1")))
rl = fld(1, 2, res) + fld(2, 2, sl) + s(3, "https://res/1")
sys.stdout.buffer.write(fld(1, 2, rl))
