"""Create and update bodies, validated from a field table.

A create body: unknown keys are a 400 (never silently dropped); then every missing or
null required field and every invalid value, all together, for one 422. `null` for an
optional field means its default.

An update body follows the original service's rule: `paramToUpdate` names the field(s),
comma-separated, and the body carries each of them; every structural mistake is a 400,
then every invalid value is collected for one 422.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chatcrm.core.errors import BadRequest, FieldError
from chatcrm.records.fields import Field, FieldTable
from chatcrm.records.scalar_types import Reference

PARAM = "paramToUpdate"
_ALWAYS_ALLOWED = frozenset({PARAM, "id", "workspaceId"})
WORKSPACE_KEY = "workspaceId"


@dataclass
class Given:
    """The validated values of a body, by wire name, and the key each came under."""

    clean: dict[str, Any] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    errors: list[FieldError] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # an update's named fields, valid or not

    def key(self, wire: str) -> str:
        """The body key a field came under (its alias, if the client used that)."""
        return self.keys.get(wire, wire)


def create_body(table: FieldTable, body: dict[str, Any], *, workspace_key: bool = True) -> Given:
    """The values of a create body; `errors` holds every 422 problem, in body order after
    the missing required fields. `workspace_key`: `workspaceId` may name the workspace."""
    allowed = table.create_keys
    for key in body:
        if key not in allowed and not (key == WORKSPACE_KEY and workspace_key):
            accepted = sorted([*allowed, *([WORKSPACE_KEY] if workspace_key else [])])
            takes = f"Accepted keys: {', '.join(accepted)}" if accepted else "It takes none"
            raise BadRequest.field(key, f"Unexpected body key '{key}'. {takes}.")
    given = Given()
    given.errors.extend(
        FieldError(wire, "is required") for wire in table.required if _absent(table[wire], body)
    )
    # Each field's values, under its name and its aliases, in body order.
    seen: dict[str, list[tuple[str, Any]]] = {}
    for key, value in body.items():
        f = allowed.get(key)
        if f is None or value is None or (value == "" and empty_is_default(table, f)):
            continue
        try:
            clean = f.type.clean(key, value, nullable=f.nullable)
        except FieldError as exc:
            given.errors.extend(exc.each())
        else:
            seen.setdefault(f.wire, []).append((key, clean))
    for wire, values in seen.items():
        _settle(table[wire], values, given)
    return given


def empty_is_default(table: FieldTable, f: Field) -> bool:
    """`""` for a reference a create defaults (a stage: the first one) means that default,
    as `null` does: the original service's clients send `""` for "no value" (docs/api.md
    5.18). A reference that may be none takes `""` as none on its own."""
    return isinstance(f.type, Reference) and not f.nullable and f.wire not in table.required


def _absent(f: Field, body: dict[str, Any]) -> bool:
    return all(body.get(key) is None for key in (f.wire, *f.aliases))


def _settle(f: Field, values: list[tuple[str, Any]], given: Given) -> None:
    """One value for a field sent under several names: they must agree (empty ones aside);
    the wire name wins the naming of later errors when both are used."""
    meaningful = [(key, value) for key, value in values if value not in (None, "")]
    chosen = meaningful or values
    key, value = next(((k, val) for k, val in chosen if k == f.wire), chosen[0])
    for other_key, other in meaningful:
        if other != value:
            given.errors.append(FieldError(other_key, f"differs from {key}"))
            return
    given.clean[f.wire] = value
    if key != f.wire:
        given.keys[f.wire] = key


def update_names(
    table: FieldTable,
    body: dict[str, Any],
    *,
    record_id: str,
    id_source: str = "the query parameter 'id'",
    implicit: bool = False,
    workspace_key: bool = True,
) -> list[str]:
    """The fields an update body names, by wire name, in the order named; 400 for every
    structural mistake (missing, unknown, read-only, absent from the body, extra keys,
    another id). A field may be named by an alias (`phone`). `implicit`: a body without
    `paramToUpdate` names its fields by its keys (the newer form, contract E.1).
    `id_source`: where the request names the record, for the message of a body `id` that
    differs. `workspace_key`: whether the route takes a body `workspaceId` (an account's
    people do not: the caller refuses it first), for the message of an unexpected key."""
    if PARAM not in body and implicit:
        names = _implicit_names(table, body)
    else:
        names = _param_names(table, body, workspace_key=workspace_key)
    # As a workspaceId's (docs/api.md 1.8 rule 1), an empty or null id counts as absent.
    if body.get("id") not in (None, "") and body["id"] != record_id:
        raise BadRequest.field("id", f"The body 'id' does not match {id_source}.")
    return names


def _field_named(table: FieldTable, name: str) -> Field:
    """The updatable field a name (wire name or alias) names; 400 saying why not."""
    f = table.update_keys.get(name)
    if f is not None:
        return f
    listing = ", ".join(table.updatable)
    if name in table.read_only:
        raise BadRequest.field(name, f"Field '{name}' is read-only. Updatable fields: {listing}.")
    raise BadRequest.field(name, f"Field '{name}' cannot be updated. Updatable fields: {listing}.")


def _implicit_names(table: FieldTable, body: dict[str, Any]) -> list[str]:
    """Without `paramToUpdate`, every key other than id and workspaceId names a field."""
    names: list[str] = []
    for key in body:
        if key in _ALWAYS_ALLOWED:
            continue
        wire = _field_named(table, key).wire
        if wire not in names:
            names.append(wire)
    if not names:
        raise BadRequest.field(
            PARAM,
            "The body names no field to update: send each field with its new value, "
            f'e.g. {{"name": "New name"}} (or name them in \'{PARAM}\').',
        )
    return names


def _param_names(table: FieldTable, body: dict[str, Any], *, workspace_key: bool) -> list[str]:
    """The original form: `paramToUpdate` names the fields, the body carries each."""
    if PARAM not in body:
        raise BadRequest.field(
            PARAM,
            f"Missing '{PARAM}': name the field(s) to update and send each with its new value, "
            f'e.g. {{"{PARAM}": "name", "name": "New name"}}.',
        )
    param = body[PARAM]
    if not isinstance(param, str):
        raise BadRequest.field(
            PARAM, f"'{PARAM}' must be a string naming the field(s), separated by commas."
        )
    named: list[str] = []
    for raw in param.split(","):
        name = raw.strip()
        if not name:
            raise BadRequest.field(
                PARAM, f"'{PARAM}' must name at least one field; separate several with commas."
            )
        if name not in named:
            named.append(name)
    names: list[str] = []
    keys: set[str] = set()  # the body keys of the named fields: each name and its aliases
    for name in named:
        f = _field_named(table, name)
        # Carried under any of its names (docs/api.md "Aliases in updates").
        if not any(key in body for key in (f.wire, *f.aliases)):
            raise BadRequest.field(
                name, f"Field '{name}' is named in '{PARAM}' but missing from the body."
            )
        if f.wire not in names:
            names.append(f.wire)
        keys.update((f.wire, *f.aliases))
    also = "id, workspaceId" if workspace_key else "id"
    for key in body:
        if key not in _ALWAYS_ALLOWED and key not in keys:
            raise BadRequest.field(
                key,
                f"Unexpected body key '{key}': send only '{PARAM}', {also} and the "
                f"fields named in '{PARAM}'.",
            )
    return names


def update_values(table: FieldTable, names: list[str], body: dict[str, Any]) -> Given:
    """The named fields' validated values (each sent under its name or an alias; two
    names of one field must agree); `errors` holds every invalid one, under the key the
    client used."""
    given = Given(names=names)
    for name in names:
        f = table[name]
        values: list[tuple[str, Any]] = []
        for key in (f.wire, *f.aliases):
            if key not in body:
                continue
            try:
                values.append((key, f.type.clean(key, body[key], nullable=f.nullable)))
            except FieldError as exc:
                given.errors.extend(exc.each())
                values = []
                break
        if values:
            _settle(f, values, given)
    return given
