"""Configuration from `CHATCRM_*` environment variables (and CLI flags that override them)."""

from urllib.parse import urlsplit

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_DATABASE_URL = "sqlite:///./chatcrm.db"


def _url(value: str | None, schemes: tuple[str, ...]) -> str | None:
    """`value` when it is a URL of one of `schemes` with a host (and a port, if any, that
    is one), None when unset or empty; else ValueError. Checked at start: a link or an
    e-mail made from a malformed one would fail only later, and far from its cause."""
    if not value:
        return None
    wanted = " or ".join(f"{scheme}://" for scheme in schemes)  # "an" fits both: http, smtp
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - a port that is no number, or out of range, raises here
    except ValueError:
        raise ValueError(f"must be an {wanted} URL") from None
    if parts.scheme not in schemes or not parts.hostname or any(c.isspace() for c in value):
        raise ValueError(f"must be an {wanted} URL with a host")
    return value


# The highest rate limit a key or the service may have, in requests per second: far
# beyond what a node serves, and low enough that each lease of it fits the budgets' columns.
RATE_MAX = 1_000_000


class Settings(BaseSettings):
    # No setting is infinite or NaN: `inf` passed `ge=0` and then broke the arithmetic that
    # uses it (a rate of inf answered every request 500).
    model_config = SettingsConfigDict(env_prefix="CHATCRM_", extra="ignore", allow_inf_nan=False)

    database_url: str = DEFAULT_DATABASE_URL
    # Connections each worker process keeps to PostgreSQL (SQLite uses its own small pools).
    db_pool_size: int = Field(default=10, ge=1, le=200)
    db_max_overflow: int = Field(default=10, ge=0, le=200)
    # Seconds to wait for a connection to open or a pool slot to free before answering 503.
    # Upper bounds here and below: past them a time overflows where it is used (a date past
    # year 9999, a timer past C's int), which answered 500 long after the start.
    db_connect_timeout: float = Field(default=5.0, gt=0, le=3600)
    # Seconds one statement may run on PostgreSQL before it is cancelled.
    db_statement_timeout: float = Field(default=30.0, gt=0, le=86400)
    # Milliseconds an SQLite writer waits for another process's write lock.
    sqlite_busy_timeout_ms: int = Field(default=10_000, ge=0)
    # FULL: a commit answered 200 survives power loss, not only a process crash.
    sqlite_synchronous: str = Field(default="FULL", pattern="^(OFF|NORMAL|FULL|EXTRA)$")
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    # Requests per second per API key (token bucket); 0 turns limiting off.
    rate_limit: float = Field(default=100.0, ge=0, le=RATE_MAX)
    # Bucket capacity of keys on the default limit; unset, twice the rate (100/s -> 200).
    rate_burst: int | None = Field(default=None, ge=1)
    # Worker processes of this node (set by `chatcrm serve --workers`); limits are shared.
    workers: int = Field(default=1, ge=1, le=64)
    # Seconds an authenticated API key stays cached in a worker.
    key_cache_ttl: float = Field(default=5.0, ge=0, le=5.0)
    # Events and webhooks (contract D; docs/webhooks.md, docs/operations.md).
    # Days an event stays in the feed and history before the purge removes it.
    event_retention_days: float = Field(default=30.0, gt=0, le=36500)
    # 0: this process sends no webhooks (`chatcrm dispatch` can do it instead).
    dispatch: bool = True
    # Seconds a receiver has to answer 2xx before the attempt counts as failed.
    webhook_timeout: float = Field(default=10.0, gt=0, le=300)
    # Waits before each retry, in seconds (comma-separated); 7 retries, 8 attempts.
    webhook_retry_schedule: str = "5,300,1800,7200,18000,36000,36000"
    # Consecutive failed deliveries after which an endpoint is disabled ("failing").
    webhook_disable_after: int = Field(default=20, ge=1)
    # 1: allow receivers on loopback, private, link-local… addresses (development).
    webhook_allow_private: bool = False
    # Attempts in flight at once to one endpoint, per process: the most its window grows to
    # while it answers (webhooks/windows.py; a slow receiver holds only its own); and
    # in all, per process.
    webhook_max_in_flight: int = Field(default=256, ge=1, le=1000)
    webhook_max_in_flight_total: int = Field(default=512, ge=1, le=10000)
    # Channels (contract K.2): seconds the Graph API has to answer a send; the waits
    # before each retry of a send that surely did not go out (refused connection, 429);
    # sends in flight at once, per process.
    channel_timeout: float = Field(default=10.0, gt=0, le=120)
    channel_retry_schedule: str = "2,10,60,300"
    channel_max_in_flight: int = Field(default=64, ge=1, le=1000)
    # People (contract J). The address people reach the service at: invitation and reset
    # links start with it, and cookies are `Secure` when it is https. Unset: the address
    # `chatcrm serve` listens on (never a request's Host header).
    public_url: str | None = None
    # Invitations and reset links are also e-mailed when set: smtp://user:pass@host:port
    # (STARTTLS when offered) or smtps://… (TLS from the start).
    smtp_url: str | None = None
    smtp_from: str = "chatcrm <noreply@localhost>"
    # A console session ends after this long without a request, and this long after sign-in.
    session_idle_hours: float = Field(default=12.0, gt=0, le=87600)
    session_max_days: float = Field(default=7.0, gt=0, le=3650)
    log_level: str = Field(default="info", pattern="(?i)^(debug|info|warning|error|critical)$")
    log_json: bool = True
    # One JSON line per request (method, route, status, duration, request id, key id).
    access_log: bool = True

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        return _url(value, ("http", "https"))

    @field_validator("smtp_url")
    @classmethod
    def _smtp_url(cls, value: str | None) -> str | None:
        return _url(value, ("smtp", "smtps"))

    @field_validator("smtp_from")
    @classmethod
    def _smtp_from(cls, value: str) -> str:
        # Read as the mail's From header is when one is sent: a bad one would else be seen
        # only at the first send, by the relay, far from its cause.
        from email.message import EmailMessage

        message = EmailMessage()
        try:
            message["From"] = value
            header = message["From"]
        except ValueError as exc:
            raise ValueError("must be one address, e.g. chatcrm <noreply@example.com>") from exc
        found = header.addresses
        one = (
            not header.defects
            and len(header.groups) == 1
            and header.groups[0].display_name is None  # not a group ("Team: a@b;")
            and len(found) == 1
            and bool(found[0].domain)
            and found[0].addr_spec.isascii()  # a relay without SMTPUTF8 refuses any other
            and not value.strip().endswith((",", ";"))
        )
        if not one:
            raise ValueError(
                "must be one address of ASCII letters, e.g. chatcrm <noreply@example.com>"
            )
        return value

    @property
    def base_url(self) -> str:
        """`public_url` without its trailing slash, or the address serve listens on."""
        return (self.public_url or "http://127.0.0.1:8000").rstrip("/")

    @property
    def default_burst(self) -> float:
        """Bucket capacity of keys without a limit of their own."""
        return 2 * self.rate_limit if self.rate_burst is None else float(self.rate_burst)
