"""Synthetic facts and queries for the speed benchmark, deterministic from a seed.

Fact `i` depends only on (seed, i), so a lane grown from 10k to 100k memories holds
the same first 10k facts as a fresh 10k lane, and a query can ask about any fact
by regenerating it. Facts read like what an agent remembers -- preferences,
configuration values, people, dates, money, incidents -- 6 to 30 words, with
names and numbers; queries are questions about one fact each, in other words.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

FIRST = """Hana Lukas Priya Omar Sofia Mateo Aiko Jonas Leila Tomasz Amara Felix Ines Ravi Clara Yusuf Mei Anders
Chiara Kofi Elena Diego Nadia Pavel Zara Hugo Ingrid Malik Rosa Kenji Astrid Bruno Lina Samir Freya Marco Noor
Viktor Alma Tariq Greta Luis Sana Emil Daria Jamal Olga Nico Ayla Hamid Petra Rui Selma Oskar Maya Idris Vera
Carlos Yara Stefan Lea Farid Ida Arjun Mira Teo Zoe Henrik Lucia Bilal Nina Sven Iris Karim Eva Dmitri Ana""".split()
LAST = """Novak Tanaka Okafor Lindqvist Moreau Rossi Haddad Kowalski Silva Jensen Park Fischer Costa Nakamura Ibrahim
Berg Dubois Marin Schulz Petrov Almeida Sato Hansen Romano Yilmaz Keller Vargas Ito Nilsson Duarte""".split()
CITIES = """Lisbon Osaka Nairobi Oslo Lyon Porto Krakow Montreal Seoul Austin Tbilisi Valencia Gdansk Leeds Hobart
Quito Bergen Turin Cork Tampere Busan Dakar Graz Ghent Bilbao Perth Halifax Kyoto Accra Zagreb Lagos Malmo Utrecht
Denver Hanoi Dublin Medellin Tallinn Boise Adelaide""".split()
PROJECTS = """atlas bramble cobalt dynamo ember falcon granite harbor iris juniper kestrel lumen mosaic nimbus onyx
pylon quartz raven sable tundra umber vortex willow xenon yarrow zephyr beacon cinder drift fable""".split()
COMPANIES = """Northwind Acme Globex Initech Umbrella Stark Wayne Tyrell Cyberdyne Hooli Vandelay Soylent Wonka
Oscorp Aperture Gringotts Monarch Pied Piper Dunder Blue Sun""".split()
DRINKS = [
    "espresso",
    "green tea",
    "an oat latte",
    "rooibos",
    "cold brew",
    "a flat white",
    "chai",
    "matcha",
    "sparkling water",
    "decaf",
    "black tea with honey",
    "a cortado",
]
FOODS = "peanuts shellfish gluten dairy sesame eggs soy kiwi mustard celery".split()
MEALS = [
    "vegetarian curry",
    "sushi platters",
    "pasta salad",
    "tacos",
    "falafel wraps",
    "ramen",
    "dumplings",
    "grilled vegetables",
    "lentil soup",
]
COMPONENTS = [
    "login page",
    "billing service",
    "search index",
    "upload worker",
    "cache layer",
    "token refresh",
    "email digest",
    "export job",
    "payment webhook",
    "session store",
    "image resizer",
    "rate limiter",
    "audit log",
    "backup job",
]
TOPICS = [
    "pricing",
    "the database migration",
    "the hiring plan",
    "the security review",
    "the roadmap",
    "onboarding",
    "the vendor contract",
    "data retention",
    "the office move",
    "the incident review",
    "quarterly goals",
    "the accessibility audit",
    "the mobile release",
    "customer churn",
    "the API deprecation",
]
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
MONTHS = "January February March April May June July August September October November December".split()
REGIONS = "us-east-1 us-west-2 eu-central-1 eu-west-1 ap-southeast-2 ap-northeast-1".split()
ENVS = "staging production canary preview".split()
TEAMS = "platform design growth support data mobile infra research sales finance".split()
RELATIONS = "sister brother cousin aunt uncle neighbour manager mentor".split()
JOBS = "nurse architect chef pilot teacher translator welder dentist carpenter journalist".split()
HOBBIES = [
    "bouldering",
    "the cello",
    "sourdough baking",
    "trail running",
    "chess",
    "pottery",
    "sailing",
    "birdwatching",
    "salsa dancing",
    "woodworking",
]
CHANNELS = "Slack email SMS PagerDuty Teams".split()
SEVERITY = "critical high-severity customer-facing security".split()
CURRENCY = "EUR USD GBP JPY NOK".split()
REASONS = [
    "because the old one kept timing out",
    "after the outage last spring",
    "to keep costs down",
    "as agreed in the planning meeting",
    "since the team is spread over three time zones",
    "because the customer asked for it twice",
    "until the audit is finished",
    "on the advice of legal",
]
TAILS = [
    "according to {n2}",
    "as {n2} confirmed on {wd}",
    "noted during the call about {topic}",
    "per the {team} team",
    "which {n2} wants written down",
    "see the ticket {PROJ}-{t}",
]

Fact = tuple[str, str]  # (text, question about it)


def _name(r: random.Random) -> str:
    return r.choice(FIRST)


def _full(r: random.Random) -> str:
    return f"{r.choice(FIRST)} {r.choice(LAST)}"


def _templates(r: random.Random) -> list[Callable[[], Fact]]:
    n, n2, city, proj, co = _name(r), _name(r), r.choice(CITIES), r.choice(PROJECTS), r.choice(COMPANIES)
    wd, month, day, year = r.choice(WEEKDAYS), r.choice(MONTHS), r.randint(1, 28), r.randint(2019, 2026)
    num, amount, cur = r.randint(2, 90), f"{r.randint(2, 950)},{r.randint(0, 999):03d}", r.choice(CURRENCY)
    hh, mm = r.randint(6, 22), r.choice(["00", "15", "30", "45"])
    comp, topic, team = r.choice(COMPONENTS), r.choice(TOPICS), r.choice(TEAMS)
    ver = f"{r.randint(0, 9)}.{r.randint(0, 30)}.{r.randint(0, 40)}"
    return [
        lambda: (
            f"{n} {r.choice(LAST)} prefers {r.choice(DRINKS)} in the morning and never drinks coffee after {hh % 12 + 1} pm",
            f"What does {n} like to drink in the morning?",
        ),
        lambda: (
            f"The {proj} {r.choice(ENVS)} server listens on port {r.randint(1024, 65000)} in {r.choice(REGIONS)}",
            f"Which port does the {proj} server use?",
        ),
        lambda: (
            f"{n}'s {r.choice(RELATIONS)} {n2} lives in {city} and works as a {r.choice(JOBS)}",
            f"Where does {n}'s relative {n2} live?",
        ),
        lambda: (
            f"Deploys of {proj} go out on {wd}s at {hh}:{mm} UTC from {r.choice(REGIONS)}",
            f"When are {proj} deployments scheduled?",
        ),
        lambda: (
            f"{_full(r)} moved to {city} in {month} {year} after {num % 15 + 1} years in {r.choice(CITIES)}",
            f"When did the move to {city} happen?",
        ),
        lambda: (
            f"The {team} team's budget for Q{r.randint(1, 4)} {year} is {amount} {cur}",
            f"How much budget does the {team} team have?",
        ),
        lambda: (
            f"{proj} {ver} fixed the {comp} bug that {n} reported",
            f"Which release fixed the {comp} problem in {proj}?",
        ),
        lambda: (
            f"{n} wants {r.choice(CHANNELS)} notifications only for {r.choice(SEVERITY)} incidents on {proj} "
            f"between {hh % 12 + 7}:{mm} and {hh % 6 + 18}:00",
            f"How does {n} want to hear about {proj} incidents?",
        ),
        lambda: (
            f"{n} is allergic to {r.choice(FOODS)}, so order {r.choice(MEALS)} for the {team} offsite",
            f"What food should we order for {n} at the offsite?",
        ),
        lambda: (
            f"Invoice {r.randint(10000, 99999)} from {co} for {amount} {cur} is due on {month} {day}",
            f"When is the {co} invoice due?",
        ),
        lambda: (
            f"{n} ran {num % 40 + 5} km in {r.randint(30, 240)} minutes at the {city} marathon in {year}",
            f"How far did {n} run in {city}?",
        ),
        lambda: (
            f"The {proj} database backup runs every {r.randint(1, 24)} hours, keeps {num} days of snapshots "
            f"in {r.choice(REGIONS)} and pages {n} on failure",
            f"How often is the {proj} database backed up?",
        ),
        lambda: (
            f"The meeting with {co} about {topic} moved to {wd} at {hh}:{mm}",
            f"When is the {co} meeting about {topic}?",
        ),
        lambda: (
            f"{n} took up {r.choice(HOBBIES)} in {month} {year} and practises with {_full(r)} every {wd}",
            f"What hobby did {n} start?",
        ),
        lambda: (
            f"Flight {r.choice('LH BA AF KL SK TP IB'.split())}{r.randint(100, 9999)} to {city} leaves at "
            f"{hh}:{mm} from gate {r.choice('ABCDE')}{r.randint(1, 60)} on {month} {day}",
            f"When does the flight to {city} leave?",
        ),
        lambda: (
            f"{proj} requires Python {r.choice(['3.10', '3.11', '3.12', '3.13'])}, PostgreSQL {r.randint(12, 17)} "
            f"and {r.randint(2, 64)} GB of RAM on {r.choice(ENVS)} since {ver}",
            f"Which Python version does {proj} need?",
        ),
        lambda: (
            f"{co} signed a {num % 5 + 1}-year contract for {amount} {cur} with {n} as the account owner",
            f"Who owns the {co} account?",
        ),
        lambda: (
            f"The {team} on-call rotation switches every {wd} at {hh}:{mm} and {n} covers {month}",
            f"Who is on call for {team} in {month}?",
        ),
        lambda: (
            f"{n} {r.choice(LAST)} joined the {team} team on {month} {day}, {year} as a senior engineer",
            f"When did {n} join the {team} team?",
        ),
        lambda: (
            f"Incident {proj.upper()}-{r.randint(100, 9999)}: the {comp} dropped {num}% of requests for "
            f"{r.randint(3, 180)} minutes on {month} {day}",
            f"What happened in the {comp} incident on {proj}?",
        ),
        lambda: (
            f"Set MAX_{comp.split()[0].upper()}_WORKERS={num % 32 + 1} on the {proj} {r.choice(ENVS)} hosts from {ver} on",
            f"How many {comp} workers should {proj} run?",
        ),
        lambda: (
            f"{n} {r.choice(LAST)} does NOT want calls before {hh % 5 + 8} am or on {wd}s unless {n2} says it is urgent",
            f"When can we call {n}?",
        ),
        lambda: (
            f"The {city} office on floor {r.randint(1, 40)} has {num * 3} desks, {r.randint(1, 12)} meeting rooms and "
            f"closes at {hh % 4 + 17}:{mm}",
            f"How big is the {city} office?",
        ),
        lambda: (
            f"{n} {r.choice(LAST)} uses a {r.choice(['ThinkPad', 'MacBook', 'Framework', 'Linux desktop'])} with "
            f"{r.choice([8, 16, 32, 64])} GB",
            f"What computer does {n} use?",
        ),
        lambda: (f"{n} {r.choice(LAST)} lives in {city} since {year}", f"Where does {n} live?"),
        lambda: (
            f"{n} recommended {_full(r)}'s book on {topic} for the {team} reading group",
            f"Which book did {n} recommend?",
        ),
    ]


def _sized(r: random.Random, text: str) -> str:
    """Lengthen short facts with a reason or a source, so lengths spread over 6..30 words."""
    words = len(text.split())
    if words < 14 and r.random() < 0.6:
        text += " " + r.choice(REASONS)
    if len(text.split()) < 22 and r.random() < 0.35:
        text += ", " + r.choice(TAILS).format(
            n2=_name(r),
            wd=r.choice(WEEKDAYS),
            topic=r.choice(TOPICS),
            team=r.choice(TEAMS),
            PROJ=r.choice(PROJECTS).upper(),
            t=r.randint(1, 9999),
        )
    return " ".join(text.split()[:30])


def fact(seed: int, index: int) -> Fact:
    """(text, question) of fact number `index`."""
    r = random.Random(seed * 1_000_003 + index)
    templates = _templates(r)
    text, question = templates[r.randrange(len(templates))]()
    return _sized(r, text), question


def facts(seed: int, start: int, stop: int) -> Iterator[str]:
    for index in range(start, stop):
        yield fact(seed, index)[0]


def queries(seed: int, size: int, count: int) -> list[str]:
    """`count` distinct questions about facts among the first `size`."""
    r = random.Random(seed * 7919 + size)
    out: dict[str, None] = {}
    while len(out) < count:
        out.setdefault(fact(seed, r.randrange(size))[1] + r.choice(["", "", " Remind me.", " Do we know?"]), None)
    return list(out)


def remember_texts(seed: int, tag: str, count: int) -> list[str]:
    """Fresh facts for the remember-latency phases (outside the measured lane's fact numbers)."""
    base = 10**9 + sum(map(ord, tag)) * 10**6
    return [fact(seed, base + i)[0] for i in range(count)]
