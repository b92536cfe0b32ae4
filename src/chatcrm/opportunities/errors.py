"""Errors of opportunities."""

from __future__ import annotations

from chatcrm.core import messages as m
from chatcrm.core.errors import ServiceError


class OpportunityNotFound(ServiceError):
    status, error_code = 404, m.OPPORTUNITY_NOT_FOUND

    def __init__(self, opportunity_id: str) -> None:
        super().__init__(f"No opportunity with id '{opportunity_id}' in this workspace.")
