from tests.client import ok_data
from tests.conversations.conftest import Conversation, new_sender_number


def test_inbound_then_reply(conv: Conversation) -> None:
    number = new_sender_number()
    wamid = conv.inbound(number, "Hola, ¿precio?", name="Ana Díaz")
    contact = conv.contact_of(number)
    assert contact["name"] == "Ana Díaz"
    page = conv.messages(contact["id"])
    assert [m["externalId"] for m in page["messages"]] == [wamid]
    sent = ok_data(conv.send(contact["id"], text="Hola Ana"))
    assert sent["message"]["status"] == "queued"
    assert conv.send_all() >= 1
    got = conv.graph.sends()
    assert got[-1].body["to"] == number and got[-1].body["text"] == {"body": "Hola Ana"}
    page = conv.messages(contact["id"])
    assert page["messages"][-1]["status"] == "sent"
