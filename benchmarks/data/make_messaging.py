"""Build benchmarks/data/messaging.jsonl: eight chats in the style of people texting.

    python benchmarks/data/make_messaging.py            # rewrites messaging.jsonl next to this file
    python benchmarks/data/make_messaging.py --check    # exits 1 if messaging.jsonl is out of date

Real messaging logs are not an assistant's tidy turns: most messages are small talk ("lol",
"u up?", "ugh monday"), one person sends three in a row, facts come in pieces over several
messages, typos and abbreviations hide the words a search looks for, photos are mentioned
("[photo] the new couch"), later messages point back without naming the thing ("that place
from tuesday"), and plans change (the move was the 15th, then the 16th). This file makes
eight such chats, two or three people each, over three weeks each, one owner per chat.

What is hand-written: each chat's script (the scenes that carry facts, with labels) and its
questions. What is generated, from one seeded `random.Random` per chat (so the output is the
same on every run and Python version): the small talk between and inside the scenes (from
the pools below, in each person's style: lower case, laughs, emoji, abbreviations, typos)
and every message's time. Small talk never states a fact a question asks about.

Script format (one chat is one string):

    @ 3 20:15 Thu          a scene on day 3 (0 = the chat's first day) at 20:15; the weekday is checked
    M: got the job!! {job}  a message by speaker M, labelled `job` for the questions
    ~3                      three generated reactions here (in the scene's flow; ~3- after bad news)
    ? temporal | When did Maya get the job? | job     a question: category | text | labels

Categories: single-hop (one message, or a question-and-answer pair of messages, answers it);
multi-hop (two or three messages from different days together answer it); temporal (when
did X happen / what happened the day before Y: the messages that state the event);
adversarial (asks about something never said, e.g. the other person's pet or a thing that
did not happen; the evidence is the message nearest to it, which an honest answer needs to
say "that was not said"); paraphrase (shares no content word, after stemming, with its
evidence -- checked when the file is built).

Memory ids: `<chat>-<n>`, numbered in time order; owner = the chat's name.
"""

from __future__ import annotations

import json
import random
import re
import sys
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

OUT = Path(__file__).with_name("messaging.jsonl")
CATEGORIES = ("single-hop", "multi-hop", "temporal", "adversarial", "paraphrase")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
WEEKDAY_NAMES = dict(zip(WEEKDAYS, ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")))


@dataclass(frozen=True)
class Person:
    name: str
    lower: float = 0.7  # share of generated messages written all in lower case
    laughs: tuple[str, ...] = ("lol", "haha")
    emoji: tuple[str, ...] = ("😂",)
    emoji_rate: float = 0.15
    abbrev: float = 0.5  # share of "you" -> "u" style substitutions made
    typo: float = 0.02  # chance per word of four or more letters
    talk: float = 1.0  # relative share of the generated messages
    reactions: tuple[str, ...] | None = None  # this person's `~N` reactions, if not REACTIONS


@dataclass(frozen=True)
class Chat:
    key: str
    owner: str
    start: str  # ISO date of day 0
    people: dict[str, Person]  # speaker letter -> person
    turns: int  # total messages wanted (the script plus generated small talk)
    script: str
    # Small talk of its own, if not EXCHANGES; a line may name its speaker by letter
    # instead of a role.
    exchanges: tuple[tuple[str, ...], ...] | None = None


# --------------------------------------------------------------------------------------
# Small talk
# --------------------------------------------------------------------------------------
# Exchanges between roles A, B (and C: a third person in a group chat, else A again).
# <a|b|c> picks one; {lol} is the speaker's laugh, {e} the speaker's emoji (or nothing),
# {weekday} the day's name. A first item "#morning", "#night" or "#Fri" keeps an exchange
# to bursts before 11:00, after 21:00, or on that weekday.
# None of them states a fact a question asks about: no names, places, prices or dates.

EXCHANGES: tuple[tuple[str, ...], ...] = (
    ("#morning", "A: <morning|good morning|mornin|gm> {e}", "B: <morning|heyy|gm|morning!!>"),
    ("#night", "A: you up?", "B: <ya|yeah|barely>", "B: can't sleep <{lol}|again|ugh>"),
    ("A: how's your day going", "B: <slow|long|honestly fine|meh>. you?", "A: <same|about the same|can't complain>"),
    ("A: <ugh|uggh> i'm so tired today", "B: <same|mood|felt that>", "B: did you sleep at all"),
    ("A: what are you up to", "B: <nothing much|just got home|laying on the couch|cleaning a little>"),
    ("A: wyd", "B: <nm|nothing|watching youtube|just ate>", "B: <you?|hbu>"),
    ("A: {lol}",),
    ("A: <omg|OMG>", "B: <what|??|what happened>", "A: <nvm {lol}|never mind|tell you later>"),
    ("A: traffic was <insane|awful|so bad> today", "B: <ugh|noo|of course it was>"),
    ("A: it's <pouring|so windy|freezing|actually nice> out", "B: <ya|saw that|ugh|finally>"),
    (
        "A: [photo] <this meme|look at this dog i saw|view from my window rn|this sign {lol}>",
        "B: <LMAO|omg|stoppp|{lol}>",
    ),
    ("A: did you see what i sent", "B: <not yet|ya {lol}|oh wait one sec>"),
    ("A: brb", "A: <back|ok back|sorry back>"),
    ("A: call you later?", "B: <ya|sure|maybe, busy tonight>"),
    ("A: work is <dragging|so slow today|chaos right now>", "B: <same|hang in there|almost done>"),
    ("#night", "A: <goodnight|night|gn> {e}", "B: <night!|gn|sleep well>"),
    ("A: i need a nap", "B: <same|take one|{lol} do it>"),
    ("A: my phone is at <5|3|8>% <{lol}|help>", "B: <classic|charge it|{lol}>"),
    ("A: sorry was <in a meeting|driving|in the shower>", "B: <np|all good|no worries>"),
    ("A: <true|fair|facts|{lol} true>",),
    ("A: wait what", "B: <nvm|{lol} nothing|ignore me>"),
    ("A: i'm starving", "B: <eat something|same|go get food>"),
    ("A: ordering takeout again <{lol}|oops|no shame>", "B: <valid|honestly same>"),
    ("A: can't believe it's <already|only> {weekday}", "B: <ikr|where did the week go|this week is so long>"),
    ("A: i forgot what i was going to say", "B: <{lol}|classic>", "A: it'll come back to me"),
    ("A: did you ever watch that video i sent", "B: <omg yes|not yet sorry|{lol} yes it was so dumb>"),
    ("#night", "A: i'm going to bed early tonight for real", "B: <sure you are {lol}|{lol} ok|good for you>"),
    ("A: so many emails today <ugh|😩>", "B: <delete them all {lol}|just ignore them>"),
    ("A: it's so quiet <at home|here> today", "B: <enjoy it|suspicious {lol}>"),
    ("A: <hahaha|lmaooo|😂😂|{lol}>",),
    ("A: ok",),
    ("A: k",),
    ("A: sounds good", "B: <👍|cool|ok>"),
    ("A: did you get home ok", "B: <yep|ya thanks|yes!>"),
    ("A: i just spilled <coffee|water> all over myself", "B: <noo|lmao|of course>"),
    ("A: <the|my> neighbor's dog will not stop barking", "B: <omg|ugh|{lol} poor you>"),
    ("A: need a vacation <so bad|asap>", "B: <same|please|let's run away {lol}>"),
    ("A: i just woke up from a <2|3> hour nap", "B: <lmao|iconic|goals>"),
    ("A: ugh i have a headache", "B: <drink water|noo|take something>"),
    ("A: this song has been stuck in my head all day", "B: which one", "A: <idk the name {lol}|the one from that ad>"),
    ("A: ok i'm <back|here>", "B: <yay|hi>"),
    ("A: {lol} what",),
    ("A: i swear this week has been 10 years long", "B: <truly|felt|right??>"),
    ("A: how's everything", "B: <good good|alright|surviving {lol}>"),
    ("A: the store was <a zoo|packed|weirdly empty>", "B: <ugh|{lol}|nice>"),
    ("A: i'm so bored", "B: <same|go outside {lol}|call me>"),
    ("A: you alive?", "B: <barely|yes {lol}|sorry been busy>"),
    ("A: <heyyy|hiii|hey>", "B: <hey!|hiii|yo>"),
    ("A: what's new", "B: <not much honestly|same old|nothing exciting>"),
    ("A: i can't focus at all today", "B: <same|it's the weather|take a walk>"),
    ("A: ok i'm actually going to be productive now", "A: <after this episode|after a snack> {lol}"),
    ("A: that's <hilarious|so funny|wild>", "B: {lol} right"),
    ("#Mon", "A: <ugh|ugh i hate> mondays", "B: <same|it's almost over|it's only 10am {lol}>"),
    ("#Fri", "A: happy friday {e}", "B: <finallyyy|yesss|happy friday!>"),
    ("A: <sorry|sry> fell asleep", "B: <{lol} np|figured|all good>"),
    ("A: <yes|yep|yup>",),
    ("A: <no|nope|nah>",),
    ("A: maybe",),
    ("A: lmk", "B: <will do|ok|👍>"),
    ("A: <same|mood|relatable>",),
    ("A: i'm dead {lol}", "B: {lol}"),
    ("A: <hold on|one sec|wait>", "A: <ok|ok sorry|back>"),
    ("A: have you eaten", "B: <not yet|yeah|kind of>"),
    ("A: the wifi is being so slow", "B: <ugh|unplug it {lol}|mine too>"),
    ("A: <stop|stoppp> {lol}",),
    ("#morning", "A: how did you sleep", "B: <terrible|like a rock|ok i guess>"),
    ("A: i keep forgetting to text you back sorry", "B: <{lol} same|no worries|you're fine>"),
    ("A: [photo] <my coffee this morning|the sky rn|my messy desk>", "B: <cute|pretty|{lol}>"),
    ("A: my back hurts from sitting all day", "B: <stretch|same|get up and walk {lol}>"),
    ("A: remind me to <call you|text you> later", "B: <ok|will do|{lol} i'll forget too>"),
    ("A: <good|nice|cool|great>",),
    ("A: that makes sense", "B: ya"),
    ("A: i love that for you", "B: {lol} thank you"),
    ("A: ok that's enough internet for today", "B: {lol} same"),
    ("A: it's been such a long day", "B: <sending hugs|noo|go relax>", "A: thank you {e}"),
    ("A: what's the plan for tonight", "B: <nothing, couch|sleep {lol}|probably nothing>"),
    ("A: <haha|{lol}> i was just thinking about you", "B: <aw|{lol} good things i hope>"),
    ("A: did you <hear|feel> that thunder", "B: <yes!!|no {lol}|it was so loud>"),
    ("#morning", "A: i need coffee <asap|so bad|immediately>", "B: <same|go get some|third cup for me {lol}>"),
    ("A: <hmm|hmmm>", "B: what", "A: nothing {lol}"),
    ("A: sorry that was a lot of texts {lol}", "B: <no keep going|i love it|{lol} all good>"),
    ("A: <cute|so cute>",),
    ("A: i'm so behind on everything", "B: <same honestly|one thing at a time|you got this>"),
    ("A: going to shower brb", "A: <back|ok>"),
    ("A: ok but why is it <so cold|so hot> in here", "B: {lol}"),
    ("A: honestly <same|fair|valid>",),
    ("A: did you see the news today", "B: <no i'm avoiding it|ugh yes|a little>"),
    ("A: anyway", "A: how are you"),
    ("A: i'm literally <so|so so> sleepy", "B: <go to bed|nap time|same>"),
    ("A: that's annoying", "B: <so annoying|ya>"),
    ("A: <aww|awww>",),
    ("A: okok", "A: <got it|makes sense>"),
    ("A: oh no", "B: <it's fine {lol}|ya|it's ok>"),
    ("A: <idk|idk honestly>", "B: <same|fair>"),
    ("A: who's around this weekend", "B: <me|maybe>", "C: <busy saturday|free sunday|depends>"),
    ("A: {lol} this thread", "B: {lol}", "C: {lol}"),
    ("A: did anyone else get that email", "B: <what email|ya>", "C: <ignoring it|no?>"),
    ("A: <sorry|sry> just catching up on all these texts", "B: {lol} it's a lot", "C: <scroll up|don't scroll up>"),
    ("#night", "A: ok who's awake", "B: <me unfortunately|barely>", "C: <no|{lol} no>"),
    # Longer ones: people ramble about nothing in particular too.
    (
        "A: honestly today was so weird. i went to get coffee and the line was out the door so i gave up and went home and now i have a headache {lol}",
        "B: <the universe said no coffee|noo|that's a sign to nap>",
    ),
    (
        "A: i've been trying to clean my room for like three days and somehow it's messier than when i started",
        "B: {lol} that's how it works",
        "B: it gets worse before it gets better",
    ),
    (
        "A: ok random but do you ever just stand in the kitchen and forget why you walked in",
        "B: <every day|constantly|{lol} yes>",
    ),
    (
        "#night",
        "A: i started a show last night and now it's 2am and i've watched six episodes and i regret nothing",
        "B: <which show|{lol} classic>",
        "A: <i'll tell you when i finish it|it's too embarrassing to say>",
    ),
    (
        "A: i just spent twenty minutes looking for my keys and they were in my hand the entire time",
        "B: <LMAO|{lol} stop|iconic>",
    ),
    (
        "A: the people upstairs were moving furniture at midnight again, i swear they rearrange everything every week",
        "B: <why are they like this|ugh|knock on their door {lol}>",
    ),
    (
        "A: i tried to be healthy today and had a salad for lunch and then ate half a bag of chips at 4",
        "B: <balance|{lol} honestly that's healthy|same>",
    ),
    (
        "A: i keep getting those spam calls about my car's extended warranty, i don't even have that car anymore",
        "B: <{lol} they never stop|block them>",
    ),
    (
        "A: i need to do laundry so bad but i also need to lie on the floor and think about my life choices",
        "B: <floor first|{lol} relatable>",
    ),
    (
        "A: my mom just sent me a 4 minute voice message and i'm scared to listen to it",
        "B: {lol} it's probably about the weather",
        "A: it's always about the weather",
    ),
    (
        "A: went for a walk to clear my head and it started raining halfway so now i'm wet and my head is still not clear",
        "B: <noo|{lol} at least you tried>",
    ),
    (
        "#night",
        "A: i fell asleep on the couch at 8 and woke up at 1 and now i'm wide awake, send help",
        "B: <{lol} rip your sleep schedule|melatonin|same thing happened to me>",
    ),
    (
        "A: ok i'm finally going to reply to all my emails, wish me luck, there are like 200 of them",
        "B: <good luck|godspeed|{lol} just archive them all>",
    ),
    (
        "A: the guy at the store asked how my day was and i said 'you too' and i've been thinking about it for an hour",
        "B: <LMAO|{lol} we've all done it|iconic>",
    ),
    (
        "A: i had the most unhinged dream last night, i was late for a test in a school i've never been to",
        "B: <the classic|{lol} stress dream|that's the worst>",
    ),
    (
        "A: why does every app need an update every single day, my phone is just updates at this point",
        "B: <so true|{lol}|turn off auto update>",
    ),
    (
        "A: i made a to do list this morning and the only thing i've done is write the list",
        "B: <that counts|{lol} progress>",
    ),
    (
        "A: i've had the same song on repeat for like two hours and i don't even like it that much",
        "B: <{lol} why|that's how you know it's good>",
    ),
    (
        "A: it's so <hot in here i'm sitting in front of the fridge with the door open|cold in here i'm wearing two sweaters and a hat>",
        "B: <{lol} genius|{lol} same>",
    ),
    (
        "A: my plant is dying and i don't know what i did, i water it, i talk to it, nothing",
        "B: <too much water maybe|{lol} it knows|rip>",
    ),
    (
        "A: i accidentally liked a photo from three years ago while scrolling and now i want to move to another country",
        "B: <LMAO|{lol} unlike it fast|they saw it>",
    ),
    ("A: this week has been so long, i feel like monday was a month ago", "B: <truly|same honestly|{lol} yes>"),
    (
        "A: trying to cook something new tonight, wish me luck, the smoke alarm already went off once",
        "B: <{lol} already??|open a window>",
    ),
    (
        "A: just got back from the longest line at the post office, i think i aged five years",
        "B: <{lol} the post office is a time machine|ugh>",
    ),
    (
        "A: i think i'm getting a cold, my throat feels weird and i've been sneezing all morning",
        "B: <tea and honey|noo rest|take it easy>",
    ),
)

# Reactions dropped inside a scene (`~N`, or `~N-` after bad news): they answer what came before.
REACTIONS: tuple[str, ...] = (
    "{lol}",
    "omg",
    "wait",
    "no way",
    "nice",
    "yesss",
    "ok",
    "{lol}",
    "😂",
    "true",
    "fr",
    "ikr",
    "wow",
    "yay",
    "aw",
    "same",
    "ok ok",
    "omg yes",
    "wait really?",
    "{lol} what",
    "stop",
    "for real?",
    "nice nice",
    "ha",
    "{lol} ok",
    "hmm",
    "oh",
    "love that",
    "wild",
    "ok good",
    "{e}",
    "💀",
)
BAD_NEWS_REACTIONS: tuple[str, ...] = (
    "nooo",
    "ugh",
    "oh no",
    "oof",
    "damn",
    "😭",
    "that sucks",
    "noooo",
    "ugh sorry",
    "wait what",
    "omg",
    "🙁",
    "rip",
)

ABBREVIATIONS: tuple[tuple[str, str], ...] = (
    (r"\byou\b", "u"),
    (r"\byour\b", "ur"),
    (r"\btomorrow\b", "tmrw"),
    (r"\bright now\b", "rn"),
    (r"\bi don't know\b", "idk"),
    (r"\bbecause\b", "bc"),
    (r"\bokay\b", "ok"),
    (r"\bthanks\b", "thx"),
    (r"\bplease\b", "pls"),
    (r"\bprobably\b", "prob"),
    (r"\bgoing to\b", "gonna"),
    (r"\bwant to\b", "wanna"),
    (r"\btonight\b", "tn"),
    (r"\bwhat are you doing\b", "wyd"),
)
_ALTERNATIVES = re.compile(r"<([^<>]*)>")
_KEYS_NEAR = {
    "a": "s",
    "e": "r",
    "i": "o",
    "o": "p",
    "n": "m",
    "s": "d",
    "t": "y",
    "r": "t",
    "l": "k",
    "h": "j",
    "u": "y",
    "m": "n",
}


def _typo(word: str, rng: random.Random) -> str:
    kind = rng.randrange(4)
    at = rng.randrange(1, len(word) - 1)
    if kind == 0:  # two letters swapped
        return word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    if kind == 1:  # a letter dropped
        return word[:at] + word[at + 1 :]
    if kind == 2:  # a letter doubled
        return word[:at] + word[at] + word[at:]
    near = _KEYS_NEAR.get(word[at])
    return word[:at] + near + word[at + 1 :] if near else word[:at] + word[at + 1] + word[at] + word[at + 2 :]


def styled(text: str, person: Person, rng: random.Random) -> str:
    """A generated line as `person` would type it."""
    text = _ALTERNATIVES.sub(lambda m: rng.choice(m.group(1).split("|")), text)
    text = text.replace("{lol}", rng.choice(person.laughs))
    emoji = rng.choice(person.emoji) if person.emoji and rng.random() < 0.6 else ""
    text = text.replace("{e}", emoji).strip() or rng.choice(person.laughs)
    for pattern, short in ABBREVIATIONS:
        if rng.random() < person.abbrev:
            text = re.sub(pattern, short, text)
    if rng.random() < person.lower:
        text = text.lower()
    elif text[:1].isalpha():
        text = text[0].upper() + text[1:]
    if rng.random() < person.lower * 0.6:
        text = text.replace("'", "")
    words = text.split(" ")
    for index, word in enumerate(words):
        if len(word) >= 4 and word.isalpha() and rng.random() < person.typo:
            words[index] = _typo(word, rng)
    text = " ".join(words)
    if person.emoji and "{" not in text and rng.random() < person.emoji_rate and not text.endswith(person.emoji):
        text = f"{text} {rng.choice(person.emoji)}"
    return text


# --------------------------------------------------------------------------------------
# Building one chat
# --------------------------------------------------------------------------------------


@dataclass
class Line:
    speaker: str
    text: str
    label: str | None = None
    scripted: bool = True


@dataclass
class Scene:
    day: int
    minute: int  # minutes after midnight
    lines: list[Line]


_SCENE = re.compile(r"^@\s*(\d+)\s+(\d\d):(\d\d)\s+(\w{3})$")
_TURN = re.compile(r"^([A-Z]):\s*(.+?)(?:\s+\{([\w-]+)\})?$")
_FILL = re.compile(r"^~(\d+)(-?)$")


def parse(chat: Chat, rng: random.Random) -> tuple[list[Scene], list[tuple[str, str, list[str]]]]:
    if set(chat.people) & {"A", "B", "C"}:
        raise ValueError(f"{chat.key}: A, B and C are the small talk's roles, not speakers")
    first = date.fromisoformat(chat.start)
    scenes: list[Scene] = []
    questions: list[tuple[str, str, list[str]]] = []
    for number, raw in enumerate(chat.script.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{chat.key} script line {number}"
        if line.startswith("?"):
            parts = [part.strip() for part in line[1:].split("|")]
            if len(parts) != 3 or parts[0] not in CATEGORIES:
                raise ValueError(f"{where}: a question is '? category | text | labels': {line!r}")
            questions.append((parts[0], parts[1], [label.strip() for label in parts[2].split(",")]))
            continue
        scene = _SCENE.match(line)
        if scene:
            day, hour, minute, weekday = int(scene[1]), int(scene[2]), int(scene[3]), scene[4]
            actual = WEEKDAYS[(first + timedelta(days=day)).weekday()]
            if weekday != actual:
                raise ValueError(f"{where}: day {day} is a {actual}, not a {weekday}")
            if scenes and (day, hour * 60 + minute) <= (scenes[-1].day, scenes[-1].minute):
                raise ValueError(f"{where}: scenes must come in time order")
            scenes.append(Scene(day, hour * 60 + minute, []))
            continue
        if not scenes:
            raise ValueError(f"{where}: a message before the first scene")
        fill = _FILL.match(line)
        if fill:
            speakers = list(chat.people)
            for _ in range(int(fill[1])):
                speaker = rng.choice(speakers)
                reactions = chat.people[speaker].reactions or (BAD_NEWS_REACTIONS if fill[2] else REACTIONS)
                scenes[-1].lines.append(Line(speaker, rng.choice(reactions), scripted=False))
            continue
        turn = _TURN.match(line)
        if not turn or turn[1] not in chat.people:
            raise ValueError(f"{where}: not a message of a known speaker: {line!r}")
        scenes[-1].lines.append(Line(turn[1], turn[2], turn[3]))
    return scenes, questions


def pick_exchange(chat: Chat, rng: random.Random, day: str, minute: int, recent: list[int]) -> list[Line]:
    """One exchange of small talk that suits the hour and the weekday, and none of the last few
    picked (people repeat themselves, but not every ten minutes)."""
    pool = chat.exchanges or EXCHANGES
    while True:
        index = rng.randrange(len(pool))
        exchange = pool[index]
        tags = exchange[0][1:].split() if exchange[0].startswith("#") else []
        fits = all(
            (tag == "morning" and minute < 11 * 60) or (tag == "night" and minute >= 21 * 60) or tag == day
            for tag in tags
        )
        if fits and index not in recent:
            break
    recent.append(index)
    del recent[: -min(40, len(pool) // 3)]
    letters = list(chat.people)
    a = rng.choices(letters, [chat.people[letter].talk for letter in letters])[0]
    others = [letter for letter in letters if letter != a]
    b = rng.choice(others)
    c = next((letter for letter in others if letter != b), a)
    roles = {"A": a, "B": b, "C": c} | {letter: letter for letter in letters}
    lines = []
    for item in exchange[1:] if exchange[0].startswith("#") else exchange:
        role, text = item.split(": ", 1)
        lines.append(Line(roles[role], text.replace("{weekday}", WEEKDAY_NAMES[day]), scripted=False))
    return lines


def build_chat(chat: Chat) -> tuple[list[dict], list[dict]]:
    rng = random.Random(f"messaging/{chat.key}")
    scenes, questions = parse(chat, rng)
    scripted = sum(len(scene.lines) for scene in scenes)
    left = chat.turns - scripted
    if left < scripted:
        raise ValueError(f"{chat.key}: small talk ({left}) should outnumber the script ({scripted})")
    days = max(scene.day for scene in scenes) + 1
    first_day = date.fromisoformat(chat.start)

    # Small talk in bursts of a few exchanges (3-12 messages or so), spread over every day;
    # some on their own, some just before or after a scene (people chat around the news).
    chatter: list[Scene] = []
    recent: list[int] = []
    while left > 0:
        host = rng.choice(scenes) if rng.random() < 0.25 else None
        day = host.day if host else rng.randrange(days)
        minute = host.minute if host else rng.randint(7 * 60 + 30, 22 * 60 + 40)
        weekday = WEEKDAYS[(first_day + timedelta(days=day)).weekday()]
        size = rng.randint(3, 12)
        burst: list[list[Line]] = []
        while sum(len(exchange) for exchange in burst) < size:
            burst.append(pick_exchange(chat, rng, weekday, minute, recent))
        lines = [line for exchange in burst for line in exchange][:left]
        left -= len(lines)
        if host:
            cut = sum(len(exchange) for exchange in burst[: rng.randint(0, len(burst))])
            host.lines[:0] = lines[:cut]
            host.lines.extend(lines[cut:])
        else:
            chatter.append(Scene(day, minute, lines))
    everything = sorted(scenes + chatter, key=lambda s: (s.day, s.minute))

    first = datetime.fromisoformat(chat.start).replace(tzinfo=timezone.utc)
    memories: list[dict] = []
    by_label: dict[str, dict] = {}
    clock = first
    for scene in everything:
        clock = max(clock + timedelta(seconds=30), first + timedelta(days=scene.day, minutes=scene.minute))
        for line in scene.lines:
            person = chat.people[line.speaker]
            text = line.text if line.scripted else styled(line.text, person, rng)
            clock += timedelta(seconds=rng.randint(8, 40) + len(text) * rng.randint(1, 3))
            if clock.date() != (first + timedelta(days=scene.day)).date():
                raise ValueError(f"{chat.key}: day {scene.day}'s scene at {scene.minute // 60}h runs past midnight")
            memory = {
                "type": "memory",
                "id": f"{chat.key}-{len(memories) + 1:04d}",
                "owner": chat.owner,
                "text": f"{person.name}: {text}",
                "occurred_at": clock.strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
            memories.append(memory)
            if line.label:
                if line.label in by_label:
                    raise ValueError(f"{chat.key}: label {line.label!r} used twice")
                by_label[line.label] = memory
    if not 600 <= len(memories) <= 900:
        raise ValueError(f"{chat.key}: {len(memories)} messages; a chat has 600-900")

    queries: list[dict] = []
    for number, (category, text, labels) in enumerate(questions, start=1):
        missing = [label for label in labels if label not in by_label]
        if missing:
            raise ValueError(f"{chat.key}: question {text!r} cites unknown labels {missing}")
        evidence = [by_label[label] for label in labels]
        check_question(chat, category, text, evidence)
        queries.append(
            {
                "type": "query",
                "id": f"{chat.key}-q{number:02d}",
                "owner": chat.owner,
                "query": text,
                "evidence": [memory["id"] for memory in evidence],
                "category": category,
            }
        )
    if not 60 <= len(queries) <= 80:
        raise ValueError(f"{chat.key}: {len(queries)} questions; a chat has 60-80")
    return memories, queries


def check_question(chat: Chat, category: str, text: str, evidence: list[dict]) -> None:
    where = f"{chat.key}: {category} question {text!r}"
    days = {memory["occurred_at"][:10] for memory in evidence}
    if category == "multi-hop" and not (2 <= len(evidence) <= 3 and len(days) >= 2):
        raise ValueError(f"{where}: multi-hop takes 2-3 messages from different days")
    if category == "paraphrase":
        shared = set(content_stems(text)) & {s for memory in evidence for s in content_stems(memory["text"])}
        if shared:
            raise ValueError(f"{where}: shares {sorted(shared)} with its evidence")


def content_stems(text: str) -> list[str]:
    """The stems of a text's content words as the word search sees them: recall's stop-words
    dropped, the rest stemmed (numbers kept as they are)."""
    from py_rust_stemmers import SnowballStemmer

    from memwal_mcp.recall.lexical import STOPWORDS

    stemmer = SnowballStemmer("english")
    words = re.findall(r"\w+", text.casefold().replace("'", "").replace("’", ""))
    return [stemmer.stem_word(word) for word in words if word not in STOPWORDS]


# --------------------------------------------------------------------------------------
# The chats
# --------------------------------------------------------------------------------------


def build() -> list[dict]:
    memories: list[dict] = []
    queries: list[dict] = []
    for chat in CHATS:
        chat_memories, chat_queries = build_chat(chat)
        memories += chat_memories
        queries += chat_queries
    return memories + queries


def render() -> str:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in build())


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT} is out of date; run python {Path(__file__).as_posix()}", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    lines = [json.loads(line) for line in text.splitlines()]
    memories = [line for line in lines if line["type"] == "memory"]
    queries = [line for line in lines if line["type"] == "query"]
    per_category: dict[str, int] = {}
    for query in queries:
        per_category[query["category"]] = per_category.get(query["category"], 0) + 1
    print(
        f"wrote {OUT}: {len(memories)} messages, {len({m['owner'] for m in memories})} chats, "
        f"{len(queries)} questions {per_category}, {len(text.encode()) / 1e6:.2f} MB",
        file=sys.stderr,
    )
    return 0


# --------------------------------------------------------------------------------------
# The chats
# --------------------------------------------------------------------------------------

MAYA_JO = Chat(
    key="mj",
    owner="maya-jo",
    start="2025-03-03",
    people={
        "M": Person("Maya", lower=0.8, laughs=("lol", "lmao", "lol"), emoji=("😭", "🙃", "✨"), typo=0.03),
        "J": Person("Jo", lower=0.9, laughs=("lol", "lmaooo", "haha"), emoji=("💀", "😂"), abbrev=0.7, typo=0.02),
    },
    turns=760,
    script="""
@ 0 08:40 Mon
M: JO
M: i got it!!!!
J: got what
M: the apartment!! the landlord just called {apt}
M: the one on alder st with the big windows {aptstreet}
J: AHHH MAYA
J: the 2 bedroom??
M: yesss 2br, $1850 a month which is insane but whatever {rent}
~2
J: when do u get the keys
M: he said the 15th, so moving that saturday {movedate1}
J: i'll help. i have a car now remember lol

@ 1 19:05 Tue
J: that ramen place was so good omg
M: koi ramen on 5th is my new religion {ramen}
M: the spicy miso 🔥🔥 {miso}
J: i'm still full
~2
J: the guy gave us free gyoza bc it was his bday lol {gyoza}

@ 2 12:30 Wed
M: ok tmrw is the interview
M: st. vincent's, peds unit. 10am {interview}
J: u got this
J: what are u wearing
M: the navy blazer that makes me look like a lawyer lol {blazer}
~1

@ 2 21:10 Wed
J: [photo] meet gerald {gerald}
M: ??? is that a jar of paste
J: it's my sourdough starter. his name is gerald. he lives on the fridge now {starter}
M: lmao ok

@ 3 13:15 Thu
M: interview done
M: it went ok?? the panel was 3 ppl and one of them just stared at me the whole time {panel}
J: stared like good or stared like bad
M: like she was doing math in her head lol
M: they said they'd call by next week
~2

@ 3 21:40 Thu
M: ok also. lake trip. are we doing it or not
J: YES. the cabin at lake wren, weekend of the 22nd {laketrip}
J: priya and sam are in
M: i'll put down the deposit, its $120 each {deposit}

@ 4 17:45 Fri
J: gig tonight!! owl room, we go on at 9 {gig}
M: i'll be there after work
M: is static bloom still the name or did u change it again {band}
J: still static bloom lol sam vetoed "wet cardboard"

@ 5 11:20 Sat
J: last night was so fun
J: we did 6 songs and i broke a string on the 4th one lmao {string}
M: i didnt even notice honestly
M: the crowd was like 40 ppl?? that's huge for the owl room {crowd}
J: the bartender wants us back in april {april}
~2

@ 5 16:40 Sat
M: ok mom's 60th is wednesday and i still have nothing {momb}
J: what does she like
M: she keeps saying she wants to try pottery
J: get her a class!! the studio on hawthorne does gift cards {pottery}
M: omg ok that's perfect

@ 6 10:05 Sun
M: check engine light came on on the way to the store 😭 {checkengine}
J: noooo
J: is it blinking or just on
M: just on
J: ok then it's probably fine for a day. take it to ray's tmrw {rays}

@ 7 09:30 Mon
J: pickles ate a hair tie {hairtie}
J: we're at the emergency vet rn {vet}
M: OMG is she ok
J: they think it'll pass but they did an xray. $400 😭 {xray}
~2-

@ 7 17:10 Mon
M: ray says its the oxygen sensor. $260 {sensor}
J: not terrible tho
M: better than the transmission which is what i was convinced it was lol
J: pickles update: the hair tie came out. i'll spare u the details {pickles}
M: thank god

@ 8 15:00 Tue
M: THEY CALLED
M: i got the job!!!!! {offer}
J: AHHHHHH
M: start date is april 7 {startdate}
M: and it's like $6k more than what i make now {raise}
J: drinks on u then
~3

@ 8 20:20 Tue
J: new manager at ground floor changed the whole schedule
J: i'm opening now. 5:30am. every day {opening}
M: noooo u hate mornings
J: his name is derek and i already don't like him {derek}

@ 9 19:30 Wed
M: mom cried at the pottery thing lol {momcried}
M: she's booking the first class for saturday
J: told u
J: did u do dinner
M: ya we went to luigi's, dad had 2 tiramisus {luigis}

@ 9 21:45 Wed
M: ugh the couch people emailed. delivery pushed to next tuesday {couchdelay}
J: which couch did u end up getting
M: the green velvet one from hatchley, the 3 seater {couch}
J: the one u sent me at like 2am lol

@ 10 12:40 Thu
J: went back to that place from tuesday last week
J: CLOSED. renovations. until may {closed}
M: NO
M: where will i get my miso
~2-

@ 11 18:50 Fri
J: bad news. priya can't do the lake weekend, her sister's getting married {priya}
M: oh no
M: so do we still go
J: idk, it's a lot for 3 ppl
M: let's talk tmrw

@ 12 11:00 Sat
M: landlord texted. keys on sunday now not saturday, the old tenant is late moving out {movedate2}
J: so moving is sunday?
M: ya. still u + ur car? 🙏
J: ya i got u

@ 13 09:00 Sun
J: omw. do u need more tape
M: yes pls. and coffee
~2

@ 13 16:30 Sun
M: [photo] boxes everywhere {boxes}
M: we did it!! everything is in {movedin}
J: my arms are dead. 14 trips up those stairs {stairs}
M: ur an angel. pizza's on me

@ 14 20:15 Mon
J: ok lake update. we cancelled the cabin, got the deposit back {cancel}
J: sam says let's just do a day hike instead, cedar falls on saturday {hike}
M: honestly better. i still have 40 boxes to unpack lol
J: 6 miles, not too bad {miles}

@ 15 18:00 Tue
M: [photo] the new couch {couchphoto}
J: IT'S SO GREEN {green}
M: it's perfect. it's exactly the color of a frog
J: lol
~2

@ 16 10:30 Wed
J: my sister tess is flying in tmrw from denver, staying til saturday morning {tess}
M: yay!! bring her to the apartment
J: she wants to see the frog couch {tesscouch}

@ 16 22:10 Wed
J: gerald update
J: [photo] first loaf. it's completely flat {flatloaf}
M: it looks like a frisbee lmao
J: i'm not giving up on him

@ 17 19:40 Thu
J: tess wants tacos. that place near ur new apt?
M: la palma! yes. 7:30? {lapalma}
J: perfect

@ 18 08:10 Fri
J: dropped tess at the airport at 6 and then opened the cafe. i'm a zombie {airport}
M: wait i thought she was leaving saturday
J: she changed her flight, work thing {tessflight}

@ 19 17:30 Sat
M: [photo] top of cedar falls {falls}
J: my legs lol
M: sam fell in the creek on the way down 😂😂 {creek}
J: his phone survived tho
~2

@ 20 12:00 Sun
M: ok 10k done!! {race}
M: 58:12 which is like 2 min faster than last year {racetime}
J: MAYA
J: what race was it again
M: the bridgeview 10k, the one that goes over the river {bridgeview}
J: so proud of u. brunch?
M: ya. 1pm

? single-hop | Which street is Maya's new apartment on? | aptstreet
? single-hop | How much is the monthly rent at Maya's new place? | rent
? single-hop | What ramen restaurant did Maya and Jo go to? | ramen
? single-hop | What did Maya order at Koi Ramen? | miso
? single-hop | Why did Jo and Maya get free gyoza? | gyoza
? single-hop | Where was Maya's job interview? | interview
? single-hop | What was Maya going to wear to her interview? | blazer
? single-hop | What is Jo's sourdough starter called? | starter
? single-hop | How many people were on Maya's interview panel? | panel
? single-hop | What is the name of Jo's band? | band
? single-hop | Where did Jo's band play on Friday night? | gig
? single-hop | How many songs did Static Bloom play, and when did Jo break a string? | string
? single-hop | About how big was the crowd at the Owl Room show? | crowd
? single-hop | What did the Owl Room bartender want? | april
? single-hop | What birthday present did Jo suggest for Maya's mom? | pottery
? single-hop | Which garage did Jo tell Maya to take the car to? | rays
? single-hop | What did Pickles swallow? | hairtie
? single-hop | How much did the x-ray at the emergency vet cost Jo? | xray
? single-hop | What was wrong with Maya's car? | sensor
? single-hop | When does Maya start the new job? | startdate
? single-hop | How much more will Maya make at the new job? | raise
? single-hop | What time does Jo have to open the cafe now? | opening
? single-hop | Who is the new manager at Ground Floor? | derek
? single-hop | Where did Maya's family go for her mom's birthday dinner? | luigis
? single-hop | Which couch did Maya end up buying? | couch
? single-hop | Why can't Priya come to the lake weekend? | priya
? single-hop | How many trips up the stairs did Jo make on moving day? | stairs
? single-hop | Where is Jo's sister Tess flying in from? | tess
? single-hop | Where did Maya suggest taking Tess for tacos? | lapalma
? single-hop | Who fell in the creek on the Cedar Falls hike? | creek
? single-hop | What was Maya's finishing time in the 10K? | racetime
? single-hop | Which 10K did Maya run? | bridgeview
? multi-hop | What happened to the ramen place where Maya had the spicy miso? | miso, closed
? multi-hop | What day was Maya first supposed to move, and what day did the move end up on? | movedate1, movedate2
? multi-hop | Why did the Lake Wren cabin trip fall through, and what did they plan instead? | priya, cancel, hike
? multi-hop | What did Maya's check engine light turn out to be? | checkengine, sensor
? multi-hop | How long after the delivery delay did Maya's green velvet couch show up? | couchdelay, couchphoto
? multi-hop | How did Maya's interview at St. Vincent's turn out? | interview, offer
? multi-hop | How did Maya's mom react to the present Jo suggested? | pottery, momcried
? multi-hop | How did the first loaf from Gerald turn out? | starter, flatloaf
? multi-hop | Tess was meant to stay until Saturday; when did she leave and why? | tess, airport, tessflight
? multi-hop | How long was the Cedar Falls hike and who fell in the creek? | miles, creek
? multi-hop | How much was the lake cabin deposit per person, and did they get it back? | deposit, cancel
? temporal | When did Maya find out she got the apartment? | apt
? temporal | What day was Maya's interview at St. Vincent's? | interview, panel
? temporal | When did Maya hear that she got the job? | offer
? temporal | What day did Static Bloom play at the Owl Room? | gig
? temporal | When did Pickles end up at the emergency vet? | hairtie, vet
? temporal | What good news did Maya get the day before her mom's 60th birthday? | offer
? temporal | When did Maya finally move into the new apartment? | boxes, movedin
? temporal | What happened to Maya's car the day before Pickles went to the vet? | checkengine
? temporal | When did Jo find out the ramen place had closed? | closed
? temporal | What day did the new couch arrive? | couchphoto
? temporal | How many days after the interview did the hospital call Maya with an offer? | panel, offer
? temporal | When did Maya run the 10K? | race
? temporal | What did Jo tell Maya about the lake plans the day after the move? | cancel, hike
? adversarial | What did Maya name her sourdough starter? | starter
? adversarial | What is the name of Maya's cat? | hairtie
? adversarial | How much is the rent at Jo's new apartment? | rent
? adversarial | Which song did Static Bloom open with at the Owl Room? | string
? adversarial | What housewarming gift did Tess bring for the couch? | tesscouch
? adversarial | What time did Maya's flight to Denver leave? | airport
? adversarial | What did Derek say when Jo quit Ground Floor? | derek
? adversarial | How much was the security deposit on Maya's apartment? | deposit
? paraphrase | What will the new flat cost her every thirty days? | rent
? paraphrase | Which noodle shop became the pair's favorite? | ramen
? paraphrase | What did the kitty swallow? | hairtie
? paraphrase | Which hospital hired her? | interview
? paraphrase | How long did the run across the water take her? | racetime
? paraphrase | What do the bassist's group go by? | band
? paraphrase | Who is the boss forcing her friend to wake before dawn? | derek
? paraphrase | Which Italian spot hosted the family celebration? | luigis
? paraphrase | What shade is the sofa? | couch, green
? paraphrase | How much did fixing the vehicle set her back? | sensor
? paraphrase | Who took a tumble into the water while descending? | creek
? paraphrase | What did her pal christen the bread culture? | starter
""",
)

FRIENDS_GROUP = Chat(
    key="dps",
    owner="dev-priyanka-sam",
    start="2024-10-07",
    people={
        "D": Person("Dev", lower=0.6, laughs=("lol", "haha"), emoji=("🏃", "🥵", "👍"), typo=0.02),
        "P": Person("Priyanka", lower=0.5, laughs=("hahaha", "lol"), emoji=("🥹", "✨", "💅"), abbrev=0.3),
        "S": Person("Sam", lower=0.95, laughs=("lmao", "lmaooo"), emoji=("🐶", "😭"), abbrev=0.8, typo=0.03),
    },
    turns=820,
    script="""
@ 0 12:10 Mon
P: ok birthday dinner planning thread 🎂
P: saturday the 12th, i'm thinking saffron house {bday1}
S: indian food yes
D: i'm in but i have a long run that morning so early dinner pls
P: 7pm?
D: 👍

@ 1 21:30 Tue
D: i'm in last place in the league again {lastplace}
S: lmaooo
S: gridiron goblins claims another victim {league}
D: my running back got hurt in the first quarter
P: skill issue

@ 2 18:45 Wed
S: GUYS
S: [photo] {puppyphoto}
S: this is waffles. beagle mix, 11 weeks. i'm obsessed {waffles}
P: OMG
D: WAFFLES
P: when can i meet him
S: come by sat before dinner? {meet}
~2

@ 2 22:20 Wed
D: 2nd place at trivia tonight, so close {trivia2nd}
P: that music round killed us
S: i was there in spirit (with the puppy)
D: three ducks in a trenchcoat will rise again {teamname}

@ 3 08:20 Thu
S: my ceiling is dripping. like actively dripping into a pot {leak}
P: noooo
S: landlord says someone's coming monday
~1-

@ 3 20:05 Thu
P: ok i bought the marigolds tickets!! fillmore, monday the 21st {tickets}
P: $65 each, venmo me whenever {ticketprice}
D: sending now
S: sent!

@ 4 13:30 Fri
P: update: saffron house can only do 6 ppl and we're 8 now {saffron6}
P: switching to bellwether. and it has to be sunday, they're full saturday {bday2}
S: sunday works
D: even better, i won't be dead from the run

@ 4 21:00 Fri
P: also reading the glass orchard rn and it's so good {book}
P: sam u have to read it
S: send me ur copy when ur done

@ 5 09:40 Sat
D: 16 miles done 🥵 {sixteen}
D: longest run ever
P: DEV
S: proud of u. waffles is also proud
~2

@ 5 15:20 Sat
P: [photo] waffles asleep on my shoe
P: i'm never leaving
S: he's a shoe guy

@ 6 22:10 Sun
P: thank u guys for tonight 🥹
P: bellwether was perfect. that fig dessert?? {fig}
D: the waiter singing was a bit much lol
S: best bday yet
~2

@ 7 17:50 Mon
S: plumber came. his name is gus and he fixed it in 20 min {gus}
S: it was a cracked pipe from the unit upstairs {pipe}
D: gus is a hero

@ 8 19:15 Tue
D: sam. trade offer. my kicker for your receiver
S: lol no
D: ok my running back for your receiver {tradeoffer}
S: ...fine. deal {trade}
P: sam you're gonna regret that

@ 9 21:35 Wed
D: WE WON TRIVIA {triviawon}
P: 50 dollar gift card to the anchor baby {giftcard}
S: i leave for one week and u win without me
D: it was the 90s movie round. priyanka carried {carried}

@ 9 22:15 Wed
S: waffles ate dev's headphones btw. the ones he left here on saturday {headphones}
D: WHAT
S: sorry. i'll pay for them
~1

@ 10 07:30 Thu
D: shins are killing me after yesterday's run {shins}
P: ice them
D: going to see the physio tmrw

@ 10 11:10 Thu
S: my car got towed. street cleaning. $237 {towed}
S: i hate this city
P: nooo the street cleaning signs are so hidden

@ 11 12:40 Fri
D: physio says shin splints. no running for a week {shinsplints}
D: so the full marathon is probably off
P: noo dev
D: might switch to the half, same day {switchhalf}

@ 11 18:30 Fri
P: ok so. i got promoted 👀 {promo}
P: team lead, starting november. 4 ppl on my team {team4}
S: PRIYANKA
D: LEAD ANALYST
~3

@ 12 14:00 Sat
D: it's official, switched to the half for the harbor run. the race people were nice about it {halfofficial}
S: smart
P: still proud

@ 13 16:00 Sun
P: halloween group costume. ideas
S: three blind mice
D: scooby gang {scoobyidea}
P: i call velma {velma}

@ 14 22:15 Mon
S: the marigolds were SO good {marigolds}
P: they played the whole new album!! {newalbum}
D: my ears are ringing
P: [photo] the encore

@ 15 20:45 Tue
S: week 7 results: priyanka won again {pweek}
D: she's 6-1. someone stop her {record}
S: that receiver i traded away had 3 touchdowns sunday 😭 {regret}
P: told u

@ 16 19:00 Wed
S: finished the glass orchard
S: the ending made me so mad {ending}
P: RIGHT??
D: no spoilers i'm on chapter 4

@ 16 21:20 Wed
S: waffles first puppy class tonight. he barked at every single dog {class}
P: a star student
S: the trainer's name is june and she is so patient {june}

@ 17 18:10 Thu
P: ok final costumes: scooby gang it is {scooby}
D: i'm shaggy obvs {shaggy}
S: i guess i'm fred, and waffles is scooby {fred}
P: perfect

@ 18 06:50 Fri
D: at the airport for arjun's wedding, flight's delayed 3 hours {delay}
P: noooo
S: chicago will wait for u {chicago}
~1

@ 18 21:30 Fri
D: made it. rehearsal dinner was nuts, his family is huge

@ 19 21:00 Sat
D: [photo] the wedding
D: arjun cried before his bride even walked in {arjun}
P: stop that's so sweet
S: did u dance
D: i did the macarena. no regrets {macarena}

@ 20 15:30 Sun
D: back home. ran 4 easy miles this morning and the shins felt fine {easyrun}
P: yay!!

@ 20 18:00 Sun
S: venmo'd u $80 for the headphones. waffles says sorry {headpay}
D: tell waffles he's forgiven
P: halloween is in 4 days and i don't have glasses for velma yet

? single-hop | Where did Priyanka first want to have her birthday dinner? | bday1
? single-hop | What kind of dog is Waffles? | waffles
? single-hop | How old was Waffles when Sam got him? | waffles
? single-hop | What is the fantasy football league called? | league
? single-hop | What is the trivia team's name? | teamname
? single-hop | What place did the trivia team get the first week? | trivia2nd
? single-hop | What was wrong in Sam's apartment on Thursday morning? | leak
? single-hop | Which band did Priyanka buy tickets to see? | tickets
? single-hop | How much were the Marigolds tickets? | ticketprice
? single-hop | Why couldn't they have the birthday dinner at Saffron House? | saffron6
? single-hop | What book is Priyanka reading? | book
? single-hop | How far did Dev run on Saturday morning? | sixteen
? single-hop | What did Priyanka love at Bellwether? | fig
? single-hop | Who fixed Sam's ceiling? | gus
? single-hop | What caused the leak in Sam's ceiling? | pipe
? single-hop | Which player did Dev give up in the fantasy trade with Sam? | tradeoffer, trade
? single-hop | What did they win at trivia? | giftcard
? single-hop | Which round won them trivia? | carried
? single-hop | What did Waffles chew up? | headphones
? single-hop | How much did it cost Sam to get his car back after it was towed? | towed
? single-hop | What did Dev's physio say was wrong? | shinsplints
? single-hop | What new role did Priyanka get? | promo
? single-hop | How many people will Priyanka manage? | team4
? single-hop | Who is Priyanka going as for Halloween? | velma
? single-hop | What did Sam think of The Glass Orchard? | ending
? single-hop | What is the puppy trainer's name? | june
? single-hop | What is Dev dressing up as? | shaggy
? single-hop | Whose wedding did Dev fly to? | delay
? single-hop | Which city was Arjun's wedding in? | chicago
? single-hop | What dance did Dev do at the wedding? | macarena
? single-hop | How much did Sam pay Dev for the headphones? | headpay
? single-hop | What is Priyanka's fantasy football record? | record
? multi-hop | Where did Priyanka's birthday dinner end up, and how did she like it? | bday2, fig
? multi-hop | How did Dev's fantasy trade with Sam work out for Sam? | trade, regret
? multi-hop | How did the trivia team do over the two weeks? | trivia2nd, triviawon
? multi-hop | Why did Dev drop from the full marathon to the half? | shins, shinsplints, halfofficial
? multi-hop | What happened to the headphones Dev left at Sam's, and how was it settled? | headphones, headpay
? multi-hop | What part does Waffles play in the group costume, and what breed is he? | fred, waffles
? multi-hop | How was the Marigolds show Priyanka bought tickets for? | tickets, newalbum
? multi-hop | What did Sam think of the book Priyanka recommended? | book, ending
? multi-hop | What was leaking in Sam's apartment and what caused it? | leak, pipe
? multi-hop | Which group costume won, and who first suggested it? | scoobyidea, scooby
? temporal | When did Sam get Waffles? | waffles
? temporal | What day was Priyanka's birthday dinner first planned for? | bday1
? temporal | When did the trivia team win? | triviawon
? temporal | What day did Dev run 16 miles? | sixteen
? temporal | When did Sam's car get towed? | towed
? temporal | When did Priyanka get promoted? | promo
? temporal | What happened to Sam's car the day before Priyanka's promotion news? | towed
? temporal | When did they go to the Marigolds concert? | tickets, marigolds
? temporal | When did the plumber fix Sam's ceiling? | gus
? temporal | When did Dev fly out for Arjun's wedding? | delay
? temporal | What happened the day after Priyanka's birthday dinner? | gus, pipe
? temporal | What day was Waffles' first puppy class? | class
? temporal | When did Dev make the trade with Sam? | trade
? temporal | What happened the day after Waffles ate the headphones? | shins, towed
? adversarial | What breed is Priyanka's puppy? | waffles
? adversarial | Who won the Harbor Marathon? | halfofficial
? adversarial | How much did Dev pay to get his car out of the tow lot? | towed
? adversarial | Why did Priyanka get fired? | promo
? adversarial | What did June say about Dev's shins? | shinsplints
? adversarial | Which song did the Marigolds open with? | newalbum
? adversarial | How much did Gus charge to fix Sam's car? | gus
? adversarial | What did Priyanka think of the ending of The Glass Orchard movie? | ending
? paraphrase | What did the young hound wreck? | headphones
? paraphrase | How much did reclaiming the impounded vehicle cost? | towed
? paraphrase | Who repaired the water problem overhead? | gus
? paraphrase | What prize did the quiz squad take home? | giftcard
? paraphrase | Which sweet course impressed the birthday girl? | fig
? paraphrase | What's the diagnosis for his aching lower legs? | shinsplints
? paraphrase | How large is the group she'll supervise? | team4
? paraphrase | Who is coaching the pup's obedience lessons? | june
""",
)

LENA_MARCO = Chat(
    key="lm",
    owner="lena-marco",
    start="2025-01-13",
    people={
        "L": Person("Lena", lower=0.2, laughs=("haha", "lol"), emoji=("❄️", "😞", "❤️"), abbrev=0.1, typo=0.01),
        "M": Person(
            "Marco", lower=0.85, laughs=("ahah", "lol", "ahahah"), emoji=("😍", "🇮🇹", "❤️"), abbrev=0.3, typo=0.04
        ),
    },
    turns=700,
    script="""
@ 0 07:15 Mon
M: landed amore ✈️ {landed}
M: lisbon is 14 degrees, i'm wearing a coat like an idiot {degrees}
L: jealous. it's -15 here {minus15}
L: did you sleep on the plane at all?
M: 2 hours maybe. the guy next to me snored like a tractor
~2

@ 0 16:30 Mon
M: hotel is cute. hotel miradouro, tiny room but the view 😍 {hotel}
M: [photo] the view from the balcony
L: Oh wow, you can see the river!
L: ok that makes me feel better about the snow

@ 1 19:45 Tue
M: first day done. the hospital people are nice {firstday}
M: my boss here is fernanda, very intense but fair {fernanda}
L: intense how
M: she wants the rollout done in 3 weeks. it's a 5 week job {weeks}
L: of course she does

@ 2 07:50 Wed
L: my car battery died. -22 with the wind. i'm standing in the driveway crying {battery}
M: nooo amore
M: call roadside, don't stand outside
L: they're coming in 40 min. i'm going to be so late for first period {firstperiod}
~1-

@ 3 20:10 Thu
M: 5 pastéis de nata so far. i have a problem {nata}
L: only 5?
M: today. 5 today
L: MARCO

@ 4 12:20 Fri
L: field trip to the science center got cancelled, snow day for the buses {fieldtrip}
L: 60 kids were so sad. and me too honestly
M: will they reschedule?
L: hopefully next week

@ 5 21:50 Sat
M: joão took me to a fado night in alfama {fado}
M: i cried a little. don't tell anyone {cried}
L: that's so sweet, I love that you're making friends there
~2

@ 6 09:15 Sun
M: mamma's surgery is tomorrow. the knee {surgery}
M: i feel bad i'm not in bologna {bologna}
L: Your brother is there with her, right?
M: yes luca is driving her {luca}

@ 7 15:30 Mon
M: surgery went well!! she's already complaining about the hospital food {surgeryok}
L: That's the best sign honestly
M: physio starts thursday {physio}

@ 8 21:05 Tue
M: i think i ate bad clams {clams}
M: i've been in the bathroom for 2 hours
L: oh no, drink water. Like a lot of water
M: no more clams. never again

@ 9 16:40 Wed
L: The field trip is rescheduled for next thursday! {reschedule}
M: yay! the kids will be happy
M: i'm alive btw. just crackers today {crackers}

@ 10 19:20 Thu
L: KIWI SAID CIAO {kiwi}
L: I've been saying it to him every morning since you left {kiwiteach}
M: my son
M: 🦜🇮🇹

@ 11 20:00 Fri
M: joão's mom taught me to make bacalhau à brás {bacalhau}
M: [photo] not bad right
L: it looks amazing
L: You're making that when you're back

@ 12 14:10 Sat
L: greta's baby shower today!! {shower}
L: [photo] the diaper cake I made {diapercake}
M: you made that??
L: 3 hours and 84 diapers {diapers}
~2

@ 12 20:30 Sat
L: it's a girl btw. they're naming her Rosie {rosie}
M: rosie!! tell greta auguri

@ 13 18:25 Sun
M: cracked my phone screen on tram 28 {phone}
M: someone's elbow. i was holding it and boom
L: Noo, can you still see the screen?
M: half of it lol

@ 14 21:00 Mon
L: Day 1 of the kids' chemistry unit. I set off the fire alarm with the demo 😬 {alarm}
M: AHAHAHA
L: the whole school went outside in the cold. the principal was NOT impressed {principal}

@ 15 17:15 Tue
M: bad news. fernanda extended the project a week {extended}
M: so i fly back the 9th instead of the 2nd {flightback}
L: ugh. ok.
L: what if i came there for a weekend? {visit}
M: !!!!!

@ 16 12:00 Wed
L: MARCO {peonies}
L: the peonies!!!! they delivered them to the school office {peonies2}
L: the whole staff room is jealous
M: happy anniversary amore. 3 years {anniv}
~2

@ 17 20:45 Thu
L: ok looked at flights. it's $1400 and i'd have to miss 2 days of school {expensive}
L: I don't think I can do it 😞 {cantcome}
M: it's ok, i understand
M: we'll do the anniversary dinner when i'm back

@ 18 10:30 Fri
L: field trip today!!!! {fieldtripdone}
L: The kids loved the liquid nitrogen show {nitrogen}
M: finally!!

@ 19 13:15 Sat
M: WAIT
M: fernanda says we finished early. i can fly thursday the 6th {thursday}
L: AHHHH
L: that's 3 days earlier!
M: booking now

@ 20 11:00 Sun
M: flight booked. lands at pearson 4:40pm thursday {pearson}
L: I'll pick you up. Kiwi will be there too
M: kiwi will say ciao
L: and I'm making you go straight to the anniversary dinner
M: deal. the place we went on our first date? {firstdate}
L: Terroni. already reserved {terroni}

? single-hop | What was the temperature in Lisbon when Marco landed? | degrees
? single-hop | Which hotel is Marco staying at in Lisbon? | hotel
? single-hop | Who is Marco's boss on the Lisbon project? | fernanda
? single-hop | How long does Marco think the rollout really takes? | weeks
? single-hop | What happened to Lena's car? | battery
? single-hop | How many pastéis de nata did Marco eat in one day? | nata
? single-hop | Why was the science center field trip cancelled? | fieldtrip
? single-hop | Who took Marco to a fado night? | fado
? single-hop | What kind of surgery did Marco's mom have? | surgery
? single-hop | Where does Marco's mom live? | bologna
? single-hop | Who drove Marco's mom to the surgery? | luca
? single-hop | When does Marco's mom start physio? | physio
? single-hop | What made Marco sick? | clams
? single-hop | What word did Kiwi learn? | kiwi
? single-hop | What dish did Marco learn to cook? | bacalhau
? single-hop | Who taught Marco to make bacalhau? | bacalhau
? single-hop | What did Lena make for Greta's baby shower? | diapercake
? single-hop | How many diapers went into the diaper cake? | diapers
? single-hop | What is Greta's baby going to be called? | rosie
? single-hop | Where did Marco crack his phone screen? | phone
? single-hop | What went wrong during Lena's chemistry demo? | alarm
? single-hop | What flowers did Marco send Lena? | peonies2
? single-hop | How many years have Lena and Marco been together? | anniv
? single-hop | How much would a flight to Lisbon have cost Lena? | expensive
? single-hop | What did the kids love at the science center? | nitrogen
? single-hop | What time does Marco's flight land at Pearson? | pearson
? single-hop | Where was Lena and Marco's first date? | firstdate, terroni
? single-hop | Where were the peonies delivered? | peonies2
? multi-hop | What happened with the science center field trip in the end? | fieldtrip, reschedule, fieldtripdone
? multi-hop | How did Marco's mom's knee surgery go? | surgery, surgeryok
? multi-hop | Marco was meant to fly home on the 2nd; when does he fly back, and why did it change twice? | flightback, thursday
? multi-hop | Lena offered to visit Lisbon; what stopped her? | visit, expensive
? multi-hop | What gave Marco food poisoning, and what was he eating the day after? | clams, crackers
? multi-hop | Who is João, and what did his mother teach Marco? | fado, bacalhau
? multi-hop | How did Fernanda's timeline for the project change over Marco's stay? | weeks, extended, thursday
? multi-hop | What did Marco send for the anniversary, and where will they celebrate together? | peonies2, terroni
? multi-hop | Who was with Marco's mom for the surgery, and how was she after? | luca, surgeryok
? multi-hop | How cold did it get in Toronto that first week? | minus15, battery
? temporal | When did Marco land in Lisbon? | landed
? temporal | What day did Lena's car battery die? | battery
? temporal | When was the fado night? | fado
? temporal | When was Marco's mom's knee surgery? | surgery, surgeryok
? temporal | What happened to Marco the day after his mom's surgery? | clams
? temporal | When did Kiwi first say ciao? | kiwi
? temporal | When was Greta's baby shower? | shower
? temporal | What news did Marco have the day before their anniversary? | extended
? temporal | When did Marco crack his phone? | phone
? temporal | When did the peonies arrive? | peonies, peonies2
? temporal | When did the science center field trip finally happen? | fieldtripdone
? temporal | When did Marco find out he could fly home early? | thursday
? temporal | What did Lena's class do the day after she decided not to fly to Lisbon? | fieldtripdone, nitrogen
? adversarial | What did Lena name her cat? | kiwi
? adversarial | Which hotel did Lena stay at in Lisbon? | hotel
? adversarial | What did Luca cook for Marco? | luca
? adversarial | How did Lena crack her phone? | phone
? adversarial | What did Fernanda send Lena for the anniversary? | peonies2
? adversarial | How many kids got sick on the science center trip? | nitrogen
? adversarial | Why was Greta's baby shower cancelled? | shower
? adversarial | What did Marco's dad say after the surgery? | surgeryok
? paraphrase | What pastry keeps tempting him? | nata
? paraphrase | What greeting did the little green pet pick up? | kiwi
? paraphrase | What bloomed on the front desk at her workplace? | peonies2
? paraphrase | How did his handset get damaged? | phone
? paraphrase | Which seafood gave him a rough night? | clams
? paraphrase | Which mournful Portuguese music did a colleague show him? | fado
? paraphrase | What did she build from nappies for her sibling's party? | diapercake
""",
)

# A grandmother texts in whole sentences and signs off; her grandson does not.
GRANDMA_EXCHANGES: tuple[tuple[str, ...], ...] = (
    (
        "#morning",
        "R: Good morning Tyler! <Hope you slept well.|The birds are singing already.|It is a beautiful day here.> {e}",
        "T: <morning grandma|mornin|hi grandma>",
    ),
    (
        "T: hows ur day going",
        "R: <Oh just fine dear.|Busy busy!|Quiet day here.> <I did the crossword.|Buster and I took a walk.|I watched my program.>",
    ),
    ("R: Are you eating enough?", "T: <yes grandma|ya lol|define enough>"),
    ("R: Did you get my last message? I am never sure if these go through.", "T: <yep got it|ya i got it!>"),
    ("R: Call me when you have a minute. Nothing urgent!", "T: <ok will do|after class ok?|ya tonight>"),
    ("R: LOL",),
    ("T: love u grandma", "R: I love you too sweetheart. {e}"),
    (
        "R: The weather man says rain <tomorrow|all week|this weekend>.",
        "T: <ugh|nooo|at least the garden will like it>",
    ),
    (
        "R: I can't find the little button to <make the letters bigger|turn off the sound|go back>.",
        "T: <ill show u next time|hold the side button|settings then display>",
        "R: Thank you dear.",
    ),
    ("T: <lol|haha>",),
    ("R: Ha ha! {e}",),
    (
        "R: Your father called. <He sounds tired.|He says hello.|He is working too hard.>",
        "T: <lol he always is|ya he texted me too|nice>",
    ),
    ("#night", "R: Goodnight dear. Sleep tight!", "T: <night grandma|gn love u>"),
    ("R: Are you warm enough up there? It is chilly here in the evenings.", "T: <ya im good|its fine lol>"),
    ("R: I said a prayer for you today.", "T: <thank u grandma|aw ty>"),
    ("T: did u see the game", "R: <I fell asleep in the third inning!|Only the end. Such excitement!>"),
    ("R: Don't stay up too late studying.", "T: <too late lol|i wont|no promises>"),
    ("R: <Oops|Oh dear>, that message was meant for your aunt.", "T: <lol|haha np>"),
    ("T: wyd grandma", "R: <Folding laundry.|Watching Jeopardy!|Sitting on the porch.>"),
    ("R: Tyler?", "T: <ya?|hi sorry was in class>", "R: Oh nothing dear, just checking you are alive! {e}"),
    ("R: I hope you are wearing sunscreen.", "T: <ya grandma|lol yes>"),
    ("T: <ok|k|kk>",),
    ("R: I tried to send you a heart and it sent a thumbs up. {e}", "T: <lol i got it|it counts>"),
    ("R: Are you still there?", "T: <ya sorry|yes lol>"),
    ("T: grandma u can just say ok u dont have to sign ur name", "R: Okay. Love, Grandma"),
    ("R: How is the weather up there?", "T: <rainy|nice actually|cold lol>", "R: <Bundle up!|Lucky you!|Oh my.>"),
    ("#night", "R: <Good night|Night night> Tyler. Love, Grandma", "T: <night|gn>"),
    ("R: I am going to lie down for a bit. My eyes are tired from this little screen.", "T: <ok rest|👍>"),
    ("T: grandma did u take ur pills", "R: <Yes dear.|Oh! Thank you for reminding me.>"),
    ("#morning", "R: Did you eat breakfast? It is the most important meal.", "T: <coffee counts|yes|kind of>"),
    ("R: I am proud of you, you know.", "T: <aw thanks grandma|love u>"),
    ("T: ya",),
    ("T: lmao",),
    ("R: Oh my goodness!",),
    ("R: Just thinking of you today. {e}", "T: <aw|miss u>"),
    (
        "R: I went to the grocery store and they moved everything around again. I could not find the raisins for 20 minutes.",
        "T: <lol they do that on purpose|noo|rip>",
    ),
    (
        "R: The television is making a strange noise again. Your grandfather always knew how to fix it.",
        "T: <try unplugging it|ill look at it when i visit>",
    ),
    (
        "R: I finished my book club book. It was very sad but I liked it.",
        "T: <nice what was it about|sad books are the best>",
        "R: A family and a lighthouse. Very sad.",
    ),
    ("T: grandma what are u having for dinner", "R: <Soup and crackers.|Leftovers.|A little bit of everything.>"),
    ("R: The mailman was late again today. I worry about him.", "T: lol"),
    ("R: It is very windy today. I almost lost my hat at the mailbox!", "T: <hold on to it lol|be careful grandma>"),
    ("R: I watched a cooking show today and they put cheese on everything.", "T: <as they should|lol>"),
    (
        "R: I think my phone is broken, the screen went black.",
        "T: <did u press the side button|its probably just asleep>",
        "R: Oh. Yes. That was it.",
    ),
    ("T: hows the weather there", "R: <Sunny but cool.|Raining cats and dogs!|Very nice today.>"),
    ("R: I forgot what I was going to tell you. It will come back to me.", "T: lol ok"),
    ("R: Your cousin posted pictures on Facebook. Everyone looks so grown up!", "T: <lol ya|i saw>"),
    ("R: I made too much soup again. I wish you lived closer.", "T: <me too|freeze it>"),
    ("T: whats new grandma", "R: <Oh nothing much, same old.|Not much dear. Just puttering around.>"),
    ("R: I am sitting on the porch watching the birds. There is a cardinal at the feeder.", "T: <nice|send a pic>"),
    ("R: Did you know the Hendersons are selling their house?", "T: <who|lol no>", "R: The Hendersons! From church!"),
    ("R: I had a nice long nap this afternoon. I feel like a new woman.", "T: <lol love that|naps are elite>"),
    ("R: Bless you for checking on me.", "T: always"),
    ("R: What time is it there? Oh wait, it is the same time. Ha ha!", "T: lol"),
    ("R: I found a picture of you when you were 5 in your cowboy boots.", "T: <omg no|send it lol>"),
    (
        "R: Mrs. Alvarez from church asked about you again. I told her you are very busy and very handsome.",
        "T: <lol thanks grandma|grandma pls>",
    ),
    ("R: I tried one of those video calls with your aunt and all I could see was her ceiling.", "T: <lmao|classic>"),
)

TYLER_GRANDMA = Chat(
    key="tr",
    owner="tyler-grandma",
    start="2024-05-06",
    people={
        "T": Person("Tyler", lower=0.95, laughs=("lol", "lmao"), emoji=("😂", "💀", "🙏"), abbrev=0.8, typo=0.02),
        "R": Person(
            "Grandma",
            lower=0.0,
            laughs=("Ha ha!", "LOL"),
            emoji=("😊", "🌷", "🙏", "❤️"),
            emoji_rate=0.3,
            abbrev=0.0,
            typo=0.015,
            reactions=(
                "Oh my!",
                "Wonderful!",
                "Ha ha!",
                "Oh dear.",
                "Goodness!",
                "How nice.",
                "😊",
                "Oh no!",
                "I see.",
            ),
        ),
    },
    turns=640,
    exchanges=GRANDMA_EXCHANGES,
    script="""
@ 0 10:15 Mon
R: Hello Tyler, this is Grandma. Your father set up this new iPhone for me. I hope I am doing this right. {newphone}
T: GRANDMA
T: welcome to texting lol
R: What does lol mean? I thought it meant lots of love. {lolmeaning}
T: it means laughing out loud 😂
R: Oh dear. I have been signing my emails with it for years!

@ 0 18:40 Mon
R: How do I send a picture? I want to show you my seedlings. {howphoto}
T: tap the little camera next to where u type
R: I do not see a camera. I see a plus sign.
T: ok tap the plus then photos
R: I will try tomorrow, my eyes are tired.

@ 2 09:10 Wed
T: finals week starts monday ugh {finals}
R: You will do wonderfully. Which one are you most worried about?
T: orgo. organic chemistry. its so hard {orgo}
R: Your grandfather was terrible at chemistry too. He became an engineer anyway! {engineer}

@ 3 14:30 Thu
R: [photo] My tomato seedlings!! Cherokee Purple, 12 plants. {seedlings}
T: YOU DID IT
T: they look great grandma
R: I planted them by the back fence where they get the afternoon sun. {fence}

@ 5 11:00 Sat
T: grandma can u send me ur chili recipe. my roommates want it {chili}
R: Of course! 2 pounds ground beef, 2 cans kidney beans, 1 can tomatoes, onion, chili powder. {chilirecipe}
R: And the secret: a teaspoon of cinnamon. Do not tell your aunt Carol. {cinnamon}
T: CINNAMON??
R: Trust me dear.

@ 6 16:20 Sun
R: Doris next door fell on her front steps this morning and broke her wrist. {doris}
R: I drove her to the emergency room. We were there 5 hours. {er5}
T: omg is she ok
R: She has a cast up to her elbow. She is a tough old bird.
~1

@ 6 19:00 Sun
T: happy mothers day grandma!! 🌷 {mothersday}
R: Thank you sweetheart. Your father called this morning and the flowers from your aunt came. {flowers}

@ 7 20:30 Mon
T: first final tmrw. stats. wish me luck
R: Good luck! I will be thinking of you. Eat a good breakfast.

@ 8 12:15 Tue
R: I saw Dr. Patel today for my heart checkup. {drpatel}
R: He says my blood pressure is good, 128 over 80. {bp}
R: But he wants me on a new pill for my cholesterol. {pill}
T: thats good news grandma!!
T: stats final was fine btw {stats}

@ 9 17:45 Wed
T: orgo final DONE {orgodone}
T: i think i passed?? maybe
R: I am so proud of you. Grandpa would be too.

@ 10 08:30 Thu
R: Bad news from the garden. The deer ate all of my lettuce last night. {deer}
R: They left the tomatoes alone thank goodness. {tomatoessafe}
T: noooo
T: u need a fence
R: Doris's son is going to put up netting on Saturday. {netting}

@ 11 19:10 Fri
R: Today would have been 55 years for Grandpa and me. {anniv55}
R: I went to the cemetery and brought him daisies, his favorite. {daisies}
T: love u grandma ❤️
T: i miss him too
R: He would be so proud of you Tyler.

@ 12 15:40 Sat
R: The bake sale was a success! I made 48 lemon bars and they sold out by 11. {lemonbars}
R: The church raised $620 for the food pantry. {raised}
T: thats amazing!! save me one next time
R: I saved you 4 in the freezer. {freezer}

@ 13 13:00 Sun
R: Buster went to the vet. He needs his teeth cleaned, it will cost $350. {buster}
T: poor buster
T: hes like 12 right
R: 13 in July. {buster13}

@ 14 18:20 Mon
T: got a summer job!! lifeguard at maple grove pool {lifeguard}
T: training starts thursday, the pool opens friday
R: Wonderful! Will you be in the sun all day? Wear a hat.
T: lol yes grandma

@ 15 11:30 Tue
T: GRADES ARE OUT
T: B+ in orgo!!!!! {bplus}
R: I knew you could do it! I am telling everyone at church.
~2

@ 16 20:00 Wed
T: so im gonna visit this weekend! saturday? {visitsat}
R: Yes! I will make pot roast. {potroastplan}
T: and can i bring aly? {aly}
R: Of course. Is this the young lady from the photos?
T: ya lol

@ 17 09:50 Thu
R: [photo] The first strawberry of the year! {strawberry}
T: its so small
R: It was delicious. I ate it right there in the garden.

@ 18 21:15 Fri
T: change of plans grandma, they put me on the schedule saturday for opening weekend {schedule}
T: can we come sunday instead? {visitsun}
R: Sunday is perfect. I will go to the early service and have dinner ready by 2. {dinner2}

@ 20 18:30 Sun
T: thank u for dinner grandma!! the pot roast was insane {potroast}
R: Thank you for fixing my screen door. Aly is a delight. {screendoor}
T: she said u were the sweetest
R: Drive safe and text me when you are home.
T: home!
R: LOL. Lots of love, I mean!

? single-hop | Who set up Grandma's new iPhone? | newphone
? single-hop | What did Grandma think "lol" meant? | lolmeaning
? single-hop | Which final was Tyler most worried about? | orgo
? single-hop | What kind of tomatoes did Grandma plant? | seedlings
? single-hop | How many tomato plants does Grandma have? | seedlings
? single-hop | Where in the yard did Grandma plant the tomatoes? | fence
? single-hop | What is the secret ingredient in Grandma's chili? | cinnamon
? single-hop | How much ground beef goes in Grandma's chili? | chilirecipe
? single-hop | What happened to Doris? | doris
? single-hop | How long were Grandma and Doris at the emergency room? | er5
? single-hop | Who is Grandma's heart doctor? | drpatel
? single-hop | What was Grandma's blood pressure at her checkup? | bp
? single-hop | What is Grandma's new pill for? | pill
? single-hop | What ate Grandma's lettuce? | deer
? single-hop | Who is putting netting up in the garden? | netting
? single-hop | How many years would Grandma and Grandpa have been married? | anniv55
? single-hop | What flowers did Grandma take to the cemetery? | daisies
? single-hop | How many lemon bars did Grandma bake for the sale? | lemonbars
? single-hop | How much did the church bake sale raise? | raised
? single-hop | What is the bake sale money going to? | raised
? single-hop | How many lemon bars did Grandma save for Tyler? | freezer
? single-hop | How much will Buster's teeth cleaning cost? | buster
? single-hop | How old will Buster be in July? | buster13
? single-hop | Where is Tyler's summer job? | lifeguard
? single-hop | What grade did Tyler get in organic chemistry? | bplus
? single-hop | Who is Tyler bringing to Grandma's? | aly
? single-hop | What did Tyler fix at Grandma's house? | screendoor
? single-hop | What did Grandma cook for Tyler and Aly? | potroastplan, potroast
? multi-hop | How did Tyler's organic chemistry final turn out? | orgodone, bplus
? multi-hop | Why did Tyler's visit move from Saturday to Sunday? | visitsat, schedule
? multi-hop | The deer ate Grandma's lettuce; which plants did they spare, and how many of those does she have? | tomatoessafe, seedlings
? multi-hop | Whose son is putting up the garden netting, and what happened to her? | netting, doris
? multi-hop | Did Grandma figure out how to send photos, and what did she send first? | howphoto, seedlings
? multi-hop | How did Tyler do on his finals overall? | stats, bplus
? multi-hop | What is Tyler's job at the pool, and why couldn't he visit on Saturday? | lifeguard, schedule
? multi-hop | What did Grandma promise to cook for the visit, and how did Tyler like it? | potroastplan, potroast
? multi-hop | What did Grandpa do for work, and what were his favorite flowers? | engineer, daisies
? multi-hop | What did Grandma learn at her own checkup and at Buster's vet visit? | bp, buster
? temporal | When did Grandma start texting Tyler? | newphone
? temporal | When did Doris break her wrist? | doris
? temporal | When was Grandma's heart checkup? | drpatel
? temporal | What day did Tyler take his orgo final? | orgodone
? temporal | What happened in the garden the day before Grandma's 55th anniversary? | deer
? temporal | When was the church bake sale? | lemonbars
? temporal | When did Buster go to the vet? | buster
? temporal | What day did Tyler get his grades? | bplus
? temporal | When did Grandma eat the first strawberry of the year? | strawberry
? temporal | What did Tyler tell Grandma the day after she ate the first strawberry? | schedule, visitsun
? temporal | When did Tyler and Aly visit Grandma? | potroast, screendoor
? temporal | When did Grandma send her first photo? | seedlings
? temporal | What happened to Doris on Mother's Day? | doris, mothersday
? adversarial | What did Dr. Patel say about Buster's teeth? | buster
? adversarial | How many lemon bars did Aly bake? | lemonbars
? adversarial | What grade did Tyler get in calculus? | stats
? adversarial | What does Aunt Carol put in her chili? | cinnamon
? adversarial | What did the deer do to Grandma's strawberries? | deer
? adversarial | Where does Doris's son work as a lifeguard? | lifeguard
? adversarial | How many years were Doris and her husband married? | anniv55
? adversarial | What did Grandma's cat Buster eat? | buster
? paraphrase | What's the hidden spice in her bean stew? | cinnamon
? paraphrase | Which creatures raided her salad greens? | deer
? paraphrase | How did her neighbour get hurt? | doris
? paraphrase | What reading did the physician give for her circulation? | bp
? paraphrase | What marks did the boy earn in the tough science course? | bplus
? paraphrase | Which citrus treats did she produce for the fundraiser? | lemonbars
? paraphrase | How pricey is the old hound's dental work? | buster
? paraphrase | Which swimming spot hired the grandson? | lifeguard
""",
)

ZARA_FELIX = Chat(
    key="zf",
    owner="zara-felix",
    start="2025-06-02",
    people={
        "Z": Person("Zara", lower=0.85, laughs=("lol", "lmao"), emoji=("🙃", "💀", "✨"), abbrev=0.6, typo=0.02),
        "F": Person("Felix", lower=0.7, laughs=("haha", "lol", "hahaha"), emoji=("🥲", "😂", "🎉"), abbrev=0.4),
    },
    turns=720,
    script="""
@ 0 09:05 Mon
Z: did u see marguerite's email
F: the pepper & pine thing?
Z: ya. full rebrand, logo + packaging + menu boards {rebrand}
F: deadline?
Z: friday the 13th lol. ominous {deadline1}
F: of course it is

@ 1 12:20 Tue
F: taco truck?
Z: omw down
~2

@ 1 13:10 Tue
Z: el güero's al pastor is unreal {tacos}
F: i got the fish ones. solid 7/10 {fish}

@ 2 10:40 Wed
F: new espresso machine in the kitchen!!! {espresso}
Z: finally. the old one tasted like pennies
F: it's a la marzocca. marguerite's treating us {marzocca}

@ 3 21:15 Thu
F: WE BOOKED THE VENUE {venue}
F: hollis barn, september 20th {venuedate}
Z: FELIX
Z: the one with the string lights?
F: yes!! rhea cried. i cried. the barn guy probably cried {rheacried}

@ 4 08:10 Fri
Z: my car won't start. like at all {carwont}
Z: gonna be late, taking the bus
F: noo. battery?
Z: no idea. towing it to midtown auto {midtown}

@ 4 17:30 Fri
Z: alternator. $540 {alternator}
Z: they can't get the part til wednesday so i'm a bus girl now {buswed}
F: rip

@ 6 19:40 Sun
F: 200 day duolingo streak 🦉 {streak}
Z: nerd. how's ur spanish
F: i can order a beer and ask where the library is {library}

@ 7 11:15 Mon
F: the new intern just knocked a monitor off my desk {intern}
Z: lmao is it broken
F: cracked. his name is theo, he's like 19 and so apologetic {theo}
~2

@ 7 16:00 Mon
Z: marguerite just moved up the pepper & pine deadline. client wants to see it WEDNESDAY {deadline2}
F: this wednesday????
Z: this wednesday
F: i'm going to cry in the supply closet

@ 8 12:45 Tue
Z: truck from last week has a new salsa, the green one is spicy af {salsa}
F: i can't, eating at my desk. the menu boards are killing me

@ 9 15:30 Wed
Z: presentation done. they LOVED the logo {loved}
Z: they want the orange darker on the packaging tho {orange}
F: we survived

@ 9 18:00 Wed
Z: also had my review. 4 out of 5 and a 5% raise {review}
F: ZARA
Z: marguerite said i need to "speak up more in meetings" lol {speakup}
~1

@ 10 09:20 Thu
F: the espresso machine is broken already {broken}
Z: NO
F: theo tried to clean it with dish soap {dishsoap}
Z: theo strikes again

@ 10 17:45 Thu
Z: car's back!! no more bus {carback}
F: free at last

@ 11 14:00 Fri
Z: flying to atlanta tomorrow for my brother's graduation {atlanta}
Z: he's finishing his nursing degree {nursing}
F: tell him congrats!!
Z: will do. back monday

@ 12 16:20 Sat
F: cake tasting today. we picked lemon with raspberry {cake}
F: rhea wanted chocolate, i won {rhea}
Z: [photo] the graduation
Z: jamal walked across and my mom screamed so loud {jamal}

@ 14 10:00 Mon
Z: back. exhausted. airport was chaos
F: welcome back. pepper & pine sent final notes btw
F: darker orange approved {approved}

@ 15 20:30 Tue
F: ugh. our caterer dropped out {caterer}
F: they double booked september 20th {doublebooked}
Z: noooo
Z: try the taco truck lol
F: ...honestly not the worst idea

@ 16 13:10 Wed
F: ok i asked el güero. they do weddings!!! {weddingtruck}
F: $18 a head {perhead}
Z: i'm a genius
F: you are

@ 17 19:30 Thu
Z: team bowling was so fun {bowling}
F: i bowled a 182. personal best {182}
Z: marguerite bowled a 40 and still talked trash {marg40}
Z: [photo] team at pinwheel lanes {pinwheel}

@ 18 11:30 Fri
F: theo's last day is in august btw, he's going back to school {theolast}
Z: we'll miss him. the espresso machine won't

@ 19 15:00 Sat
Z: thinking of getting bangs
F: don't
Z: too late {bangs}
Z: [photo] bangs
F: ...they're actually great

@ 20 20:10 Sun
F: sent the wedding invites!! 120 people {invites}
Z: did i make the cut
F: ur literally giving a speech {speech}

? single-hop | What does the Pepper & Pine rebrand include? | rebrand
? single-hop | What did Zara order at El Güero? | tacos
? single-hop | How did Felix rate the fish tacos? | fish
? single-hop | What brand is the new office espresso machine? | marzocca
? single-hop | What venue did Felix book for the wedding? | venue, venuedate
? single-hop | What is the date of Felix's wedding? | venuedate
? single-hop | Where did Zara's car get towed? | midtown
? single-hop | What was wrong with Zara's car? | alternator
? single-hop | How long is Felix's Duolingo streak? | streak
? single-hop | What can Felix say in Spanish? | library
? single-hop | What's the new intern's name? | theo
? single-hop | What did Theo break on his first day? | intern
? single-hop | What's new at the taco truck? | salsa
? single-hop | What did the client want changed on the packaging? | orange
? single-hop | What score did Zara get on her review? | review
? single-hop | What feedback did Marguerite give Zara? | speakup
? single-hop | How did Theo break the espresso machine? | dishsoap
? single-hop | Why is Zara flying to Atlanta? | atlanta
? single-hop | What degree did Zara's brother finish? | nursing
? single-hop | What cake flavor did Felix and Rhea pick? | cake
? single-hop | What is Zara's brother's name? | jamal
? single-hop | Why did the wedding caterer drop out? | doublebooked
? single-hop | How much per guest does El Güero charge for a wedding? | perhead
? single-hop | What did Felix bowl at the team outing? | 182
? single-hop | Where did the team go bowling? | pinwheel
? single-hop | How many people are invited to Felix's wedding? | invites
? single-hop | What is Zara doing at Felix's wedding? | speech
? single-hop | Which cake flavor did Rhea want? | rhea
? single-hop | What did Marguerite score at bowling? | marg40
? multi-hop | How did the Pepper & Pine deadline change? | deadline1, deadline2
? multi-hop | Who is catering Felix's wedding now, and why? | caterer, weddingtruck
? multi-hop | How long was Zara without her car, and what was wrong with it? | alternator, carback
? multi-hop | What has Theo broken so far? | intern, dishsoap
? multi-hop | What did the client think of the logo, and was the orange change approved? | loved, approved
? multi-hop | What did Felix think of the taco truck's food before it became his caterer? | fish, weddingtruck
? multi-hop | How long did the new espresso machine last? | espresso, broken
? multi-hop | Where is Felix getting married, and how many guests are invited? | venuedate, invites
? multi-hop | Why did Zara go to Atlanta, and what did her mom do at the ceremony? | atlanta, jamal
? multi-hop | When does Theo leave, and what did he do to the espresso machine? | theolast, dishsoap
? temporal | When did Felix book the wedding venue? | venue
? temporal | What day did Zara's car break down? | carwont
? temporal | When did Theo knock the monitor off Felix's desk? | intern
? temporal | When did Zara present the Pepper & Pine work to the client? | loved
? temporal | When did Zara get her car back? | carback
? temporal | What happened the day after Zara's performance review? | broken, dishsoap
? temporal | When was Jamal's graduation? | atlanta, jamal
? temporal | When did Felix's caterer drop out? | caterer
? temporal | When was the team bowling night? | bowling
? temporal | What did Felix say about Theo the day before Zara got bangs? | theolast
? temporal | When were the wedding invites sent? | invites
? temporal | When did the office get its new espresso machine? | espresso
? temporal | When did Felix hit 200 days on Duolingo? | streak
? adversarial | What did Felix's brother study? | nursing
? adversarial | Which venue did Zara book for her wedding? | venuedate
? adversarial | How much did Felix's car repair cost? | alternator
? adversarial | What did Marguerite get on her own review? | review
? adversarial | Which cake flavor did Theo pick? | cake
? adversarial | How many people came to Theo's graduation? | theolast
? adversarial | What did El Güero charge for the bowling night? | perhead
? adversarial | What language is Zara learning on Duolingo? | streak
? paraphrase | What part failed in her vehicle? | alternator
? paraphrase | Who wrecked the coffee maker at work? | dishsoap
? paraphrase | What grade did her manager give her this year? | review
? paraphrase | Which dessert flavors won at the sampling? | cake
? paraphrase | What's his top score at the lanes? | 182
? paraphrase | Where will the couple exchange vows? | venuedate
? paraphrase | Which city did she travel to for her sibling's ceremony? | atlanta
? paraphrase | How many guests got cards in the mail? | invites
""",
)

SIBLINGS = Chat(
    key="nsl",
    owner="nico-sofia-luis",
    start="2024-11-11",
    people={
        "N": Person("Nico", lower=0.8, laughs=("lol", "lmao"), emoji=("😂", "🙄"), abbrev=0.5, typo=0.02),
        "S": Person("Sofia", lower=0.6, laughs=("hahaha", "lol"), emoji=("🥹", "❤️", "🎉"), emoji_rate=0.25),
        "L": Person("Luis", lower=0.95, laughs=("lmaooo", "lol", "💀"), emoji=("💀", "🙏"), abbrev=0.9, typo=0.03),
    },
    turns=780,
    script="""
@ 0 19:30 Mon
S: ok siblings. mom and dad's 35th. we're doing a surprise party {party}
N: finally someone said it
S: saturday the 23rd, tía marta said we can use her backyard {marta}
L: can i make a slideshow {slideshow}
S: yes!! old photos only
~2

@ 1 20:10 Tue
N: budget? i can do 400 {budget}
S: same. luis ur a student, just do the slideshow
L: 🙏 thank u
S: so $800 total {total800}

@ 3 18:15 Thu
L: pepper is limping. like bad. she won't put weight on her back leg {limp}
S: noooo
N: take her to dr. okafor {okafor}
L: mom's taking her saturday

@ 5 13:40 Sat
L: vet says it's a sprain, not torn. 2 weeks of rest {sprain}
L: she has to wear a cone bc she keeps licking it lol {cone}
S: poor baby
N: send pics of the cone

@ 6 16:00 Sun
L: failed my driving test {failed}
L: parallel parking. i hit the cone. the orange one not pepper's {parallel}
N: lmaooo
S: it happens!! i failed twice
L: retake is the 27th {retake}

@ 8 12:30 Tue
N: so. i got the job. ridgeline solar {ridgeline}
N: it's in denver {denver}
S: NICO
S: when do u move
N: january 6th {jan6}
L: can i visit and ski

@ 9 21:20 Wed
L: found the vhs of mom and dad's wedding in the garage {vhs}
L: dad had a MULLET {mullet}
S: SEND IT
N: i need this in the slideshow

@ 10 21:00 Thu
S: ok i wasn't going to say anything until the party but
S: i'm pregnant!!! {pregnant}
S: due in june {june}
N: SOFIA
L: im gonna be an uncle???
S: don't tell mom, i want to tell them at the party {tellparty}
~3

@ 11 09:15 Fri
S: weather says 90% rain saturday {rain}
S: tía marta's yard is going to be a swamp
N: backup?
S: calling casa lupita, they have a back room {lupita}

@ 11 17:40 Fri
S: ok casa lupita works but only sunday. party is SUNDAY now {sunday}
S: 6pm. tell no one. especially mom {sixpm}
L: how do we get them there
N: i'll say it's a dinner for my new job {excuse}

@ 13 21:30 Sun
S: best night ever
S: mom cried at the slideshow and dad couldn't stop laughing at the mullet {mullet2}
N: and then sofia's news 😭😭 {news}
L: dad dropped his fork {fork}
S: [photo] mom's face
~2

@ 14 11:00 Mon
S: uh oh. mom's oven died {oven}
S: thanksgiving is at my place now {tgsofia}
N: i'm on turkey {turkey}
L: ill bring... chips {chips}
S: luis you're making grandma lupe's tamales with me wednesday {tamales}

@ 16 14:20 Wed
L: PASSED!!!!! {passed}
L: parallel parking was perfect
N: proud of u
S: ok now come make tamales

@ 16 21:00 Wed
S: [photo] 4 dozen tamales {dozen}
L: my arms hurt
N: save me the pork ones {pork}

@ 17 18:30 Thu
N: turkey was dry. i'm sorry {dry}
S: it was fine!!
L: the gravy saved it {gravy}
S: mom took 10 tamales home lol {10tamales}

@ 18 21:40 Fri
L: submitted the uc applications!!! {submitted}
L: davis is my first choice {davis}
S: what was ur essay about in the end
L: grandpa's farm in salinas {essay}

@ 19 14:30 Sat
N: confession. i broke mom's blue vase in 2009. not the cat {vase}
S: I KNEW IT
L: the cat was innocent
S: rest in peace mr. whiskers {whiskers}

@ 20 10:00 Sun
L: oregon state application done too {oregon}
N: ok college boy
S: pepper's cone came off today btw, she's running again {coneoff}

? single-hop | Where was the anniversary party first going to be? | marta
? single-hop | Which anniversary are the parents celebrating? | party
? single-hop | How much money is Nico putting toward the party? | budget
? single-hop | What is Luis making for the party? | slideshow
? single-hop | Which leg is Pepper limping on? | limp
? single-hop | Which vet did Nico tell them to take Pepper to? | okafor
? single-hop | What did the vet say was wrong with Pepper? | sprain
? single-hop | Why does Pepper have to wear a cone? | cone
? single-hop | Why did Luis fail his driving test? | parallel
? single-hop | Which company hired Nico? | ridgeline
? single-hop | When does Nico move to Denver? | jan6
? single-hop | What did Luis find in the garage? | vhs
? single-hop | What hairstyle did Dad have at his wedding? | mullet
? single-hop | When is Sofia's baby due? | june
? single-hop | Where was the party moved to? | lupita
? single-hop | What time did the surprise party start? | sixpm
? single-hop | How was Nico going to get the parents to the party? | excuse
? single-hop | How did Dad react to Sofia's news? | fork
? single-hop | Why is Thanksgiving at Sofia's this year? | oven, tgsofia
? single-hop | What is Nico cooking for Thanksgiving? | turkey
? single-hop | Whose tamale recipe are Sofia and Luis making? | tamales
? single-hop | How many tamales did they make? | dozen
? single-hop | Which tamales does Nico want saved for him? | pork
? single-hop | How did Nico's turkey turn out? | dry
? single-hop | How many tamales did Mom take home? | 10tamales
? single-hop | What is Luis's first-choice school? | davis
? single-hop | What was Luis's college essay about? | essay
? single-hop | What did Nico break in 2009? | vase
? single-hop | What was the name of the cat that got blamed for the vase? | whiskers
? multi-hop | Where and when was the party first planned, and when did it end up? | marta, sunday
? multi-hop | Why did the party move away from Tía Marta's backyard? | marta, rain
? multi-hop | How did Luis's driving test go the second time? | failed, passed
? multi-hop | What did the vet find with Pepper, and when did her cone come off? | sprain, coneoff
? multi-hop | How did Dad's mullet end up at the party? | mullet, mullet2
? multi-hop | When did Sofia plan to tell her parents she was pregnant, and how did Dad take it? | tellparty, fork
? multi-hop | Which colleges has Luis applied to? | davis, oregon
? multi-hop | What did Nico cook for Thanksgiving, and how did it turn out? | turkey, dry
? multi-hop | How many tamales did they make, and how many did Mom take home? | dozen, 10tamales
? multi-hop | What excuse did Nico use to get the parents to dinner, and which company is it? | excuse, ridgeline
? temporal | When did Sofia propose the surprise party? | party
? temporal | When did Pepper start limping? | limp
? temporal | When did Luis fail his driving test? | failed
? temporal | When did Nico get the job offer? | ridgeline
? temporal | When did Sofia tell her siblings she was pregnant? | pregnant
? temporal | Which day was the party moved to? | sunday
? temporal | When did Mom's oven die? | oven
? temporal | What did Luis do the day before Thanksgiving besides making tamales? | passed
? temporal | When did Luis submit his UC applications? | submitted
? temporal | When did Nico confess about the vase? | vase
? temporal | What happened the day after the anniversary party? | oven
? temporal | When did Pepper's cone come off? | coneoff
? temporal | When did Luis find the wedding VHS? | vhs
? adversarial | What did Luis confess about the vase? | vase
? adversarial | When is Nico's baby due? | june
? adversarial | Which college did Sofia apply to? | davis
? adversarial | What did the vet say about Mr. Whiskers' leg? | sprain
? adversarial | Which city is Sofia moving to for her new job? | denver
? adversarial | Why did Nico fail his driving test? | parallel
? adversarial | What did Tía Marta cook for the party? | marta
? adversarial | How many pies did Luis bring to Thanksgiving? | chips
? paraphrase | What sort of injury does the family pup have? | sprain
? paraphrase | What unfortunate hairdo did their father sport? | mullet
? paraphrase | Which firm is the eldest brother joining? | ridgeline
? paraphrase | Which restaurant's private space hosted the celebration? | lupita
? paraphrase | When will the newest family member arrive? | june
? paraphrase | Which ornament did the brother smash years ago? | vase
? paraphrase | What rescued the overcooked bird at the holiday meal? | gravy
? paraphrase | Which school tops the teen's wish list? | davis
""",
)

HANNAH_KEV = Chat(
    key="hk",
    owner="hannah-kev",
    start="2025-09-08",
    people={
        "H": Person("Hannah", lower=0.7, laughs=("lol", "hahaha"), emoji=("🧗", "😭", "👀"), abbrev=0.4, typo=0.02),
        "K": Person("Kev", lower=0.95, laughs=("lol", "lmao", "ha"), emoji=("🤙", "😏"), abbrev=0.85, typo=0.03),
    },
    turns=680,
    script="""
@ 0 20:30 Mon
K: gym tmrw? 6?
H: can't, lab meeting. wednesday?
K: wednesday 🧗
~1

@ 0 21:00 Mon
K: also smith rock. last weekend of the month. u in? {smith}
H: YES. i'll be done with my defense by then {smithyes}

@ 2 21:45 Wed
H: I SENT THE PURPLE ONE {v5}
H: first v5!!!! {firstv5}
K: u were so pumped lol i thought u were gonna cry
H: i did a little in the bathroom

@ 4 18:20 Fri
K: brent left dishes in the sink for 6 days. there's a smell {brent}
H: ew. put them on his bed
K: i'm not a monster. yet

@ 5 11:00 Sat
K: coffee? drip theory at noon? {driptheory}
H: ok 👀
~2

@ 5 15:10 Sat
H: that was fun
K: ya. u still owe me a cortado lol {cortado}

@ 7 17:30 Mon
H: my bike got stolen outside the library {bike}
H: i locked it!!! they cut the lock {cutlock}
K: nooo ur teal bike?? {teal}
H: filing a police report rn

@ 8 09:00 Tue
H: defense is in 8 days and i haven't finished my slides {slides}
K: u got this. what's it on again
H: microplastics in river sediment. 4 years of my life {microplastics}

@ 9 20:50 Wed
K: tweaked my finger on the overhang {finger}
K: physio says a2 pulley. no climbing for 4 weeks {pulley}
H: KEV
K: so smith rock is probably out
H: ugh ok

@ 10 22:10 Thu
K: chef made me sous chef today!!! {souschef}
H: WHAT
H: at fennel??
K: at fennel. i get my own station and a raise {fennel}

@ 11 19:15 Fri
K: brent is moving out!! {brentmoving}
K: his girlfriend's place. end of the month {brentgf}
H: the dishes won

@ 12 13:30 Sat
K: i have 2 tickets to lumen fade tonight. u wanna come?? {lumenfade}
H: i can't, defense prep 😭 {cantgo}
K: ok i'll take my cousin mel {mel}
~1

@ 12 22:40 Sat
K: [photo] lumen fade was amazing
K: mel lost her voice from screaming {melvoice}

@ 13 19:00 Sun
H: ok i need a break. dinner?
K: han table? the korean place on burnside {hantable}
H: yes. bibimbap. 7:30? {bibimbap}

@ 14 10:20 Mon
H: SOMEONE IS SELLING MY BIKE ON MARKETPLACE {marketplace}
H: same sticker and everything
K: DO NOT go alone
H: the police are gonna meet me there tomorrow {policeplan}

@ 15 16:45 Tue
H: GOT MY BIKE BACK {bikeback}
H: the guy said he "found it" lol {foundit}
K: the police actually came??
H: 2 officers. he handed it over in like 30 seconds {officers}

@ 16 17:30 Wed
H: I PASSED {passed}
H: DR. HANNAH {drhannah}
K: DR HANNAH!!!!
H: minor revisions. the committee was nice. one guy asked about sediment for 20 min {committee}
~3

@ 17 12:00 Thu
K: smith rock update, i called the campground. moved our spot to october 18 {october}
H: perfect honestly
H: my mom's flying in saturday anyway {momvisit}

@ 18 20:40 Fri
K: new roommate moving in. his name is otis and he has a snake {otis}
H: what kind of snake
K: a ball python named noodle {noodle}
H: absolutely not coming over

@ 19 21:00 Sat
H: mom loved fennel!!! {momfennel}
H: she said the duck was the best she's ever had {duck}
K: i made that duck
H: i know 😏

@ 20 15:20 Sun
H: dropped mom at the airport. she cried. i cried
K: wanna do a chill climb? i'll belay only {belay}
H: deal. 5pm?

? single-hop | What climbing grade did Hannah send for the first time? | firstv5
? single-hop | Which boulder problem did Hannah send on Wednesday? | v5
? single-hop | Which coffee shop did Hannah and Kev go to? | driptheory
? single-hop | What does Hannah owe Kev? | cortado
? single-hop | Where was Hannah's bike stolen? | bike
? single-hop | What color is Hannah's bike? | teal
? single-hop | How did the thief get Hannah's bike? | cutlock
? single-hop | What is Hannah's thesis about? | microplastics
? single-hop | What did Kev injure? | pulley
? single-hop | How long can't Kev climb? | pulley
? single-hop | What's Kev's new job title? | souschef
? single-hop | Which restaurant does Kev work at? | fennel
? single-hop | Where is Brent moving? | brentgf
? single-hop | Which band did Kev see on Saturday? | lumenfade
? single-hop | Who went to the concert with Kev? | mel
? single-hop | What happened to Mel at the concert? | melvoice
? single-hop | Where did Hannah and Kev have dinner on Sunday? | hantable
? single-hop | What did Hannah want at Han Table? | bibimbap
? single-hop | Where did Hannah find her stolen bike for sale? | marketplace
? single-hop | How many police officers came to get the bike back? | officers
? single-hop | What did the seller say about the bike? | foundit
? single-hop | What kind of revisions did Hannah's committee ask for? | committee
? single-hop | When is the Smith Rock trip now? | october
? single-hop | What is Kev's new roommate called? | otis
? single-hop | What kind of snake does Otis have? | noodle
? single-hop | What dish did Hannah's mom love at Fennel? | duck
? single-hop | Why did Hannah skip the concert? | cantgo
? single-hop | How many days did Brent leave his dishes? | brent
? multi-hop | Why was the Smith Rock trip postponed, and to when? | pulley, october
? multi-hop | How did Hannah get her stolen bike back? | marketplace, bikeback
? multi-hop | What happened between Kev and his roommate Brent? | brent, brentmoving
? multi-hop | Where does Kev work, and what did Hannah's mom think of it? | fennel, momfennel
? multi-hop | How did Hannah's defense on microplastics go? | microplastics, passed
? multi-hop | Hannah said she'd be done with her defense by the Smith Rock trip; did the trip happen as planned? | smithyes, october
? multi-hop | Who is moving into Brent's room, and what pet comes with him? | brentmoving, otis
? multi-hop | What did the bike thief cut, and what did he say when caught? | cutlock, foundit
? multi-hop | When did Hannah's mom fly in, and where did they eat? | momvisit, momfennel
? multi-hop | Where did Hannah and Kev go for coffee, and where for dinner later? | driptheory, hantable
? temporal | When did Hannah send her first V5? | firstv5
? temporal | When was Hannah's bike stolen? | bike
? temporal | When did Kev hurt his finger? | finger
? temporal | When did Kev become sous chef? | souschef
? temporal | When was the Lumen Fade concert? | lumenfade
? temporal | When did Hannah defend her thesis? | passed
? temporal | What happened the day before Hannah's defense? | bikeback
? temporal | When did Hannah spot her bike on Marketplace? | marketplace
? temporal | When did Kev and Hannah get coffee at Drip Theory? | driptheory
? temporal | What did Kev tell Hannah the day after he hurt his finger? | souschef
? temporal | When did Kev tell Hannah about Otis? | otis
? temporal | When did Kev first bring up Smith Rock? | smith
? temporal | When did Hannah's mom have dinner at Fennel? | momfennel
? adversarial | What grade did Kev send on Wednesday? | firstv5
? adversarial | What color is Kev's bike? | teal
? adversarial | What is Kev's thesis about? | microplastics
? adversarial | What did Hannah's mom order at Han Table? | bibimbap
? adversarial | What kind of snake does Brent have? | noodle
? adversarial | How many officers came when Kev's car was broken into? | officers
? adversarial | Which band did Hannah see with Mel? | mel
? adversarial | What did the physio say about Hannah's finger? | pulley
? paraphrase | What sidelined him from the rock gym? | pulley
? paraphrase | Which espresso bar hosted their first outing? | driptheory
? paraphrase | What does her research examine? | microplastics
? paraphrase | What kitchen rank did he earn? | souschef
? paraphrase | Where did her stolen two-wheeler turn up for sale online? | marketplace
? paraphrase | What reptile lives with the newcomer? | noodle
? paraphrase | What creature does the incoming flatmate keep? | otis
? paraphrase | Which bird dish wowed her mother? | duck
""",
)

OMAR_JESS = Chat(
    key="oj",
    owner="omar-jess",
    start="2024-09-02",
    people={
        "O": Person("Omar", lower=0.4, laughs=("haha", "lol"), emoji=("👍", "🙏"), emoji_rate=0.1, abbrev=0.2),
        "J": Person("Jess", lower=0.6, laughs=("lol", "haha", "lolol"), emoji=("😅", "🙌", "❤️"), typo=0.02),
    },
    turns=660,
    script="""
@ 0 14:00 Mon
J: happy labor day neighbor! carpool this season? {carpool}
O: yes please. i can do tuesdays {tuesdays}
J: i'll take thursdays then {thursdays}
O: practice is 5:30 at riverside park right? {riverside}
J: yep, coach dani said 5:30 sharp {dani}

@ 1 18:45 Tue
O: kids dropped. zain forgot his shin guards again {shinguards}
J: lily has a spare pair in my trunk, i'll bring them thursday

@ 3 07:40 Thu
O: woke up to water dripping from the ceiling in zain's room {roofleak}
J: oh no! the storm last night?
O: must be. bucket on his bed lol
~1-

@ 5 12:30 Sat
J: 3-2!!! we beat the hornets {hornets}
O: zain scored his first goal ever!!! {zaingoal}
J: and lily saved a penalty 😭 {lilysave}
O: proud soccer parents
J: [photo] the team with the orange slices

@ 6 17:20 Sun
O: roofer came. bill from summit roofing. $4,200 {summit}
J: yikes
J: get a second quote. pete used apex for our garage {apex}
O: calling them tomorrow

@ 8 08:15 Tue
O: my car's in the shop, can you do today's carpool? {carshop}
J: sure! you take my thursday? {swap}
O: deal

@ 9 20:00 Wed
J: rania's lentil soup at the block meeting was amazing. recipe?? {lentil}
O: she says: red lentils, cumin, lemon at the end. the lemon is key {lemonkey}
J: making it friday

@ 10 15:30 Thu
O: apex quoted $3,100 {apexquote}
J: that's way better
O: and they can start next week {nextweek}
~1

@ 10 19:00 Thu
J: picture day was today, lily refused to smile {pictureday}
O: zain wet his hair and combed it flat. he looks like a tiny accountant {accountant}

@ 11 19:30 Fri
J: made the lentil soup. kids had seconds!! {seconds}
O: rania will be thrilled

@ 12 16:00 Sat
O: going with apex. signed today {signed}
J: yay
J: block party tonight, you grilling? {blockparty}
O: burgers and kofta. pete's on music right? {kofta}
J: he made a playlist called "cul-de-sac bangers" {playlist}

@ 13 11:20 Sun
J: lily announced she's going to be a jellyfish for halloween {jellyfish}
O: zain wants to be a t-rex {trex}
J: how does one make a jellyfish costume
O: umbrella and streamers? {umbrella}

@ 14 17:00 Mon
J: ugh lice note from school. 2nd grade {lice}
O: zain's class 😩
J: checking heads tonight
~1-

@ 15 08:30 Tue
J: BISCUIT GOT OUT {dogout}
J: gate was open, he's gone
O: i'll check the park, grabbing my shoes
~1-

@ 15 09:10 Tue
O: got him! he was at the park chasing ducks {ducks}
J: omg thank you. he's grounded

@ 17 16:30 Thu
O: apex finished the roof!!! {roofdone}
O: two days, no more buckets {twodays}
J: celebrate with lentil soup lol

@ 18 20:30 Fri
J: fun run raised $3,400!!! {funrun}
J: that's $600 over our goal {goal}
O: you organized that whole thing, you should be proud {organized}
J: zain ran 12 laps!! {laps}

@ 19 14:00 Sat
O: change of plans: zain is now an astronaut. the t-rex is "for babies" {astronaut}
J: lol. lily is still a jellyfish
J: pete's mom is here til sunday night btw, so no carpool favors this weekend {pmom}

@ 20 18:00 Sun
J: [photo] lily's jellyfish test run {jellytest}
O: the umbrella worked!!
J: she bumped into 3 walls but she's happy {walls}

? single-hop | Which day does Omar drive the soccer carpool? | tuesdays
? single-hop | Where is soccer practice? | riverside
? single-hop | Who is the kids' soccer coach? | dani
? single-hop | What did Zain forget at practice? | shinguards
? single-hop | Which team did they beat on Saturday? | hornets
? single-hop | What was the score against the Hornets? | hornets
? single-hop | What did Lily do in the game? | lilysave
? single-hop | Which roofing company gave Omar the first quote? | summit
? single-hop | How much was Summit Roofing's quote? | summit
? single-hop | Who used Apex before? | apex
? single-hop | What is the secret to Rania's lentil soup? | lemonkey
? single-hop | How much did Apex quote for the roof? | apexquote
? single-hop | What did Zain look like on picture day? | accountant
? single-hop | What is Omar grilling at the block party? | kofta
? single-hop | What is Pete's block party playlist called? | playlist
? single-hop | What is Lily going to be for Halloween? | jellyfish
? single-hop | How did Omar suggest making the jellyfish costume? | umbrella
? single-hop | Which grade got the lice note? | lice
? single-hop | Where was Biscuit found? | ducks
? single-hop | How long did Apex take to do the roof? | twodays
? single-hop | How much did the fun run raise? | funrun
? single-hop | How many laps did Zain run? | laps
? single-hop | How far over the goal did the fun run come in? | goal
? single-hop | Who is visiting Jess this weekend? | pmom
? single-hop | Why is Zain no longer going as a T-rex? | astronaut
? single-hop | How many walls did Lily bump into in her costume? | walls
? single-hop | Whose car was in the shop? | carshop
? single-hop | Did the kids like Jess's lentil soup? | seconds
? multi-hop | How did the leak in Zain's room get fixed in the end? | roofleak, roofdone
? multi-hop | What were the two roofing quotes Omar got? | summit, apexquote
? multi-hop | What is Zain's Halloween costume now, and what was it before? | trex, astronaut
? multi-hop | How did the carpool days change the week Omar's car was in the shop? | tuesdays, swap
? multi-hop | Whose lentil soup recipe did Jess make, and how did it go? | lentil, seconds
? multi-hop | Did the umbrella idea for the jellyfish costume work? | umbrella, jellytest
? multi-hop | Who recommended the roofer Omar hired, and when did they finish? | apex, roofdone
? multi-hop | What did Lily do at the Hornets game and on picture day? | lilysave, pictureday
? multi-hop | What did Zain forget at practice, and what did he do in his first game? | shinguards, zaingoal
? multi-hop | When did Omar sign with Apex, and for how much? | signed, apexquote
? temporal | When did Omar and Jess set up the carpool? | carpool
? temporal | When did Omar find the roof leak? | roofleak
? temporal | When was the game against the Hornets? | hornets
? temporal | When did Summit Roofing come out? | summit
? temporal | When did Omar's car go into the shop? | carshop
? temporal | When was picture day? | pictureday
? temporal | When did Omar sign with Apex? | signed
? temporal | When was the block party? | blockparty
? temporal | When did Biscuit escape? | dogout
? temporal | What happened the day after the lice note? | dogout, ducks
? temporal | When did Apex finish the roof? | roofdone
? temporal | When was the school fun run? | funrun
? temporal | What happened the day before the block party? | seconds
? adversarial | Which day does Pete drive the carpool? | thursdays
? adversarial | What did Lily score in the Hornets game? | lilysave
? adversarial | What did Jess's roof repair cost? | apexquote
? adversarial | Where was Rania's dog found? | ducks
? adversarial | What is Zain's sister going to be for Halloween? | jellyfish
? adversarial | What did Pete cook at the block party? | kofta
? adversarial | How many laps did Lily run at the fun run? | laps
? adversarial | What did Coach Dani say about the lice? | lice
? paraphrase | Which crew did her husband once employ? | apex
? paraphrase | Which seasoning goes in last in the bean stew? | lemonkey
? paraphrase | Where did the runaway hound end up? | ducks
? paraphrase | What profession did the lad resemble in his school portrait? | accountant
? paraphrase | How much cash did the charity race bring in? | funrun
? paraphrase | Who kept the ball out on a spot kick? | lilysave
? paraphrase | What sea creature will the girl dress as? | jellyfish
? paraphrase | Which space-themed outfit replaced the dinosaur? | astronaut
""",
)

CHATS = (MAYA_JO, FRIENDS_GROUP, LENA_MARCO, TYLER_GRANDMA, ZARA_FELIX, SIBLINGS, HANNAH_KEV, OMAR_JESS)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
