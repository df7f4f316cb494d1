"""Hostile-input checks shared by the WCS API and the console's forms.

One place decides what text, numbers and JSON bodies the console accepts, so the callback
parser and every query-string or POST form refuse the same things the same way: a 4xx naming
the field, before anything reads the database. What is refused and why:

- NUL bytes and lone surrogates: PostgreSQL text and jsonb cannot hold them, so they would
  fail deep inside a transaction (a 500, or a 503 that WCS retries forever);
- other control characters: no code, id or reason contains them, and they hide text in logs,
  the audit and CSV exports;
- non-ASCII digits: `"²".isdigit()` is True but `int("²")` fails; only `[0-9]` is a number;
- numbers outside PostgreSQL's bigint (or a caller's tighter range);
- dates and times outside [EARLIEST_TIME, LATEST_TIME): PostgreSQL stores far more than Python
  reads back (a time past 9999-12-31 in UTC fails psycopg's loader), and a time near either end
  in UTC is past it in a zone on the other side of UTC;
- JSON bodies larger than `MAX_JSON_BODY_BYTES` (413) or nested deeper than `MAX_JSON_DEPTH`
  (Python's parser would recurse until RecursionError), and NaN/Infinity, which are not JSON;
- numbers a double cannot hold (`1e400`, `-1e999`): Python reads them as infinity, which neither
  a field's range nor jsonb accepts, so they are refused naming the field they are in;
- line and paragraph separators and bidi controls (`LINE_OR_BIDI`) where text must stay on one
  line and read in its own order (field names, codes): they forge lines and reorder what a log or
  a label shows.

A refusal speaks two languages: `InputRefused.message` is English (the WCS API's JSON bodies and
the logs, read by machines), `InputRefused.localized` is the same sentence in the reader's
language (a console page); the form checks below answer in the reader's language. Field names
stay as they are in every language.
"""

import json
import math
import re
import unicodedata
from datetime import UTC, datetime
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext, gettext_noop

from recovery.errors import Refused

BIGINT_MAX = 2**63 - 1
# The code of a form error for a value no person types by mistake: the view answers 400.
HOSTILE = "hostile"
MAX_JSON_BODY_BYTES = 64 * 1024
MAX_JSON_DEPTH = 32

_ASCII_INT = re.compile(r"[0-9]{1,19}")
# Control characters (C0, DEL, C1) and surrogates; tab, newline and carriage return are allowed
# only where a caller says the text is multi-line.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_UNSAFE_MULTILINE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
# Line breaks and separators (CR, LF, NEL, U+2028, U+2029) and the bidi controls (embeddings and
# overrides U+202A-U+202E, isolates U+2066-U+2069, the marks U+200E, U+200F and U+061C).
LINE_OR_BIDI = re.compile("[\n\r\x85\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
# What a stored excerpt of refused input shows escaped: both of the above.
_ESCAPED = re.compile(f"{_UNSAFE.pattern}|{LINE_OR_BIDI.pattern}")


class Sentence:
    """An English sentence with values that a page can show in its reader's language.

    `str()` is the English text: the WCS API's JSON error bodies and the logs keep it, whatever
    language the request asked for (a machine reads them). `translated()` is the same sentence
    in the active language, for a person reading a 4xx page. Values stay as they are (field
    names, numbers, code points), except nested sentences, which are translated too.
    """

    def __init__(self, template: str, **values):
        self.template = template  # marked with gettext_noop where it is written
        self.values = values

    def __str__(self) -> str:
        return self.template % {k: str(v) for k, v in self.values.items()} if self.values else self.template

    def translated(self) -> str:
        values = {k: v.translated() if isinstance(v, Sentence) else v for k, v in self.values.items()}
        text = gettext(self.template)
        return text % values if values else text


class InputRefused(Refused, ValueError):
    """A request part the console refuses; `field` names it (None: the request as a whole).
    `message` is English (JSON bodies, logs); `localized` is the same in the active language."""

    def __init__(self, field: str | None, message: "str | Sentence", *, status: int = 400):
        super().__init__(str(message))
        self.field = field
        self.message = str(message)
        self.sentence = message if isinstance(message, Sentence) else None
        self.status = status

    @property
    def localized(self) -> str:
        return self.sentence.translated() if self.sentence is not None else self.message


def character_sentence(ch: str) -> Sentence:
    if "\ud800" <= ch <= "\udfff":
        return Sentence(gettext_noop("a lone surrogate (U+%(code)s)"), code=f"{ord(ch):04X}")
    if ch == "\x00":
        return Sentence(gettext_noop("a NUL byte"))
    name = unicodedata.name(ch, "")
    return Sentence(gettext_noop("a control character (U+%(code)s)"), code=f"{ord(ch):04X}{' ' + name if name else ''}")


def describe_character(ch: str) -> str:
    return str(character_sentence(ch))


def _line_or_bidi_sentence(ch: str) -> Sentence:
    code = f"{ord(ch):04X} {unicodedata.name(ch, '')}".rstrip()
    if ch in "\n\r\x85\u2028\u2029":
        return Sentence(gettext_noop("a line break or separator (U+%(code)s)"), code=code)
    return Sentence(gettext_noop("a bidi control (U+%(code)s)"), code=code)


def line_or_bidi_character(text: str) -> str | None:
    """A description (English) of the first line break, line or paragraph separator or bidi
    control in `text`, or None: text that must stay on one line and in its own order holds none."""
    found = LINE_OR_BIDI.search(text)
    return str(_line_or_bidi_sentence(found.group())) if found else None


def unsafe_character_sentence(text: str, *, multiline: bool = False) -> Sentence | None:
    """The first character the console never accepts in `text`, described, or None."""
    found = (_UNSAFE_MULTILINE if multiline else _UNSAFE).search(text)
    return character_sentence(found.group()) if found else None


def unsafe_character(text: str, *, multiline: bool = False) -> str | None:
    """A description (English) of the first character the console never accepts in `text`, or None."""
    found = unsafe_character_sentence(text, multiline=multiline)
    return str(found) if found else None


def safe_text(value: Any, *, field: str, max_length: int, multiline: bool = False, required: bool = True) -> str:
    """`value` as text without NUL bytes, surrogates or control characters, at most `max_length`
    characters and (when required) not blank; otherwise InputRefused naming `field`."""
    if not isinstance(value, str) or required and not value.strip():
        wanted = (gettext_noop("field '%(field)s' must be a non-empty string") if required
                  else gettext_noop("field '%(field)s' must be a string"))
        raise InputRefused(field, Sentence(wanted, field=field))
    if len(value) > max_length:
        raise InputRefused(field, Sentence(gettext_noop("field '%(field)s' is longer than %(max_length)s characters"),
                                           field=field, max_length=max_length))
    bad = unsafe_character_sentence(value, multiline=multiline)
    if bad:
        raise InputRefused(field, Sentence(gettext_noop("field '%(field)s' contains %(what)s"), field=field, what=bad))
    return value


NOT_A_NUMBER = gettext_noop("field '%(field)s' must be a whole number written with the digits 0-9")
OUT_OF_RANGE = gettext_noop("field '%(field)s' must be between %(minimum)s and %(maximum)s")


def is_ascii_int(text: Any, *, minimum: int = 0, maximum: int = BIGINT_MAX) -> bool:
    return isinstance(text, str) and bool(_ASCII_INT.fullmatch(text)) and minimum <= int(text) <= maximum


def ascii_int(text: Any, *, field: str, minimum: int = 0, maximum: int = BIGINT_MAX) -> int:
    """`text` as an integer written with ASCII digits only, within [minimum, maximum]."""
    if not isinstance(text, str) or not _ASCII_INT.fullmatch(text):
        raise InputRefused(field, Sentence(NOT_A_NUMBER, field=field))
    number = int(text)
    if not minimum <= number <= maximum:
        raise InputRefused(field, Sentence(OUT_OF_RANGE, field=field, minimum=minimum, maximum=maximum))
    return number


def int_in_range(value: Any, *, field: str, minimum: int = -BIGINT_MAX - 1, maximum: int = BIGINT_MAX) -> int:
    """A JSON integer (never a boolean or a float) within [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputRefused(field, Sentence(gettext_noop("field '%(field)s' must be an integer"), field=field))
    if not minimum <= value <= maximum:
        raise InputRefused(field, Sentence(OUT_OF_RANGE, field=field, minimum=minimum, maximum=maximum))
    return value


# --- dates and times ----------------------------------------------------------------------------

# Every date and time a person or a query string gives lies in [EARLIEST_TIME, LATEST_TIME): far
# from both ends of Python's datetime (years 1 to 9999), so it is stored, read back and shown in
# every time zone, and the console's date arithmetic (a shift, a week, a silence's 7 days) never
# leaves the range. Stored rows outside it are the ones a page shows as unreadable.
EARLIEST_TIME = datetime(1900, 1, 1, tzinfo=UTC)
LATEST_TIME = datetime(9000, 1, 1, tzinfo=UTC)
TIME_OUT_OF_RANGE = gettext_noop("The time must lie between %(earliest)s and %(latest)s.")


def time_in_range(value: datetime) -> bool:
    """Whether an aware `value` lies in [EARLIEST_TIME, LATEST_TIME) (compared in UTC, so no zone
    conversion can overflow)."""
    return EARLIEST_TIME <= value < LATEST_TIME


def time_out_of_range() -> Sentence:
    """What a refused time is told (the form's error list names the field)."""
    return Sentence(TIME_OUT_OF_RANGE, earliest=f"{EARLIEST_TIME:%Y-%m-%d}", latest=f"{LATEST_TIME:%Y-%m-%d}")


class BoundedDateTimeField(forms.DateTimeField):
    """A form's date and time (made aware in the warehouse zone), refused outside [EARLIEST_TIME,
    LATEST_TIME) with the "hostile" code: a SafeInputForm's view answers 400 naming the field."""

    def clean(self, value):
        result = super().clean(value)
        if result is not None and not time_in_range(result):
            raise ValidationError(time_out_of_range().translated(), code=HOSTILE)
        return result


# --- JSON bodies -----------------------------------------------------------------------------------


def json_depth_exceeds(text: str, limit: int) -> bool:
    """Whether arrays/objects in `text` nest deeper than `limit` (brackets inside strings do not
    count). Checked before parsing, so a deep document never reaches the recursive parser."""
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
    return False


class NonFinite:
    """Where the parsed document held a number no double holds (`1e400`) or a NaN/Infinity
    constant (not JSON): a placeholder, never a value, which the checks below refuse naming the
    field it is in; `text` is how the body wrote it."""

    __slots__ = ("text", "constant")

    def __init__(self, text: str, *, constant: bool):
        self.text = text
        self.constant = constant


def _parse_float(text: str) -> float | NonFinite:
    value = float(text)
    return value if math.isfinite(value) else NonFinite(text[:40], constant=False)


def _parse_constant(name: str) -> NonFinite:
    return NonFinite(name, constant=True)


def _non_finite_refusal(value: NonFinite, path: str) -> InputRefused:
    what = (f"{value.text}, which is not a JSON number" if value.constant
            else f"{value.text}, a number out of any field's range")
    return InputRefused(path or None, f"field '{path}' holds {what}" if path else f"the body holds {what}")


def field_name_problem(name: str) -> str | None:
    """Why a field name is refused (control characters, NUL, lone surrogates, line breaks and
    separators, bidi controls), or None."""
    bad = unsafe_character(name) or line_or_bidi_character(name)
    return f"a field name contains {bad}" if bad else None


def _check_values(value: Any, path: str) -> None:
    """Every key and string anywhere in the document is storable text (the receipt keeps it), and
    every number a finite one (jsonb holds neither Infinity nor NaN)."""
    if isinstance(value, str):
        bad = unsafe_character(value, multiline=True)
        if bad:
            raise InputRefused(path or None, f"field '{path}' contains {bad}" if path else f"the body contains {bad}")
    elif isinstance(value, dict):
        for key, item in value.items():
            problem = field_name_problem(key)
            if problem:
                raise InputRefused(None, problem)
            _check_values(item, key if not path else f"{path}.{key}")
    elif isinstance(value, list):
        for n, item in enumerate(value):
            _check_values(item, f"{path}[{n}]")
    elif isinstance(value, NonFinite):
        raise _non_finite_refusal(value, path)


def _has_constant(value: Any) -> bool:
    if isinstance(value, NonFinite):
        return value.constant
    if isinstance(value, dict):
        return any(_has_constant(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_constant(item) for item in value)
    return False


def load_json_object(body: bytes, *, max_bytes: int = MAX_JSON_BODY_BYTES, max_depth: int = MAX_JSON_DEPTH,
                     known: frozenset[str] | None = None) -> dict:
    """The body as a JSON object, or InputRefused (413 when larger than `max_bytes`).

    With `known`, the values of top-level fields not in it are not checked (a tolerant reader
    ignores them and keeps nothing of them: a number out of range there is ignored too), except
    that a NaN or Infinity constant anywhere still refuses the body, which is then not JSON; every
    top-level name is checked. A non-finite number in a checked field is refused naming it."""
    if len(body) > max_bytes:
        raise InputRefused(None, f"the body is larger than {max_bytes} bytes", status=413)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise InputRefused(None, "the body is not UTF-8 text") from None
    if json_depth_exceeds(text, max_depth):
        raise InputRefused(None, f"the body nests arrays or objects deeper than {max_depth} levels")
    try:
        data = json.loads(text, parse_constant=_parse_constant, parse_float=_parse_float)
    except json.JSONDecodeError as exc:
        raise InputRefused(None, f"the body is not valid JSON ({exc.msg} at position {exc.pos})") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer of more than 4300 digits
        if isinstance(exc, InputRefused):
            raise
        raise InputRefused(None, f"the body is not acceptable JSON ({str(exc)[:120]})") from None
    if not isinstance(data, dict):
        raise InputRefused(None, "the body must be a JSON object")
    if known is None or known.issuperset(data):
        _check_values(data, "")
    else:
        for key, item in data.items():
            problem = field_name_problem(key)
            if problem:
                raise InputRefused(None, problem)
            if key in known:
                _check_values(item, key)
        constant = next((key for key, item in data.items() if key not in known and _has_constant(item)), None)
        if constant is not None:
            raise InputRefused(None, "the body is not valid JSON (NaN and Infinity are not JSON numbers)")
    return data


def printable_excerpt(raw: bytes | str, limit: int = 500) -> str:
    """A bounded, storable rendering of refused input (for a receipt): unsafe characters, line
    separators and bidi controls escaped."""
    text = raw.decode("utf-8", "backslashreplace") if isinstance(raw, bytes) else raw
    text = text[:limit]
    return (_ESCAPED.sub(lambda m: f"\\u{ord(m.group()):04x}", text.replace("\\", "\\\\"))
            if _ESCAPED.search(text) else text)



def keyset_position_problem(raw: str) -> str | None:
    """A list position ("<number>-<number>", written by the console) that no typo produces:
    non-ASCII characters, or numbers beyond bigint. Other malformed positions are the page's
    business (it explains them and shows the first page)."""
    if not raw.isascii():
        return gettext("the list position contains characters other than the digits 0-9 and '-'")
    for part in raw.split("-"):
        if part.isdigit() and not is_ascii_int(part):
            return gettext("the list position holds a number out of range")
    return None


# --- forms ---------------------------------------------------------------------------------------------


class SafeInputForm(forms.Form):
    """A form that refuses hostile values before its own validation: control characters, NUL
    bytes and surrogates in any field, non-ASCII digits or out-of-range numbers in the fields
    named by `integer_fields` ({name: (minimum, maximum)}), and values far longer than any field
    accepts. Such errors carry the code "hostile"; `refused` tells the view to answer 400.
    `multiline_fields` may hold tab and newline characters (a written reason)."""

    integer_fields: dict[str, tuple[int, int]] = {}
    multiline_fields: tuple[str, ...] = ()
    # {name: check(raw) -> problem or None}: a field's own hostile-value rule (list positions).
    extra_checks: dict = {}
    max_raw_length = 1000

    def _hostile_problem(self, name: str, raw: str) -> str | None:
        # Made while the page's request is answered: in the reader's language.
        if len(raw) > self.max_raw_length:
            return gettext("the value is longer than %(max_length)s characters") % {"max_length": self.max_raw_length}
        bad = unsafe_character_sentence(raw, multiline=name in self.multiline_fields)
        if bad:
            return gettext("the value contains %(what)s") % {"what": bad.translated()}
        if name in self.integer_fields and raw != "":
            low, high = self.integer_fields[name]
            if not _ASCII_INT.fullmatch(raw):
                return gettext("the value must be a whole number written with the digits 0-9")
            if not low <= int(raw) <= high:
                return gettext("the value must be between %(minimum)s and %(maximum)s") % {"minimum": low,
                                                                                          "maximum": high}
        check = self.extra_checks.get(name)
        return check(raw) if check and raw != "" else None

    def full_clean(self):
        hostile = {}
        if self.is_bound:
            for name in self.fields:
                values = self.data.getlist(name) if hasattr(self.data, "getlist") else [self.data.get(name)]
                for raw in values:
                    problem = self._hostile_problem(name, raw) if isinstance(raw, str) else None
                    if problem:
                        hostile[name] = problem
                        break
        if hostile:
            # The form's own cleaning never sees a hostile value: it reads the field as absent.
            data = self.data.copy()
            for name in hostile:
                data.pop(name, None)
            self.data = data
        super().full_clean()
        for name, problem in hostile.items():
            self.add_error(name, forms.ValidationError(problem, code=HOSTILE))

    @property
    def refused(self) -> bool:
        return any(e.code == HOSTILE for errors in self.errors.as_data().values() for e in errors)


# --- form helpers shared by the console's forms -------------------------------------------


def no_control_characters(value: str, *, allow_newlines: bool = False) -> None:
    allowed = {"\n", "\r", "\t"} if allow_newlines else set()
    if any(unicodedata.category(ch) == "Cc" and ch not in allowed for ch in value):
        raise ValidationError(gettext("Control characters are not allowed."), code="control_characters")


def errors_text(form: forms.Form) -> str:
    """`field: message` for every error, for a 400 answer that names the field."""
    return "; ".join(f"{name}: {message}" for name, message in field_errors(form))


def field_errors(form: forms.Form) -> list[tuple[str, str]]:
    """(field, message) for every field in error: a page shows the field's name as it is (a
    parameter of the address, in any language) and the message in the reader's language."""
    return [(name, " ".join(errors)) for name, errors in form.errors.items()]
