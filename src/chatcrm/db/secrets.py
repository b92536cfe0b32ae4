"""Service-wide secrets kept in the database (created by the migrations)."""

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from chatcrm.db.schema import service_secrets


async def get_secret(conn: AsyncConnection, name: str) -> str:
    result = await conn.execute(
        select(service_secrets.c.value).where(service_secrets.c.name == name)
    )
    value = result.scalar_one_or_none()
    if value is None:
        raise RuntimeError(f"service secret {name!r} is missing: run `chatcrm migrate`")
    return value
