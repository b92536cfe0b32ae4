"""Alembic environment. chatcrm runs migrations itself (`chatcrm migrate`, `chatcrm serve`),
handing Alembic a connection that already holds the migration lock."""

from alembic import context

from chatcrm.db.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations with `chatcrm migrate`, which provides the connection")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    transaction_per_migration=False,
)
with context.begin_transaction():
    context.run_migrations()
