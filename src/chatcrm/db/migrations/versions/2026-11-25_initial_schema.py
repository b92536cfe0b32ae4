"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-25 22:32:20.904917
"""

import secrets
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# Frozen copies of the column types as they were at this revision.
TS = sa.DateTime(timezone=True)
# NUMERIC on PostgreSQL; canonical decimal text on SQLite, whose NUMERIC would be a double.
MONEY = sa.String(32).with_variant(sa.Numeric(17, 4), "postgresql")


revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_accounts")),
    )
    op.create_table(
        "service_secrets",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", sa.String(length=128), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_service_secrets")),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("account_id", sa.String(length=36), nullable=False),
        sa.Column("secret_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("revoked_at", TS, nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_api_keys_account_id_accounts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
    )
    op.create_index(op.f("ix_api_keys_account_id"), "api_keys", ["account_id"], unique=False)

    op.create_table(
        "workspaces",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("account_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("timezone", sa.String(length=64), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_workspaces_account_id_accounts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workspaces")),
    )
    op.create_index(op.f("ix_workspaces_account_id"), "workspaces", ["account_id"], unique=False)

    op.create_table(
        "agents",
        sa.Column("workspace_id", sa.String(length=36), nullable=False),
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("email", sa.String(length=254), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"], ["workspaces.id"], name=op.f("fk_agents_workspace_id_workspaces")
        ),
        sa.PrimaryKeyConstraint("workspace_id", "id", name=op.f("pk_agents")),
    )
    op.create_table(
        "opportunity_code_counters",
        sa.Column("workspace_id", sa.String(length=36), nullable=False),
        sa.Column("year", sa.Integer(), nullable=False),
        sa.Column("last_value", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_opportunity_code_counters_workspace_id_workspaces"),
        ),
        sa.PrimaryKeyConstraint("workspace_id", "year", name=op.f("pk_opportunity_code_counters")),
    )
    op.create_table(
        "segmentations",
        sa.Column("workspace_id", sa.String(length=36), nullable=False),
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_segmentations_workspace_id_workspaces"),
        ),
        sa.PrimaryKeyConstraint("workspace_id", "id", name=op.f("pk_segmentations")),
    )
    op.create_table(
        "stages",
        sa.Column("workspace_id", sa.String(length=36), nullable=False),
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"], ["workspaces.id"], name=op.f("fk_stages_workspace_id_workspaces")
        ),
        sa.PrimaryKeyConstraint("workspace_id", "id", name=op.f("pk_stages")),
    )
    op.create_index(
        op.f("ix_stages_workspace_id_kind_position"),
        "stages",
        ["workspace_id", "kind", "position"],
        unique=False,
    )

    op.create_table(
        "tags",
        sa.Column("workspace_id", sa.String(length=36), nullable=False),
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("color", sa.String(length=200), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"], ["workspaces.id"], name=op.f("fk_tags_workspace_id_workspaces")
        ),
        sa.PrimaryKeyConstraint("workspace_id", "id", name=op.f("pk_tags")),
    )
    op.create_table(
        "contacts",
        sa.Column("workspace_id", sa.String(length=36), nullable=False),
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("modified_at", TS, nullable=False),
        sa.Column("assigned_agent_id", sa.String(length=36), nullable=True),
        sa.Column("segmentation_id", sa.String(length=36), nullable=True),
        sa.Column("last_message", sa.Text(), nullable=True),
        sa.Column("last_message_date", TS, nullable=False),
        sa.Column("platform_sender_id", sa.String(length=200), nullable=True),
        sa.Column("platform_sender_name", sa.String(length=200), nullable=False),
        sa.Column("platform_sender_phone", sa.String(length=15), nullable=True),
        sa.Column("is_read", sa.Boolean(), nullable=False),
        sa.Column("is_bot_enabled", sa.Boolean(), nullable=False),
        sa.Column("is_manually_added", sa.Boolean(), nullable=False),
        sa.Column("avatar_color", sa.String(length=200), nullable=True),
        sa.Column("order_in_cards", sa.Integer(), nullable=False),
        sa.Column("order_in_cards_updated_at", TS, nullable=False),
        sa.Column("files", sa.Text(), nullable=False),
        sa.Column("variables", sa.Text(), nullable=False),
        sa.Column("is_solved", sa.Boolean(), nullable=False),
        sa.Column("solved_by_agent_id", sa.String(length=36), nullable=True),
        sa.Column("solved_date", TS, nullable=True),
        sa.Column("internal_whatsapp_number", sa.String(length=15), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("lastname", sa.String(length=200), nullable=False),
        sa.Column("email", sa.String(length=254), nullable=True),
        sa.Column("email_key", sa.String(length=254), nullable=True),
        sa.Column("platform_id", sa.Integer(), nullable=False),
        sa.Column("stage_id", sa.String(length=36), nullable=False),
        sa.Column("deleted_at", TS, nullable=True),
        sa.Column("deleted_by", sa.String(length=36), nullable=True),
        sa.ForeignKeyConstraint(
            ["workspace_id", "assigned_agent_id"],
            ["agents.workspace_id", "agents.id"],
            name=op.f("fk_contacts_workspace_id_assigned_agent_id_agents"),
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id", "segmentation_id"],
            ["segmentations.workspace_id", "segmentations.id"],
            name=op.f("fk_contacts_workspace_id_segmentation_id_segmentations"),
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id", "solved_by_agent_id"],
            ["agents.workspace_id", "agents.id"],
            name=op.f("fk_contacts_workspace_id_solved_by_agent_id_agents"),
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id", "stage_id"],
            ["stages.workspace_id", "stages.id"],
            name=op.f("fk_contacts_workspace_id_stage_id_stages"),
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"], ["workspaces.id"], name=op.f("fk_contacts_workspace_id_workspaces")
        ),
        sa.PrimaryKeyConstraint("workspace_id", "id", name=op.f("pk_contacts")),
    )
    op.create_index(
        "ix_contacts_list", "contacts", ["workspace_id", "created_at", "id"], unique=False
    )
    op.create_index(
        "ix_contacts_sender_phone",
        "contacts",
        ["workspace_id", "platform_sender_phone"],
        unique=False,
    )
    op.create_index(
        "ix_contacts_stage_order",
        "contacts",
        ["workspace_id", "stage_id", "order_in_cards"],
        unique=False,
    )
    op.create_index(
        "uq_contacts_email_live",
        "contacts",
        ["workspace_id", "email_key"],
        unique=True,
        sqlite_where=sa.text("deleted_at IS NULL AND email_key IS NOT NULL"),
        postgresql_where=sa.text("deleted_at IS NULL AND email_key IS NOT NULL"),
    )
    op.create_index(
        "uq_contacts_phone_live",
        "contacts",
        ["workspace_id", "internal_whatsapp_number"],
        unique=True,
        sqlite_where=sa.text("deleted_at IS NULL AND internal_whatsapp_number <> ''"),
        postgresql_where=sa.text("deleted_at IS NULL AND internal_whatsapp_number <> ''"),
    )

    op.create_table(
        "contact_activities",
        sa.Column("workspace_id", sa.String(length=36), nullable=False),
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("contact_id", sa.String(length=36), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("created_by", sa.String(length=36), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id", "contact_id"],
            ["contacts.workspace_id", "contacts.id"],
            name=op.f("fk_contact_activities_workspace_id_contact_id_contacts"),
        ),
        sa.PrimaryKeyConstraint("workspace_id", "id", name=op.f("pk_contact_activities")),
    )
    op.create_index(
        "ix_contact_activities_contact",
        "contact_activities",
        ["workspace_id", "contact_id", "created_at", "id"],
        unique=False,
    )

    op.create_table(
        "contact_tags",
        sa.Column("workspace_id", sa.String(length=36), nullable=False),
        sa.Column("contact_id", sa.String(length=36), nullable=False),
        sa.Column("tag_id", sa.String(length=36), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("assigned_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id", "contact_id"],
            ["contacts.workspace_id", "contacts.id"],
            name=op.f("fk_contact_tags_workspace_id_contact_id_contacts"),
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id", "tag_id"],
            ["tags.workspace_id", "tags.id"],
            name=op.f("fk_contact_tags_workspace_id_tag_id_tags"),
        ),
        sa.PrimaryKeyConstraint(
            "workspace_id", "contact_id", "tag_id", name=op.f("pk_contact_tags")
        ),
    )
    op.create_index(
        "ix_contact_tags_tag",
        "contact_tags",
        ["workspace_id", "tag_id", "contact_id"],
        unique=False,
    )

    op.create_table(
        "opportunities",
        sa.Column("workspace_id", sa.String(length=36), nullable=False),
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(length=32), nullable=False),
        sa.Column("opport_status", sa.Integer(), nullable=False),
        sa.Column("win_loss_status", sa.Integer(), nullable=False),
        sa.Column("win_loss_date", TS, nullable=True),
        sa.Column("final_amount", MONEY, nullable=False),
        sa.Column("final_amount_set", sa.Boolean(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("creation_type_id", sa.Integer(), nullable=False),
        sa.Column("updated_at", TS, nullable=True),
        sa.Column("modified_at", TS, nullable=False),
        sa.Column("deleted_at", TS, nullable=True),
        sa.Column("deleted_by", sa.String(length=36), nullable=True),
        sa.Column("status_id", sa.Integer(), nullable=False),
        sa.Column("files", sa.Text(), nullable=False),
        sa.Column("order_in_cards", sa.Integer(), nullable=False),
        sa.Column("order_in_cards_updated_at", TS, nullable=False),
        sa.Column("segmentation_id", sa.String(length=36), nullable=True),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("amount", MONEY, nullable=False),
        sa.Column("created_by", sa.String(length=36), nullable=False),
        sa.Column("contact_id", sa.String(length=36), nullable=True),
        sa.Column("expiration_date", TS, nullable=True),
        sa.Column("assigned_agent_id", sa.String(length=36), nullable=True),
        sa.Column("stage_id", sa.String(length=36), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id", "assigned_agent_id"],
            ["agents.workspace_id", "agents.id"],
            name=op.f("fk_opportunities_workspace_id_assigned_agent_id_agents"),
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id", "contact_id"],
            ["contacts.workspace_id", "contacts.id"],
            name=op.f("fk_opportunities_workspace_id_contact_id_contacts"),
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id", "segmentation_id"],
            ["segmentations.workspace_id", "segmentations.id"],
            name=op.f("fk_opportunities_workspace_id_segmentation_id_segmentations"),
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id", "stage_id"],
            ["stages.workspace_id", "stages.id"],
            name=op.f("fk_opportunities_workspace_id_stage_id_stages"),
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_opportunities_workspace_id_workspaces"),
        ),
        sa.PrimaryKeyConstraint("workspace_id", "id", name=op.f("pk_opportunities")),
    )
    op.create_index(
        "ix_opportunities_contact", "opportunities", ["workspace_id", "contact_id"], unique=False
    )
    op.create_index(
        "ix_opportunities_list", "opportunities", ["workspace_id", "created_at", "id"], unique=False
    )
    op.create_index(
        "ix_opportunities_stage_order",
        "opportunities",
        ["workspace_id", "stage_id", "order_in_cards"],
        unique=False,
    )
    op.create_index("uq_opportunities_code", "opportunities", ["workspace_id", "code"], unique=True)

    op.create_table(
        "opportunity_activities",
        sa.Column("workspace_id", sa.String(length=36), nullable=False),
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("opportunity_id", sa.String(length=36), nullable=False),
        sa.Column("category", sa.String(length=16), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("date", TS, nullable=False),
        sa.Column("created_by", sa.String(length=36), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id", "opportunity_id"],
            ["opportunities.workspace_id", "opportunities.id"],
            name=op.f("fk_opportunity_activities_workspace_id_opportunity_id_opportunities"),
        ),
        sa.PrimaryKeyConstraint("workspace_id", "id", name=op.f("pk_opportunity_activities")),
    )
    op.create_index(
        "ix_opportunity_activities_date",
        "opportunity_activities",
        ["workspace_id", "opportunity_id", "date", "id"],
        unique=False,
    )

    # The continuation-token signing key lives in the database, so every process and
    # every node accepts the tokens of every other.
    secrets_table = sa.table("service_secrets", sa.column("name"), sa.column("value"))
    op.bulk_insert(secrets_table, [{"name": "token_key", "value": secrets.token_hex(32)}])


def downgrade() -> None:
    op.drop_table("opportunity_activities")
    op.drop_table("opportunity_code_counters")
    op.drop_table("opportunities")
    op.drop_table("contact_tags")
    op.drop_table("contact_activities")
    op.drop_table("contacts")
    op.drop_table("tags")
    op.drop_table("stages")
    op.drop_table("segmentations")
    op.drop_table("agents")
    op.drop_table("workspaces")
    op.drop_table("api_keys")
    op.drop_table("service_secrets")
    op.drop_table("accounts")
