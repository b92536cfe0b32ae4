"""Workspace shapes for the OpenAPI document."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

_STRICT = ConfigDict(extra="forbid")


class Stage(BaseModel):
    id: str
    name: str
    order: int


class TagItem(BaseModel):
    id: str
    name: str
    color: str | None


class Segmentation(BaseModel):
    id: str
    name: str


class Agent(BaseModel):
    id: str
    name: str
    email: str


class Workspace(BaseModel):
    id: str
    name: str
    timezone: str
    contactStages: list[Stage]
    opportunityStages: list[Stage]
    segmentations: list[Segmentation]
    tags: list[TagItem]
    agents: list[Agent]
    createdAt: str
    updatedAt: str


class WorkspaceCreateBody(BaseModel):
    model_config = _STRICT
    name: str = Field(min_length=1, max_length=200)
    timezone: str | None = Field(default="UTC", description="IANA time zone name.")


class StageCreateBody(BaseModel):
    model_config = _STRICT
    workspaceId: str | None = None
    kind: Literal["contact", "opportunity"]
    name: str = Field(min_length=1, max_length=200)


class TagCreateBody(BaseModel):
    model_config = _STRICT
    workspaceId: str | None = None
    name: str = Field(min_length=1, max_length=200)
    color: str | None = Field(default=None, max_length=200)


class SegmentationCreateBody(BaseModel):
    model_config = _STRICT
    workspaceId: str | None = None
    name: str = Field(min_length=1, max_length=200)


class AgentCreateBody(BaseModel):
    model_config = _STRICT
    workspaceId: str | None = None
    name: str = Field(min_length=1, max_length=200)
    email: str = Field(max_length=254)
