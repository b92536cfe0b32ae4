"""The client's version (sent in its User-Agent)."""

VERSION = "0.1.0"
