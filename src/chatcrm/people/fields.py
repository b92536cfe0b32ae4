"""The bodies of the people operations (contract J), as field tables: an invitation, a
user's update (the A.1 body, or E.1's form), a key, sign-in, accepting a link."""

from __future__ import annotations

from typing import Any

from chatcrm.auth.scopes import ROLE_NAMES
from chatcrm.core.errors import FieldError
from chatcrm.records.fields import OPTIONAL, REQUIRED, UPDATE, Field, FieldTable
from chatcrm.records.scalar_types import EMAIL, TIMESTAMP, Text, Word
from chatcrm.records.types import Schema, ValueType

NAME_MAX = 200
ROLE = Word(ROLE_NAMES, "must be one of " + ", ".join(ROLE_NAMES))
SETTABLE_STATUSES = ("active", "disabled")  # `invited` is never set by a request
STATUS = Word(SETTABLE_STATUSES, "must be active or disabled (invited cannot be set)")
NAME = Text(NAME_MAX, nonblank=True)
SECRET_TEXT = Text(1000, nonblank=True)


class Strings(ValueType):
    """A list of non-empty strings (workspace ids, scopes); repeats collapse, order kept."""

    def __init__(self, description: str, *, nonempty: bool = False) -> None:
        self.description = description
        self.nonempty = nonempty

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        if value is None and nullable:
            return None
        if not isinstance(value, list) or not all(isinstance(i, str) and i for i in value):
            raise FieldError(field, "must be an array of non-empty strings")
        if self.nonempty and not value:
            raise FieldError(field, "must not be empty")
        return list(dict.fromkeys(value))

    def input_schema(self, *, nullable: bool = False) -> Schema:
        schema: Schema = {"type": "array", "items": {"type": "string", "minLength": 1}}
        if self.nonempty:
            schema["minItems"] = 1
        return {"anyOf": [schema, {"type": "null"}]} if nullable else schema

    def output_schema(self) -> Schema:
        return {"type": "array", "items": {"type": "string"}}


WORKSPACE_IDS = Strings("Workspace ids of the account.")
SCOPES = Strings('Scopes of contract J.2, or ["*"].', nonempty=True)

# fmt: off
USER = FieldTable("user", [
    Field("email", EMAIL, None, REQUIRED),
    Field("name", NAME, None, REQUIRED, UPDATE),
    Field("role", ROLE, None, REQUIRED, UPDATE),
    Field("workspaceIds", WORKSPACE_IDS, None, OPTIONAL, UPDATE,
          description="Agents and viewers: 1 or more; ignored for owners and admins."),
    Field("status", STATUS, None, UPDATE),
])
KEY = FieldTable("key", [
    Field("name", NAME, None, REQUIRED),
    Field("scopes", SCOPES, None, REQUIRED),
    Field("workspaceIds", WORKSPACE_IDS, None, OPTIONAL,
          description="The only workspaces the key may use (default: every one)."),
    Field("expiresAt", TIMESTAMP, None, OPTIONAL, description="In the future."),
])
SIGN_IN = FieldTable("signIn", [
    Field("email", SECRET_TEXT, None, REQUIRED),
    Field("password", SECRET_TEXT, None, REQUIRED),
    Field("code", SECRET_TEXT, None, OPTIONAL,
          description="The authenticator's code or a recovery code (two-factor users)."),
])
ACCEPT = FieldTable("accept", [
    Field("token", SECRET_TEXT, None, REQUIRED),
    Field("password", SECRET_TEXT, None, REQUIRED),
    Field("name", NAME, None, OPTIONAL),
    Field("code", SECRET_TEXT, None, OPTIONAL,
          description="With a reset link of a two-factor user: its authenticator's code or a "
          "recovery code, as at sign-in."),
])
PASSWORD_CHANGE = FieldTable("passwordChange", [
    Field("currentPassword", SECRET_TEXT, None, REQUIRED),
    Field("newPassword", SECRET_TEXT, None, REQUIRED),
])
CODE = FieldTable("code", [Field("code", SECRET_TEXT, None, REQUIRED)])
PASSWORD = FieldTable("password", [Field("password", SECRET_TEXT, None, REQUIRED)])
NO_FIELDS = FieldTable("none", [])
# fmt: on
