"""Opportunity shapes for the OpenAPI document (the wire is built by serialize.py)."""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

_STRICT = ConfigDict(extra="forbid")
Money = Decimal


class Activity(BaseModel):
    id: str
    categoryType: str = Field(description="Calls, Meeting, Whatsapp or Email.")
    content: str
    date: str
    createdBy: str


class Opportunity(BaseModel):
    id: str
    opportCode: str = Field(examples=["OPP-2025-0001"])
    opportStatus: int = Field(description="1 open, 2 closed.")
    winLossStatus: int = Field(description="0 open, 1 won, 2 lost.")
    winLossDate: str | None
    finalAmount: float
    creationDate: str
    creationTypeId: int = Field(description="1 API, 2 import, 3 console.")
    updatedDate: str | None
    deletionDate: str | None
    userDeletion: str | None
    statusId: int = Field(description="1 active, 2 deleted.")
    files: list[str]
    orderInCards: int
    orderInCardsLastUpdated: str
    activities: list[Activity]
    segmentationId: str | None
    workspaceId: str
    name: str
    description: str
    amount: float
    userCreation: str
    contactId: str
    expirationDate: str | None
    assignedAgentId: str | None
    stageId: str | None


class OpportunityUpdated(BaseModel):
    id: str
    oportunity: Opportunity = Field(description="Spelled with one p, as the original service.")


class OpportunityCreated(BaseModel):
    id: str
    opportunity: Opportunity


class OpportunityUpdateBody(BaseModel):
    """`paramToUpdate` names the field(s), comma-separated; the body carries each of them."""

    model_config = _STRICT
    paramToUpdate: str = Field(examples=["amount", "name,amount"])
    id: str | None = None
    workspaceId: str | None = None
    name: str | None = Field(default=None, min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=10_000)
    amount: Money | None = Field(default=None, ge=0, le=10**12, decimal_places=4)
    stageId: str | None = None
    assignedAgentId: str | None = None
    expirationDate: str | None = Field(default=None, description="ISO 8601 date-time.")
    contactId: str | None = None
    segmentationId: str | None = None
    winLossStatus: int | None = Field(default=None, ge=0, le=2)
    finalAmount: Money | None = Field(default=None, ge=0, le=10**12, decimal_places=4)
    orderInCards: int | None = Field(default=None, ge=0, le=2**31 - 1)
    files: list[str] | None = Field(default=None, max_length=100)


class OpportunityCreateBody(BaseModel):
    model_config = _STRICT
    workspaceId: str | None = None
    name: str = Field(min_length=1, max_length=200)
    amount: Money = Field(ge=0, le=10**12, decimal_places=4)
    description: str | None = Field(default=None, max_length=10_000)
    assignedComercialId: str | None = Field(default=None, description="Alias: assignedAgentId.")
    assignedAgentId: str | None = None
    contactId: str | None = None
    stageId: str | None = None
    expirationDate: str | None = None
    segmentationId: str | None = None
    finalAmount: Money | None = Field(default=None, ge=0, le=10**12, decimal_places=4)
    files: list[str] | None = Field(default=None, max_length=100)


class OpportunityPage(BaseModel):
    workspaceId: str
    continuationToken: str | None
    data: list[Opportunity]


class OpportunityById(BaseModel):
    opportunityId: str
    data: list[Opportunity]


class OpportunityDeleted(BaseModel):
    id: str


class OpportunityActivityBody(BaseModel):
    model_config = _STRICT
    workspaceId: str | None = None
    content: str = Field(min_length=1, max_length=10_000)
    date: str | None = Field(default=None, description="ISO 8601; default now.")
    categoryType: Literal["Calls", "Meeting", "Whatsapp", "Email"]
