"""Stored texts as message ids with values (recovery/messages.py, console/messages.py): the English
kept beside them, the same text made again in the reader's language, and rows written before."""

from django.utils import translation

from console import messages
from recovery.messages import Message, gettext_noop

NOT_FOUND = gettext_noop("Workflow %(workflow_id)s does not exist.")


def test_it_renders_english_and_keeps_its_values():
    m = Message(NOT_FOUND, {"workflow_id": 42})
    assert m.english() == "Workflow 42 does not exist."
    assert m.as_json() == {"id": NOT_FOUND, "values": {"workflow_id": 42}}
    assert Message.from_json(m.as_json()) == m


def test_it_renders_in_the_readers_language():
    stored = Message(NOT_FOUND, {"workflow_id": 42}).as_json()
    with translation.override("zh-hans"):
        assert messages.plain(stored) == "工作流 42 不存在。"
        assert messages.shown(stored) == "工作流 42 不存在。"
    with translation.override("en"):
        assert messages.plain(stored) == "Workflow 42 does not exist."


def test_values_are_escaped_and_marked_as_codes_in_html():
    stored = Message(NOT_FOUND, {"workflow_id": "<b>x</b>"}).as_json()
    with translation.override("en"):
        assert messages.shown(stored) == 'Workflow <code translate="no">&lt;b&gt;x&lt;/b&gt;</code> does not exist.'


def test_nested_and_joined_messages_render_part_by_part():
    parts = [Message(NOT_FOUND, {"workflow_id": 1}), Message(NOT_FOUND, {"workflow_id": 2})]
    joined = Message.joined(parts)
    assert joined.english() == "Workflow 1 does not exist.; Workflow 2 does not exist."
    assert Message.from_json(joined.as_json()) == Message.joined(parts)
    with translation.override("zh-hans"):
        assert messages.plain(joined.as_json()) == "工作流 1 不存在。；工作流 2 不存在。"


def test_a_row_written_before_shows_its_stored_english():
    assert messages.shown(None, "resumed; workflow ACTIVE") == "resumed; workflow ACTIVE"
    assert messages.plain({"not": "a message"}, "kept") == "kept"
    # A message whose values no longer fit its text falls back rather than failing the page.
    assert messages.plain({"id": NOT_FOUND, "values": {}}, "kept") == "kept"


def test_sentences_follow_each_other_as_the_language_writes_them():
    parts = [Message(NOT_FOUND, {"workflow_id": 1}), Message(NOT_FOUND, {"workflow_id": 2})]
    both = Message.sentences(parts)
    assert both.english() == "Workflow 1 does not exist. Workflow 2 does not exist."
    assert Message.from_json(both.as_json()) == both
    with translation.override("zh-hans"):
        assert messages.plain(both.as_json()) == "工作流 1 不存在。工作流 2 不存在。"
        assert messages.shown(both.as_json()) == "工作流 1 不存在。工作流 2 不存在。"
    with translation.override("en"):
        assert messages.plain(both.as_json()) == both.english()
