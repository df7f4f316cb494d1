"""Text from the WMS or the WCS never starts a line of its own in a message.

A pause reason, a tray code or a note can hold anything, line breaks included; put as they are
into an e-mail body, a chat message or a log line they would forge lines of their own ("Open:
https://..." before the real link). `escape_line_breaks` shows every character that ends a line
for some reader, and every other control character, as an escape (`\\n`, `\\r`, `\\u2028`), so
the text stays on the line it was put on and can still be read. Used by the notification
messages (console/notifications) and the log formatters (recovery/logs/logcontext.py).

No Django import here: the log configuration is built before Django is.
"""

import re

# CR, LF, VT, FF, NEL (U+0085), LINE SEPARATOR (U+2028), PARAGRAPH SEPARATOR (U+2029), and the
# other C0 and C1 control characters and DEL; a tab stays (it ends no line).
_BREAKS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\x0b": "\\v", "\x0c": "\\f"}


def _escaped(match: re.Match) -> str:
    char = match.group()
    return _NAMED.get(char) or f"\\u{ord(char):04x}"


def escape_line_breaks(text: str) -> str:
    """`text` on one line: each line break or control character shown as its escape."""
    return _BREAKS.sub(_escaped, text)
