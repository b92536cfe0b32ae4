"""E-mailing invitation and reset links when `CHATCRM_SMTP_URL` is set (contract J.1).

Sent with the standard library's smtplib in a thread, after the answer: the answer is
the same whether or not mail is configured or delivered, and a failure is logged without
the link (it holds a token).
"""

from __future__ import annotations

import asyncio
import logging
import smtplib
import ssl
from email.message import EmailMessage
from urllib.parse import unquote, urlsplit

from chatcrm.config import Settings

log = logging.getLogger("chatcrm.mail")
TIMEOUT_SECONDS = 10.0
_tasks: set[asyncio.Task[None]] = set()

SUBJECTS = {
    "invite": "You are invited to chatcrm",
    "reset": "Set a new chatcrm password",
}
TEXTS = {
    "invite": "Hello {name},\n\nyou are invited to chatcrm. Open this link to choose your "
    "password (it works once, for 7 days):\n\n{link}\n",
    "reset": "Hello {name},\n\nopen this link to set a new chatcrm password (it works once, "
    "for 1 hour):\n\n{link}\n\nIf you did not ask for it, ignore this message.\n",
}


def _send(settings: Settings, to: str, subject: str, body: str) -> None:
    url = urlsplit(settings.smtp_url or "")
    message = EmailMessage()
    message["From"] = settings.smtp_from
    message["To"] = to
    message["Subject"] = subject
    message.set_content(body)
    host, port = url.hostname or "127.0.0.1", url.port
    if url.scheme == "smtps":
        client: smtplib.SMTP = smtplib.SMTP_SSL(
            host, port or 465, timeout=TIMEOUT_SECONDS, context=ssl.create_default_context()
        )
    else:
        client = smtplib.SMTP(host, port or 25, timeout=TIMEOUT_SECONDS)
    with client:
        client.ehlo_or_helo_if_needed()  # the server's extensions are known after it
        if url.scheme == "smtp" and client.has_extn("starttls"):
            client.starttls(context=ssl.create_default_context())
            client.ehlo()  # its extensions again, over TLS (AUTH may be offered only there)
        # Credentials go only to a server that asks for them: one offering no AUTH takes
        # the mail without (a relay on the same host), rather than the mail being lost.
        if url.username and client.has_extn("auth"):
            client.login(unquote(url.username), unquote(url.password or ""))
        client.send_message(message)


def _send_link(settings: Settings, to: str, name: str, purpose: str, link: str) -> str | None:
    """Send it now; None when it was sent, else why not (the error's kind, logged without
    the link: it carries the token)."""
    try:
        _send(settings, to, SUBJECTS[purpose], TEXTS[purpose].format(name=name, link=link))
    except Exception as exc:
        log.warning(
            "an e-mail could not be sent", extra={"purpose": purpose, "error": type(exc).__name__}
        )
        return type(exc).__name__
    return None


def mail_link(settings: Settings, *, to: str, name: str, purpose: str, link: str) -> str | None:
    """A command's link e-mailed before it ends (`chatcrm users create`, `reset-link`):
    None when it was sent or mail is not set, else why it could not be (the error's kind)."""
    return _send_link(settings, to, name, purpose, link) if settings.smtp_url else None


def send_link(settings: Settings, *, to: str, name: str, purpose: str, link: str) -> None:
    """Queue the e-mail of an invitation or reset link (nothing when mail is not set)."""
    if not settings.smtp_url:
        return

    async def deliver() -> None:
        await asyncio.to_thread(_send_link, settings, to, name, purpose, link)

    task = asyncio.get_running_loop().create_task(deliver())
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
