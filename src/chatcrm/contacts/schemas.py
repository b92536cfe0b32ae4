"""Contact shapes for the OpenAPI document (the wire is built by serialize.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

_STRICT = ConfigDict(extra="forbid")


class Tag(BaseModel):
    id: str
    name: str
    color: str | None
    assignmentDate: str


class Variable(BaseModel):
    model_config = _STRICT
    name: str = Field(min_length=1, max_length=200)
    value: str | float | bool | None


class ContactRead(BaseModel):
    id: str
    creationDate: str
    assignedAgentId: str | None
    assignedAgentName: str | None
    segmentationId: str | None
    lastMessage: str | None
    lastMessageDate: str
    platformSenderId: str | None
    platformSenderName: str
    platformSenderPhone: str | None
    isRead: bool
    isBotEnabled: bool
    isManuallyAdded: bool
    avatarColor: str | None
    orderInCards: int
    orderInCardsLastUpdated: str
    tags: list[Tag]
    files: list[str]
    isSolved: bool
    workspaceId: str
    name: str
    lastname: str
    email: str | None
    platformId: int
    stageId: str


class ContactFull(BaseModel):
    id: str
    creationDate: str
    assignedAgentId: str | None
    assignedAgentName: str | None
    segmentationId: str | None
    lastMessage: str | None
    lastMessageDate: str
    platformSenderId: str | None
    platformSenderName: str
    platformSenderPhone: str | None
    isRead: bool
    isBotEnabled: bool
    isManuallyAdded: bool
    avatarColor: str | None
    orderInCards: int
    orderInCardsLastUpdated: str
    tags: list[Tag]
    files: list[str]
    variables: list[Variable]
    isSolved: bool
    solvedByAgentId: str | None
    solvedDate: str | None
    workspaceId: str
    internalWhatsappNumber: str
    name: str
    lastname: str
    email: str | None
    platformId: int
    stageId: str


class ContactById(BaseModel):
    contactId: str
    data: list[ContactRead]


class ContactWritten(BaseModel):
    id: str
    contact: ContactFull


class ContactUpdateBody(BaseModel):
    """`paramToUpdate` names the field(s), comma-separated; the body carries each of them."""

    model_config = _STRICT
    paramToUpdate: str = Field(examples=["name", "isSolved,solvedByAgentId"])
    id: str | None = None
    workspaceId: str | None = None
    name: str | None = Field(default=None, min_length=1, max_length=200)
    lastname: str | None = Field(default=None, max_length=200)
    email: str | None = None
    stageId: str | None = None
    segmentationId: str | None = None
    assignedAgentId: str | None = None
    isBotEnabled: bool | None = None
    isRead: bool | None = None
    isSolved: bool | None = None
    solvedByAgentId: str | None = None
    tags: list[str] | None = Field(default=None, max_length=100)
    orderInCards: int | None = Field(default=None, ge=0, le=2**31 - 1)
    avatarColor: str | None = Field(default=None, max_length=200)
    variables: list[Variable] | None = Field(default=None, max_length=200)
    files: list[str] | None = Field(default=None, max_length=100)
    internalWhatsappNumber: str | None = None
    lastMessage: str | None = Field(default=None, max_length=10_000)


class ContactCreateBody(BaseModel):
    model_config = _STRICT
    workspaceId: str | None = None
    name: str = Field(min_length=1, max_length=200)
    lastname: str | None = Field(default=None, max_length=200)
    email: str | None = Field(default=None, description="Required unless platformId is 2.")
    platformId: int | None = Field(default=7, ge=1, le=7)
    internalWhatsappNumber: str | None = Field(
        default=None, description="Digits with country code; required when platformId is 2."
    )
    phone: str | None = Field(default=None, description="Alias of internalWhatsappNumber.")
    stageId: str | None = None
    segmentationId: str | None = None
    assignedAgentId: str | None = None
    tags: list[str] | None = Field(default=None, max_length=100)
    variables: list[Variable] | None = Field(default=None, max_length=200)
    isBotEnabled: bool | None = None
    isRead: bool | None = None
    avatarColor: str | None = Field(default=None, max_length=200)
    files: list[str] | None = Field(default=None, max_length=100)
    lastMessage: str | None = Field(default=None, max_length=10_000)
    platformSenderId: str | None = Field(default=None, max_length=200)
    platformSenderName: str | None = Field(default=None, max_length=200)
    platformSenderPhone: str | None = None


class ContactPage(BaseModel):
    workspaceId: str
    continuationToken: str | None = Field(
        description="Pass back to get the next page; null at the end."
    )
    data: list[ContactRead]


class DeleteBatchItem(BaseModel):
    model_config = _STRICT
    ids: str


class DeleteBatchBody(BaseModel):
    model_config = _STRICT
    workspaceId: str | None = None
    contactIds: list[DeleteBatchItem] = Field(max_length=500)


class DeleteBatchResult(BaseModel):
    deletedIds: list[str]
    notFoundIds: list[str]


class ContactActivityBody(BaseModel):
    model_config = _STRICT
    workspaceId: str | None = None
    content: str = Field(min_length=1, max_length=10_000)


class ContactActivity(BaseModel):
    id: str
    content: str
    date: str
    createdBy: str


class ContactActivityPage(BaseModel):
    contactId: str
    continuationToken: str | None
    data: list[ContactActivity]
