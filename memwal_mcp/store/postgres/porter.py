"""The Porter stemmer exactly as SQLite's FTS5 `porter` tokenizer applies it.

PostgreSQL keeps the words words.py makes; for a memory to score the same on both backends they
must be FTS5's stems, and Snowball English (PostgreSQL's own stemmer, and what this backend used
before) differs on about 4 % of words: "use" / "us", "days" / "day", "one" / "on" ... -- enough
to reorder 12 of 100 recalls over 100k memories (benchmarks/README.md, pg_lanes).

FTS5 runs Porter's 1980 algorithm on a token's UTF-8 bytes, with these particulars, all kept
here (tests/postgres/test_porter.py checks every word of the repository's data and docs, and
generated suffix forms, against FTS5 itself):

- only tokens of 3 to 64 bytes are stemmed; others pass through;
- a, e, i, o, u are vowels; "y" is one after a consonant when measuring (m) and in the *o test,
  but anywhere past the first letter in the *v* test; every other byte (non-ASCII included) is
  a consonant;
- within each step the first suffix that matches decides: when its condition fails no shorter
  suffix is tried;
- step 2 has the revised rules "bli" -> "ble" and "logi" -> "log" (not "abli" -> "able").
"""

from __future__ import annotations

from collections.abc import Callable

MIN_BYTES = 3
MAX_BYTES = 64
_VOWELS = frozenset(b"aeiou")
_Word = bytes | bytearray
_Y = ord("y")


def _is_vowel(byte: int, y_is_vowel: bool) -> bool:
    return byte in _VOWELS or (y_is_vowel and byte == _Y)


def _after_vc(word: _Word, start: int, end: int, previous_consonant: bool) -> int:
    """Where the first vowel-consonant pair of word[start:end] ends (0: there is none)."""
    consonant = previous_consonant
    i = start
    while i < end:
        consonant = not _is_vowel(word[i], consonant)
        if not consonant:
            break
        i += 1
    i += 1
    while i < end:
        consonant = not _is_vowel(word[i], consonant)
        if consonant:
            return i + 1
        i += 1
    return 0


def _m_above_0(word: _Word, end: int) -> bool:
    return _after_vc(word, 0, end, False) != 0


def _m_above_1(word: _Word, end: int) -> bool:
    first = _after_vc(word, 0, end, False)
    return first != 0 and _after_vc(word, first, end, True) != 0


def _m_is_1(word: _Word, end: int) -> bool:
    first = _after_vc(word, 0, end, False)
    return first != 0 and _after_vc(word, first, end, True) == 0


def _cvc(word: _Word, end: int) -> bool:
    """*o: the stem ends consonant-vowel-consonant, the last not w, x or y."""
    if word[end - 1] in b"wxy":
        return False
    mask, consonant = 0, False
    for i in range(end):
        consonant = not _is_vowel(word[i], consonant)
        mask = (mask << 1) | consonant
    return mask & 0b111 == 0b101


def _has_vowel(word: _Word, end: int) -> bool:
    """*v*: a vowel anywhere in the stem ("y" counts past the first letter)."""
    return any(_is_vowel(word[i], i > 0) for i in range(end))


def _m_above_1_s_or_t(word: _Word, end: int) -> bool:
    return word[end - 1] in b"st" and _m_above_1(word, end)


# Each step: suffix -> (replacement, condition on the stem), tried longest first among the
# suffixes sharing the word's second-to-last byte, which is how FTS5 groups them.
_Condition = Callable[[_Word, int], bool]
_Rules = dict[int, list[tuple[bytes, bytes, _Condition]]]


def _rules(entries: list[tuple[str, str, _Condition]]) -> _Rules:
    grouped: _Rules = {}
    for suffix, replacement, condition in entries:
        grouped.setdefault(suffix.encode()[-2], []).append((suffix.encode(), replacement.encode(), condition))
    return grouped


_STEP2 = _rules(
    [
        ("ational", "ate", _m_above_0),
        ("tional", "tion", _m_above_0),
        ("enci", "ence", _m_above_0),
        ("anci", "ance", _m_above_0),
        ("izer", "ize", _m_above_0),
        ("logi", "log", _m_above_0),
        ("bli", "ble", _m_above_0),
        ("alli", "al", _m_above_0),
        ("entli", "ent", _m_above_0),
        ("eli", "e", _m_above_0),
        ("ousli", "ous", _m_above_0),
        ("ization", "ize", _m_above_0),
        ("ation", "ate", _m_above_0),
        ("ator", "ate", _m_above_0),
        ("alism", "al", _m_above_0),
        ("iveness", "ive", _m_above_0),
        ("fulness", "ful", _m_above_0),
        ("ousness", "ous", _m_above_0),
        ("aliti", "al", _m_above_0),
        ("iviti", "ive", _m_above_0),
        ("biliti", "ble", _m_above_0),
    ]
)
_STEP3 = _rules(
    [
        ("icate", "ic", _m_above_0),
        ("ative", "", _m_above_0),
        ("alize", "al", _m_above_0),
        ("iciti", "ic", _m_above_0),
        ("ical", "ic", _m_above_0),
        ("ful", "", _m_above_0),
        ("ness", "", _m_above_0),
    ]
)
_STEP4 = _rules(
    [
        ("al", "", _m_above_1),
        ("ance", "", _m_above_1),
        ("ence", "", _m_above_1),
        ("er", "", _m_above_1),
        ("ic", "", _m_above_1),
        ("able", "", _m_above_1),
        ("ible", "", _m_above_1),
        ("ant", "", _m_above_1),
        ("ement", "", _m_above_1),
        ("ment", "", _m_above_1),
        ("ent", "", _m_above_1),
        ("ion", "", _m_above_1_s_or_t),
        ("ou", "", _m_above_1),
        ("ism", "", _m_above_1),
        ("ate", "", _m_above_1),
        ("iti", "", _m_above_1),
        ("ous", "", _m_above_1),
        ("ive", "", _m_above_1),
        ("ize", "", _m_above_1),
    ]
)
for _group in (*_STEP2.values(), *_STEP3.values(), *_STEP4.values()):
    _group.sort(key=lambda rule: -len(rule[0]))


def _apply(word: bytearray, rules: _Rules) -> None:
    """The step's rule for the word's ending, if any: the first suffix that matches decides."""
    if len(word) < 2:
        return
    for suffix, replacement, condition in rules.get(word[-2], ()):
        if len(word) > len(suffix) and word.endswith(suffix):
            stem = len(word) - len(suffix)
            if condition(word, stem):
                word[stem:] = replacement
            return


def _step1b(word: bytearray) -> bool:
    """-eed, -ed, -ing; True when -ed or -ing was removed (step 1b's second part follows)."""
    if len(word) > 3 and word.endswith(b"eed"):
        if _m_above_0(word, len(word) - 3):
            del word[-1]
        return False
    for suffix in (b"ed", b"ing"):
        if len(word) > len(suffix) and word.endswith(suffix):
            if _has_vowel(word, len(word) - len(suffix)):
                del word[-len(suffix) :]
                return True
            return False
    return False


def _step1b_more(word: bytearray) -> None:
    for ending, longer in ((b"at", b"ate"), (b"bl", b"ble"), (b"iz", b"ize")):
        if len(word) > 2 and word.endswith(ending):
            word[-2:] = longer
            return
    last = word[-1]
    previous = word[-2] if len(word) > 1 else None
    if not _is_vowel(last, False) and last not in b"lsz" and last == previous:
        del word[-1]
    elif _m_is_1(word, len(word)) and _cvc(word, len(word)):
        word.append(ord("e"))


def stem(token: str) -> str:
    """FTS5's porter stem of one folded token (lower case, diacritics removed)."""
    raw = token.encode("utf-8")
    if not MIN_BYTES <= len(raw) <= MAX_BYTES:
        return token
    word = bytearray(raw)
    # Step 1a.
    if word.endswith(b"s"):
        if word.endswith(b"es"):
            if (len(word) > 4 and word.endswith(b"sses")) or (len(word) > 3 and word.endswith(b"ies")):
                del word[-2:]
            else:
                del word[-1]
        elif not word.endswith(b"ss"):
            del word[-1]
    # Step 1b.
    if _step1b(word):
        _step1b_more(word)
    # Step 1c.
    if word[-1] == _Y and _has_vowel(word, len(word) - 1):
        word[-1] = ord("i")
    _apply(word, _STEP2)
    _apply(word, _STEP3)
    _apply(word, _STEP4)
    # Step 5a.
    if word[-1] == ord("e"):
        end = len(word) - 1
        if _m_above_1(word, end) or (_m_is_1(word, end) and not _cvc(word, end)):
            del word[-1]
    # Step 5b.
    if len(word) > 1 and word.endswith(b"ll") and _m_above_1(word, len(word) - 1):
        del word[-1]
    return word.decode("utf-8")
