"""docs/api.md runs as written: each curl sample answers as shown, and its command-line
transcript prints what it shows."""

from __future__ import annotations

import pytest

from tests.docs.samples import (
    ROOT,
    Block,
    Ids,
    Service,
    blocks,
    envelopes,
    gist,
    run_shell,
    run_transcript,
    variables,
)

# Samples that cannot run as written here, and why.
SKIPPED = {
    "/retry": "needs a message the channel failed to send (tests/conversations/test_sending.py)",
    "/media": "needs a photo received from Meta (tests/conversations/test_messages.py)",
    "while true": "follows the feed forever",
    "openssl dgst": "signs with the channel's secret; tests/conversations check Meta's calls",
}


# --- docs/api.md ---------------------------------------------------------------------------------

API_SAMPLES = [
    b
    for b in blocks(ROOT / "docs" / "api.md")
    if b.language == "sh" and not b.text.lstrip().startswith(("BASE=", "$ "))
]


@pytest.mark.parametrize("block", API_SAMPLES, ids=[b.where for b in API_SAMPLES])
def test_each_curl_sample_of_the_api_reference_answers_as_shown(
    service: Service, block: Block
) -> None:
    for text, why in SKIPPED.items():
        if text in block.text:
            pytest.skip(why)
    result = run_shell(block, variables(service, block.text), service.folder)
    assert result.returncode == 0, (block.where, result.stdout, result.stderr)
    shown = envelopes(block.answer or "")
    if not shown and (block.answer or "").startswith("HTTP/"):  # headers only: the same status
        assert result.stdout.split("\n", 1)[0].split()[1:2] == block.answer.split()[1:2]
        return
    got = envelopes(result.stdout)
    assert got or "jq" in block.text, (block.where, result.stdout, result.stderr)
    if not shown:  # a sample that shows no answer succeeds
        assert all(e["success"] for e in got), (block.where, result.stdout)
    # The blocks after a sample may go on with other answers (an error, a later call):
    # the sample's own answers come first.
    for expected, actual in zip(shown, got, strict=False):
        assert gist(actual) == gist(expected), (block.where, result.stdout)


TRANSCRIPTS = [
    b for b in blocks(ROOT / "docs" / "api.md") if b.language == "sh" and b.text.startswith("$ ")
]


@pytest.mark.parametrize("block", TRANSCRIPTS, ids=[b.where for b in TRANSCRIPTS])
def test_each_command_line_transcript_prints_what_it_shows(service: Service, block: Block) -> None:
    values = {"BASE": service.server.base_url, "KEY": service.api_key, "WS": service.workspace_id}
    run_transcript(block, values, service.folder, Ids())
