"""Service-wide secrets kept in the database (created by the migrations)."""

from sqlalchemy import bindparam, select

from chatcrm.db.database import Connection
from chatcrm.db.schema import service_secrets

_GET = select(service_secrets.c.value).where(service_secrets.c.name == bindparam("_name"))


async def get_secret(conn: Connection, name: str) -> str:
    value = await conn.fetchval(_GET, {"_name": name})
    if value is None:
        raise RuntimeError(f"service secret {name!r} is missing: run `chatcrm migrate`")
    return str(value)
