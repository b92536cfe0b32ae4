"""Record identifiers: time-ordered UUIDs (version 7), so new rows land at the end of indexes."""

import os
import re
import time

_ID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def new_id() -> str:
    """A UUIDv7 string: 48 bits of milliseconds, then random bits."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & 0xFFFFFFFFFFFF) << 80 | rand
    # version 7 in bits 76..79, RFC 4122 variant in bits 62..63
    value = (value & ~(0xF << 76)) | (0x7 << 76)
    value = (value & ~(0x3 << 62)) | (0x2 << 62)
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def is_id(value: object) -> bool:
    """True when value has the shape of an id we issue; anything else cannot name a record."""
    return isinstance(value, str) and _ID_RE.fullmatch(value) is not None
