"""Argument checks shared by every entry point. Each error names the argument and the fix."""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta

from .errors import InvalidInput
from .normalize import has_visible_content

_NAMESPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,63}$")
MAX_WAIT_MS = 30_000
MAX_LIMIT = 100
MAX_JOB_IDS = 50
MAX_ITEMS = 100  # facts per memwal_remember_many call
MAX_SUPERSEDES = 50  # memories one fact may replace
MAX_KEY_CHARS = 256


_ID = re.compile(r"[A-Za-z0-9_\-]{1,64}")


def show(value: object, width: int = 60) -> str:
    """A caller's value for an error message: repr, cut short (the caller knows what they sent)."""
    try:
        text = repr(value)
    except ValueError:  # an int too long to print
        return "a very large integer"
    return text if len(text) <= width else text[: width - 3] + "..."


# The character policy, the same for every text argument. Refused: lone surrogates (not
# Unicode text), every C0 control but tab and newline (so carriage return too: a stored
# "a\rb" prints as "b"), DEL and the C1 controls. Line and paragraph separators (U+2028,
# U+2029) are line breaks like newline: allowed where newlines are. A one-line value (an
# idempotency key) takes no tab, newline or separator either.
_REFUSED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_REFUSED_IN_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _check_chars(name: str, value: str, one_line: bool = False) -> None:
    found = (_REFUSED_IN_ONE_LINE if one_line else _REFUSED).search(value)
    if found is None:
        return
    char, position = found.group(), found.start()
    if 0xD800 <= ord(char) <= 0xDFFF:
        raise InvalidInput(f"{name} is not valid Unicode: lone surrogate U+{ord(char):04X} at position {position}")
    kind = "line separator" if char in "\u2028\u2029" else "control character"
    fix = " (use \\n alone for line breaks)" if char == "\r" and not one_line else ""
    raise InvalidInput(f"{name} contains the {kind} U+{ord(char):04X} at position {position}; remove it{fix}")


def text(
    value: object,
    max_bytes: int,
    name: str = "text",
    hint: str = "give the fact to remember",
    shorten: str = "split it into smaller facts",
) -> str:
    """A text argument: a string with something visible in it, within `max_bytes` of UTF-8."""
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string")
    size = len(value.encode("utf-8", "surrogatepass"))  # a lone surrogate is refused below, by name
    if size > max_bytes:
        raise InvalidInput(f"{name} is {size} bytes; the limit is {max_bytes} bytes ({shorten})")
    _check_chars(name, value)  # before the blank check: "\x85" is whitespace to str.strip()
    if not value.strip():
        raise InvalidInput(f"{name} is empty; {hint}")
    if not has_visible_content(value):
        raise InvalidInput(
            f"{name} has nothing visible in it (only spaces, zero-width or text-direction characters); {hint}"
        )
    return value


def query(value: object, max_bytes: int) -> str:
    """A search query: the same characters as stored text, since nothing else could match one."""
    return text(value, max_bytes, name="query", hint="say what to search for", shorten="shorten the query")


MAX_OWNER_CHARS = 128


def owner(value: object, name: str = "owner") -> str:
    """An owner name, the same rule wherever one is accepted (config, --owner, tokens, imports):
    it is printed in listings and logs, so one visible line of at most 128 characters."""
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string")
    if len(value) > MAX_OWNER_CHARS:
        raise InvalidInput(f"{name} is {len(value)} characters; the limit is {MAX_OWNER_CHARS}")
    _check_chars(name, value, one_line=True)
    if not value.strip() or not has_visible_content(value):
        raise InvalidInput(f"{name} is empty or has nothing visible in it; give a name such as 'alice'")
    return value


MAX_LABEL_CHARS = 200


def label(value: object, name: str = "--label") -> str:
    """A token's note: one line, printed by `token list` beside the owner."""
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string")
    if len(value) > MAX_LABEL_CHARS:
        raise InvalidInput(f"{name} is {len(value)} characters; the limit is {MAX_LABEL_CHARS}")
    _check_chars(name, value, one_line=True)
    return value


def printable(value: str) -> str:
    """`value` with every control character, separator and lone surrogate as its escape, so
    printing a stored string (written before this rule, or by hand) cannot move the cursor."""
    return _REFUSED_IN_ONE_LINE.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", value
    )


def namespace(value: object) -> str:
    if value is None:
        return "default"
    if not isinstance(value, str) or not _NAMESPACE.match(value):
        raise InvalidInput(
            f"namespace {show(value)} is invalid: use 1-64 characters from letters, digits, '_', '.', ':' and '-', "
            "starting with a letter or digit"
        )
    return value


def idempotency_key(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput("idempotency_key must be a non-empty string (or omitted)")
    if len(value) > MAX_KEY_CHARS:
        raise InvalidInput(f"idempotency_key is {len(value)} characters; the limit is {MAX_KEY_CHARS}")
    _check_chars("idempotency_key", value, one_line=True)
    if not value.strip():
        raise InvalidInput("idempotency_key must be a non-empty string (or omitted)")
    if not has_visible_content(value):
        raise InvalidInput("idempotency_key has nothing visible in it; send a key a person can read, or omit it")
    return value


def wait_ms(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_WAIT_MS:
        raise InvalidInput(f"wait_ms must be an integer from 0 to {MAX_WAIT_MS}, got {show(value)}")
    return value


def limit(value: object, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
        raise InvalidInput(f"limit must be an integer from 1 to {MAX_LIMIT}, got {show(value)}")
    return value


def items(value: object) -> list[object]:
    """The list of memwal_remember_many: its length said as a count, never the items echoed."""
    if not isinstance(value, list):
        raise InvalidInput(f"items must be a list of 1 to {MAX_ITEMS} facts, got {show(value)}")
    if not value:
        raise InvalidInput(f"items is empty; give 1 to {MAX_ITEMS} facts")
    if len(value) > MAX_ITEMS:
        raise InvalidInput(f"items: at most {MAX_ITEMS} items, got {len(value)}")
    return value


def min_score(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise InvalidInput(f"min_score must be a number from 0 to 1, got {show(value)}")
    return float(value)


def job_ids(value: object) -> list[str]:
    if not isinstance(value, list) or not value:
        raise InvalidInput("job_ids must be a non-empty list of job ids")
    if len(value) > MAX_JOB_IDS:
        raise InvalidInput(f"job_ids has {len(value)} ids; the limit is {MAX_JOB_IDS} per call")
    if not all(isinstance(item, str) and _ID.fullmatch(item) for item in value):
        raise InvalidInput("job_ids must contain job id strings such as 'j_0123456789abcdef'")
    return list(dict.fromkeys(value))


# The one date form accepted: ISO-8601 extended, a date with an optional time (to the hour,
# minute, second or a fraction of one) and an optional UTC offset. Matched whole and in ASCII
# digits: datetime.fromisoformat takes any character as the separator and more besides, so a
# value with a NUL in it was read as a date.
_INSTANT = re.compile(
    r"(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})"
    r"(?:[Tt ](?P<hour>\d{2})(?::(?P<minute>\d{2})(?::(?P<second>\d{2})(?:[.,](?P<fraction>\d{1,9}))?)?)?"
    r"(?:(?P<utc>[Zz])|(?P<sign>[+-])(?P<off_h>\d{2})(?::?(?P<off_m>\d{2}))?)?)?",
    re.ASCII,
)
_EPOCH = datetime(1970, 1, 1)
# Every instant must print as a UTC date-time again, so the calendar's own ends, exactly.
_FIRST, _END = datetime(1, 1, 1) - _EPOCH, datetime(9999, 12, 31, 23, 59, 59, 999999) - _EPOCH
# The last float that still prints inside year 9999 (its exact end rounds up to year 10000).
_LATEST = math.nextafter((_END + timedelta(microseconds=1)).total_seconds(), -math.inf)
# The same ends as seconds since the epoch: every time stored must lie between them, whether
# it came as an ISO-8601 argument or as a number in an import file.
EARLIEST_EPOCH_S, LATEST_EPOCH_S = _FIRST.total_seconds(), _LATEST
_FORMS = "e.g. '2026-11-30', '2026-11-30T14:05' or '2026-11-30T14:05:00Z'"


def _parse_instant(name: str, value: str, upper_bound: bool) -> float:
    """Seconds since the epoch; naive values are UTC. As an upper bound a value means the whole
    of its last unit: '2026-11-30' all that day, '14:05' that minute, '14:05:09' that second, so
    the second shown for a fact, given back as `until`, includes the fact."""
    moment, unit = _moment(name, value)
    if not upper_bound:
        return min(moment.total_seconds(), _LATEST)
    # The float just below the next unit's start: a fact stamped exactly there stays out, at any
    # magnitude (subtracting a microsecond is lost to rounding at year 1 or 9999).
    return min(math.nextafter((moment + unit).total_seconds(), -math.inf), _LATEST)


def _moment(name: str, value: str) -> tuple[timedelta, timedelta]:
    """(the instant since the epoch, the length of the last unit the value gives: a day for a
    date alone, else an hour, a minute, a second or its fraction)."""
    _check_chars(name, value, one_line=True)
    found = _INSTANT.fullmatch(value)
    if found is None:
        if value != value.strip():
            raise InvalidInput(f"{name} {show(value)} has spaces around it; remove them")
        raise InvalidInput(f"{name} {show(value)} is not an ISO-8601 date or date-time, {_FORMS}")
    part = found.groupdict()
    fraction = part["fraction"] or ""
    try:
        naive = datetime(
            int(part["year"]),
            int(part["month"]),
            int(part["day"]),
            int(part["hour"] or 0),
            int(part["minute"] or 0),
            int(part["second"] or 0),
            int(fraction[:6].ljust(6, "0")),
        )
    except ValueError as exc:  # month 13, February 30, hour 24 ...
        raise InvalidInput(f"{name} {show(value)} is not a date on the calendar ({exc})") from None
    offset = timedelta()
    if part["sign"]:
        hours, minutes = int(part["off_h"]), int(part["off_m"] or 0)
        if hours > 23 or minutes > 59:
            raise InvalidInput(
                f"{name} {show(value)} has the UTC offset {part['sign']}{hours:02}:{minutes:02}; "
                "an offset runs from -23:59 to +23:59"
            )
        offset = timedelta(hours=hours, minutes=minutes) * (1 if part["sign"] == "+" else -1)
    # In timedelta arithmetic, which cannot overflow near the calendar's ends as datetime can.
    moment = naive - _EPOCH - offset
    if not _FIRST <= moment <= _END:
        raise InvalidInput(f"{name} {show(value)} is outside the years 0001 to 9999 in UTC")
    if part["hour"] is None:
        unit = _DAY
    elif part["minute"] is None:
        unit = timedelta(hours=1)
    elif part["second"] is None:
        unit = timedelta(minutes=1)
    else:
        unit = timedelta(microseconds=10 ** (6 - min(len(fraction), 6)))
    return moment, unit


_DAY = timedelta(days=1)
# The last whole second of the calendar: where the end of its last day is kept (that end
# itself, the first instant of year 10000, cannot be shown as a date).
_LAST_SECOND = (_END - timedelta(microseconds=_END.microseconds)).total_seconds()


def _string(value: object, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"{name} must be an ISO-8601 date or date-time string, {_FORMS}")
    return value


def instant(value: object, name: str, upper_bound: bool = False) -> float | None:
    """An optional ISO-8601 date argument (occurred_at, since, until)."""
    if value is None:
        return None
    return _parse_instant(name, _string(value, name), upper_bound)


def expiry(value: object, name: str = "expires_at") -> float | None:
    """An optional expires_at: the first instant the fact no longer holds. A date alone means
    the end of that day (the first instant of the next, UTC), so a fact "valid until
    2026-12-05" is still recalled all that day; a time means its exact instant."""
    if value is None:
        return None
    moment, unit = _moment(name, _string(value, name))
    if unit == _DAY:
        return min((moment + _DAY).total_seconds(), _LAST_SECOND)
    return min(moment.total_seconds(), _LATEST)


def period(since: object, until: object) -> tuple[float | None, float | None]:
    """`since` and `until` as bounds, refused when they leave no time between them."""
    start = instant(since, "since")
    end = instant(until, "until", upper_bound=True)
    if start is not None and end is not None and end < start:
        raise InvalidInput(f"until {show(until)} is before since {show(since)}; give an until on or after the since")
    return start, end


def namespace_scope(value: object) -> str:
    """A namespace, or '*' for all of the owner's namespaces (recall only)."""
    return "*" if value == "*" else namespace(value)


_MEMORY_ID_EXAMPLE = "a memory id such as 'm_0123456789abcdef' (from memwal_recall or memwal_list)"


def memory_id(value: object) -> str:
    """A memory id (or a job id: forget takes a queued fact's). An empty or blank one, or one
    with spaces around it, is told so: a bare "got ''" left the caller to guess."""
    if isinstance(value, str) and not _ID.fullmatch(value):
        if not value:
            raise InvalidInput(f"memory_id is empty; give {_MEMORY_ID_EXAMPLE}")
        if not value.strip():
            raise InvalidInput(f"memory_id {show(value)} is blank (only white space); give {_MEMORY_ID_EXAMPLE}")
        if _ID.fullmatch(value.strip()):
            raise InvalidInput(f"memory_id {show(value)} has spaces around it; remove them")
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise InvalidInput(f"memory_id must be {_MEMORY_ID_EXAMPLE}, got {show(value)}")
    return value


def memory_ids(value: object, name: str) -> tuple[str, ...]:
    """A list of memory ids (None or empty: none), each once, in the order given."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InvalidInput(f"{name} must be a list of memory ids such as ['m_0123456789abcdef'], got {show(value)}")
    if len(value) > MAX_SUPERSEDES:
        raise InvalidInput(f"{name} has {len(value)} ids; the limit is {MAX_SUPERSEDES}")
    for item in value:
        if not isinstance(item, str) or not _ID.fullmatch(item) or not item.startswith("m_"):
            raise InvalidInput(f"{name} must hold memory ids such as 'm_0123456789abcdef', got {show(item)}")
    return tuple(dict.fromkeys(value))


MAX_CHARS = 1_000_000


def max_chars(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CHARS:
        raise InvalidInput(f"max_chars must be an integer from 1 to {MAX_CHARS}, got {show(value)}")
    return value


def flag(value: object, name: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InvalidInput(f"{name} must be true or false")
    return value


def shown(value: object, name: str) -> str:
    """include_expired / include_superseded of a list: false (left out, the default), true (listed
    too, marked) or "only" (only those): "hide", "show" or "only"."""
    if value is None or value is False:
        return "hide"
    if value is True:
        return "show"
    if value == "only":
        return "only"
    raise InvalidInput(f'{name} must be true, false or "only", got {show(value)}')


def make_cursor(created_at: float, memory_id: str) -> str:
    """An opaque paging position: a time and a random memory id, so it reveals no counts."""
    import base64

    return base64.urlsafe_b64encode(f"{created_at!r}:{memory_id}".encode()).decode().rstrip("=")


def cursor(value: object) -> tuple[float, str] | None:
    if value is None:
        return None
    import base64
    import math

    try:
        assert isinstance(value, str) and len(value) < 200
        created, _, memory_id = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode().partition(":")
        position = float(created)
        assert math.isfinite(position) and _ID.fullmatch(memory_id)
        return position, memory_id
    except Exception:
        raise InvalidInput("cursor is not one this server handed out; start without a cursor") from None


_KINDS = {
    "string": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "list": "a list",
    "dict": "an object",
    "model": "an object",  # a nested model (an item of memwal_remember_many) given something else
}
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_]{1,64}")
_MOST_PROBLEMS = 5  # a call with fifty unknown arguments gets a sentence, not fifty


def _json_value(value: object, width: int = 40) -> str:
    """A JSON caller's value in its own notation (true, null, "3"), cut short; ASCII, so a lone
    surrogate shows as its escape instead of breaking the reply's encoding."""
    import json

    if isinstance(value, str) and len(value) > width:
        value = value[:width]
    try:
        shown = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError, RecursionError):  # not JSON, or an int too long to print
        return show(value, width)
    return shown if len(shown) <= width else shown[: width - 3] + "..."


def _argument_name(loc: tuple[object, ...]) -> str:
    parts = []
    for part in loc:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        else:
            name = str(part)
            parts.append(("." if parts else "") + (name if _PLAIN_NAME.fullmatch(name) else _json_value(name)))
    return "".join(parts)


def _fields_at(schema: dict, loc: tuple[object, ...]) -> list[str] | None:
    """The field names of the object a JSON schema describes at `loc` (a pydantic error's
    location without its last part): the tool's arguments at (), an item's fields at ("items", 0)."""
    defs = schema.get("$defs", {})

    def resolved(node: object) -> dict:
        while isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                node = defs.get(ref.removeprefix("#/$defs/"))
                continue
            # An optional field: the branch that is not null.
            branches = [b for b in node.get("anyOf", ()) if isinstance(b, dict) and b.get("type") != "null"]
            if len(branches) == 1 and "properties" not in node and "items" not in node:
                node = branches[0]
                continue
            return node
        return {}

    node = resolved(schema)
    for part in loc:
        node = resolved(node.get("items") if isinstance(part, int) else node.get("properties", {}).get(part))
    fields = node.get("properties")
    return list(fields) if isinstance(fields, dict) else None


def _union_branch(error: dict) -> list[str] | None:
    """The values a union's branch takes, in JSON words (["true", "false"], ['"only"']), when the
    error is pydantic's refusal by one branch of a union (its location ends in the branch's tag:
    "bool", "literal['only']"); else None."""
    import ast

    loc, kind = tuple(error.get("loc", ())), str(error.get("type", ""))
    tag = loc[-1] if len(loc) > 1 else None
    if not isinstance(tag, str):
        return None
    if kind == "literal_error" and tag.startswith("literal[") and tag.endswith("]"):
        try:
            values = ast.literal_eval(tag.removeprefix("literal"))
        except (ValueError, SyntaxError):
            return None
        return [_json_value(value) for value in values] if isinstance(values, list) else None
    if tag == "bool" and kind.startswith("bool"):
        return ["true", "false"]
    base = tag.split("[")[0]
    word = next((word for key, word in _KINDS.items() if key.startswith(base) and kind.startswith(key)), None)
    return [word] if word is not None else None


def _without_union_branches(errors: list[dict]) -> tuple[list[dict], dict[tuple[object, ...], list[str]]]:
    """pydantic reports a value no branch of a union takes once per branch
    ("include_expired.bool ...; include_expired.\"literal['only']\" ..."): one error per union
    instead, located at the argument, and the values its branches take."""
    kept: list[dict] = []
    unions: dict[tuple[object, ...], list[str]] = {}
    for error in errors:
        values = _union_branch(error)
        if values is None:
            kept.append(error)
            continue
        at = tuple(error["loc"])[:-1]
        if at not in unions:
            unions[at] = []
            kept.append({**error, "loc": at})
        unions[at].extend(value for value in values if value not in unions[at])
    return kept, unions


def _or(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def argument_errors(errors: list[dict], schema: dict | None = None) -> str:
    """One line naming each argument that is unknown, missing or of the wrong type, from pydantic's
    error list. After an unknown argument, the tool's own arguments are listed (read from its
    input `schema`); after an unknown field of a nested object (an item), that object's fields.

    The MCP SDK checks arguments against the tool's schema before memwal sees them; its own
    message is a multi-line pydantic dump with a URL. This says the same in the words the
    rest of memwal uses ("text must be a string, got 5").
    """
    said: list[str] = []
    unknown: tuple[object, ...] | None = None  # where the first unknown name was: () for an argument
    errors, unions = _without_union_branches(errors)
    for error in errors:
        loc = tuple(error.get("loc", ()))
        if loc in unions:  # a value no branch of a union takes: one line naming them all
            got = f", got {_json_value(error['input'])}" if "input" in error else ""
            line = f"{_argument_name(loc)} must be {_or(unions[loc])}{got}"
            if line not in said:
                said.append(line)
            continue
        name = _argument_name(loc)
        kind = str(error.get("type", ""))
        if kind == "missing":
            line = f"{name} is required"
        elif kind == "extra_forbidden" and len(loc) > 1:
            parent = loc[:-1]
            whose = "an item" if isinstance(parent[-1], int) else _argument_name(parent)
            line = f"{name} is not a field of {whose}"
            unknown = parent if unknown is None else unknown
        elif kind == "extra_forbidden":
            line, unknown = f"{name} is not an argument of this tool", () if unknown is None else unknown
        elif kind == "string_unicode":  # a lone surrogate where pydantic needed real text: a key
            line = (
                f"{name} is not valid Unicode (a lone surrogate)"
                if loc
                else ("an argument name is not valid Unicode (a lone surrogate)")
            )
        else:
            expected = next((word for key, word in _KINDS.items() if kind.startswith(key)), None)
            got = f", got {_json_value(error['input'])}" if "input" in error else ""
            # Otherwise pydantic's own sentence, its first line: why, not only "is not valid".
            why = str(error.get("msg", "")).splitlines()[0:1] or ["is not valid"]
            line = f"{name or 'arguments'} must be {expected}{got}" if expected else f"{name or 'arguments'}: {why[0]}"
        if line not in said:
            said.append(line)
    if len(said) > _MOST_PROBLEMS:
        said[_MOST_PROBLEMS:] = [f"and {len(said) - _MOST_PROBLEMS} more"]
    fields = _fields_at(schema, unknown) if schema is not None and unknown is not None else None
    if fields:
        what = "arguments" if unknown == () else "fields"
        said.append(f"the {what} are {', '.join(fields)}")
    return "; ".join(said) or "the arguments do not match the tool's schema"
