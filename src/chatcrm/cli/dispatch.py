"""`chatcrm dispatch`: send webhook deliveries on their own, beside or instead of the
dispatchers inside `chatcrm serve` (contract D.4), until SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import logging
import signal

import click
import uvloop

from chatcrm.channels.sending import CHANNEL_SCHEDULE
from chatcrm.cli.database import database_url_option, fail, run_db, settings_for
from chatcrm.config import Settings
from chatcrm.db.database import Connection
from chatcrm.events.notifications import listen_forever
from chatcrm.events.publisher import NOTIFY_CHANNEL, Publisher
from chatcrm.webhooks.running import RunningDispatcher
from chatcrm.webhooks.schedule import RetrySchedule, ScheduleError

log = logging.getLogger("chatcrm.webhooks")


def check_schedule(settings: Settings) -> None:
    """Refuse to start on a malformed retry schedule (webhooks or channels), in one line."""
    try:
        RetrySchedule.parse(settings.webhook_retry_schedule)
        RetrySchedule.parse(settings.channel_retry_schedule, CHANNEL_SCHEDULE)
    except ScheduleError as exc:
        fail(str(exc))


@click.command()
@database_url_option
def dispatch(database_url: str | None) -> None:
    """Send webhook deliveries and queued WhatsApp messages until SIGTERM or SIGINT (and
    queue the deliveries of new events)."""
    from chatcrm import logs

    settings = settings_for(database_url)
    check_schedule(settings)
    logs.configure(settings.log_level, json=settings.log_json)

    async def nothing(_: Connection) -> None:
        return None

    run_db(database_url, nothing)  # migrates, and fails in one line if the database is down
    uvloop.run(_dispatch(settings))  # as the serve workers run (uvicorn[standard])


async def _dispatch(settings: Settings) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    running = RunningDispatcher(settings)
    running.start()
    assert running.task is not None
    log.info("webhook dispatcher started")
    publishing = _start_publisher(running, stop)
    stopping = asyncio.create_task(stop.wait())
    # The dispatcher's loop only ends on `stop`; if it ends otherwise, that is a defect to
    # surface (non-zero exit), not a process that silently sends nothing.
    await asyncio.wait({stopping, running.task}, return_when=asyncio.FIRST_COMPLETED)
    crashed = running.task.done() and not stop.is_set()
    stopping.cancel()
    for task in publishing:
        task.cancel()
    await asyncio.gather(*publishing, return_exceptions=True)
    await running.stop()
    if crashed:
        exc = running.task.exception() if not running.task.cancelled() else None
        raise SystemExit(f"chatcrm: error: the webhook dispatcher stopped: {exc!r}")
    log.info("webhook dispatcher stopped")


def _start_publisher(running: RunningDispatcher, stop: asyncio.Event) -> list[asyncio.Task[None]]:
    """`chatcrm dispatch` also queues the deliveries of new events (events/publisher.py),
    so deliveries go out even when no `serve` process runs; on PostgreSQL it is woken by
    the other processes' notifications."""
    publisher = Publisher(running.db, on_published=[running.wake])
    running.db.on_events_committed = publisher.wake
    tasks = [asyncio.create_task(publisher.run(stop), name="event publisher")]
    if running.db.is_postgres:
        handlers = {NOTIFY_CHANNEL: lambda _: publisher.notified()}
        tasks.append(asyncio.create_task(listen_forever(running.db, handlers)))
    return tasks
