"""What the console offers each caller (contract K.3: "Controls a user's role does not allow
are not shown"), in Debian's chromium on both backends: a viewer and a key without a write
scope see records read-only — their values listed, no field to edit, no Save, Won, Lost,
Reopen, "Add activity" or "New …", cards that do not drag —; the Users and Keys pages go to the
callers holding users:manage and keys:manage; a key without events:read does not poll the
events feed, and a feed that refuses (403) is not asked again."""

from __future__ import annotations

import re
from contextlib import suppress

import httpx
import pytest
from playwright.sync_api import Page, Request, Route, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from chatcrm.auth.scopes import ALL as ALL_SCOPES
from chatcrm.provisioning import NewAccount
from tests.browser.conftest import Visit, api, create, update
from tests.browser.test_console_people import PASSWORD, _invite, _set_password
from tests.client import unique_email
from tests.conftest import new_account

pytestmark = [pytest.mark.browser, pytest.mark.slow]

READS = ["contacts:read", "opportunities:read", "messages:read", "events:read"]


@pytest.fixture(scope="module")
def server(console_server: str) -> str:
    """The console's shared server on this run's backend (the visit fixture's server)."""
    return console_server


def _key(server: str, account: NewAccount, scopes: list[str]) -> str:
    """A new key of the account with these scopes; its secret."""
    made = api(server, account, "POST", "/api/key", json={"name": "scoped", "scopes": scopes})
    secret: str = made["apiKey"]
    return secret


def _sign_in_with(visit: Visit, key: str) -> Page:
    visit.goto("/console")
    page = visit.page
    page.get_by_role("link", name="Sign in with an API key").click()
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name="Test workspace").click()
    return page


def _records(server: str, account: NewAccount) -> None:
    ana = create(server, account, "contact", name="Ana", email="ana@example.com")
    create(server, account, "opportunity", name="Deal", amount=100, contactId=ana)


def _contact_is_read_only(page: Page) -> None:
    card = page.get_by_role("article", name="Ana")
    expect(card).to_have_attribute("draggable", "false")
    card.click()
    panel = page.get_by_role("dialog", name="Ana", exact=True)
    expect(panel.locator("dl.fields")).to_contain_text("ana@example.com")  # the values shown
    for label in ("Name", "Stage", "Solved", "Email"):
        expect(panel.get_by_label(label, exact=True)).to_have_count(0)
    expect(panel.get_by_role("textbox")).to_have_count(0)
    for name in ("Save", "Add activity"):
        expect(panel.get_by_role("button", name=name)).to_have_count(0)
    expect(panel.get_by_label("Activity")).to_have_count(0)
    panel.get_by_role("button", name="Close").click()
    expect(page.get_by_role("button", name="New contact")).to_have_count(0)


def _opportunity_is_read_only(page: Page) -> None:
    page.get_by_role("link", name="Opportunities").click()
    card = page.get_by_role("article", name="Deal")
    expect(card).to_have_attribute("draggable", "false")
    card.click()
    panel = page.get_by_role("dialog", name="Deal", exact=True)
    expect(panel.locator("dl.fields")).to_contain_text("Deal")
    for label in ("Stage", "Amount", "Name"):
        expect(panel.get_by_label(label, exact=True)).to_have_count(0)
    for name in ("Save", "Won", "Lost", "Reopen", "Add activity"):
        expect(panel.get_by_role("button", name=name, exact=True)).to_have_count(0)
    panel.get_by_role("button", name="Close").click()
    expect(page.get_by_role("button", name="New opportunity")).to_have_count(0)


def test_a_viewer_reads_records_without_controls_to_change_them(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    _records(server, account)
    _set_password(visit, _invite(server, account, "viewer"))
    page = visit.page
    _contact_is_read_only(page)
    _opportunity_is_read_only(page)
    for name in ("Users", "Keys", "Channels"):
        expect(page.get_by_role("link", name=name)).to_be_hidden()
    assert visit.settle() == []  # nothing was refused: nothing was tried


def test_a_key_writes_only_the_kinds_its_scopes_name(
    visit: Visit, server: str, database_url: str
) -> None:
    """Opportunities to write, contacts only to read: each board and panel by its own scope."""
    account = new_account(database_url)
    _records(server, account)
    page = _sign_in_with(visit, _key(server, account, [*READS, "opportunities:write"]))
    _contact_is_read_only(page)
    page.get_by_role("link", name="Opportunities").click()
    expect(page.get_by_role("button", name="New opportunity")).to_be_visible()
    card = page.get_by_role("article", name="Deal")
    expect(card).to_have_attribute("draggable", "true")
    card.click()
    panel = page.get_by_role("dialog", name="Deal", exact=True)
    expect(panel.get_by_label("Stage")).to_be_enabled()
    for name in ("Save", "Won", "Lost", "Add activity"):
        expect(panel.get_by_role("button", name=name, exact=True)).to_be_visible()
    assert visit.settle() == []


def test_users_and_keys_pages_need_their_own_scopes(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    page = _sign_in_with(visit, _key(server, account, [*READS, "webhooks:manage"]))
    nav = page.get_by_role("navigation", name="Console")
    expect(nav.get_by_role("link", name="Contacts")).to_be_visible()
    for name in ("Users", "Keys", "Channels"):
        expect(nav.get_by_role("link", name=name)).to_be_hidden()
    assert visit.settle() == []

    page.get_by_role("button", name="Sign out").click()
    page = _sign_in_with(visit, _key(server, account, [*READS, "users:manage"]))
    expect(nav.get_by_role("link", name="Users")).to_be_visible()
    expect(nav.get_by_role("link", name="Keys")).to_be_hidden()
    page.get_by_role("link", name="Users").click()
    expect(page.get_by_role("heading", name="Users")).to_be_visible()
    assert visit.settle() == []


def test_boards_need_the_scope_of_their_records(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    contacts_only = [s for s in READS if not s.startswith("opportunities:")]
    page = _sign_in_with(visit, _key(server, account, contacts_only))
    nav = page.get_by_role("navigation", name="Console")
    expect(nav.get_by_role("link", name="Contacts")).to_be_visible()
    for name in ("Opportunities", "Pipeline"):
        expect(nav.get_by_role("link", name=name)).to_be_hidden()
    assert visit.settle() == []

    page.get_by_role("button", name="Sign out").click()
    no_contacts = [s for s in READS if not s.startswith("contacts:")]
    page = _sign_in_with(visit, _key(server, account, no_contacts))
    expect(nav.get_by_role("link", name="Contacts")).to_be_hidden()
    # The first view it may open is the one shown, not a refusal.
    expect(page.get_by_role("heading", name="Opportunities")).to_be_visible()


def _feed(request: Request) -> bool:
    return "/api/events" in request.url


def test_no_events_feed_without_its_scope_and_none_after_a_refusal(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    _records(server, account)
    asked: list[str] = []
    visit.page.on("request", lambda r: asked.append(r.url) if _feed(r) else None)
    reads = [s for s in READS if s != "events:read"]
    page = _sign_in_with(visit, _key(server, account, reads))
    expect(page.get_by_role("article", name="Ana")).to_be_visible()
    page.wait_for_timeout(3000)  # longer than the feed's pause after an error
    assert asked == []
    assert visit.settle() == []

    # A key that may read the feed, whose feed is refused all the same (403): asked once.
    page.get_by_role("button", name="Sign out").click()
    refused: list[str] = []

    def refuse(route: Route) -> None:
        refused.append(route.request.url)
        body = '{"success":false,"code":403,"errorCode":"FORBIDDEN","message":"No.","data":null}'
        route.fulfill(status=403, content_type="application/json", body=body)

    page.route(re.compile(r"/api/events\?"), refuse)
    page = _sign_in_with(visit, _key(server, account, READS))
    expect(page.get_by_role("article", name="Ana")).to_be_visible()
    page.wait_for_timeout(3000)
    assert len(refused) == 1, refused
    visit.failed.clear()  # the 403 was the point
    assert visit.settle() == []


def test_a_session_ended_elsewhere_leads_back_to_the_sign_in(
    visit: Visit, server: str, database_url: str
) -> None:
    """An admin ends a person's sessions while the board is open: the next thing the person
    does (here, opening a card) brings the sign-in form with the API's message, not a
    panel that can only say the session has ended."""
    account = new_account(database_url)
    create(server, account, "contact", name="Jon", email="jon@example.com")
    invited = _invite(server, account, "agent")
    _set_password(visit, invited)
    page = visit.page
    card = page.get_by_role("article", name=re.compile("^Jon"))
    expect(card).to_be_visible()
    api(server, account, "DELETE", f"/api/user/{invited['user']['id']}/sessions")
    # The events feed's next request may be refused first, and bring the sign-in by itself.
    with suppress(PlaywrightTimeoutError):
        card.click(timeout=5000)
    expect(page.get_by_label("Email")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("sign in again")
    expect(page.get_by_role("dialog")).to_have_count(0)
    visit.failed.clear()  # the 401 was the point


def _agent_and_another(server: str, account: NewAccount) -> tuple[dict, dict, dict]:
    """An invited agent user, the workspace's agent linked to it by e-mail, and another
    agent of the workspace."""
    invited = _invite(server, account, "agent")
    agents = f"/api/workspace/{account.workspace_id}/agents"
    mine = api(
        server, account, "POST", agents, json={"name": "Me", "email": invited["user"]["email"]}
    )
    other = api(server, account, "POST", agents, json={"name": "Other", "email": unique_email()})
    return invited, mine, other


def _agents_see_only_assigned(server: str, account: NewAccount) -> None:
    setting = {"paramToUpdate": "agentsSeeOnlyAssigned", "agentsSeeOnlyAssigned": True}
    api(server, account, "PUT", f"/api/workspace/{account.workspace_id}", json=setting)


def test_an_assigned_only_agent_loses_what_is_reassigned_away_without_a_reload(
    visit: Visit, server: str, database_url: str
) -> None:
    """Contract H ("changes made elsewhere appear within 2 s") with J.2: a contact
    reassigned away from an assigned-only agent leaves its boards, and its opportunity with
    it, though the change that hid it never reaches the agent's events feed."""
    account = new_account(database_url)
    invited, mine, other = _agent_and_another(server, account)
    ana = create(
        server, account, "contact", name="Ana", email=unique_email(), assignedAgentId=mine["id"]
    )
    create(server, account, "contact", name="Bea", email=unique_email(), assignedAgentId=mine["id"])
    create(server, account, "opportunity", name="Deal of Ana", amount=5, contactId=ana)
    _agents_see_only_assigned(server, account)
    _set_password(visit, invited)
    page = visit.page
    expect(page.get_by_role("article", name="Ana")).to_be_visible()
    page.get_by_role("article", name="Ana").click()  # its panel open: it goes too
    expect(page.get_by_role("dialog", name="Ana", exact=True)).to_be_visible()
    update(server, account, "contact", ana, assignedAgentId=other["id"])
    expect(page.get_by_role("article", name="Ana")).to_have_count(0, timeout=4000)
    expect(page.get_by_role("dialog", name="Ana", exact=True)).to_have_count(0, timeout=4000)
    expect(page.get_by_role("article", name="Bea")).to_be_visible()
    page.get_by_role("link", name="Opportunities").click()
    expect(page.get_by_role("heading", name="Opportunities")).to_be_visible()
    expect(page.get_by_role("article", name="Deal of Ana")).to_have_count(0)
    # Given back, it comes back (its events are the agent's again: the feed brings it).
    update(server, account, "contact", ana, assignedAgentId=mine["id"])
    expect(page.get_by_role("article", name="Deal of Ana")).to_be_visible(timeout=4000)


def test_a_role_changed_while_signed_in_is_followed_at_its_first_refusal(
    visit: Visit, server: str, database_url: str
) -> None:
    """An admin demoted to viewer while signed in kept an admin's nav and controls until a
    reload: the first refusal makes the console read the role again."""
    account = new_account(database_url)
    _records(server, account)
    invited = _invite(server, account, "admin")
    _set_password(visit, invited)
    page = visit.page
    nav = page.get_by_role("navigation", name="Console")
    expect(nav.get_by_role("link", name="Users")).to_be_visible()
    user_id = invited["user"]["id"] if "user" in invited else invited["id"]
    body = {"role": "viewer", "workspaceIds": [account.workspace_id]}
    api(server, account, "PUT", f"/api/user/{user_id}", json=body)
    page.get_by_role("button", name="New contact").click()
    dialog = page.get_by_role("dialog", name="New contact")
    dialog.get_by_label("Name", exact=True).fill("Zed")
    dialog.get_by_role("button", name="Create").click()
    expect(dialog.get_by_role("alert")).to_contain_text("contacts:write")
    visit.failed.clear()  # the 403 was the point
    dialog.get_by_role("button", name="Cancel").click()
    for name in ("Users", "Keys", "Channels"):
        expect(nav.get_by_role("link", name=name)).to_be_hidden()
    expect(page.get_by_role("button", name="New contact")).to_have_count(0)
    assert visit.settle() == []


def test_a_drag_refused_by_a_new_role_goes_back_with_the_refusal_shown(
    visit: Visit, server: str, database_url: str
) -> None:
    """The refusal made the console read the role again and draw the board anew, which
    threw away the alert the old board had just filled: the card went back silently."""
    account = new_account(database_url)
    _records(server, account)
    invited = _invite(server, account, "agent")
    _set_password(visit, invited)
    page = visit.page
    workspace = api(server, account, "GET", f"/api/workspace/{account.workspace_id}")
    second = workspace["contactStages"][1]["name"]
    card = page.get_by_role("article", name="Ana")
    expect(card).to_have_attribute("draggable", "true")
    user_id = invited["user"]["id"] if "user" in invited else invited["id"]
    body = {"role": "viewer", "workspaceIds": [account.workspace_id]}
    api(server, account, "PUT", f"/api/user/{user_id}", json=body)
    column = page.get_by_role("region", name=second, exact=True)
    card.drag_to(column)
    # Drawn again for the viewer (its cards do not drag), the board still says why.
    expect(page.get_by_role("article", name="Ana")).to_have_attribute("draggable", "false")
    page.wait_for_timeout(300)
    expect(page.get_by_role("alert")).to_contain_text("contacts:write")
    expect(column.get_by_role("article", name="Ana")).to_have_count(0)
    visit.failed.clear()  # the 403 was the point
    assert visit.settle() == []


def test_a_key_without_opportunities_read_is_not_shown_a_contact_s_opportunities(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    _records(server, account)
    page = _sign_in_with(visit, _key(server, account, ["contacts:read", "events:read"]))
    page.get_by_role("article", name="Ana").click()
    panel = page.get_by_role("dialog", name="Ana", exact=True)
    expect(panel.get_by_role("region", name="History")).to_be_visible()
    expect(panel.get_by_role("region", name="Opportunities")).to_have_count(0)
    assert visit.settle() == []  # no request refused


def test_a_key_without_contacts_read_is_not_offered_contacts_from_opportunities(
    visit: Visit, server: str, database_url: str
) -> None:
    """Its New opportunity dialog listed contacts and its opportunity panel named one,
    each a refused read (403)."""
    account = new_account(database_url)
    _records(server, account)
    scopes = ["opportunities:read", "opportunities:write", "events:read"]
    page = _sign_in_with(visit, _key(server, account, scopes))
    card = page.get_by_role("article", name=re.compile("^Deal"))
    expect(card).to_be_visible()
    page.get_by_role("button", name="New opportunity").click()
    dialog = page.get_by_role("dialog", name="New opportunity")
    expect(dialog.get_by_label("Name", exact=True)).to_be_visible()
    expect(dialog.get_by_label("Contact", exact=True)).to_have_count(0)
    dialog.get_by_role("button", name="Cancel").click()
    card.click()
    panel = page.get_by_role("dialog", name="Deal", exact=True)
    expect(panel.locator(".contact-line")).to_contain_text("Contact: ")
    expect(panel.locator(".contact-line").get_by_role("button")).to_have_count(0)
    assert visit.settle() == []  # no request refused


def test_an_open_panel_follows_a_role_changed_while_it_was_open(
    visit: Visit, server: str, database_url: str
) -> None:
    """An agent demoted to viewer with a contact's panel open: the save was refused and the
    board followed the new role, but the panel kept Save, Add activity and its fields; then
    what was typed in it was dropped without a word."""
    account = new_account(database_url)
    _records(server, account)
    invited = _invite(server, account, "agent")
    _set_password(visit, invited)
    page = visit.page
    page.get_by_role("article", name="Ana").click()
    panel = page.get_by_role("dialog", name="Ana", exact=True)
    expect(panel.get_by_role("button", name="Save")).to_be_visible()
    user_id = invited["user"]["id"] if "user" in invited else invited["id"]
    body = {"role": "viewer", "workspaceIds": [account.workspace_id]}
    api(server, account, "PUT", f"/api/user/{user_id}", json=body)
    panel.get_by_label("Last name").fill("Refused")
    panel.get_by_role("button", name="Save").click()
    panel = page.get_by_role("dialog", name="Ana", exact=True)
    expect(panel.locator("dl.fields")).to_contain_text("ana@example.com")
    for name in ("Save", "Add activity"):
        expect(panel.get_by_role("button", name=name)).to_have_count(0)
    expect(panel.get_by_role("textbox")).to_have_count(0)
    expect(page.get_by_role("alert").first).to_contain_text("contacts:write")
    # What was typed is said, as when a session ends under a panel (it was dropped).
    expect(page.get_by_role("alert").first).to_contain_text("Not saved: Ana — Last name")
    visit.failed.clear()  # the 403 was the point
    assert visit.settle() == []


def test_an_opportunity_s_contact_hidden_from_the_agent_is_no_link(
    visit: Visit, server: str, database_url: str
) -> None:
    """An assigned-only agent's opportunity of another agent's contact showed the contact's
    id as a link that could only open "No contact with id …"."""
    account = new_account(database_url)
    invited, mine, other = _agent_and_another(server, account)
    hidden = create(
        server, account, "contact", name="Ana", email=unique_email(), assignedAgentId=other["id"]
    )
    create(
        server, account, "opportunity", name="Deal", amount=5, contactId=hidden,
        assignedAgentId=mine["id"],
    )  # fmt: skip
    _agents_see_only_assigned(server, account)
    _set_password(visit, invited)
    page = visit.page
    page.get_by_role("link", name="Opportunities").click()
    page.get_by_role("article", name="Deal").click()
    panel = page.get_by_role("dialog", name="Deal", exact=True)
    line = panel.locator(".contact-line")
    expect(line).to_have_text(f"Contact: {hidden} (not one you can open)")
    expect(line.get_by_role("button")).to_have_count(0)
    assert visit.settle(expected=("404 ",)) == []  # the contact's read, as an unknown id


def test_a_key_that_may_not_read_workspaces_is_told_why_it_cannot_sign_in(
    visit: Visit, server: str, database_url: str
) -> None:
    """A key of users:manage and keys:manage alone was told "This needs the permission
    'contacts:read'", as if the console had asked for contacts."""
    account = new_account(database_url)
    visit.goto("/console")
    page = visit.page
    page.get_by_role("link", name="Sign in with an API key").click()
    page.get_by_label("API key").fill(_key(server, account, ["users:manage", "keys:manage"]))
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text(
        "The console opens a workspace first, and this key may not read workspaces"
    )
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    assert visit.settle(expected=("403 ",)) == []


def _key_made_by(server: str, invited: dict, scopes: list[str]) -> str:
    """A key made by the invited user (its invitation accepted), with these scopes."""
    token = invited["inviteUrl"].rsplit("/", 1)[1]
    with httpx.Client(base_url=server, timeout=30) as person:
        started = person.post(
            "/api/invitation/accept", json={"token": token, "password": PASSWORD}
        ).json()["data"]
        made = person.post(
            "/api/key",
            headers={"x-csrf-token": started["csrfToken"]},
            json={"name": "made", "scopes": scopes},
        )
    secret: str = made.json()["data"]["apiKey"]
    return secret


def test_a_key_is_offered_only_what_its_maker_or_its_workspaces_allow(
    visit: Visit, server: str, database_url: str
) -> None:
    """Every key was shown an owner's controls on the Users page: an admin's ["*"] key and
    a key limited to some workspaces had the owners' role selects, Disable and Reset link,
    and `owner` offered in Invite, each refused by the API (K.3: controls the role does not
    allow are not shown)."""
    account = new_account(database_url)
    owner = api(
        server, account, "POST", "/api/user",
        json={"email": unique_email(), "name": "Olga Owner", "role": "owner"},
    )["user"]  # fmt: skip
    agent = _invite(server, account, "agent")
    agent_name = agent["user"]["name"]
    # An agent's scopes and users:manage, for its workspace alone.
    agents = [
        "contacts:read",
        "contacts:write",
        "opportunities:read",
        "opportunities:write",
        "messages:read",
        "messages:write",
        "events:read",
    ]
    limited = api(
        server, account, "POST", "/api/key",
        json={"name": "lim", "scopes": [*agents, "users:manage"],
              "workspaceIds": [account.workspace_id]},
    )["apiKey"]  # fmt: skip
    # Every scope but keys:manage, which an owner and an admin hold: they cannot be given.
    short = [s for s in ALL_SCOPES if s != "keys:manage"]
    lacking = api(server, account, "POST", "/api/key", json={"name": "short", "scopes": short})
    for key, roles in (
        (
            _key_made_by(server, _invite(server, account, "admin"), ["*"]),
            ["admin", "agent", "viewer"],
        ),
        (limited, ["agent", "viewer"]),
        (lacking["apiKey"], ["agent", "viewer"]),
    ):
        page = _sign_in_with(visit, key)
        page.get_by_role("link", name="Users").click()
        row = page.get_by_role("row", name=re.compile("Olga Owner"))
        expect(row).to_contain_text("owner")
        expect(page.get_by_label(f"Role of {owner['name']}")).to_have_count(0)
        expect(row.get_by_role("button")).to_have_count(0)
        expect(page.get_by_label(f"Role of {agent_name}")).to_be_enabled()
        invite = page.get_by_label("Role", exact=True)
        expect(invite.locator("option")).to_have_text(roles)
        page.get_by_role("button", name="Sign out").click()
    assert visit.settle() == []


def test_a_role_chosen_with_arrows_then_tab_leaves_the_keyboard_on_the_next_control(
    visit: Visit, server: str, database_url: str
) -> None:
    """Leaving the role's select with Tab saves it, holding the row's controls: the one Tab
    went to lost the keyboard to the page's start."""
    account = new_account(database_url)
    agent = _invite(server, account, "agent")
    _set_password(visit, _invite(server, account, "owner"))
    page = visit.page
    page.get_by_role("link", name="Users").click()
    role = page.get_by_label(f"Role of {agent['user']['name']}")
    row = page.get_by_role("row", name=re.compile(agent["user"]["email"]))
    role.focus()
    page.keyboard.press("ArrowDown")  # agent → viewer
    page.keyboard.press("Tab")
    expect(row).to_contain_text("Saved.")
    workspace = page.locator(f"#user-{agent['user']['id']}-{account.workspace_id}")
    expect(workspace).to_be_focused()
    assert (
        api(server, account, "GET", f"/api/user/{agent['user']['id']}")["user"]["role"] == "viewer"
    )
    # Up to admin: its row has no workspace boxes, the one Tab went to: its role select.
    role.focus()
    for _ in range(2):
        page.keyboard.press("ArrowUp")  # viewer → agent → admin
    page.keyboard.press("Tab")
    expect(row.get_by_text("All workspaces")).to_be_visible()
    expect(role).to_be_focused()
    assert visit.settle() == []
