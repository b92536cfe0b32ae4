"""`client.channels`: the workspace's WhatsApp channels (contract K.2)."""

from __future__ import annotations

from chatcrm_client._describe import given, nothing, one, segment, update_body
from chatcrm_client._engine import Answer, Call
from chatcrm_client._operations import M, Resource, operation
from chatcrm_client._records import Channel

PATH = "/api/channel"
Channels_ = list[Channel]  # (inside the class, `list` is the method)


def _listed(answer: Answer) -> Channels_:
    return [Channel(item) for item in answer.data["data"]]


class Channels(Resource[M]):
    @operation
    def create(
        self,
        name: str,
        phone_number_id: str,
        access_token: str,
        app_secret: str,
        *,
        display_phone_number: str | None = None,
        verify_token: str | None = None,
        api_base_url: str | None = None,
    ) -> Call[Channel]:
        """A WhatsApp Cloud API number of the workspace (`phone_number_id`: Meta's id of
        it). Meta's webhook goes to the answer's `webhook_url`, checked with
        `verify_token` (default: a random one); `access_token` and `app_secret` are
        written, never shown. `api_base_url` defaults to Meta's Graph API."""
        body = {
            "type": "whatsapp",
            **given(
                name=name,
                phoneNumberId=phone_number_id,
                displayPhoneNumber=display_phone_number,
                accessToken=access_token,
                appSecret=app_secret,
                verifyToken=verify_token,
                apiBaseUrl=api_base_url,
            ),
        }
        return Call("POST", PATH, one(Channel, "channel"), json=body)

    @operation
    def list(self) -> Call[Channels_]:
        """The workspace's channels."""
        return Call("GET", PATH, _listed)

    @operation
    def get(self, id: str) -> Call[Channel]:
        return Call("GET", f"{PATH}/{segment(id)}", one(Channel, "channel"))

    @operation
    def update(
        self,
        id: str,
        *,
        name: str | None = None,
        display_phone_number: str | None = None,
        access_token: str | None = None,
        app_secret: str | None = None,
        verify_token: str | None = None,
        api_base_url: str | None = None,
        enabled: bool | None = None,
    ) -> Call[Channel]:
        """Change what is given (a disabled channel neither sends nor receives)."""
        fields = given(
            name=name,
            displayPhoneNumber=display_phone_number,
            accessToken=access_token,
            appSecret=app_secret,
            verifyToken=verify_token,
            apiBaseUrl=api_base_url,
            enabled=enabled,
        )
        body = update_body("channel", fields)
        return Call("PUT", f"{PATH}/{segment(id)}", one(Channel, "channel"), json=body)

    @operation
    def delete(self, id: str) -> Call[None]:
        return Call("DELETE", f"{PATH}/{segment(id)}", nothing)
