"""Build benchmarks/data/agent_facts.jsonl: what a coding or ops agent remembers for its user.

    python benchmarks/data/make_agent_facts.py            # rewrites agent_facts.jsonl next to this file
    python benchmarks/data/make_agent_facts.py --check    # exits 1 if agent_facts.jsonl is out of date

Six units (one owner each): four projects, one data scientist's own habits across her
projects, one freelancer's clients. Each holds about 250 facts of the kinds an assistant is
asked to keep: preferences and conventions, decisions with their reasons, config values that
differ by environment, versions, dates and incidents, people, negations ("we do NOT use
Redis for sessions") and changes over time (the old fact stays, dated; the new one says what
moved: "moved the deploy day from Friday to Thursday"). Siblings that differ in one value
(staging vs production, two releases, two clients) are the distractors.

What is hand-written: the facts and the questions. What is generated, from one seeded
`random.Random` per unit: the sentences of the tabular facts (each environment setting,
version and person in one of a few phrasings), the date of every fact that carries none, and
the order of the file (by date, as an agent would have remembered them).

Fact format (one unit's `facts` is one string):   label | 2025-02-10 | text   (date may be empty)
Question format:                                   ? category | text | label, label

Categories: paraphrase (shares no content word, after stemming, with its evidence: checked
when the file is built), name (asks by a person's, tool's or service's name), number (by or
for a number: a port, a size, a count, a price), date (when, or what happened then), negation
(what is not done or not used), update (the current value of something that changed, or
what it was before), multi-hop (two or three facts together answer it).

Memory ids: `<unit>-<label>`; generated labels are `env.<setting>.<environment>`,
`ver.<component>` and `who.<person>`.
"""

from __future__ import annotations

import json
import random
import re
import sys
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

OUT = Path(__file__).with_name("agent_facts.jsonl")
CATEGORIES = ("paraphrase", "name", "number", "date", "negation", "update", "multi-hop")


@dataclass(frozen=True)
class Unit:
    key: str
    owner: str
    name: str  # how its facts name the project or person ("Harbor")
    start: str  # undated facts fall between start and end
    end: str
    facts: str
    questions: str
    # (label, what, value per environment): "Harbor staging: the log level is DEBUG."
    settings: tuple[tuple[str, str, str, str], ...] = ()
    envs: tuple[str, str] = ("staging", "production")
    setting_phrases: tuple[str, ...] = ()  # if not SETTING_PHRASES
    versions: tuple[tuple[str, str, str], ...] = ()  # (label, component, version)
    people: tuple[tuple[str, str, str, str, str], ...] = ()  # (label, name, role, place, note)


SETTING_PHRASES = (
    "{unit} {env}: the {what} is {value}.",
    "{unit}'s {what} in {env} is {value}.",
    "{What} for {unit} {env}: {value}.",
    "The {env} {what} of {unit} is {value}.",
)
VERSION_PHRASES = (
    "{unit} runs {component} {version}.",
    "{component} in {unit} is at version {version}.",
    "{unit} is on {component} {version}.",
    "Current {component} version for {unit}: {version}.",
)
PERSON_PHRASES = (
    "{name} is {role} ({place}). {note}",
    "{name}: {role}, based in {place}. {note}",
    "{Role}: {name}, in {place}. {note}",
)


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def unit_facts(unit: Unit, rng: random.Random) -> list[tuple[str, str | None, str]]:
    """Every fact of the unit as (label, date or None, text)."""
    facts: list[tuple[str, str | None, str]] = []
    for number, raw in enumerate(unit.facts.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = [part.strip() for part in line.split("|", 2)]
        if len(parts) != 3 or not parts[0] or not parts[2]:
            raise ValueError(f"{unit.key} fact line {number}: expected 'label | date | text': {line!r}")
        label, day, text = parts
        if day:
            date.fromisoformat(day)
        facts.append((label, day or None, text))
    for label, what, *values in unit.settings:
        for env, value in zip(unit.envs, values):
            phrase = rng.choice(unit.setting_phrases or SETTING_PHRASES)
            text = phrase.format(unit=unit.name, env=env, what=what, What=_upper_first(what), value=value)
            facts.append((f"env.{label}.{env.replace(' ', '-')}", None, text))
    for label, component, version in unit.versions:
        text = rng.choice(VERSION_PHRASES).format(unit=unit.name, component=component, version=version)
        facts.append((f"ver.{label}", None, _upper_first(text)))
    for label, name, role, place, note in unit.people:
        phrase = rng.choice(PERSON_PHRASES)
        text = phrase.format(name=name, role=role, Role=_upper_first(role), place=place, note=note).strip()
        facts.append((f"who.{label}", None, text))
    return facts


def build_unit(unit: Unit) -> tuple[list[dict], list[dict]]:
    rng = random.Random(f"agent_facts/{unit.key}")
    facts = unit_facts(unit, rng)
    labels = [label for label, _, _ in facts]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise ValueError(f"{unit.key}: labels used twice: {repeated}")
    if not 220 <= len(facts) <= 280:
        raise ValueError(f"{unit.key}: {len(facts)} facts; a unit has about 250")

    first, last = date.fromisoformat(unit.start), date.fromisoformat(unit.end)
    span = (last - first).days
    memories: list[dict] = []
    for label, day, text in facts:
        when = date.fromisoformat(day) if day else first + timedelta(days=rng.randrange(span))
        moment = datetime(when.year, when.month, when.day, tzinfo=timezone.utc) + timedelta(
            minutes=rng.randint(8 * 60, 19 * 60)
        )
        memories.append(
            {
                "type": "memory",
                "id": f"{unit.key}-{label}",
                "owner": unit.owner,
                "text": text,
                "occurred_at": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
        )
    memories.sort(key=lambda memory: memory["occurred_at"])
    by_label = {memory["id"][len(unit.key) + 1 :]: memory for memory in memories}

    queries: list[dict] = []
    for number, raw in enumerate(unit.questions.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = [part.strip() for part in line.lstrip("?").split("|")]
        if not line.startswith("?") or len(parts) != 3 or parts[0] not in CATEGORIES:
            raise ValueError(f"{unit.key} question line {number}: expected '? category | text | labels': {line!r}")
        category, text, cited = parts[0], parts[1], [label.strip() for label in parts[2].split(",")]
        missing = [label for label in cited if label not in by_label]
        if missing:
            raise ValueError(f"{unit.key}: question {text!r} cites unknown labels {missing}")
        evidence = [by_label[label] for label in cited]
        if category == "multi-hop" and len(evidence) < 2:
            raise ValueError(f"{unit.key}: multi-hop question {text!r} needs two or three facts")
        if category == "paraphrase":
            shared = set(content_stems(text)) & {s for memory in evidence for s in content_stems(memory["text"])}
            if shared:
                raise ValueError(f"{unit.key}: paraphrase {text!r} shares {sorted(shared)} with its evidence")
        queries.append(
            {
                "type": "query",
                "id": f"{unit.key}-q{len(queries) + 1:02d}",
                "owner": unit.owner,
                "query": text,
                "evidence": [memory["id"] for memory in evidence],
                "category": category,
            }
        )
    if not 55 <= len(queries) <= 65:
        raise ValueError(f"{unit.key}: {len(queries)} questions; a unit has about 60")
    return memories, queries


def content_stems(text: str) -> list[str]:
    """The stems of a text's content words as the word search sees them: recall's stop-words
    dropped, the rest stemmed (numbers kept as they are)."""
    from py_rust_stemmers import SnowballStemmer

    from memwal_mcp.recall.lexical import STOPWORDS

    stemmer = SnowballStemmer("english")
    words = re.findall(r"\w+", text.casefold().replace("'", "").replace("’", ""))
    return [stemmer.stem_word(word) for word in words if word not in STOPWORDS]


def build() -> list[dict]:
    memories: list[dict] = []
    queries: list[dict] = []
    for unit in UNITS:
        unit_memories, unit_queries = build_unit(unit)
        memories += unit_memories
        queries += unit_queries
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
    memories = {line["id"]: line for line in lines if line["type"] == "memory"}
    queries = [line for line in lines if line["type"] == "query"]
    per_category: dict[str, int] = {}
    no_shared = 0
    for query in queries:
        per_category[query["category"]] = per_category.get(query["category"], 0) + 1
        evidence = {s for item in query["evidence"] for s in content_stems(memories[item]["text"])}
        no_shared += not set(content_stems(query["query"])) & evidence
    print(
        f"wrote {OUT}: {len(memories)} facts, {len({m['owner'] for m in memories.values()})} units, "
        f"{len(queries)} questions {per_category}, {no_shared} sharing no content word with their evidence, "
        f"{len(text.encode()) / 1e6:.2f} MB",
        file=sys.stderr,
    )
    return 0


# --------------------------------------------------------------------------------------
# The units
# --------------------------------------------------------------------------------------

HARBOR = Unit(
    key="harbor",
    owner="proj-harbor",
    name="Harbor",
    start="2024-05-06",
    end="2025-04-30",
    facts="""
# what it is, and how it is built
about | 2024-05-06 | Harbor is the freight-tracking platform the user, Alex Moreau (tech lead), builds for Bluewake Freight.
client | 2024-05-06 | Bluewake's product contact for Harbor is Hannah Cole; she signs off on anything customers see.
repo | 2024-09-02 | Harbor's code lives in one monorepo, github.com/bluewake/harbor: the Django backend in /backend, the React web app in /web.
monorepo-why | 2024-09-02 | Backend and web app were merged into one repository in September 2024 so an API change and its UI change ship in one pull request.
stack | 2024-05-08 | Harbor's backend: Django with Django REST Framework, PostgreSQL with PostGIS, Celery workers, Redis as the cache.
aws | 2024-05-10 | Harbor runs on AWS in eu-west-1 (Ireland); the disaster-recovery copy of the database lives in eu-central-1.
fargate | 2024-05-14 | Harbor runs on ECS Fargate rather than EKS: decided 2024-05-14 because nobody on the team wants to operate Kubernetes.
terraform | 2024-05-20 | All Harbor infrastructure is in Terraform under /infra, with state in the S3 bucket bluewake-tfstate and DynamoDB locking.
ci | 2024-05-22 | Harbor CI is GitHub Actions; the backend test suite must pass before a pull request can merge.
svc-api | | harbor-api serves the public REST API and the dispatcher screens; Priya is its main reviewer.
svc-api-run | | harbor-api is a Python container behind the load balancer, listening on port 8000.
svc-dispatch | | harbor-dispatch is the Celery worker pool for the dispatch queue: it assigns shipments to routes.
svc-dispatch-run | | harbor-dispatch exposes Prometheus metrics on port 9102 and runs 6 processes per task.
svc-reports | | harbor-reports builds the nightly depot reports and CSV exports; Yuki maintains it.
svc-reports-run | | harbor-reports exposes metrics on port 9103 and has 4 GB of memory because the CSV exports are built in memory.
svc-web | | harbor-web is the React single-page app; Tom owns it.
svc-web-run | | In development harbor-web's Vite server listens on port 5173 and proxies /api to port 8000.
svc-osrm | | harbor-osrm is the self-hosted OSRM routing server; it answers route distance and duration requests.
svc-osrm-run | | harbor-osrm listens on port 5000 and needs 14 GB of memory for the Europe extract.
svc-geocoder | | harbor-geocoder is a self-hosted Nominatim that turns delivery addresses into coordinates.
svc-geocoder-run | | harbor-geocoder listens on port 8088; failed lookups go to a manual review queue.
svc-webhooks | | harbor-webhooks sends outgoing webhooks to customer systems from the emails-and-hooks Celery queue.
# preferences and conventions
pref-tests | | Alex wants every bug fix to come with a regression test in the same pull request.
pref-approvals | | Harbor pull requests need one approval; pull requests with a database migration need two, one of them from Priya.
pref-commits | | Harbor commit messages follow Conventional Commits (feat:, fix:, chore:) because release-please builds the changelog from them.
pref-ruff | | Harbor's Python is formatted with ruff format at line length 110; the user does not want black or isort added back.
pref-mypy | | mypy runs in strict mode on backend/core only; the other Django apps are checked without strict.
pref-tasknames | | Celery task names are prefixed with their app, e.g. tracking.refresh_eta or billing.send_invoice.
pref-logging | | Harbor log calls use %-style arguments, never f-strings, so that Sentry groups identical messages.
pref-branches | | Harbor branch names look like HAR-412-eta-cache: the Jira ticket, then a short description.
pref-prsize | | Alex asks for pull requests under 400 changed lines; bigger changes get split into a stack.
pref-summary | | Alex prefers a short written summary in the pull request description over a Loom video.
pref-nits | | In review Alex marks optional suggestions with "nit:" and expects every other comment resolved before merge.
pref-factories | | Harbor tests build their data with factory_boy factories, not JSON fixtures; the old fixtures folder is being deleted.
pref-pytest | | Harbor tests run with pytest and pytest-django; the manage.py test runner is not used.
pref-rawsql | | Raw SQL is allowed only in backend/reports; everywhere else Harbor code uses the ORM.
pref-settings | | Harbor settings come from environment variables through django-environ; secrets never go into settings files.
pref-frontend-state | | The web app keeps server state in TanStack Query; the user does not want Redux in Harbor.
pref-css | | Harbor's web app is styled with Tailwind CSS and uses no CSS-in-JS library.
pref-meetings | | Alex keeps Wednesdays free of meetings; Harbor syncs go on Tuesdays or Thursdays.
pref-standup | | The Harbor standup is written, in the #harbor-standup Slack channel, posted by 10:00 CET.
pref-json-case | | Harbor API fields are snake_case in JSON; the web client converts them to camelCase at the boundary.
pref-adr | | Architecture decisions are written as numbered ADRs in /docs/adr; ADR-0012 records the tenancy design.
# decisions, with their reasons
dec-rabbit | 2024-07-08 | Harbor's Celery broker is RabbitMQ, picked over Redis because dispatch jobs need queue priorities and durable queues.
dec-redis-cache | 2024-07-08 | Redis is used only as Harbor's Django cache: ETA lookups and rate-limit counters.
dec-uuid7 | 2024-06-17 | Public IDs in Harbor are UUIDv7; internal primary keys stay bigint to keep indexes small.
dec-utc | | Harbor stores every timestamp in UTC; the web app shows times in the depot's own time zone.
dec-weasyprint | 2024-10-14 | Delivery receipts are rendered to PDF with WeasyPrint; wkhtmltopdf was dropped because it is unmaintained.
dec-postmark | 2024-08-12 | Transactional email moved from SES to Postmark in August 2024 because SES kept landing receipts in spam.
dec-osrm-box | 2024-07-01 | OSRM runs on one c6g.2xlarge instance with the Europe extract, refreshed every Monday night.
dec-partitioning | 2025-01-20 | The tracking_events table is partitioned by month since January 2025, when it had grown to 900 million rows.
dec-retention | 2025-01-20 | Raw GPS pings are kept for 13 months and then dropped a partition at a time; aggregated trips are kept forever.
dec-flags | 2024-09-16 | Feature flags are django-waffle flags stored in the database, not LaunchDarkly, to avoid one more vendor.
dec-api-versions | 2024-06-24 | The public API is versioned in the URL (/api/v1/, /api/v2/); v1 stays supported until 2025-12-31.
dec-openapi-client | 2024-09-23 | The web client's API types are generated from the OpenAPI schema with openapi-typescript on every build.
dec-tenancy | 2024-05-27 | Each Bluewake region (UK, Ireland, Benelux) is a tenant in Harbor: schema-per-tenant with django-tenants.
dec-django-pin | 2024-11-04 | Django is pinned below 5.1 until django-tenants supports it; the pin sits in backend/requirements/base.in.
dec-pgbouncer | 2024-12-09 | PgBouncer in transaction mode sits in front of production Postgres since December 2024, so server-side cursors are turned off.
dec-asgi | | harbor-api runs gunicorn with uvicorn workers (ASGI) so the live-map websocket shares the process.
dec-maplibre | | The web map uses MapLibre GL with tiles from a self-hosted OpenMapTiles server.
dec-k6 | | Harbor load tests are k6 scripts in /loadtest; the target is 300 requests per second with p95 under 250 ms.
# negations
neg-redis-sessions | 2024-06-03 | We do NOT use Redis for sessions in Harbor: sessions stay in Postgres so a cache flush never logs every dispatcher out.
neg-graphql | 2024-06-10 | Harbor offers no GraphQL; the public API is REST with an OpenAPI 3.1 schema generated by drf-spectacular.
neg-friday-migrations | 2024-10-21 | No database migrations are run on Fridays, whatever the deploy day is.
neg-signals | | Harbor code must not put business logic in Django signals; services are called explicitly.
neg-google-maps | 2024-07-01 | Harbor does not call the Google Maps API: route distances come from the self-hosted OSRM server, which costs nothing per request.
neg-prod-shell | | Nobody opens manage.py shell against production; one-off fixes go through a reviewed management command.
neg-mongo | | There is no MongoDB anywhere in Harbor; the 2023 prototype's Mongo data was moved to Postgres JSONB columns.
neg-weekend-alerts | | Low-priority Harbor alerts must not page anyone at the weekend; they go to the #harbor-alerts channel.
neg-uuid4 | | New Harbor models must not use UUID4 for public IDs; they get UUIDv7 so IDs sort by creation time.
neg-mobile-ios | | The Harbor Driver app is Android only; there is no iOS version and none is planned for 2025.
# changes over time (the old fact stays)
deploy-friday | 2024-08-05 | Harbor production deploys go out on Fridays at 10:00 CET.
deploy-thursday | 2025-02-10 | Moved the Harbor deploy day from Friday to Thursday, starting 2025-02-13, after two Friday deploys paged on-call over the weekend.
oncall-opsgenie | 2024-06-03 | Harbor's on-call rotation runs in Opsgenie, weekly, handing over on Mondays at 09:00.
oncall-pagerduty | 2025-01-06 | Harbor on-call moved from Opsgenie to PagerDuty on 2025-01-06; the weekly Monday handover stayed.
eta-ttl-300 | 2024-07-15 | Harbor's ETA cache entries live for 300 seconds.
eta-ttl-120 | 2025-03-03 | Cut the ETA cache TTL from 300 to 120 seconds: dispatchers complained about stale arrival times.
sentry-full | 2024-06-12 | Sentry traces from Harbor production are sampled at 100%.
sentry-fifth | 2024-12-16 | Lowered the production Sentry trace sample rate to 0.2 to stay inside the Team plan quota.
billing-priya | 2024-06-01 | Priya owns Harbor's billing app (backend/billing) and reviews every change to it.
billing-yuki | 2025-04-07 | Billing ownership moved from Priya to Yuki on 2025-04-07; Priya still reviews migrations.
node18 | 2024-05-22 | The Harbor web build runs on Node 18.
node20 | 2024-10-28 | Upgraded the Harbor web build from Node 18 to Node 20 LTS on 2024-10-28.
# dated events
ev-stripe-secret | 2024-12-03 | Rotated the Stripe webhook secret on 2024-12-03 after it showed up in a CI log.
ev-rabbit-disk | 2024-11-12 | Incident 2024-11-12: RabbitMQ ran out of disk and Celery stopped for 47 minutes; the disk alarm now fires at 70%.
ev-pg16-staging | 2024-11-18 | Staging Postgres was upgraded from 15 to 16 on 2024-11-18.
ev-pg16-prod | 2024-12-02 | Production Postgres was upgraded from 15 to 16 on 2024-12-02, in a 25-minute maintenance window.
ev-v2-launch | 2025-03-17 | API v2 launched on 2025-03-17 with cursor pagination; v1 keeps offset pagination.
ev-benelux | 2025-02-03 | The Benelux tenant went live on 2025-02-03 with 14 depots.
ev-pentest | 2024-10-07 | The October 2024 penetration test by Securelay found one high issue (an IDOR on shipment documents), fixed on 2024-10-09.
ev-hackday | 2025-01-24 | Hack day 2025-01-24 produced the dispatcher heatmap, which shipped in February.
ev-cost | 2025-02-24 | The AWS bill for Harbor in January 2025 was $6,840; the target is under $6,000 a month.
ev-reserved | 2025-03-10 | Bought a one-year reserved instance for the production RDS database on 2025-03-10, saving about $900 a month.
ev-ci-speed | 2025-04-14 | CI time dropped from 19 to 8 minutes on 2025-04-14 after the test suite was split across 4 runners.
ev-hannah-leave | 2025-04-22 | Hannah Cole is on parental leave from 2025-05-01 to 2025-08-31; her stand-in is Omar Haddad.
ev-restore | 2025-04-07 | The April 2025 restore drill brought production back from a snapshot in 41 minutes.
ev-osrm-crash | 2025-01-13 | Incident 2025-01-13: the Monday OSRM refresh ran out of memory and routing was down 2 hours; the instance was resized.
# everything else an assistant gets told
m-tenant-names | | Harbor's tenant schemas are named uk, ie and benelux.
m-depots | | The UK tenant has 38 depots and the Ireland tenant 11.
m-api-rate | | Harbor's public API allows 600 requests per minute per API key; bulk-import keys get 3,000.
m-webhook-retries | | Outgoing webhooks are retried 8 times with exponential backoff, capped at 6 hours.
m-eta-model | | Harbor's ETAs come from a LightGBM model that Yuki's pipeline retrains every Sunday.
m-gps | | Trucks send a GPS ping every 30 seconds while moving and every 5 minutes when parked.
m-backups | | Production database snapshots are taken every 6 hours and kept for 35 days.
m-drill | | A restore drill runs on the first Monday of each quarter.
m-slack | | Harbor discussion happens in #harbor-dev; deploy announcements go to #harbor-releases.
m-jira | | Harbor tickets live in the Jira project HAR; Bluewake support escalates through the service desk HARSD.
m-local | | Local development runs on docker compose: make up starts Postgres, Redis, RabbitMQ and OSRM with a small Ireland extract.
m-seed | | make seed loads two demo depots and 500 shipments into the local database.
m-domains | | Harbor production is app.harbor.bluewake.eu and staging is staging.harbor.bluewake.eu.
m-cdn | | The web app is served from CloudFront with an S3 origin; the deploy job invalidates the cache.
m-secrets | | Harbor secrets live in AWS Secrets Manager, one secret per service, rotated every 90 days.
m-i18n | | The web app ships in English, Dutch and French; translations are managed in Crowdin.
m-a11y | | Bluewake requires WCAG 2.1 AA for the dispatcher screens.
m-browsers | | Dispatchers use Chrome on Windows laptops; Harbor supports the last two versions of Chrome, Edge and Firefox.
m-driver-app | | Drivers use the Harbor Driver app, which talks to /api/v2/driver.
m-sla | | Bluewake's contract promises 99.9% monthly uptime for the dispatcher app.
m-team-tz | | The Harbor team works on CET, except Priya (IST) and Tom (EST).
m-release-notes | | Release notes for dispatchers are written by Marcus in plain language for the app's What's new panel.
m-queues | | Harbor's Celery queues are default, dispatch (priorities 0-9), reports and emails-and-hooks.
m-nightly | | The nightly depot reports run at 02:30 UTC on the reports queue.
m-healthz | | The load balancer health check calls /healthz, which checks the database and RabbitMQ but not Redis.
m-fonts | | Receipts use the Inter font, bundled in backend/receipts/fonts because WeasyPrint cannot fetch web fonts in the container.
m-review-queue | | The address review queue is worked by Bluewake's operations team, not by developers.
m-csp | | Harbor's web app sends a strict Content-Security-Policy; inline scripts are forbidden.
m-auth | | Dispatchers sign in with Bluewake's Azure AD over OIDC; drivers sign in with a PIN in the app.
m-session-age | | Dispatcher sessions last 12 hours, one shift.
m-api-keys | | Harbor API keys belong to one customer integration each and start with hbk_live_ or hbk_test_.
m-pagination | | API v2 list endpoints return 50 items by default and at most 500.
m-dates | | The Harbor API returns dates as ISO-8601 strings ending in Z.
m-errors | | Harbor API errors are RFC 9457 problem details (application/problem+json).
m-board-budget | | The dispatcher board must render in under 2 seconds with 1,000 active shipments.
m-cost-review | | Lea reviews the Harbor AWS bill on the first working day of each month and sends it to Bluewake finance.
m-figma | | Harbor's design files are in the Figma team Bluewake Design; Ines keeps the component library.
m-qa-days | | Harbor's QA contractor works Mondays and Tuesdays, so features meant for a Thursday deploy need to be on staging by Monday.
m-security-contact | | Any change to sign-in or permissions must be announced to Bluewake's security lead before it ships.
m-ownership-file | | CODEOWNERS in the Harbor repo assigns /backend/billing, /backend/core and /infra to their owners.
m-ticket-sizes | | Harbor tickets are estimated in t-shirt sizes (S, M, L); anything XL must be split before a sprint starts.
m-sprint | | Harbor sprints are two weeks long and start on Tuesdays.
m-demo | | Sprint demos for Bluewake are on the last Thursday of each sprint at 15:00 CET.
m-data-export | | Customers can export a month of tracking data as CSV, limited to 2 million rows per export.
m-shipments-volume | | Harbor handles about 42,000 shipments a day across all tenants.
m-websocket | | The live map pushes truck positions over a websocket at /ws/live, throttled to one update per truck every 10 seconds.
m-tz-lib | | Time zone conversion in the Harbor web app uses date-fns-tz; moment.js was removed in 2024.
m-icons | | Harbor's web icons come from Lucide; the custom truck icons are SVGs in /web/src/icons.
m-charts | | Charts on the depot dashboard are drawn with Recharts.
m-e2e | | End-to-end tests are Playwright specs in /web/e2e that run against staging every night at 04:00 UTC.
m-coverage | | Backend test coverage must stay above 85%; CI fails below it.
m-migration-style | | Harbor migrations stay backward compatible for one release: add a column in one deploy, start using it in the next.
m-rolling | | Harbor deploys are rolling with 100% minimum healthy tasks, so there is no downtime window.
m-rollback | | A bad deploy is rolled back by redeploying the previous image tag; database migrations are never reversed automatically.
m-image-tags | | Harbor container images are tagged with the git SHA and pushed to the ECR repository harbor/api.
m-grafana | | Metrics are scraped by Amazon Managed Prometheus and shown in Grafana at grafana.harbor.bluewake.eu.
m-slo | | Harbor's SLO: 99.5% of dispatcher API requests under 500 ms over 28 days.
m-error-budget | | When less than 25% of the error budget is left, feature deploys stop and only fixes ship.
m-alert-high | | High-priority alerts (API down, dispatch backlog above 5,000 messages) page the on-call engineer at any hour.
m-backlog-normal | | The dispatch queue normally holds fewer than 200 messages.
m-pii | | Driver phone numbers are personal data: encrypted at rest with pgcrypto and left out of CSV exports.
m-gdpr | | GDPR deletion requests are handled within 30 days with the manage.py forget_driver command.
m-subprocessors | | Bluewake's data processing agreement lists AWS, Postmark, Sentry and Crowdin as Harbor's subprocessors.
m-log-retention | | Harbor application logs go to CloudWatch; audit logs are kept for 2 years.
m-audit | | Every change a dispatcher makes to a shipment is written to the audit_log table with the user and the old values.
m-bulk-import | | Customers bulk-import shipments as CSV through /api/v2/imports, up to 50,000 rows per file.
m-webhook-sign | | Outgoing webhooks are signed with HMAC-SHA256 in the Harbor-Signature header.
m-rate-429 | | A key over its rate limit gets a 429 answer with a Retry-After header.
m-docs-site | | The public API documentation is served at docs.harbor.bluewake.eu from the OpenAPI schema with Redoc.
m-sandbox | | Customers test integrations on the sandbox tenant at sandbox.harbor.bluewake.eu, which is reset every Sunday.
m-support-hours | | Harbor developer support for Bluewake runs 08:00-18:00 CET on weekdays.
m-extract | | The OSRM Europe extract comes from Geofabrik and is about 28 GB.
m-depot-hours | | Depots work from 05:00 to 22:00 local time, so Harbor deploys avoid the 05:00-08:00 morning rush.
m-beat | | Scheduled Harbor jobs run with Celery beat; the schedule is in backend/harbor/beat.py.
m-dependabot | | Dependabot opens dependency updates every Monday; Priya merges the backend ones and Tom the web ones.
m-py313 | 2025-04-28 | The Python 3.13 upgrade is planned for June 2025, once Celery confirms support.
m-eta-accuracy | 2025-03-31 | The ETA model's median error was 6.5 minutes in March 2025.
m-onboarding | | New Harbor developers start with docs/onboarding.md and get staging access on day one, production access after a month.
m-prod-access | | Production access goes through AWS SSO with the HarborProdReadOnly role; write access needs a ticket.
m-dr-targets | | Harbor's disaster-recovery targets: back within 4 hours, losing at most 15 minutes of data.
m-tenant-add | | Adding a tenant takes a migration of the public schema plus make tenant NAME=...; Lea runs it.
m-retainer | | Bluewake pays a fixed monthly retainer for Harbor development, reviewed every January.
m-hotfix | | A hotfix can ship on any weekday except Friday, with Alex's approval in #harbor-releases.
""",
    settings=(
        (
            "db-host",
            "database host",
            "harbor-staging.c9x.eu-west-1.rds.amazonaws.com",
            "harbor-prod.c9x.eu-west-1.rds.amazonaws.com",
        ),
        ("db-port", "PgBouncer port", "6433", "6432"),
        ("db-class", "RDS instance class", "db.t4g.large", "db.r6g.2xlarge"),
        ("db-maxconn", "Postgres max_connections", "200", "800"),
        ("celery-concurrency", "Celery worker concurrency", "4", "16"),
        ("api-tasks", "number of harbor-api tasks", "2", "8, autoscaling up to 20"),
        ("gunicorn", "gunicorn worker count per task", "2", "6"),
        ("log-level", "log level", "DEBUG", "INFO"),
        ("rabbit-host", "RabbitMQ host", "mq.staging.harbor.internal", "mq.prod.harbor.internal"),
        ("redis-node", "ElastiCache node type", "cache.t4g.small", "cache.r7g.large"),
        ("docs-bucket", "documents bucket", "harbor-staging-documents", "harbor-prod-documents"),
        ("heatmap-flag", "dispatcher_heatmap flag", "on for every tenant", "on for the UK tenant only"),
        ("upload-limit", "maximum upload size", "25 MB", "10 MB"),
        ("sender", "sender address", "noreply-staging@harbor.bluewake.eu", "noreply@harbor.bluewake.eu"),
        ("webhook-timeout", "webhook timeout", "10 seconds", "5 seconds"),
        ("api-size", "harbor-api task size", "0.5 vCPU and 1 GB", "1 vCPU and 2 GB"),
        ("sentry-env", "Sentry environment name", "harbor-staging", "harbor-production"),
        ("osrm-instance", "OSRM instance type", "c6g.xlarge", "c6g.2xlarge"),
        ("log-days", "CloudWatch log retention", "7 days", "30 days"),
    ),
    versions=(
        ("python", "Python", "3.12.4"),
        ("django", "Django", "5.0.7"),
        ("drf", "Django REST Framework", "3.15.2"),
        ("postgres", "PostgreSQL", "16.3"),
        ("postgis", "PostGIS", "3.4"),
        ("celery", "Celery", "5.4.0"),
        ("rabbitmq", "RabbitMQ", "3.13"),
        ("redis", "Redis", "7.2"),
        ("react", "React", "18.3"),
        ("typescript", "TypeScript", "5.5"),
        ("vite", "Vite", "5.3"),
        ("terraform", "Terraform", "1.8.5"),
        ("tenants", "django-tenants", "3.6.1"),
        ("weasyprint", "WeasyPrint", "62.3"),
        ("osrm", "OSRM", "5.27"),
    ),
    people=(
        ("alex", "Alex Moreau", "the tech lead and the user", "Lyon, CET", "Approves every architecture change."),
        ("priya", "Priya Raman", "the senior backend engineer", "Chennai, IST", "Reviews every migration."),
        ("tom", "Tom Okafor", "the frontend engineer", "Toronto, EST", "Owns the dispatcher board."),
        ("lea", "Lea Schmidt", "the SRE", "Berlin, CET", "Owns Terraform and the AWS account."),
        ("marcus", "Marcus Bell", "the product manager", "London, GMT", "Writes the release notes."),
        ("yuki", "Yuki Tanaka", "the data engineer", "Amsterdam, CET", "Runs the ETA model pipeline."),
        ("hannah", "Hannah Cole", "Bluewake's product contact", "Dublin", ""),
        ("omar", "Omar Haddad", "Bluewake's operations manager", "Rotterdam", "Stands in for Hannah during her leave."),
        ("sofia", "Sofia Brandt", "the QA contractor", "Hamburg", "Works two days a week."),
        ("jonas", "Jonas Weber", "Bluewake's security lead", "Frankfurt", "Must hear about any sign-in change first."),
        ("ines", "Ines Duarte", "the freelance designer", "Porto", "Keeps the Figma component library."),
        ("ben", "Ben Carter", "Bluewake's finance controller", "Leeds", "Gets the monthly AWS cost report."),
    ),
    questions="""
? paraphrase | What carries messages to the async workers, and why that one? | dec-rabbit
? paraphrase | Where does the app keep sign-in state? | neg-redis-sessions
? paraphrase | When in the week do releases reach customers now? | deploy-thursday
? paraphrase | For how long is a predicted delivery moment kept before recomputing? | eta-ttl-120
? paraphrase | Which provider delivers our outbound messages to inboxes? | dec-postmark
? paraphrase | What mechanism toggles unfinished functionality per tenant? | dec-flags
? paraphrase | What generates the printable customer paperwork? | dec-weasyprint
? paraphrase | Who is covering for the client's contact this summer? | ev-hannah-leave, who.omar
? paraphrase | How much did the cloud cost us at the start of the year? | ev-cost
? paraphrase | What identifier format do externally visible records get? | dec-uuid7
? paraphrase | How often is the arrival predictor refit? | m-eta-model
? paraphrase | How frequently do lorries report their position when driving? | m-gps
? name | Who has to approve a pull request that changes the database schema? | pref-approvals, billing-yuki
? name | What does Tom Okafor work on? | who.tom, svc-web
? name | Who is Jonas Weber and when must he be told about a change? | who.jonas
? name | What is OSRM used for in Harbor? | neg-google-maps, svc-osrm
? name | What is django-tenants used for? | dec-tenancy
? name | How is PgBouncer configured in production? | dec-pgbouncer
? name | What did Securelay find? | ev-pentest
? name | What does Lea do at the start of each month? | m-cost-review
? name | What does harbor-geocoder do? | svc-geocoder
? name | Which Jira project holds Harbor tickets? | m-jira
? number | What is the public API rate limit per key? | m-api-rate
? number | How many depots did the Benelux tenant start with? | ev-benelux
? number | What line length does ruff use in Harbor? | pref-ruff
? number | Which Harbor service listens on port 8000? | svc-api-run
? number | How many times is a failed webhook retried? | m-webhook-retries
? number | What is max_connections on the production database? | env.db-maxconn.production
? number | How large can an upload be in staging? | env.upload-limit.staging
? number | How big may a pull request be before Alex wants it split? | pref-prsize
? number | How long are production database snapshots kept? | m-backups
? date | What happened on 2024-11-12? | ev-rabbit-disk
? date | When was the Stripe webhook secret rotated? | ev-stripe-secret
? date | When did production move to Postgres 16? | ev-pg16-prod
? date | When did API v2 launch? | ev-v2-launch
? date | What changed about Harbor's on-call in January 2025? | oncall-pagerduty
? date | Until when is API v1 supported? | dec-api-versions
? date | What was decided on 2024-05-14? | fargate
? date | What went wrong with routing in January 2025? | ev-osrm-crash
? negation | Do we use Redis for sessions? | neg-redis-sessions
? negation | Can I add a GraphQL endpoint to Harbor? | neg-graphql
? negation | Is it fine to run a migration on a Friday? | neg-friday-migrations
? negation | Should route distances come from Google Maps? | neg-google-maps
? negation | Can I open a Django shell on production to fix one record? | neg-prod-shell
? negation | Should a new model's public ID be a UUID4? | neg-uuid4
? negation | Is there an iOS version of the driver app? | neg-mobile-ios
? negation | Can I add Redux for the new screen? | pref-frontend-state
? update | What day do Harbor deploys go out? | deploy-thursday
? update | What was the deploy day before it changed, and why did it move? | deploy-friday, deploy-thursday
? update | Who owns the billing app now? | billing-yuki
? update | What is the ETA cache TTL? | eta-ttl-120
? update | What Sentry trace sample rate does production use? | sentry-fifth
? update | Which Node version does the web build use? | node20
? update | Which tool runs Harbor's on-call rotation? | oncall-pagerduty
? multi-hop | Who reviews the service that listens on port 8000? | svc-api-run, svc-api
? multi-hop | Which time zone is the person who must approve migrations in? | pref-approvals, who.priya
? multi-hop | Who reviews the monthly AWS bill, and where is she based? | m-cost-review, who.lea
? multi-hop | Who retrains the ETA model, and what did that person take over in April 2025? | m-eta-model, billing-yuki
? multi-hop | Which instance class does the production database use, and when was it moved to Postgres 16? | env.db-class.production, ev-pg16-prod
? multi-hop | Which Django version does Harbor run, and why is it held there? | ver.django, dec-django-pin
""",
)

# PostHog events: (event, when it is sent).
LUMEN_EVENTS = (
    ("app_opened", "the app comes to the foreground"),
    ("onboarding_completed", "the last onboarding screen is finished"),
    ("habit_created", "a habit is saved for the first time"),
    ("habit_checked", "a habit is checked in for a day"),
    ("habit_unchecked", "a check-in is undone"),
    ("habit_archived", "a habit is archived"),
    ("streak_frozen", "a streak freeze is used"),
    ("streak_broken", "a streak ends without a freeze"),
    ("reminder_opened", "a reminder notification is tapped"),
    ("paywall_viewed", "the paywall is shown"),
    ("trial_started", "a free trial starts"),
    ("subscription_started", "a paid subscription starts, as reported by RevenueCat's webhook"),
    ("subscription_cancelled", "auto-renew is turned off"),
    ("widget_added", "a home-screen widget is added"),
    ("insights_viewed", "the Insights tab is opened"),
    ("share_invite_sent", "a shared-habit invite is sent"),
    ("share_invite_accepted", "a shared-habit invite is accepted"),
    ("export_requested", "a CSV export is requested"),
    ("health_connected", "Apple Health step import is turned on"),
    ("year_review_viewed", "the yearly review screen is opened"),
    ("rating_prompt_shown", "the store rating prompt is shown, at most 3 times a year"),
    ("account_deleted", "an account is deleted"),
    ("theme_changed", "the user switches between light and dark"),
    ("photo_attached", "a photo is added to a check-in"),
    ("notification_permission", "the user answers the notification permission prompt"),
)
LUMEN_TABLES = "".join(
    f"event.{name} | | PostHog event {name} is sent when {when}.\n"
    if index % 2
    else f"event.{name} | | Lumen sends {name} to PostHog when {when}.\n"
    for index, (name, when) in enumerate(LUMEN_EVENTS)
)

LUMEN = Unit(
    key="lumen",
    owner="proj-lumen",
    name="Lumen",
    start="2024-03-04",
    end="2025-04-25",
    envs=("preview", "production"),
    facts="""
about | 2024-03-04 | Lumen is Kestrel Labs' habit-tracking app for iOS and Android; the user, Jonah Reyes, leads mobile.
company | | Kestrel Labs has 9 people and Lumen is its only product.
stack | 2024-03-04 | Lumen is a React Native app built with Expo and written in TypeScript.
backend | 2024-03-06 | Lumen's backend is Supabase (Postgres, auth and edge functions); there is no custom server.
repos | | The app lives in github.com/kestrel/lumen-app and the Supabase functions in github.com/kestrel/lumen-backend.
state | 2024-03-11 | Lumen keeps client state in Zustand stores, chosen over Redux Toolkit for less boilerplate.
nav | | Lumen's navigation is React Navigation with four bottom tabs: Today, Habits, Insights and Profile.
subs | 2024-04-02 | Lumen subscriptions go through RevenueCat, which validates App Store and Play Billing receipts.
analytics | 2024-04-15 | Lumen's product analytics and feature flags are in PostHog Cloud EU.
crashes | | Lumen crashes and JavaScript errors are reported to Sentry, project lumen-mobile.
builds | | Lumen builds are made with EAS Build, and EAS Submit uploads them to the stores.
ota | 2024-05-06 | JavaScript-only fixes ship as over-the-air updates with EAS Update on the production channel.
ota-rule | | An over-the-air update may not change native code or permissions; those need a store release.
e2e | | Lumen's end-to-end tests are Detox runs on an iPhone 15 simulator and a Pixel 7 emulator, on every release branch.
unit-tests | | Unit tests use Jest with React Native Testing Library; snapshot tests are not allowed.
design-tokens | | Colors, spacing and type come from design tokens in src/theme/tokens.ts, exported from Figma with Tokens Studio.
dark-mode | | Lumen follows the system dark mode setting unless the user overrides it in Profile.
fonts | | Lumen uses the Manrope font for text and JetBrains Mono for streak counters.
icons | | UI icons come from Phosphor; the habit icons are a custom set of 120 SVGs.
i18n | | Lumen is translated into English, Spanish, German and Brazilian Portuguese with i18next.
rtl | | Right-to-left languages are not supported in Lumen yet.
a11y | | Every tappable element in Lumen needs an accessibilityLabel; VoiceOver and TalkBack are checked before each release.
min-tap | | Touch targets in Lumen are at least 44 by 44 points.
haptics | | Completing a habit triggers a light haptic, which can be turned off in Profile.
notif-window | 2024-06-10 | Reminder notifications are only sent between 07:00 and 21:00 in the user's local time.
notif-provider | | Lumen's push notifications go through Expo's push service.
edge-fn | | The Supabase edge function send-reminders is Deno TypeScript and runs every 5 minutes from pg_cron.
offline | | Lumen works offline: check-ins are stored in SQLite on the device (expo-sqlite) and synced when back online.
sync-conflict | | When a habit is edited on two devices, the last write wins, compared by server timestamp.
auth-methods | | Lumen users sign in with Apple, Google or an email magic link; there are no passwords.
account-delete | | Account deletion is in Profile, Account; it removes the data within 7 days, as Apple requires.
privacy-label | | Lumen's App Store privacy label says no data is used for tracking.
neg-health | 2024-07-01 | We do NOT send habit names or notes to PostHog: they can hold health details, so events carry only habit IDs.
neg-ads | | Lumen will not show ads, in any tier, and has no ad SDK.
neg-redux | | Do not add Redux or MobX to Lumen; new state goes into a Zustand store.
neg-expo-go | | Lumen can no longer run in Expo Go because of the custom native widget module; use a development build.
neg-webview | | Lumen does not build app screens in WebViews; the only WebView is the help center.
neg-tablet | | There is no tablet layout: Android tablets and iPads get the phone layout.
neg-friday-release | | Lumen store releases are never submitted on a Friday, so a rejection can be handled on a workday.
neg-ota-native | | Never ship an over-the-air update that needs a newer native build; the runtimeVersion policy appVersion prevents it.
neg-mixpanel | 2024-04-15 | Lumen does not use Mixpanel any more; events moved to PostHog in April 2024.
neg-chat | | The community feature was dropped: Lumen has no chat and no messages between users.
pricing-old | 2024-04-02 | Lumen Plus costs $4.99 a month or $39.99 a year.
pricing-new | 2025-03-03 | Raised Lumen Plus to $5.99 a month from 2025-03-03; the yearly price stayed $39.99 and existing subscribers keep their price.
trial-7 | 2024-04-02 | Lumen Plus comes with a 7-day free trial.
trial-14 | 2024-11-18 | The free trial went from 7 to 14 days on 2024-11-18 after the A/B test showed 18% more conversions.
ios-min-15 | 2024-03-04 | Lumen supports iOS 15 and later.
ios-min-16 | 2025-01-20 | Raised the minimum iOS version from 15 to 16 on 2025-01-20: under 1% of active users were still on 15.
android-min | | Lumen supports Android 8.0 (API level 26) and later.
cadence-2w | 2024-03-18 | Lumen ships a store release every two weeks, on Tuesdays.
cadence-1w | 2025-02-04 | Moved the store release cadence from every two weeks to every week from 2025-02-04; releases still go out on Tuesdays.
review-speed | | Apple review usually takes about a day and Google's a few hours.
phased | | iOS releases use phased rollout over 7 days; Android starts at 20% of users.
halt | | A bad release is halted in phased rollout and fixed with an over-the-air update when the fix is JavaScript only.
rel-300 | 2024-06-04 | Lumen 3.0.0 shipped on 2024-06-04: the redesign with the new Today tab.
rel-310 | 2024-07-16 | Lumen 3.1.0 shipped on 2024-07-16 with home-screen widgets for iOS.
rel-320 | 2024-09-10 | Lumen 3.2.0 shipped on 2024-09-10 with streak freezes.
rel-330 | 2024-10-22 | Lumen 3.3.0 shipped on 2024-10-22 with Android widgets and the shorter onboarding.
rel-340 | 2025-01-14 | Lumen 3.4.0 shipped on 2025-01-14 with the yearly review screen, Your year in habits.
rel-341 | 2025-01-17 | Lumen 3.4.1 fixed a crash on the yearly review screen for users with more than 50 habits.
rel-350 | 2025-02-25 | Lumen 3.5.0 shipped on 2025-02-25 with shared habits between two friends.
rel-360 | 2025-04-08 | Lumen 3.6.0 shipped on 2025-04-08 with Apple Health step import.
inc-reminders | 2024-08-19 | Incident 2024-08-19: reminders went out at 3 a.m. for users in Australia because of a time-zone bug in send-reminders; fixed the same day.
inc-revenuecat | 2024-12-26 | Incident 2024-12-26: RevenueCat webhook failures left 212 users without Plus for 6 hours; each got a free month.
inc-android14 | 2024-11-05 | Lumen 3.3.2 crashed on launch on some Android 14 Samsung phones; 3.3.3 fixed it on 2024-11-07.
inc-rejection | 2025-02-20 | Apple rejected the 3.5.0 build on 2025-02-20 for a missing account-deletion link in the shared-habits flow.
met-dau | 2025-03-31 | Lumen had 48,000 daily active users in March 2025.
met-conversion | | Lumen's trial-to-paid conversion is 31% on iOS and 22% on Android.
met-crashfree | | Lumen's crash-free sessions target is 99.8%; version 3.6.0 reached 99.85%.
met-rating | | Lumen is rated 4.7 on the App Store and 4.5 on Google Play.
met-retention | | Lumen's day-30 retention is 27%.
ab-onboarding | 2024-09-30 | A/B test, September 2024: three onboarding screens beat five by 9% in day-7 retention.
ab-paywall | 2025-03-24 | The March 2025 paywall test showed the yearly plan first; the yearly share of new subscriptions rose from 38% to 52%.
ab-trial | 2024-11-11 | The trial-length test compared 7 and 14 days over 4 weeks; 14 days won.
branching | | Lumen release branches are named like release/3.6 and are cut on the Thursday before the release.
versions | | Lumen uses semantic versions; the build number goes up by one on every EAS build.
notes | | Store release notes are written by Mei in a friendly tone, four bullet points at most.
code-review | | Every Lumen pull request needs one review; changes under ios/ or android/ need Arjun's review.
pr-template | | The pull request template asks for iOS and Android screenshots of any UI change.
squash | | Lumen pull requests are squash-merged with the title as the commit message.
lint | | Lumen uses ESLint with the Expo config and Prettier with single quotes and no semicolons.
ts-strict | | TypeScript in Lumen runs with strict and noUncheckedIndexedAccess.
folders | | Lumen screens live in src/screens, one folder each; shared components live in src/components.
naming | | Components are PascalCase files; hooks start with use and sit next to the screen that uses them.
db-types | | Lumen's database types are generated with supabase gen types into src/types/db.ts.
rls | | Every Supabase table has row-level security; the app never holds the service role key.
db-backup | | Supabase takes daily backups, with point-in-time recovery over 7 days on the Pro plan.
secrets | | Lumen's secrets are EAS secrets; nothing secret goes into app.json.
deep-links | | Deep links use lumen:// and universal links under lumen.app/h/.
widget-ios | | The iOS widget is a Swift WidgetKit extension in targets/widget that shares data through an App Group.
widget-android | | The Android widget is written in Kotlin with Glance.
photos | | Habit photos are stored in the Supabase bucket habit-photos, at most 5 MB each, resized to 1080 px.
perf | | Cold start must stay under 2 seconds on an iPhone 12 and under 3 seconds on a Pixel 6a.
bundle | | Lumen's JavaScript bundle must stay under 8 MB; Hermes is on for both platforms.
support | | Support email goes to help@lumen.app and lands in Help Scout.
community | | Lumen's Discord server has about 6,000 members; Mei moderates it.
roadmap | 2025-04-14 | Next on the Lumen roadmap: an Apple Watch app in Q3 2025, then habit templates.
watch | 2025-04-14 | The Apple Watch app will be written in native SwiftUI, not React Native.
standup | | Kestrel Labs has a 15-minute standup at 09:30 Central time on Mondays, Wednesdays and Fridays.
focus | | Jonah does not want meetings before noon on Tuesdays, release day.
pr-size | | Jonah prefers small pull requests that touch one screen at a time.
comments | | Jonah wants comments only where the code cannot say why, not a comment on every function.
error-copy | | Error messages in Lumen must say what the user can do next, never just "Something went wrong".
copy-tone | | Lumen's copy is encouraging but never guilt-tripping: no "You broke your streak!".
streak-rule | | A streak counts a day as done when every habit scheduled that day is checked in before 03:00 the next morning.
freeze-rule | | Plus users get 2 streak freezes a month; free users get 1.
habit-limit | | Free users can track up to 5 habits; Plus is unlimited.
insights-plus | | The Insights tab's charts beyond the last 7 days are a Plus feature.
export | | Users can export their check-ins as CSV from Profile; the export is emailed within a few minutes.
family | | Family sharing for Lumen Plus is on for the App Store only.
refunds | | Refunds are handled by Apple and Google; Kestrel cannot refund store purchases itself.
promo-codes | | Promo codes for Plus are created in RevenueCat and expire after 30 days.
emails | | Lifecycle emails (welcome, trial ending) are sent from Customer.io.
trial-email | | The trial-ending email goes out 2 days before the trial ends.
qa-devices | | The QA device shelf has an iPhone SE (3rd gen), iPhone 15 Pro, Pixel 6a, Galaxy S23 and a Galaxy A14.
testflight | | Internal testers get builds through TestFlight and Google Play internal testing; about 40 beta users are in the external TestFlight group.
beta-feedback | | Beta feedback is collected in the #lumen-beta Discord channel.
store-assets | | Store screenshots are made with Figma frames at 6.7 and 5.5 inches for iOS.
keywords | | App Store keywords are reviewed every quarter by Mei.
aso | | Lumen's App Store subtitle is "Habits that stick".
health-import | | Apple Health import reads steps only; it never writes to Health.
google-fit | | The Android version of step import will use Health Connect, not Google Fit.
legal | | Lumen's terms and privacy policy live at lumen.app/legal and are reviewed by the lawyer firm Ostrander and Vale.
gdpr | | EU users' data stays in Supabase's Frankfurt region.
supabase-region | | Lumen's Supabase projects are in eu-central-1 (Frankfurt).
costs | 2025-03-31 | Lumen's infrastructure cost in March 2025 was $1,450: Supabase $610, Expo $299, PostHog $290, Sentry $251.
expo-plan | | Kestrel Labs pays for Expo's Production plan for EAS builds and updates.
build-time | | An iOS production build on EAS takes about 18 minutes; Android about 12.
rel-301 | 2024-06-11 | Lumen 3.0.1 fixed the Today tab not refreshing after midnight.
rel-311 | 2024-07-23 | Lumen 3.1.1 fixed the iOS widget showing yesterday's habits.
rel-321 | 2024-09-17 | Lumen 3.2.1 fixed streak freezes being used twice on the same day.
rel-331 | 2024-10-29 | Lumen 3.3.1 fixed Android widgets not updating on Xiaomi phones.
rel-342 | 2025-01-28 | Lumen 3.4.2 fixed the German translations on the yearly review.
rel-351 | 2025-03-04 | Lumen 3.5.1 fixed shared habits not syncing when one friend was offline.
rel-352 | 2025-03-11 | Lumen 3.5.2 put the new monthly price on the paywall.
rel-361 | 2025-04-15 | Lumen 3.6.1 fixed Apple Health import counting steps twice on days with an Apple Watch.
rel-362 | 2025-04-22 | Lumen 3.6.2 was an over-the-air update that fixed a typo on the Spanish paywall.
m-tables | | Lumen's main database tables are profiles, habits, checkins, streaks and shares.
m-checkins-rows | 2025-03-31 | The checkins table had 61 million rows in March 2025.
m-index | | checkins has a composite index on (habit_id, day); queries by user go through habits.
m-local-dates | | Check-in days are stored as local dates, with the user's IANA time zone on the profile.
m-dst | | A day is counted in the user's time zone at check-in time, so daylight saving changes never double a day.
m-edge-auth | | Edge functions verify the user's JWT; only send-reminders runs with the service role, from pg_cron.
m-rc-webhook | | RevenueCat's webhook calls the edge function rc-events, which sets profiles.plus_until.
m-entitlement | | The app checks the RevenueCat entitlement plus on launch and trusts the cached answer offline.
m-paywall-copy | | The paywall lists three benefits: unlimited habits, the full Insights history and extra streak freezes.
m-intro-offer | | Yearly plans get an introductory offer of 30% off the first year in the US and Canada only.
m-price-regions | | Prices outside the US follow Apple's and Google's price tiers; Tariq approves any regional change.
m-support-sla | | Lumen support emails are answered within 2 business days.
m-top-ticket | | The most common support ticket is "my streak reset", usually after a time-zone change while travelling.
m-travel-mode | 2025-04-01 | A travel mode that keeps streaks across time zones is planned for 3.7.
m-widget-refresh | | The iOS widget also refreshes right after a check-in in the app.
m-widget-sizes | | Lumen's iOS widget comes in small and medium sizes; the lock-screen widget is circular.
m-notif-copy | | Reminder texts rotate between 12 phrasings so they don't feel repetitive.
m-notif-limit | | A Lumen user gets at most 3 reminders a day, whatever their settings.
m-onboarding-steps | | Onboarding asks for a first habit, a reminder time and notification permission, in that order.
m-templates | | Habit templates will come with 40 starter habits in 6 categories.
m-ci | | Lumen's CI is GitHub Actions: typecheck, lint and Jest on every pull request; Detox only on release branches.
m-ci-time | | Lumen's pull request checks take about 7 minutes.
m-eas-profiles | | eas.json has three build profiles: development, preview and production.
m-version-source | | The app version lives in app.config.ts; expo-doctor checks that the native versions match it.
m-store-admins | | The App Store Connect and Google Play accounts belong to Kestrel Labs; Jonah and Tariq are the admins.
"""
    + LUMEN_TABLES,
    settings=(
        ("supabase-url", "Supabase project URL", "https://lumen-preview.supabase.co", "https://lumen.supabase.co"),
        ("eas-channel", "EAS Update channel", "preview", "production"),
        ("posthog-project", "PostHog project ID", "20417", "19862"),
        ("sentry-rate", "Sentry trace sample rate", "1.0", "0.1"),
        ("rc-env", "RevenueCat environment", "sandbox", "production"),
        ("timeout", "network timeout", "30 seconds", "15 seconds"),
        ("reminder-batch", "reminder batch size", "100", "2,000"),
        ("log-level", "client log level", "debug", "warn"),
        ("bundle-id", "iOS bundle identifier", "app.lumen.preview", "app.lumen"),
        ("package", "Android package name", "app.lumen.preview", "app.lumen"),
        ("display-name", "app display name", "Lumen Preview", "Lumen"),
        ("ota-check", "update check", "every launch", "every launch, at most once every 4 hours"),
        ("paywall-flag", "paywall_yearly_first flag", "on", "on for all users since March 2025"),
        ("shared-flag", "shared_habits flag", "on", "on for 50% of users"),
        ("db-compute", "Supabase compute size", "Micro", "Large"),
        ("flush", "PostHog flush interval", "10 seconds", "60 seconds"),
        ("rc-cache", "entitlement cache lifetime", "5 minutes", "24 hours"),
        ("widget-refresh", "widget refresh interval", "5 minutes", "15 minutes"),
    ),
    versions=(
        ("rn", "React Native", "0.74.5"),
        ("expo", "Expo SDK", "51"),
        ("ts", "TypeScript", "5.4"),
        ("react", "React", "18.2"),
        ("zustand", "Zustand", "4.5"),
        ("navigation", "React Navigation", "6.1"),
        ("detox", "Detox", "20.23"),
        ("jest", "Jest", "29.7"),
        ("purchases", "react-native-purchases", "7.27"),
        ("posthog", "posthog-react-native", "3.3"),
        ("sentry", "@sentry/react-native", "5.33"),
        ("xcode", "Xcode", "15.4"),
    ),
    people=(
        ("jonah", "Jonah Reyes", "the mobile lead and the user", "Austin, Central time", ""),
        ("arjun", "Arjun Mehta", "the native iOS and Android engineer", "Bangalore", "Writes the widgets."),
        ("mei", "Mei Lin", "growth and community", "Vancouver", "Runs App Store optimization."),
        ("lukas", "Lukas Gruber", "the backend engineer", "Vienna", "Owns the Supabase functions."),
        ("priscila", "Priscila Souza", "the product designer", "São Paulo", "Owns the Figma files and tokens."),
        ("tariq", "Tariq Aziz", "the CEO", "Austin", "Signs off on pricing."),
        ("hana", "Hana Kim", "the QA engineer", "Seoul", "Runs the release checklist."),
        ("ola", "Ola Nilsen", "the part-time data analyst", "Oslo", "Reads the A/B test results."),
    ),
    questions="""
? paraphrase | What's the recurring fee for premium now? | pricing-new
? paraphrase | Which vendor checks that purchases are genuine? | subs
? paraphrase | How long is the no-cost sampling period for premium? | trial-14
? paraphrase | Which phones are too old for the app on Apple's side? | ios-min-16
? paraphrase | When are nudges allowed to buzz people? | notif-window
? paraphrase | Where does progress get saved without a connection? | offline
? paraphrase | What typeface displays the run-length tallies? | fonts
? paraphrase | Why was a submission refused in February? | inc-rejection
? paraphrase | How many people open the app each day? | met-dau
? paraphrase | What woke customers down under in the middle of the night? | inc-reminders
? paraphrase | Where do screens get their palette and gaps? | design-tokens
? paraphrase | Which wearable is coming next, and in what framework? | watch
? name | What is PostHog used for in Lumen? | analytics
? name | What does Arjun have to review? | code-review
? name | Who writes the store release notes? | notes
? name | What is send-reminders, and how are its pushes delivered? | edge-fn, notif-provider
? name | What is Zustand used for, and why was it picked? | state
? name | What is Glance used for? | widget-android
? name | What is Help Scout used for? | support
? name | Which Sentry project gets Lumen's crashes? | crashes
? name | What did Lumen 3.2.0 add? | rel-320
? name | Who is Priscila Souza? | who.priscila
? number | What is the oldest Android version Lumen supports? | android-min
? number | How large may the JavaScript bundle get? | bundle
? number | How big can a habit photo be? | photos
? number | What crash-free rate did 3.6.0 reach? | met-crashfree
? number | How many members does the Discord have? | community
? number | What does a yearly Lumen Plus subscription cost? | pricing-old, pricing-new
? number | What is the PostHog project ID in production? | env.posthog-project.production
? number | How many users lost Plus in the RevenueCat incident? | inc-revenuecat
? number | What share of Android users gets a new release first? | phased
? date | When did Lumen 3.0.0 ship? | rel-300
? date | What shipped on 2025-04-08? | rel-360
? date | What happened on 2024-12-26? | inc-revenuecat
? date | When did the trial become 14 days? | trial-14
? date | Which release fixed the Android 14 launch crash, and when? | inc-android14
? date | When did events move from Mixpanel to PostHog? | neg-mixpanel
? date | Which Lumen releases came out in January 2025? | rel-340, rel-341
? date | When is the Apple Watch app planned? | roadmap
? negation | Can I send habit names to PostHog? | neg-health
? negation | Should we add an ad SDK for the free tier? | neg-ads
? negation | Can I try the app in Expo Go? | neg-expo-go
? negation | Is it okay to submit to the App Store on a Friday? | neg-friday-release
? negation | Does Lumen support right-to-left languages? | rtl
? negation | Can users message each other in Lumen? | neg-chat
? negation | Are snapshot tests allowed in Lumen? | unit-tests
? update | What is the minimum iOS version? | ios-min-16
? update | How often does Lumen ship store releases? | cadence-1w
? update | How long is the free trial? | trial-14
? update | What did Lumen Plus cost per month before March 2025? | pricing-old
? update | How much is Lumen Plus a month? | pricing-new
? update | What was the release cadence in 2024? | cadence-2w
? update | Do existing subscribers pay the new monthly price? | pricing-new
? multi-hop | Who must review native code changes, and where is he based? | code-review, who.arjun
? multi-hop | Who moderates the Discord, and what else does she write? | community, notes
? multi-hop | What did the trial-length test find, and when did the change ship? | ab-trial, trial-14
? multi-hop | What feature was in the build Apple rejected in February 2025? | inc-rejection, rel-350
? multi-hop | Which framework will the Watch app use, and when is it due? | watch, roadmap
? multi-hop | What is the production Supabase compute size, and how is the database backed up? | env.db-compute.production, db-backup
? multi-hop | Who owns the Supabase functions, and what does send-reminders do on its schedule? | who.lukas, edge-fn
""",
)

# Dana's experiment log: (date, label, entry).
DANA_RUNS = (
    ("2024-04-22", "run.churn-14", "churn-v3 run 14: LightGBM on 80 features reached a ROC-AUC of 0.83."),
    (
        "2024-04-29",
        "run.churn-21",
        "churn-v3 run 21: adding the support-call features (140 in all) raised ROC-AUC to 0.85.",
    ),
    ("2024-05-06", "run.churn-27", "churn-v3 run 27: isotonic calibration cut the Brier score from 0.071 to 0.064."),
    (
        "2024-05-13",
        "run.churn-30",
        "churn-v3 run 30: XGBoost reached a ROC-AUC of 0.849 against LightGBM's 0.852 and trained 3 times slower.",
    ),
    (
        "2024-07-08",
        "run.churn-33",
        "churn-v3 run 33: an FT-Transformer reached 0.84 ROC-AUC after 6 hours of GPU training.",
    ),
    (
        "2024-08-26",
        "run.churn-shap",
        "SHAP on churn-v3: contract_months_left is the top reason for 62% of the high-risk customers.",
    ),
    ("2024-09-23", "run.churn-40", "churn-v3 run 40, the first on the 60-day label: ROC-AUC 0.85, PR-AUC 0.38."),
    ("2024-10-14", "run.churn-45", "churn-v3 run 45: dropping the support-call features cost 0.03 ROC-AUC."),
    (
        "2024-12-16",
        "run.churn-uplift-1",
        "First reading of the retention campaign in December 2024: churn down 0.9 points among called customers.",
    ),
    (
        "2025-03-10",
        "run.churn-drift",
        "On 2025-03-10 the drift check flagged data_usage_trend (PSI 0.27) after the unlimited-data campaign.",
    ),
    (
        "2024-06-24",
        "run.netplan-9",
        "netplan run 9: one LightGBM model over all sites reached a weighted MAPE of 8.9%.",
    ),
    ("2024-07-15", "run.netplan-12", "netplan run 12: holiday features brought the weighted MAPE down to 8.2%."),
    ("2024-12-09", "run.netplan-20", "netplan run 20, the first with the 13-week horizon: weighted MAPE 7.8%."),
    ("2025-01-13", "run.netplan-24", "netplan run 24: down-weighting storm weeks gave 7.6% on weeks without storms."),
    ("2024-08-04", "run.birdsong-1", "birdsong run b1: 12 species at 71% top-1 accuracy."),
    ("2024-11-10", "run.birdsong-7", "birdsong run b7: 25 species at 82% top-1 accuracy."),
    ("2025-01-19", "run.birdsong-9", "birdsong run b9: SpecAugment raised accuracy by 3 points."),
    (
        "2025-03-02",
        "run.birdsong-11",
        "birdsong run b11: a wider CNN gave no gain and doubled the training time, so it was dropped.",
    ),
)
DANA_TABLES = "".join(f"{label} | {day} | {entry}\n" for day, label, entry in DANA_RUNS)

DANA = Unit(
    key="dana",
    owner="user-dana",
    name="Dana",
    start="2024-04-01",
    end="2025-04-28",
    envs=("laptop", "GPU box"),
    setting_phrases=(
        "On Dana's {env}, the {what} is {value}.",
        "Dana's {env}: {what} {value}.",
        "{What} on Dana's {env}: {value}.",
    ),
    facts="""
about | 2024-04-01 | The user is Dana Whitfield, a senior data scientist at Fjord Telecom in Oslo.
projects | 2024-04-01 | Dana's projects: churn-v3 (subscriber churn), netplan (network capacity forecast) and birdsong (a hobby bird-call classifier).
# how she likes to work
pandas-old | 2024-04-03 | Dana's analysis code uses pandas 2 with pyarrow dtypes.
polars-new | 2025-01-13 | Dana switched from pandas to polars for new code in January 2025; old notebooks stay on pandas.
conda-old | 2024-04-03 | Dana manages her Python environments with conda (miniforge).
uv-new | 2024-10-07 | Dana moved from conda to uv on 2024-10-07: every project now has a pyproject.toml and a uv.lock.
py310 | 2024-04-03 | Dana's projects run on Python 3.10.
py311 | 2024-08-19 | Dana moved all her projects from Python 3.10 to 3.11 on 2024-08-19.
plots | | Dana's plots are matplotlib with her style file dana.mplstyle, at 300 dpi, without top and right spines.
neg-pie | | Dana does NOT want pie charts, ever; use a sorted bar chart instead.
palette | | Use viridis for continuous values and the Okabe-Ito colors for categories, never matplotlib's default color cycle.
notebooks | | Notebooks are for exploration only; anything reused goes into a module under src/ with tests.
nb-names | | Dana's notebook names start with a date and her initials, like 2025-02-03-dw-churn-features.ipynb.
nbstripout | | Notebooks are committed with outputs cleared; nbstripout runs as a git filter.
type-hints | | Dana wants type hints in src/ code but not in notebooks.
docstrings | | Dana writes docstrings in numpy style.
tests | | Dana's tests run with pytest; data tests use small parquet fixtures in tests/data, at most 1 MB each.
seeds | | Every experiment sets its seed through one function, set_seed(42), which covers numpy, random and torch.
sql-style | | Dana's SQL: lowercase keywords, trailing commas, CTEs instead of nested subqueries, formatted by sqlfluff.
dbt-rule | | Feature tables are built as dbt models in the analytics repo, not in notebooks.
metrics-rule | | For churn models Dana reports PR-AUC and recall in the top 10% as well as ROC-AUC; ROC-AUC alone is not enough.
split-rule | | Dana only uses time-based train/test splits; random splits leak the future into churn features.
shap | | Dana explains models with SHAP's TreeExplainer.
memos | | Results go into a short Notion memo with one headline number and one plot, not into slides.
var-names | | Variable names spell things out: n_customers, not nc.
editor | | Dana uses VS Code with vim keybindings and the One Dark Pro theme.
terminal | | Dana's terminal is iTerm2 with zsh and starship.
rebase | | Dana rebases feature branches on main instead of merging main into them.
commit-msgs | | Dana writes commit messages in the imperative mood, under 72 characters.
hours | | Dana works 08:00-16:00 Oslo time and does not read Slack after 17:00.
focus | | Thursday afternoons are Dana's block without meetings, for deep work.
async | | Dana prefers a Slack thread to a call for questions that can wait a day.
reviewers | | Dana asks Kenji to review modelling code and Ruth to review SQL.
lightgbm-first | | For tabular models Dana starts with LightGBM and uses XGBoost only when a stakeholder insists.
optuna | | Hyperparameter searches use Optuna with 200 trials and a median pruner.
calibration | | Churn probabilities are calibrated with isotonic regression before the retention team gets them.
neg-deep-tabular | | Dana does not use deep learning for tabular data at Fjord: gradient boosting won every comparison she ran.
mlflow-rule | | Every training run is logged to MLflow with the git commit, the data snapshot date and the seed.
snapshots | | Training data is read from dated Snowflake snapshots such as CHURN_FEATURES_2025_03_01, never from live tables.
iso-dates | | Dana writes dates as ISO 8601 everywhere, file names included.
currency | | Money columns in Dana's tables are in NOK unless the column name says otherwise.
neg-excel | | Dana does NOT send results as Excel files; she shares a Tableau link or a CSV.
neg-papermill | | Never schedule a notebook in production (no papermill in Airflow); production code is a package.
neg-pii | | Do not copy customer names or phone numbers out of Snowflake; work with customer_id only.
neg-automl | | Dana does not use AutoML tools at work: she wants to know what the model does.
neg-pickle | | Do not pickle scikit-learn models for production; models are saved in LightGBM's text format or as ONNX.
neg-chat-data | | Customer data must never be pasted into ChatGPT or Copilot Chat.
neg-weekend-mail | | Dana doesn't want Airflow failure emails at weekends unless the churn scoring DAG fails.
neg-jupyterlab | | Dana does not use JupyterLab; she runs notebooks inside VS Code.
# churn-v3
churn-about | 2024-04-08 | churn-v3 is Dana's churn model for Fjord Telecom's mobile subscribers; it scores 1.9 million customers every Monday.
churn-label-90 | 2024-04-08 | churn-v3's label is "ported out or cancelled within 90 days".
churn-label-60 | 2024-09-16 | The churn label window changed from 90 to 60 days on 2024-09-16, at the retention team's request.
churn-features | | churn-v3 uses 140 features; the strongest are contract months left, support calls in the last 30 days and the data usage trend.
churn-auc | 2025-02-17 | churn-v3's holdout ROC-AUC is 0.86 and its PR-AUC 0.41, from the February 2025 retrain.
churn-v2 | | The previous model, churn-v2, had a ROC-AUC of 0.81.
churn-dag | | churn-v3's scores are written to CHURN_SCORES in Snowflake by an Airflow DAG at 04:00 on Mondays.
churn-calls | | The retention team calls the 5,000 highest-scored customers each week.
churn-uplift | 2025-03-24 | The retention calls cut churn by 1.4 percentage points among called customers, measured against a 10% holdout.
churn-fairness | | churn-v3 leaves out age and postcode as features since the 2024 fairness review.
churn-retrain | 2025-02-17 | churn-v3 was retrained on 2025-02-17 with data up to 2025-01-31.
churn-cadence | | churn-v3 is retrained every quarter, or sooner when the weekly drift check flags a feature.
churn-drift | | The drift check compares each feature's population stability index against the training snapshot; above 0.2 is a flag.
churn-repo | | churn-v3's code is in the repo fjord/churn, packaged as fjord_churn.
churn-runtime | | A full churn-v3 scoring run takes 14 minutes on the analytics cluster.
# netplan
netplan-about | 2024-06-03 | netplan is the network capacity forecast: weekly traffic per cell site.
netplan-8 | 2024-06-03 | netplan forecasts 8 weeks ahead.
netplan-13 | 2024-12-02 | netplan's horizon went from 8 to 13 weeks on 2024-12-02 so planning can order hardware a quarter ahead.
netplan-model | | netplan is one LightGBM model over all 9,400 cell sites, with features for Norwegian public holidays.
netplan-score | | netplan is judged by weighted MAPE; the current model reaches 7.8% over the last 13 weeks.
netplan-baseline | | The seasonal naive baseline for netplan has a weighted MAPE of 12.1%.
netplan-readers | | Network planning reads the netplan forecasts from a Tableau dashboard.
netplan-source | | netplan's traffic data comes from the table NET_TRAFFIC_WEEKLY, refreshed on Sundays.
netplan-dag | | The netplan forecast runs on Sunday evenings at 21:00, after the traffic table refresh.
netplan-quantiles | | netplan gives the 50th and 90th percentiles; planning sizes hardware on the 90th.
netplan-storms | | Weeks with big storms are flagged in netplan's training data and weighted down.
# birdsong
birdsong-about | | birdsong is Dana's hobby project: a classifier for the bird calls her garden recorder picks up.
birdsong-model | | birdsong fine-tunes a CNN on mel spectrograms and trains on the GPU box.
birdsong-species | | birdsong knows 34 species; the great tit is the most common in the recordings.
birdsong-clips | | birdsong's recordings are 10-second WAV clips at 48 kHz, kept in ~/data/birdsong.
birdsong-accuracy | 2025-04-06 | birdsong's top-1 accuracy is 88% on Dana's hand-labelled test set of 1,200 clips.
birdsong-repo | | birdsong is public on GitHub as danawhit/birdsong under the MIT license.
birdsong-private | | birdsong never uploads recordings anywhere; they stay on Dana's disk.
birdsong-recorder | | The garden recorder is an AudioMoth set to record at dawn and dusk.
birdsong-labels | | birdsong's labels are made in Audacity, one label track per clip.
# tools and places
airflow | | Dana's production jobs are scheduled by Airflow on the analytics cluster; the DAGs live in the analytics-dags repo.
snowflake-role | | In Snowflake Dana works with the role DS_DANA.
tableau | | Stakeholder dashboards are on Tableau Server, in the Data Science project.
notion | | Dana's memos are in the Notion space DS Memos.
jira | | Data science tickets live in the Jira project DS.
gpu-booking | | The GPU box is shared with two other data scientists; bookings go in the #gpu-02 Slack channel.
artifacts | | Large artifacts go to the S3 bucket fjord-ds-artifacts, one folder per project.
mlflow-models | | Production models are registered in the MLflow model registry; the Production stage is what the DAGs load.
onnx | | The churn model is exported to ONNX for the CRM's real-time scoring endpoint.
crm-endpoint | | The CRM calls the scoring endpoint for one customer at a time; p95 latency must stay under 100 ms.
# changes in people
manager-kenji | 2024-04-01 | Dana's manager is Kenji Sato.
manager-ruth | 2025-03-01 | Since 2025-03-01 Dana reports to Ruth Adeyemi; Kenji moved to the ML platform team.
# dated events
ev-pydata | 2024-11-14 | Dana spoke at PyData Oslo on 2024-11-14: "Time-based splits or it didn't happen".
ev-euroscipy | 2025-04-15 | Dana is speaking at EuroSciPy in August 2025, about calibrating churn models.
ev-dag-fail | 2025-01-06 | On 2025-01-06 the churn scoring DAG failed because a Snowflake column was renamed from ARPU to ARPU_NOK; fixed that day.
ev-audit | 2024-10-21 | The October 2024 privacy audit approved churn-v3's feature list.
ev-laptop | 2024-09-02 | Dana got a new MacBook Pro on 2024-09-02.
ev-holiday | 2025-04-20 | Dana is on holiday from 2025-07-07 to 2025-07-25; Kenji covers churn scoring while she is away.
ev-storm | 2024-12-27 | The storm on 2024-12-27 knocked out 300 cell sites for two days; that week is flagged in netplan's data.
ev-netplan-launch | 2024-07-01 | netplan went live for network planning on 2024-07-01.
ev-churn-v3-launch | 2024-05-13 | churn-v3 replaced churn-v2 in production on 2024-05-13.
ev-gpu-upgrade | 2025-02-10 | The GPU box got its second A100 on 2025-02-10.
ev-hackathon | 2024-10-03 | Dana's team won the October 2024 internal hackathon with a tool that explains a customer's churn score in plain Norwegian.
ev-cert | 2024-06-20 | Dana passed the Snowflake SnowPro Core certification on 2024-06-20.
# smaller things she asked to remember
m-meeting-notes | | Dana wants meeting notes as bullet points with decisions at the top and owners next to each action.
m-time-zone | | When scheduling, use Oslo time; Dana's US stakeholders are on Eastern time.
m-lunch | | Dana blocks 11:30-12:00 for lunch every day.
m-language | | Dana writes code and memos in English, and stakeholder emails in Norwegian.
m-coffee | | Dana's team coffee is on Fridays at 14:00.
m-reading | | Dana keeps a reading list in Zotero; papers on calibration are tagged calib.
m-cli | | Dana's small tools are Typer command-line apps installed with uv tool install.
m-config | | Project settings are read from a config.toml with pydantic-settings; no hard-coded paths.
m-logging | | Dana's pipelines log with the standard logging module in JSON format.
m-precommit | | Every repo of Dana's has pre-commit with ruff, ruff-format, nbstripout and sqlfluff.
m-ruff-line | | Dana's ruff line length is 100.
m-ci | | Dana's repos run GitHub Actions on every push: ruff, pytest, and a dbt compile for SQL changes.
m-data-docs | | Each dataset Dana builds gets a README with the source tables, the grain and the snapshot date.
m-grain | | Dana always states a table's grain in its first comment, e.g. one row per customer per week.
m-nulls | | Missing values in features stay NaN for LightGBM; Dana does not impute them for tree models.
m-categorical | | Categorical features are passed to LightGBM as categories, not one-hot encoded.
m-leakage | | Before training, Dana checks that no feature is computed after the label date.
m-thresholds | | The retention team gets scores, not yes/no labels; they choose their own cut-off.
m-sample | | For exploration Dana samples 1% of customers with a hash of customer_id so samples are stable.
m-plot-size | | Figures for memos are 8 by 4.5 inches.
m-fonts | | Dana's plots use the Source Sans 3 font.
m-colorblind | | Every chart must work for color-blind readers; that is why she uses Okabe-Ito.
m-dashboard-refresh | | Tableau extracts refresh on Mondays at 06:00, after the churn DAG.
m-backfill | | Backfills of churn scores run with airflow dags backfill, never by editing the table by hand.
m-sla-churn | | The retention team needs the churn scores by 07:00 on Mondays.
m-alert | | If the churn DAG fails, the alert goes to Dana's phone through Opsgenie.
m-notebook-kernel | | Each project's notebooks use the project's own uv environment as the kernel.
m-gpu-etiquette | | Jobs on the GPU box must run inside tmux with the job name and Dana's initials.
m-disk | | The GPU box's shared disk is cleaned of files older than 90 days in /mnt/shared/tmp.
m-hf | | Pretrained audio models for birdsong are pulled from Hugging Face and cached on the shared disk.
m-vpn | | Reaching the GPU box from home needs the Fjord VPN.
m-ssh | | Dana's SSH config names the GPU box gpu02.
m-books | | Dana likes recommendations from "Forecasting: Principles and Practice" and "Interpretable Machine Learning".
m-okr | | Dana's 2025 goal: cut churn among called customers by 2 percentage points.
m-budget | | The data science team's 2025 cloud budget is 900,000 NOK.
m-mentoring | | Dana mentors the junior data scientist Maja every other Tuesday.
m-interviews | | Dana runs the take-home review in data scientist hiring; she gives candidates 5 days.
m-stakeholders | | Dana's main stakeholders are the retention team and network planning.
m-churn-definition | | "Ported out" means the number moved to another operator; "cancelled" means the contract ended without a port.
m-features-doc | | churn-v3's feature definitions are documented in the analytics repo under docs/churn_features.md.
m-ab-tool | | Fjord runs its experiments in an in-house tool called Torget; holdouts are assigned there.
m-power | | Dana sizes experiments with a power of 0.8 at a 5% significance level.
m-holdout-size | | Retention experiments keep a 10% holdout that receives no calls.
m-one-on-one | | Dana's one-to-one with Ruth is on Mondays at 13:00.
m-model-review | | The churn model review with the retention team is monthly, on the second Wednesday.
m-review-speed | | Dana tries to review teammates' pull requests within one working day.
m-no-feature-store | | Fjord has no feature store; shared features live in dbt models under models/features.
m-standards | | The data science team's coding standards are the Confluence page DS Engineering Standards.
m-credentials | | Dana's Snowflake credentials come from environment variables filled by the 1Password CLI.
m-autosuspend | | Dana's warehouse auto-suspends after 60 seconds to save credits.
m-query-tags | | Dana tags her Snowflake queries with the project name so the costs can be split.
m-gpu-time | | A birdsong training run takes about 40 minutes on one A100.
m-weekends | | Dana works on birdsong at weekends only, never on company time.
m-birdsong-live | | birdsong runs live on the laptop from an ONNX export.
m-wryneck | | The rarest species in birdsong's data is the Eurasian wryneck, with 11 clips.
m-no-bird | | birdsong has a "no bird" class trained on 3,000 clips of wind, rain and traffic.
m-holiday-features | | netplan's holiday features include 17 May and Easter week, which change traffic the most.
m-netplan-retrain | | netplan is retrained every month on the latest two years of data.
m-netplan-table | | netplan writes to NETPLAN_FORECASTS, one row per site, week and quantile.
m-segments | | The retention team calls prepaid and postpaid customers from separate lists; churn-v3 is one model for both.
m-reasons | | Each scored customer gets the top 3 SHAP reasons in plain Norwegian for the call agents.
m-holdout-weekly | | The 10% holdout is drawn fresh every week in Torget.
m-memo-template | | Dana's memo template: Question, Answer, How we know, What's next.
m-direct-labels | | Dana labels lines directly on the chart instead of using a legend when there are three lines or fewer.
m-axis-zero | | Bar charts start at zero; line charts need not.
m-time-axis | | Time axes show months as Jan, Feb and so on, with the year only at the first tick of each year.
m-thousands | | Large numbers in memos use a thin space as the thousands separator, Norwegian style.
m-decimals | | Percentages in memos get one decimal at most.
m-laptop-model | | Dana's laptop is a MacBook Pro M3 Pro.
m-home-days | | Dana works from home on Tuesdays and Thursdays.
m-office | | Fjord's office is at Fornebu; the data science team sits on the fourth floor.
m-urgent | | For anything urgent Dana prefers a text to a call.
m-monitor | | At the office Dana uses an external 27-inch 4K monitor.
"""
    + DANA_TABLES,
    settings=(
        ("data-dir", "data directory", "~/data", "/mnt/shared/dana"),
        ("threads", "POLARS_MAX_THREADS setting", "8", "48"),
        ("gpu", "GPU", "none (Apple M3 Pro)", "2 x NVIDIA A100 80 GB"),
        ("cuda", "CUDA version", "none", "12.2"),
        ("jupyter-port", "Jupyter port", "8888", "8890"),
        ("mlflow", "MLflow tracking URI", "http://localhost:5000", "http://mlflow.fjord.internal:5000"),
        ("ram", "memory", "36 GB", "512 GB"),
        ("hostname", "hostname", "dana-mbp", "gpu-02.fjord.internal"),
        ("shell", "shell", "zsh with starship", "bash"),
        ("warehouse", "default Snowflake warehouse", "DANA_XS", "ANALYTICS_L"),
        ("hf-cache", "Hugging Face cache", "~/.cache/huggingface", "/mnt/shared/hf-cache"),
        ("os", "operating system", "macOS 15", "Ubuntu 22.04"),
    ),
    versions=(
        ("python", "Python", "3.11.9"),
        ("polars", "polars", "1.9"),
        ("pandas", "pandas", "2.2"),
        ("lightgbm", "LightGBM", "4.5"),
        ("sklearn", "scikit-learn", "1.5"),
        ("optuna", "Optuna", "4.0"),
        ("shap", "SHAP", "0.46"),
        ("mlflow", "MLflow", "2.16"),
        ("torch", "PyTorch", "2.4"),
        ("dbt", "dbt", "1.8"),
        ("airflow", "Airflow", "2.9"),
        ("matplotlib", "matplotlib", "3.9"),
    ),
    people=(
        (
            "kenji",
            "Kenji Sato",
            "the ML platform lead",
            "Oslo",
            "Dana's manager until March 2025; reviews her modelling code.",
        ),
        ("ruth", "Ruth Adeyemi", "the head of analytics", "Oslo", "Reviews Dana's SQL."),
        ("ingrid", "Ingrid Berg", "the retention team lead", "Bergen", "Uses the churn scores every Monday."),
        ("arne", "Arne Lie", "the network planning lead", "Trondheim", "Reads the netplan dashboard."),
        ("tor", "Tor Haugen", "the data engineer", "Oslo", "Owns the Snowflake pipelines."),
        ("maja", "Maja Eriksen", "the junior data scientist", "Oslo", "Shares the GPU box."),
        ("sigrid", "Sigrid Dahl", "the privacy officer", "Oslo", "Ran the 2024 audit."),
        ("lars", "Lars Nilsen", "IT support", "Oslo", "Handles laptops and VPN access."),
    ),
    questions="""
? paraphrase | Which dataframe library does she reach for in fresh work? | polars-new
? paraphrase | How does she keep each repository's dependencies pinned? | uv-new
? paraphrase | What kind of circular graphic should never appear in her reports? | neg-pie
? paraphrase | How are model outputs turned into trustworthy likelihoods before the callers see them? | calibration
? paraphrase | Which night of the week does the capacity predictor execute? | netplan-dag
? paraphrase | How accurate is the garden hobby's recognizer? | birdsong-accuracy
? paraphrase | Who is her boss these days? | manager-ruth
? paraphrase | When is she off this summer, and who fills in? | ev-holiday
? paraphrase | How does she carve evaluation periods from history? | split-rule
? paraphrase | What must happen to executed cells before code reaches the repository? | nbstripout
? paraphrase | Which personal information stays inside the warehouse? | neg-pii
? paraphrase | Where did she present at a local meetup about validation? | ev-pydata
? name | What is netplan? | netplan-about, projects
? name | Who reviews Dana's SQL? | reviewers, who.ruth
? name | Who is Ingrid Berg? | who.ingrid
? name | What does Dana use SHAP for? | shap
? name | What is Torget? | m-ab-tool
? name | What is churn-v2's ROC-AUC? | churn-v2
? name | Where do Dana's memos live? | notion
? name | Which table does netplan read traffic from? | netplan-source
? name | What does the AudioMoth do for birdsong? | birdsong-recorder
? name | What is stored in CHURN_SCORES, and when is it written? | churn-dag
? number | How many customers does churn-v3 score each week? | churn-about
? number | How many features does churn-v3 use? | churn-features, run.churn-21
? number | How many cell sites does netplan cover? | netplan-model
? number | What weighted MAPE does netplan reach? | netplan-score, run.netplan-20
? number | How many species does birdsong know? | birdsong-species
? number | How many customers does the retention team call each week? | churn-calls
? number | How much memory does the GPU box have? | env.ram.GPU-box
? number | How many Optuna trials does Dana run? | optuna
? number | What line length does Dana use for ruff? | m-ruff-line
? date | When did churn-v3 go into production? | ev-churn-v3-launch
? date | What happened to the churn DAG on 2025-01-06? | ev-dag-fail
? date | When did netplan go live? | ev-netplan-launch
? date | When was churn-v3 last retrained, and on data up to when? | churn-retrain
? date | What did Dana do on 2024-06-20? | ev-cert
? date | What happened to the cell network on 2024-12-27? | ev-storm
? date | When did the GPU box get its second A100? | ev-gpu-upgrade
? date | When is Dana speaking at EuroSciPy? | ev-euroscipy
? negation | Can I send Dana the results as an Excel file? | neg-excel
? negation | Should I schedule this notebook with papermill in Airflow? | neg-papermill
? negation | Is it fine to pickle the scikit-learn model for production? | neg-pickle
? negation | Should we try a deep neural net on the churn features? | neg-deep-tabular
? negation | Does Dana use JupyterLab? | neg-jupyterlab
? negation | Can I paste a few customer rows into ChatGPT to debug? | neg-chat-data
? negation | Should Airflow email Dana about a failed job on Saturday? | neg-weekend-mail
? update | What is churn-v3's label window? | churn-label-60
? update | How far ahead does netplan forecast? | netplan-13
? update | Which Python version do Dana's projects use? | py311
? update | Who is Dana's manager? | manager-ruth
? update | What did Dana use for environments before uv? | conda-old
? update | What was the churn label window when churn-v3 launched? | churn-label-90
? update | Does Dana write new code with pandas? | polars-new
? multi-hop | Who reviews Dana's modelling code, and which team is he on now? | reviewers, manager-ruth, who.kenji
? multi-hop | Which team uses the churn scores, and who leads it? | churn-calls, who.ingrid
? multi-hop | How much better is netplan than its baseline? | netplan-score, netplan-baseline
? multi-hop | How much did churn-v3 improve on the model before it? | churn-auc, churn-v2
? multi-hop | Who covers churn scoring during Dana's holiday, and what does he lead? | ev-holiday, who.kenji
? multi-hop | Which GPU does birdsong train on? | birdsong-model, env.gpu.GPU-box
? multi-hop | When does the churn DAG write scores, and by when does the retention team need them? | churn-dag, m-sla-churn
""",
)

# The services on Fernwood: (namespace, team, what it does, language, production replicas).
FERN_SERVICES = (
    ("claims-intake", "claims", "takes in new claims from the website and the app", "Java 21", "6"),
    ("claims-docs", "claims", "runs OCR on uploaded claim documents on the GPU pool", "Python", "3"),
    ("claims-us", "claims-us", "handles US claims and runs only in fern-prod-us", "Java 21", "4"),
    ("payments-ledger", "payments", "keeps the ledger of every payout", "Go", "4"),
    ("payments-gateway", "payments", "sends payouts to the bank's API", "Go", "3"),
    ("policy-quotes", "policy", "prices new policies", "Java 21", "8"),
    ("policy-renewals", "policy", "sends renewal offers and is busiest in the spring peak", "Java 21", "5"),
    ("customer-portal", "web", "serves the customer web portal", "TypeScript with Next.js", "6"),
    ("customer-auth", "identity", "signs customers in and issues their tokens", "Go", "4"),
    ("agent-crm", "sales", "is the CRM the phone agents use", "Java 21", "3"),
    ("fraud-score", "data", "scores incoming claims for fraud", "Python", "2"),
    ("notifications", "shared services", "sends the email and SMS messages for every team", "Go", "3"),
    ("partner-api", "integrations", "is the API for broker partners", "Java 21", "4"),
    ("document-store", "claims", "stores claim documents in GCS", "Go", "3"),
    ("audit-trail", "compliance", "writes audit events to BigQuery", "Go", "2"),
    ("feature-flags", "shared services", "runs the Unleash server for feature flags", "Go", "2"),
    ("reporting-batch", "data", "runs the nightly reports as CronJobs on the spot pool", "Python", "0 (CronJobs only)"),
    ("search-api", "web", "answers the portal's search box from OpenSearch", "Java 21", "2"),
)
# Alerts with their runbook's first step: (alert, what it means, first step).
FERN_ALERTS = (
    (
        "KubeAPIErrorBudgetBurn",
        "the API server's error budget is burning fast",
        "check the GKE status page and recent control plane upgrades",
    ),
    ("NodeNotReady", "a node has been NotReady for 10 minutes", "cordon it and let the autoscaler replace it"),
    (
        "PodCrashLooping",
        "a pod restarted more than 5 times in 15 minutes",
        "page the owning team through its PagerDuty service",
    ),
    (
        "CertificateExpiringSoon",
        "a certificate expires within 14 days",
        "check the cert-manager Certificate's events and the Cloudflare token",
    ),
    (
        "ArgoAppOutOfSync",
        "an Argo CD application has been out of sync for 30 minutes",
        "look at the diff in Argo CD before syncing",
    ),
    (
        "IngressHigh5xx",
        "more than 1% of ingress responses are 5xx",
        "find the backend service in the ingress dashboard",
    ),
    ("VaultSealed", "a Vault node is sealed", "unseal it with the key holders on the #fernwood-vault rota"),
    (
        "PubSubBacklogHigh",
        "a Pub/Sub subscription holds more than 50,000 messages",
        "check that the consumer's KEDA scaler is working",
    ),
    (
        "CloudSQLHighCPU",
        "a Cloud SQL instance is above 90% CPU for 15 minutes",
        "tell the owning team; the platform does not tune queries",
    ),
    (
        "SpotPreemptionStorm",
        "more than 20 spot nodes were preempted in an hour",
        "move urgent batch jobs to the general pool with a toleration change",
    ),
    (
        "VeleroBackupFailed",
        "last night's Velero backup failed",
        "rerun it by hand and check the GCS bucket permissions",
    ),
    (
        "DNSRecordMissing",
        "a record for a production host is missing in Cloudflare",
        "check external-dns logs; it runs upsert-only",
    ),
)
FERN_TABLES = "".join(
    f"svc.{ns} | | {ns} ({team} team) {what}.\n"
    + (
        f"run.{ns} | | {ns} is written in {lang} and runs {replicas} replicas in production.\n"
        if index % 2
        else f"run.{ns} | | In production {ns} runs {replicas} replicas; it is a {lang} service.\n"
    )
    for index, (ns, team, what, lang, replicas) in enumerate(FERN_SERVICES)
) + "".join(
    f"alert.{name} | | Alert {name} fires when {meaning}; the runbook's first step: {step}.\n"
    for name, meaning, step in FERN_ALERTS
)

FERNWOOD = Unit(
    key="fern",
    owner="proj-fernwood",
    name="Fernwood",
    start="2024-04-15",
    end="2025-04-25",
    facts="""
about | 2024-04-15 | Fernwood is Marlow Insurance's internal Kubernetes platform; the user, Kai Lindqvist, is on its platform team.
team | | The Fernwood platform team has five people and serves about 30 product teams.
clusters | 2024-04-15 | Fernwood runs three GKE clusters: fern-staging, fern-prod-eu and fern-prod-us.
prod-us | | fern-prod-us runs in us-east4 and only hosts the US claims services.
pools | | Each Fernwood cluster has a general node pool, a memory-optimized pool (n2-highmem-8) and, in fern-prod-eu only, a GPU pool.
gpu-pool | | The GPU pool in fern-prod-eu has L4 GPUs for the document OCR service and scales from 0 to 4 nodes.
spot | | Batch jobs run on a spot node pool with a taint batch=true:NoSchedule; they must tolerate being evicted.
gitops | 2024-04-22 | Fernwood is GitOps: Argo CD syncs every cluster from the fernwood-deploy repository with an app-of-apps.
helm | | Product teams deploy with the shared Helm chart fernwood-service; custom charts need platform review.
terraform | | Fernwood's cloud resources are Terraform in the fernwood-infra repo; state is in the GCS bucket fernwood-tfstate.
tf-modules | | Terraform modules are versioned with git tags like gke-cluster/v4.2.0 and pinned by tag in every environment.
atlantis | | Terraform plans and applies run through Atlantis on pull requests; nobody applies from a laptop.
vault | | Secrets live in HashiCorp Vault; pods get them through the Vault Agent injector, never as plain Kubernetes secrets in git.
eso | 2025-02-17 | The Vault Agent injector is being replaced by External Secrets Operator, team by team, since 2025-02-17.
certs | | TLS certificates come from cert-manager with Let's Encrypt; they renew 30 days before expiry.
dns | | DNS for fernwood.dev is in Cloudflare, managed by external-dns from the ingress annotations.
ingress-nginx | 2024-04-15 | Fernwood's ingress controller is ingress-nginx.
gateway-api | 2025-03-10 | Started moving Fernwood from ingress-nginx to the Gateway API (GKE Gateway controller) on 2025-03-10; new services use HTTPRoute.
registry | | Images are stored in Artifact Registry at europe-docker.pkg.dev/marlow-fern/images.
trivy | | Every image is scanned by Trivy in CI; a critical CVE blocks the merge.
kyverno | | Kyverno policies enforce requests and limits, non-root containers and signed images in production.
cosign | | Production images must be signed with cosign by the CI pipeline; Kyverno rejects unsigned ones.
netpol | | Every namespace starts with a default-deny NetworkPolicy; teams open what they need.
rbac | | Product teams get edit rights only in their own namespaces; cluster-admin belongs to the platform team.
teleport | 2024-06-03 | Human access to the clusters goes through Teleport with GitHub SSO; sessions are recorded.
ci | | Fernwood's CI is GitLab CI; pipelines build the image, scan it, sign it and open a pull request in fernwood-deploy.
monitoring | | Fernwood monitoring is kube-prometheus-stack: Prometheus, Alertmanager and Grafana, one set per cluster.
thanos | | Thanos keeps long-term metrics in GCS for 13 months.
logs | | Logs go to Loki through Grafana Alloy agents on every node.
tracing | | Traces go to Grafana Tempo through OpenTelemetry collectors; sampling is 10% head-based.
dashboards | | Every service gets the standard dashboard fernwood-service-overview with RED metrics.
slo-api | | The platform SLO: the Kubernetes API of each production cluster is available 99.95% of the month.
slo-ingress | | The ingress SLO: 99.9% of requests answered without a 5xx caused by the platform.
alert-routing | | Alertmanager routes alerts by the team label to each team's PagerDuty service.
oncall-weekly | 2024-04-15 | The platform on-call rotation is weekly, one person at a time, handover on Wednesdays at 10:00.
oncall-fts | 2025-01-08 | Platform on-call changed to follow-the-sun on 2025-01-08: Stockholm covers 07:00-19:00 CET and Austin covers the night.
runbooks | | Every alert must link to a runbook in the fernwood-runbooks repo; an alert without one is rejected in review.
postmortems | | Every SEV1 and SEV2 gets a blameless postmortem within 5 working days, written in the postmortems folder of Confluence.
sev-levels | | SEV1 means customers cannot file or see claims; SEV2 means degraded for a large group; SEV3 is internal only.
velero | | Velero backs up cluster objects and persistent volumes every night to a GCS bucket in another region.
dr | | Fernwood's DR plan rebuilds a cluster from Terraform and Argo CD in under 2 hours; it was last tested in March 2025.
cloudsql | | Product databases are Cloud SQL for PostgreSQL, one instance per team, with private IP only.
neg-stateful | | We do NOT run stateful databases inside Kubernetes on Fernwood; databases go to Cloud SQL or Memorystore.
neg-kubectl-edit | | Nobody runs kubectl edit or kubectl apply against production; every change goes through fernwood-deploy.
neg-latest | | Images tagged latest are not allowed; Kyverno rejects them in every cluster.
neg-privileged | | Privileged pods are not allowed outside the kube-system and monitoring namespaces.
neg-nodeport | | Fernwood does not allow NodePort services; traffic comes in through the ingress or the Gateway.
neg-mesh | 2024-11-25 | We do NOT run a service mesh: Linkerd was tried in 2024 and removed on 2024-11-25 because nobody used its features.
neg-helm-cli | | Do not run helm install by hand; Argo CD renders the charts.
neg-public-lb | | Services must not create public load balancers of their own; only the platform ingress is public.
neg-friday-upgrade | | Cluster upgrades never start on a Friday.
neg-root-login | | There is no SSH access to nodes; debugging goes through kubectl debug with an ephemeral container.
k8s-128 | 2024-04-15 | Fernwood's clusters run Kubernetes 1.28.
k8s-129 | 2024-09-23 | Upgraded all Fernwood clusters from Kubernetes 1.28 to 1.29 between 2024-09-23 and 2024-10-07.
k8s-130 | 2025-03-03 | Fernwood's clusters moved from Kubernetes 1.29 to 1.30 in March 2025, staging on 2025-03-03 and production on 2025-03-17.
upgrade-order | | Upgrades go staging first, then fern-prod-us, then fern-prod-eu, one week apart.
channel | | The GKE clusters are on the regular release channel with maintenance windows on Tuesdays 06:00-10:00 CET.
freeze-2024 | 2024-11-04 | The end-of-year change freeze runs from 2024-12-16 to 2025-01-06; only SEV1 fixes go out.
freeze-renewals | 2025-03-24 | A change freeze covers the spring renewal peak, 2025-05-26 to 2025-06-06.
inc-dns | 2024-07-09 | SEV1 on 2024-07-09: external-dns deleted the claims API records after a bad annotation; 38 minutes of downtime. It now runs in upsert-only mode.
inc-cert | 2024-10-14 | SEV2 on 2024-10-14: a certificate expired on the partner API because cert-manager had lost its Cloudflare token; an expiry alert at 14 days was added.
inc-node | 2025-01-21 | SEV2 on 2025-01-21: a bad node image in fern-prod-eu caused pods to restart in a loop for 52 minutes; node pool upgrades now canary on one node first.
inc-quota | 2025-02-26 | SEV3 on 2025-02-26: the spot pool hit the regional CPU quota and batch jobs waited 3 hours; the quota was raised to 2,000 vCPUs.
inc-argo | 2025-04-08 | SEV2 on 2025-04-08: an Argo CD sync pruned the payments namespace's config maps; auto-prune is now off for production.
cost-2024 | 2025-01-15 | Fernwood's GCP bill for 2024 was 1.32 million euros.
cost-target | 2025-01-15 | The 2025 target is to keep Fernwood under 1.2 million euros, mostly by moving batch jobs to spot nodes.
cost-tool | | Costs per team are shown with OpenCost and reported in the monthly platform review.
chargeback | | Since 2025, product teams are charged back for their namespaces' requests, not their actual usage.
requests-rule | | Every container needs CPU and memory requests; memory limit equals the request, CPU has no limit.
hpa | | Services scale with the HorizontalPodAutoscaler on CPU by default; KEDA is used for queue-driven scaling.
keda | | KEDA scales the claims workers on the length of the Pub/Sub subscription.
pdb-rule | | Services with more than one replica must have a PodDisruptionBudget.
probes | | Every service needs readiness and liveness probes; the liveness probe must not call the database.
namespaces | | Namespaces are named team-service, like claims-intake or payments-ledger.
labels | | Every workload must carry the labels team, service and cost-center.
onboarding | | A new team gets its namespaces, Vault path, Argo CD project and PagerDuty service from one merge request to fernwood-teams.
office-hours | | The platform team holds office hours on Thursdays at 14:00 CET in the #fernwood-help channel's huddle.
support-channel | | Platform questions go to #fernwood-help; urgent production issues page the platform on-call.
changelog | | Platform changes are announced in #fernwood-announce at least a week ahead when teams must act.
docs | | Fernwood's docs site is docs.fernwood.dev, built with Backstage TechDocs.
backstage | | Backstage at backstage.fernwood.dev lists every service with its owner team and on-call.
scorecards | | Backstage scorecards check that each service has a runbook, an SLO and dashboards.
golden-path | | The golden path template creates a service with the Helm chart, CI pipeline and dashboards already set up.
languages | | Most Fernwood services are Java 21 with Spring Boot or Go; a few are Python.
base-images | | Base images are distroless Java 21 and distroless static for Go, rebuilt every Monday.
image-age | | Images older than 30 days get a warning in Backstage; older than 90 days block deploys.
pubsub | | Services talk asynchronously through Google Pub/Sub; Kafka is not offered by the platform.
memorystore | | Redis is offered as Memorystore, one instance per team.
egress | | Outbound traffic to the internet goes through Cloud NAT with fixed IPs that partners allowlist.
egress-ips | | fern-prod-eu's NAT IPs are 35.195.10.4 and 35.195.10.5.
audit-logs | | Kubernetes audit logs are kept for 400 days because of insurance regulation.
compliance | | Fernwood is in scope for ISO 27001; the audit is every October.
audit-2024 | 2024-10-18 | The October 2024 ISO 27001 audit passed with one minor finding: missing access reviews for Teleport roles.
access-review | | Teleport role access is reviewed every quarter by the platform lead.
gitlab-runners | | GitLab CI runners for Fernwood run on the fern-staging cluster's ci node pool.
renovate | | Renovate opens dependency updates for Helm charts and Terraform providers every Tuesday.
argocd-projects | | Each team has its own Argo CD project limited to its namespaces.
rollbacks | | Rollback is a git revert in fernwood-deploy; Argo CD syncs the previous image.
canary | | Canary releases use Argo Rollouts with 10%, 30% and 100% steps, 10 minutes apart.
chaos | | Chaos tests with Chaos Mesh run in staging every second Wednesday.
load-tests | | Load tests for platform changes run with k6 from the loadgen namespace in staging.
capacity | | The general pool in fern-prod-eu runs at about 65% CPU requested on a normal weekday.
peak | | The busiest week of the year is the spring renewal peak, when claim traffic triples.
m-namespaces | | Fernwood hosts 214 namespaces across the three clusters.
m-pods | | fern-prod-eu runs about 3,400 pods on a weekday afternoon.
m-teams-each | | Each platform engineer is the contact for about six product teams.
m-platform-review | | The platform review with product teams is on the first Thursday of each quarter.
m-kai-prs | | Kai wants Terraform changes split so that one pull request touches one environment.
m-kai-review | | Kai reviews Argo CD and Helm chart changes; Dmitri reviews anything under networking/.
m-commit-prefix | | fernwood-infra commit messages start with the environment: [staging], [prod-eu], [prod-us] or [all].
m-destroy | | Atlantis posts each plan as a comment; a plan that destroys a resource needs a second approver.
m-tflint | | terraform fmt and tflint run in CI on every fernwood-infra pull request.
m-chart-version | | The fernwood-service chart is at version 3.8 and follows semver; teams pin a minor version.
m-chart-3 | 2025-01-27 | fernwood-service chart 3.0 dropped the legacy ingress values; teams had until 2025-03-31 to move.
m-node-os | | Fernwood nodes run Container-Optimized OS images picked by GKE's release channel.
m-dns-ttl | | Public DNS records managed by external-dns have a TTL of 300 seconds.
m-waf | | Cloudflare's WAF sits in front of the public ingress with the OWASP core rule set.
m-partner-limit | | The partner API is rate-limited at the Cloudflare edge to 100 requests per second per partner.
m-commander | | In a SEV1 the platform on-call is incident commander until they hand over in the incident channel.
m-incident-channel | | Each incident gets a Slack channel named inc-YYYYMMDD-short-name, created by the PagerDuty integration.
m-status-page | | Customer-facing status updates go on status.marlow.com, written by the support lead, not by engineers.
m-game-day | 2025-03-19 | The March 2025 game day simulated losing europe-west1; fern-prod-eu was rebuilt in 1 hour 48 minutes.
m-budget-alerts | | GCP budget alerts for Fernwood go to Ellen at 80% and 100% of the monthly budget.
m-cud | 2024-12-02 | Marlow bought a three-year committed use discount for 600 vCPUs on 2024-12-02.
m-gpu-cost | | The GPU pool costs about 4,000 euros a month when it runs full time; it scales to zero at night.
m-hiring | 2025-04-07 | The platform team is hiring a sixth engineer, for observability, to start in the summer of 2025.
m-rotation | | Each platform engineer is on call about one week in five.
m-oncall-pay | | Platform on-call is paid as a flat weekly allowance plus the hours worked out of hours.
"""
    + FERN_TABLES,
    settings=(
        ("cluster", "GKE cluster", "fern-staging", "fern-prod-eu"),
        ("region", "region", "europe-west4", "europe-west1"),
        ("nodes-min", "minimum size of the general node pool", "2 nodes", "6 nodes"),
        ("nodes-max", "maximum size of the general node pool", "6 nodes", "40 nodes"),
        ("machine", "general pool machine type", "e2-standard-4", "n2-standard-8"),
        ("argocd", "Argo CD URL", "argo.staging.fernwood.dev", "argo.fernwood.dev"),
        ("grafana", "Grafana URL", "grafana.staging.fernwood.dev", "grafana.fernwood.dev"),
        ("vault", "Vault address", "https://vault.staging.fernwood.dev:8200", "https://vault.fernwood.dev:8200"),
        ("loki-retention", "Loki log retention", "7 days", "31 days"),
        ("prom-retention", "local Prometheus retention", "3 days", "15 days"),
        ("sync", "Argo CD sync policy", "automatic with self-heal", "manual sync, auto-prune off"),
        ("issuer", "cert-manager issuer", "letsencrypt-staging", "letsencrypt-prod"),
        ("ingress-ip", "ingress IP", "34.90.12.7", "35.205.44.18"),
        ("sql-tier", "default Cloud SQL tier", "db-custom-2-8192", "db-custom-8-32768"),
        ("pdb", "default PodDisruptionBudget", "none", "maxUnavailable 1"),
        ("api-access", "control plane access", "public endpoint with authorized networks", "private endpoint only"),
        ("hpa-target", "default HPA CPU target", "80%", "65%"),
        ("image-policy", "image signature policy", "audit only", "enforced"),
        ("backup-time", "Velero backup time", "03:00 UTC", "01:00 UTC"),
    ),
    versions=(
        ("argocd", "Argo CD", "2.11"),
        ("helm", "Helm", "3.15"),
        ("terraform", "Terraform", "1.7.5"),
        ("google-provider", "the Terraform google provider", "5.40"),
        ("vault", "Vault", "1.17"),
        ("cert-manager", "cert-manager", "1.15"),
        ("kyverno", "Kyverno", "1.12"),
        ("prometheus-stack", "kube-prometheus-stack", "61.3"),
        ("loki", "Loki", "3.1"),
        ("tempo", "Tempo", "2.5"),
        ("velero", "Velero", "1.14"),
        ("teleport", "Teleport", "16"),
        ("keda", "KEDA", "2.15"),
        ("rollouts", "Argo Rollouts", "1.7"),
        ("gateway", "the Gateway API CRDs", "1.1"),
        ("alloy", "Grafana Alloy", "1.3"),
    ),
    people=(
        ("kai", "Kai Lindqvist", "a platform engineer and the user", "Stockholm", "Owns the Argo CD setup."),
        ("maren", "Maren Holt", "the platform lead", "Stockholm", "Runs the quarterly access reviews."),
        (
            "dmitri",
            "Dmitri Volkov",
            "the platform engineer for networking",
            "Tallinn",
            "Owns ingress, DNS and the Gateway migration.",
        ),
        (
            "grace",
            "Grace Obi",
            "the platform engineer for observability",
            "Austin",
            "Covers the night shift of on-call.",
        ),
        ("luis", "Luis Carvalho", "the platform engineer for security", "Lisbon", "Owns Kyverno policies and Vault."),
        ("ellen", "Ellen Park", "the head of infrastructure", "Austin", "Approves the platform budget."),
        ("sam", "Sam Whitaker", "the claims team's tech lead", "Manchester", "Runs the biggest workloads on Fernwood."),
        ("noor", "Noor Hassan", "the compliance manager", "London", "Prepares the ISO 27001 audit."),
    ),
    questions="""
? paraphrase | What happened to the sidecar-based traffic layer experiment? | neg-mesh
? paraphrase | Who watches over the pager overnight now? | oncall-fts
? paraphrase | How long does recovering from losing a region take? | dr
? paraphrase | Where must relational data live instead? | neg-stateful
? paraphrase | What checks uploaded container builds for known holes? | trivy
? paraphrase | How do people get a shell on the machines? | teleport
? paraphrase | What does the platform spend a year on Google? | cost-2024
? paraphrase | Which tool shows each group's spending? | cost-tool
? paraphrase | What stops a workload from running as the superuser? | kyverno
? paraphrase | What broke name resolution for the insurer's main service in July? | inc-dns
? paraphrase | How soon before lapsing are HTTPS credentials refreshed? | certs
? paraphrase | What is taking over from the sidecar that delivers credentials? | eso
? name | What is Atlantis used for? | atlantis
? name | What does KEDA scale? | keda, hpa
? name | Who owns the Gateway API migration? | who.dmitri
? name | What is fern-prod-us for? | prod-us
? name | What does Velero do on Fernwood? | velero
? name | What is the fernwood-teams repository for? | onboarding
? name | What does Backstage show? | backstage
? name | What are the Kyverno rules about images? | neg-latest, cosign, kyverno
? name | Who is Noor Hassan? | who.noor
? name | What is Thanos used for? | thanos
? number | How many GPU nodes can the OCR pool scale to? | gpu-pool
? number | What is the maximum size of the production general pool? | env.nodes-max.production
? number | What availability does the platform promise for the Kubernetes API? | slo-api
? number | How long are Kubernetes audit logs kept? | audit-logs
? number | What is Fernwood's cost target for 2025? | cost-target
? number | What are the NAT IPs of fern-prod-eu? | egress-ips
? number | What percentage of traces is sampled? | tracing
? number | How many minutes was the claims API down in the DNS incident? | inc-dns
? number | What is the regional CPU quota for the spot pool now? | inc-quota
? date | What happened on 2025-01-21? | inc-node
? date | When is the end-of-year change freeze? | freeze-2024
? date | When was Linkerd removed? | neg-mesh
? date | When did production move to Kubernetes 1.30? | k8s-130
? date | What went wrong on 2024-10-14? | inc-cert
? date | When does the spring change freeze run? | freeze-renewals
? date | What happened to the payments namespace in April 2025? | inc-argo
? date | When is the ISO 27001 audit, and how did the last one go? | compliance, audit-2024
? negation | Can I run a Postgres StatefulSet in my namespace? | neg-stateful
? negation | Can I kubectl apply a quick fix in production? | neg-kubectl-edit
? negation | Can I deploy an image tagged latest? | neg-latest
? negation | Can my service use a NodePort? | neg-nodeport
? negation | Does Fernwood offer Kafka? | pubsub
? negation | Can I SSH into a node to debug? | neg-root-login
? negation | Can I start the cluster upgrade on Friday morning? | neg-friday-upgrade
? negation | May my service create its own public load balancer? | neg-public-lb
? update | Which Kubernetes version do the clusters run? | k8s-130
? update | How does platform on-call work now? | oncall-fts
? update | What was the on-call handover day before follow-the-sun? | oncall-weekly
? update | What do new services use for ingress? | gateway-api
? update | How do pods get secrets as of 2025? | eso
? update | Which Kubernetes version was running in April 2024? | k8s-128
? multi-hop | Who owns the policies that reject unsigned images, and where is he? | cosign, who.luis
? multi-hop | Who covers the night shift of on-call, and from where? | oncall-fts, who.grace
? multi-hop | Which cluster has the GPU pool, and in which region does it run? | pools, env.region.production
? multi-hop | Which tool renews the certificates, and why did that fail in October 2024? | certs, inc-cert
? multi-hop | Why is auto-prune off in production, and what is the production sync policy? | inc-argo, env.sync.production
? multi-hop | Who runs the quarterly Teleport access reviews, and what audit finding led to them? | access-review, who.maren, audit-2024
""",
)

# Issues and what was decided: (number, title, outcome).
QUILL_ISSUES = (
    ("101", "panic on an empty link destination <>", "fixed in 0.5.1"),
    ("118", "definition lists", "declined: not in GFM; maybe an extension after 1.0"),
    ("133", "tables without a leading pipe", "fixed in 0.5.2"),
    ("149", "line and column numbers, not only byte offsets", "planned for 1.0"),
    ("156", "wasm32 build fails with the std feature", "fixed in 0.6.0"),
    ("171", "slow on 10,000 backticks", "fixed in 0.6.2; code span scanning was quadratic"),
    ("188", "an option to turn off indented code blocks", "done as Options::indented_code(false) in 0.9.0"),
    ("203", "the HTML renderer adds a trailing newline", "won't fix: the spec's reference renderer does the same"),
    ("219", "heading IDs for non-Latin text", "fixed in 0.8.1: IDs keep Unicode letters"),
    ("236", "a custom HTML renderer for code blocks", "done with the CodeBlockRenderer trait in 0.9.0"),
    ("247", "a serde round trip loses the source spans", "fixed in 0.8.3"),
    ("262", "the no_std build pulls in std through memchr", "fixed by turning off memchr's default features"),
    ("279", "task list checkboxes should be enabled", "declined: GitHub renders them disabled too"),
    ("305", "emoji shortcodes such as :smile:", "declined as out of scope; use a pass after rendering"),
    ("318", "wiki links like [[Page]]", "waiting for the extension API of RFC 530"),
    ("327", "the inline parser allocates for every character", "fixed in 0.9.1, the performance release"),
    ("341", "YAML frontmatter", "accepted for 0.10 behind Options::frontmatter"),
    ("356", "rendering to plain text", "accepted; quill_md::text::render is planned for 0.10"),
    ("362", "soft breaks rendered as spaces", "done in 0.7.0 as Options::soft_break"),
    ("377", "flaky Windows CI on line endings", "fixed with eol=lf for the test fixtures in .gitattributes"),
    ("389", "autolinks with trailing punctuation", "open; one of the two failing GFM examples"),
    ("390", "autolinks inside angle brackets", "open; the other failing GFM example"),
    ("401", "rename Document::children to blocks", "declined: it would break every user for little gain"),
    ("423", "benchmark against comrak", "done: comrak is 2.3 times slower on the README corpus"),
    (
        "438",
        "footnote numbering should continue across documents",
        "declined: numbering restarts per document by design",
    ),
    ("461", "update to spec 0.31.2", "done in 0.8.0"),
    ("474", "a watch mode for quill-cli", "accepted for quill-cli 0.5"),
    ("488", "choosing the syntax highlighting theme", "done as Options::syntax_theme with syntect's theme names"),
    ("503", "CSS classes on tables", "declined; use a renderer hook"),
    ("515", "TypeScript types for quill-wasm", "done by Yara in quill-wasm 0.3.0"),
    ("541", "a migration guide from pulldown-cmark", "in progress for 1.0"),
    ("548", "line numbers in code blocks", "declined for the core; possible with CodeBlockRenderer"),
    ("556", "GFM alerts like > [!NOTE]", "accepted for 0.10"),
    ("563", "the minimal-versions job broke with memchr 2.7", "fixed by raising the lower bound to 2.7"),
)
QUILL_TABLES = "".join(
    f"issue.{number} | | Issue #{number}, {title}: {outcome}.\n"
    if index % 2
    else f"issue.{number} | | quill-md issue #{number} ({title}): {outcome}.\n"
    for index, (number, title, outcome) in enumerate(QUILL_ISSUES)
)

QUILL = Unit(
    key="quill",
    owner="proj-quill",
    name="quill-md",
    start="2024-01-08",
    end="2025-04-28",
    facts="""
about | 2024-01-08 | quill-md is an open-source Markdown parser written in Rust; the user, Elena Brandt, is its lead maintainer.
repo | | quill-md lives at github.com/quill-rs/quill-md, with the crates quill-md (the library) and quill-cli (the command line tool).
goal | | quill-md aims for full CommonMark 0.31 compliance plus the GitHub extensions (tables, task lists, strikethrough, autolinks).
spec-pass | 2025-03-31 | quill-md passes 652 of 652 CommonMark spec examples and 24 of 26 GFM extension examples.
gfm-gap | 2025-03-31 | The two failing GFM examples are in the autolink extension: URLs inside angle brackets with trailing punctuation.
arch | | quill-md parses in two passes: a block pass that builds the tree, then an inline pass over each leaf block.
events | | Besides the tree API, quill-md offers a pull parser that yields events like pulldown-cmark's, behind the events feature.
html | | The HTML renderer escapes raw HTML by default; Options::unsafe_html(true) passes it through.
sourcemap | | Every node carries a byte span into the source, so editors can map rendered output back to the text.
no-unsafe | | quill-md has #![forbid(unsafe_code)] in every crate; the user will not merge a pull request that adds unsafe.
no-std | 2024-06-17 | quill-md supports no_std with alloc since 0.6.0; the std feature is on by default.
features | | quill-md's cargo features: std (default), events, serde, html (default), and syntax for code highlighting.
syntax | | The syntax feature highlights code blocks with syntect; it is off by default because it doubles compile time.
serde | | With the serde feature, the document tree implements Serialize and Deserialize.
msrv-170 | 2024-01-08 | quill-md's minimum supported Rust version is 1.70.
msrv-174 | 2024-09-02 | Raised quill-md's MSRV from 1.70 to 1.74 on 2024-09-02 to use the lints table in Cargo.toml.
msrv-policy | | The MSRV may move to any Rust release at least 6 months old, and only in a minor release.
semver | | quill-md follows semver; before 1.0 a breaking change bumps the minor version (0.8 to 0.9).
license-mit | 2024-01-08 | quill-md is licensed under MIT.
license-dual | 2024-11-04 | quill-md moved from MIT to MIT OR Apache-2.0 on 2024-11-04, after every contributor agreed in issue 412.
cla | | quill-md has no CLA; contributions are under the project licenses by the DCO sign-off.
dco | | Every commit needs a Signed-off-by line; the DCO check blocks pull requests without it.
ci | | CI runs on GitHub Actions: stable, beta and the MSRV toolchain on Linux, plus stable on macOS and Windows.
ci-nightly | | A nightly job runs the fuzzers for 30 minutes and cargo miri test on the parser.
fuzz | | quill-md has cargo-fuzz targets for the block parser, the inline parser and the HTML renderer.
oss-fuzz | 2024-08-12 | quill-md joined OSS-Fuzz on 2024-08-12.
clippy | | CI runs clippy with -D warnings, including the pedantic group for the library crate.
fmt | | Code is formatted with rustfmt using the repository's rustfmt.toml (max_width 100).
docs | | Every public item needs a doc comment with an example; missing_docs is denied in the library.
doc-tests | | Examples in the docs are doctests and run in CI.
bench | | Benchmarks use criterion over the CommonMark spec text and a 2 MB README corpus.
bench-numbers | 2025-02-10 | On the 2 MB corpus quill-md 0.9 parses at 180 MB/s on an M2, versus 210 MB/s for pulldown-cmark 0.12.
bench-ci | | A benchmark regression of more than 5% fails the benchmark job on pull requests.
changelog | | CHANGELOG.md follows Keep a Changelog; every pull request adds a line under Unreleased.
release-tool | | Releases are cut with cargo-release; the tag is vX.Y.Z and crates.io publishing runs from CI.
release-cadence | | quill-md releases when there is something to ship, usually once a month; patch releases come out as needed.
release-day | | Elena prefers to release on Mondays so there is a week to react to bug reports.
crates-owners | | The crates.io owners of quill-md are Elena and the GitHub team quill-rs/maintainers.
rel-050 | 2024-02-19 | quill-md 0.5.0 was released on 2024-02-19 with GFM tables.
rel-060 | 2024-06-17 | quill-md 0.6.0 was released on 2024-06-17 with no_std support.
rel-061 | 2024-06-24 | quill-md 0.6.1 fixed a panic on unterminated link reference definitions.
rel-070 | 2024-09-02 | quill-md 0.7.0 was released on 2024-09-02 with the events pull parser and MSRV 1.74.
rel-071 | 2024-09-30 | quill-md 0.7.1 fixed quadratic time on deeply nested block quotes, found by OSS-Fuzz.
rel-080 | 2024-11-04 | quill-md 0.8.0 was released on 2024-11-04 under the dual license, with source maps on every node.
rel-090 | 2025-01-27 | quill-md 0.9.0 was released on 2025-01-27: a new Options builder replaced the Config struct.
rel-091 | 2025-02-10 | quill-md 0.9.1 was a performance release: 25% faster inline parsing.
rel-092 | 2025-03-17 | quill-md 0.9.2 fixed the security issue GHSA-7q2x-quill-0001 (a stack overflow on 100,000 nested lists).
rel-100-plan | 2025-04-14 | quill-md 1.0 is planned for September 2025, after the Options API has been stable for two minor releases.
advisory | 2025-03-17 | Security advisory GHSA-7q2x-quill-0001: input with 100,000 nested lists overflowed the stack in 0.9.1 and earlier; fixed in 0.9.2 by a nesting limit.
nesting-limit | 2025-03-17 | quill-md now stops nesting at depth 256 (Options::max_nesting); deeper content is parsed as text.
security-policy | | Security reports go to security@quill-rs.org, never to public issues; Elena answers within 72 hours.
config-old | 2024-01-08 | quill-md's parser is configured with a Config struct of public fields.
options-new | 2025-01-27 | Config was replaced by the Options builder in 0.9.0; Config is gone, not deprecated.
deprecation | | Deprecated items stay for one minor release before they are removed.
neg-async | | quill-md will not add an async API: parsing is CPU-bound and has nothing to await.
neg-wasm-bindgen | | The library does not depend on wasm-bindgen; the separate quill-wasm repository wraps it for JavaScript.
neg-mdx | | quill-md does not parse MDX or JSX; issue 77 was closed as out of scope.
neg-math | | Math blocks ($$ ... $$) are not supported in the core; a math extension may come after 1.0.
neg-regex | | quill-md does not use the regex crate; every scanner is hand-written for speed and compile time.
neg-panic | | The parser must never panic on any input; a panic is a bug and gets a fuzz regression test.
neg-breaking-patch | | Patch releases never change public APIs or rendered output, except to fix a spec violation.
neg-nightly | | quill-md does not use nightly-only features, not even behind a feature flag.
neg-proc-macro | | There are no procedural macros in quill-md.
neg-issues-support | | Questions go to GitHub Discussions, not issues; issues are for bugs and accepted features.
triage | | New issues get the label needs-triage; Elena or Sandeep triage them on Wednesdays.
labels | | Issue labels: bug, spec, perf, docs, good-first-issue, help-wanted, breaking and needs-repro.
good-first | | Issues labelled good-first-issue must have a mentor named in the issue.
review-rule | | Pull requests need one maintainer approval; breaking changes need two.
stale | | There is no stale bot; the user dislikes closing issues automatically.
pr-size | | Contributors are asked to keep pull requests under 500 lines and to open an issue first for anything bigger.
commit-style | | Commits are squash-merged; the squash message starts with the crate area, like block: or inline:.
discussions | | GitHub Discussions has categories Q&A, Ideas and Show and tell.
discord | | quill-md has no Discord or Slack; all discussion is on GitHub so it stays searchable.
sponsors | | quill-md is funded by GitHub Sponsors (about $640 a month) and a 2024 grant from the Sovereign Tech Fund.
stf-grant | 2024-05-06 | The Sovereign Tech Fund granted 48,000 euros on 2024-05-06 for fuzzing, no_std and the 1.0 API review.
grant-report | 2025-01-31 | The final grant report was sent to the Sovereign Tech Fund on 2025-01-31.
downloads | 2025-04-01 | quill-md had 1.2 million downloads on crates.io by April 2025, about 60,000 a week.
dependents | | About 340 crates on crates.io depend on quill-md; the biggest user is the static site generator Tern.
tern | | Tern, a static site generator, switched from pulldown-cmark to quill-md in 2024 for the source maps.
zola-issue | | A request to use quill-md in Zola is open upstream as a discussion; nothing has been decided.
editor-users | | The Helix-based editor Lumen Notes uses quill-md's source maps for live preview.
dependencies | | quill-md's library has three dependencies: memchr, unicode-id and, with the html feature, v_htmlescape.
deps-policy | | New dependencies need a maintainer discussion; anything with a build script or a C library is refused.
memchr | | memchr is used to find line endings and special characters fast.
unicode | | Case folding for link labels uses the tables generated into src/casefold.rs from Unicode 15.1.
unicode-update | 2025-02-24 | Unicode tables will move to Unicode 16 in 0.10.
bench-machine | | Published benchmark numbers come from Elena's MacBook Air M2 on battery off, median of 10 runs.
perf-goal | | The 1.0 performance goal is to be within 10% of pulldown-cmark on the README corpus.
memory | | Parsing the 2 MB corpus allocates about 9 MB at peak with the tree API and 1 MB with the events API.
api-tree | | Document::parse(&str, &Options) returns a Document whose root() iterates block nodes.
api-render | | quill_md::html::render(&doc, &mut String) writes HTML; render_to_string is the shortcut.
api-walk | | Document::walk visits every node depth-first with enter and leave events.
api-errors | | quill-md has no error type: every input is valid Markdown, so parse returns a Document, never a Result.
cli | | quill-cli renders Markdown from stdin or files to HTML; quill --check validates links to local files.
cli-install | | quill-cli installs with cargo install quill-cli, and Homebrew has a formula since February 2025.
cli-flags | | quill-cli's --gfm flag turns on the GitHub extensions; --unsafe-html passes raw HTML through.
cli-version | | quill-cli is at version 0.4.1 and is released separately from the library.
cli-binary | | quill-cli's release binary is 1.9 MB on Linux x86_64 with LTO and strip.
wasm | | The quill-wasm package on npm is at 0.3.0 and is maintained by Yara.
docs-site | | The user guide is an mdBook at quill-rs.org/book, rendered with quill-md itself.
docs-rs | | API docs are on docs.rs with all features enabled through package.metadata.docs.rs.
examples | | The examples folder has toc.rs (a table of contents) and highlight.rs (the syntax feature).
testing-spec | | Spec tests are generated from spec.txt by build-tests.rs into tests/spec.rs; do not edit tests/spec.rs by hand.
snapshot | | Renderer tests use insta snapshots; updating them needs cargo insta review, never --accept in CI.
coverage | | Line coverage is measured with cargo-llvm-cov and is at 94% for the library.
windows | | Line endings: the parser treats CRLF like LF, and CI runs on Windows to keep it so.
tab-width | | Tabs expand to the next multiple of 4 columns, as the spec says.
elena-hours | | Elena maintains quill-md in the evenings and on Sunday mornings (Berlin time); her day job is at a bank.
elena-reviews | | Elena reviews pull requests on Sunday mornings; urgent security fixes any time.
burnout-rule | | Elena does not answer GitHub notifications on Saturdays.
talk | 2024-10-19 | Elena gave a talk on fuzzing quill-md at EuroRust 2024 on 2024-10-19.
blog | | Release announcements go on Elena's blog and on the Rust users forum, never on Reddit first.
mastodon | | The project account is @quillmd@hachyderm.io.
roadmap-1 | 2025-04-14 | Before 1.0: stabilize Options, finish the last two GFM autolink cases, and write a migration guide from pulldown-cmark.
api-review | 2025-04-14 | The 1.0 API review is done with Sandeep and Yara in three sessions in June 2025.
maintainers | | quill-md's maintainers are Elena, Sandeep and Yara; Jakub is a triager.
maintainer-rule | | A contributor becomes a maintainer after about ten merged pull requests and a vote of the current maintainers.
coc | | quill-md uses the Rust Code of Conduct; reports go to Elena and Yara.
governance | | Decisions are made by consensus of the maintainers; Elena breaks ties.
rfcs | | Big changes get a design issue labelled rfc that stays open for at least two weeks.
rfc-options | 2024-11-18 | RFC issue 455 (the Options builder) was accepted on 2024-11-18.
rfc-plugins | 2025-03-03 | RFC issue 530 proposes an extension API for custom inline syntax; it is still open.
plugins-stance | | Elena wants extensions to be compile-time traits, not runtime plugins loaded from dynamic libraries.
inline-hooks | | The extension API draft adds an InlineExtension trait with a trigger byte and a parse function.
gfm-tables-alignment | | Table column alignment is rendered as style="text-align: ..." attributes, as GitHub does.
task-lists | | Task list items render as disabled checkboxes.
footnotes | 2024-12-09 | Footnotes were added behind Options::footnotes in 0.8.2 on 2024-12-09.
smart-punct | | Smart punctuation (curly quotes, dashes) is an option, off by default.
heading-ids | | Heading IDs are generated GitHub-style when Options::heading_ids is on, with -1, -2 suffixes for duplicates.
autolink-www | | Bare www. links are autolinked only with the GFM option.
html-blocks | | All seven kinds of HTML blocks from the spec are recognized.
entities | | Named entities come from the HTML5 list of 2,231 names, generated into src/entities.rs.
perf-regression | 2025-02-03 | In January 2025 the 0.9.0 Options refactor slowed parsing by 8%; 0.9.1 won it back and more.
fuzz-bug-count | | OSS-Fuzz has found 14 bugs in quill-md since August 2024, all fixed; none was exploitable.
miri | | cargo miri test runs nightly even though there is no unsafe code, to catch issues in dependencies' unsafe code.
msrv-check | | The MSRV job uses cargo +1.74 check --all-features.
lockfile | | Cargo.lock is committed for the CLI but not used for the library's CI, which tests the latest compatible versions.
minimal-versions | | A CI job checks the library with -Z minimal-versions to keep the version bounds in Cargo.toml honest.
m-checklist | | quill-md's release checklist: update the CHANGELOG, run cargo semver-checks, bump with cargo-release, wait for CI, publish.
m-semver-checks | | cargo semver-checks runs on every pull request against the last release.
m-msrv-badge | | The README shows an MSRV badge, updated by hand when the MSRV moves.
m-readme-test | | The README's first example is included as a doctest with include_str!, so it must compile.
m-bug-template | | Bug reports must include the input Markdown, the expected HTML and the quill-md version.
m-needs-repro | | Issues labelled needs-repro are closed after 30 days without a reproduction.
m-playground | | The playground at quill-rs.org/play renders Markdown with the latest release in the browser, through quill-wasm.
m-style | | Elena prefers early returns over nested matches, and iterators over index loops.
m-spec-names | | quill-md's types are named after the spec's terms: BlockQuote, ThematicBreak, CodeSpan.
m-non-exhaustive | | Every public type is non_exhaustive so fields and variants can be added in minor releases.
m-changelog-voice | | Changelog entries are written for users: what changed and what they must do, not the internals.
m-thanks | | Each release's notes thank the contributors by name.
m-first-timers | | First-time contributors get a thank-you comment and a link to the good-first-issue list.
m-gsoc | 2025-03-10 | For GSoC 2025 quill-md proposed a project on the extension API, with Elena and Sandeep as mentors.
m-no-telemetry | | quill-cli collects no telemetry.
m-cli-config | | quill-cli reads its options from quill.toml in the current directory when there is one.
m-cli-exit | | quill --check exits with code 1 when a link points to a missing local file.
m-homebrew | 2025-02-03 | The Homebrew formula for quill-cli was merged on 2025-02-03.
m-debian | | quill-cli is not packaged for Debian; a request is open in Debian's tracker.
m-aur | | Arch Linux users get quill-cli from the AUR, where a volunteer maintains it.
m-targets | | quill-cli release binaries are built for Linux x86_64 and aarch64, macOS (universal) and Windows x86_64.
m-sbom | | quill-cli releases include a CycloneDX SBOM made by cargo-cyclonedx.
m-attestations | | quill-cli's release binaries carry GitHub artifact attestations.
m-audit | | cargo audit and cargo deny run daily; a new advisory in a dependency opens an issue automatically.
m-licenses-allowed | | cargo deny allows only the MIT, Apache-2.0, BSD-3-Clause, ISC, Unicode-3.0 and Zlib licenses.
m-crate-size | | The published quill-md crate is 148 KB compressed.
m-exclude | | Cargo.toml keeps tests/fixtures and benches/corpus out of the published crate.
m-build-time | | A clean build of quill-md with default features takes 6 seconds; with syntax, 14 seconds.
m-wasm-size | | The quill-wasm bundle is 212 KB gzipped.
m-tern-report | 2025-03-24 | Tern reported that 0.9.2's nesting limit broke a 300-level nested quote test file; that is intended.
m-comrak | | comrak is the other big Rust Markdown crate; quill-md differs by its source maps and no_std support.
m-pulldown | | pulldown-cmark is faster; quill-md aims to come close while offering a tree API with spans.
m-blog-09 | 2025-01-27 | Elena's blog post "quill-md 0.9: the Options builder" explains how to move from Config.
m-issue-412 | | The relicensing discussion was issue #412; 31 contributors agreed there.
"""
    + QUILL_TABLES,
    versions=(
        ("rust", "stable Rust in CI", "1.86"),
        ("memchr", "memchr", "2.7"),
        ("unicode-id", "unicode-id", "0.3"),
        ("syntect", "syntect", "5.2"),
        ("serde", "serde", "1.0"),
        ("criterion", "criterion", "0.5"),
        ("insta", "insta", "1.41"),
        ("cargo-fuzz", "cargo-fuzz", "0.12"),
        ("cargo-release", "cargo-release", "0.25"),
        ("commonmark", "the CommonMark spec it targets", "0.31.2"),
        ("mdbook", "mdBook", "0.4.40"),
        ("llvm-cov", "cargo-llvm-cov", "0.6"),
        ("cargo-deny", "cargo-deny", "0.16"),
        ("cyclonedx", "cargo-cyclonedx", "0.5"),
        ("wasm-bindgen", "wasm-bindgen in quill-wasm", "0.2.93"),
    ),
    people=(
        ("elena", "Elena Brandt", "the lead maintainer and the user", "Berlin", "Releases on Mondays."),
        ("sandeep", "Sandeep Iyer", "a maintainer", "Pune", "Owns the inline parser and triages on Wednesdays."),
        ("yara", "Yara Haddad", "a maintainer", "Montreal", "Maintains quill-wasm and the docs site."),
        ("jakub", "Jakub Nowak", "the triager", "Kraków", "Labels new issues and asks for reproductions."),
        ("ming", "Ming Zhao", "a regular contributor", "Shenzhen", "Wrote the footnotes support."),
        ("olu", "Olu Adebayo", "a regular contributor", "Lagos", "Wrote most of the fuzz targets."),
        ("tern-dev", "Marisol Vega", "Tern's maintainer", "Madrid", "Reports the most downstream bugs."),
        ("stf", "Henrik Sol", "the Sovereign Tech Fund contact", "Berlin", "Received the grant report."),
        ("helga", "Helga Berg", "an OSS-Fuzz contact at Google", "Zürich", "Helped set up the OSS-Fuzz project."),
    ),
    questions="""
? paraphrase | Which compiler release is the oldest one the crate still builds with? | msrv-174
? paraphrase | What terms may people reuse the code under? | license-dual
? paraphrase | Who pays for the project's upkeep? | sponsors
? paraphrase | What makes deeply stacked bullet items safe these days? | nesting-limit
? paraphrase | What kinds of code are forbidden from entering the library? | no-unsafe
? paraphrase | When does she like to ship new versions? | release-day
? paraphrase | How quickly does the library chew through big documents compared with its main rival? | bench-numbers
? paraphrase | Where should someone privately disclose a vulnerability? | security-policy
? paraphrase | How many other packages build on top of this one? | dependents
? paraphrase | Which weekday is she offline from alerts? | burnout-rule
? paraphrase | What happens when some text crashes it? | neg-panic
? paraphrase | How many people fetch it from the registry every seven days? | downloads
? name | What is Tern, and why did it switch? | tern
? name | What does quill-cli do? | cli
? name | What does the syntax feature do? | syntax
? name | Who maintains quill-wasm? | wasm, who.yara
? name | What did Ming Zhao contribute? | who.ming
? name | What is memchr used for in quill-md? | memchr
? name | What is RFC issue 530 about? | rfc-plugins
? name | What is Options::max_nesting? | nesting-limit
? name | What replaced the Config struct? | options-new
? name | What does the DCO check do? | dco
? number | How many CommonMark spec examples does quill-md pass? | spec-pass
? number | How much did the Sovereign Tech Fund grant? | stf-grant
? number | How big is the quill-cli release binary? | cli-binary
? number | What benchmark regression fails a pull request? | bench-ci
? number | What line coverage does the library have? | coverage
? number | How many bugs has OSS-Fuzz found? | fuzz-bug-count
? number | How deep can lists nest before quill-md stops nesting? | nesting-limit
? number | What is the max_width in rustfmt.toml? | fmt
? number | How much money comes from GitHub Sponsors each month? | sponsors
? date | When was quill-md 0.6.0 released, and what did it add? | rel-060
? date | What was released on 2025-03-17? | rel-092
? date | When did quill-md join OSS-Fuzz? | oss-fuzz
? date | When is 1.0 planned? | rel-100-plan
? date | When did Elena speak at EuroRust? | talk
? date | When was the Options builder RFC accepted? | rfc-options
? date | What happened to quill-md's license in November 2024? | license-dual
? date | When were footnotes added? | footnotes
? negation | Will quill-md get an async API? | neg-async
? negation | Can I use the regex crate in the parser? | neg-regex
? negation | Does quill-md parse MDX? | neg-mdx
? negation | Are math blocks supported? | neg-math
? negation | Can I use a nightly feature behind a flag? | neg-nightly
? negation | Is there a Discord server for quill-md? | discord
? negation | Can a patch release change the rendered HTML? | neg-breaking-patch
? update | What is quill-md's MSRV? | msrv-174
? update | What was the license before the change? | license-mit
? update | How is the parser configured as of 0.9? | options-new
? update | What was the MSRV in early 2024? | msrv-170
? update | Is the old Config struct deprecated or removed? | options-new
? update | Which Unicode version will the tables move to? | unicode-update
? multi-hop | Which release fixed the stack overflow advisory, and what limit did it add? | advisory, nesting-limit
? multi-hop | Who triages issues on Wednesdays, and which part of the parser does he own? | triage, who.sandeep
? multi-hop | Which release first had the events parser, and which feature flag turns it on? | rel-070, events
? multi-hop | What was the 0.9.0 change, and how did it affect speed? | rel-090, perf-regression
? multi-hop | What did the grant pay for, and when was its final report sent? | stf-grant, grant-report
? multi-hop | Who wrote the fuzz targets, and how many bugs have they found? | who.olu, fuzz-bug-count
""",
)

# Ravi's work log: (date, client, hours, what).
RAVI_LOG = (
    ("2025-01-06", "Casa Verde", "1.5", "took down the holiday banner and restocked the collections"),
    ("2025-01-08", "Hale and Sons", "2", "updated the lawyers' team photos"),
    ("2025-01-09", "Greenway", "3", "fixed the French navigation labels"),
    ("2025-01-14", "Hale and Sons", "1.5", "ran the monthly plugin updates after a manual backup"),
    ("2025-01-15", "Casa Verde", "2", "added the Valentine's gift boxes"),
    ("2025-01-21", "Orbit", "2", "looked into the WooCommerce payment errors"),
    ("2025-01-23", "Orbit", "3", "wrote the Shopify migration plan"),
    ("2025-01-28", "Casa Verde", "2.5", "uploaded new product photos with alt text"),
    ("2025-02-04", "Orbit", "8", "exported products and customers from WooCommerce"),
    ("2025-02-05", "Peak Physio", "2", "held the discovery meeting and audited the old site"),
    ("2025-02-06", "Greenway", "5", "fixed volunteer signup bugs and mapped the Airtable fields"),
    ("2025-02-11", "Hale and Sons", "1.5", "ran the monthly plugin updates"),
    ("2025-02-12", "Orbit", "10", "built the Shopify theme sections"),
    ("2025-02-13", "Casa Verde", "3", "scoped the wholesale page"),
    ("2025-02-18", "Orbit", "12", "set up Recharge and moved the 310 subscribers"),
    ("2025-02-19", "Hale and Sons", "6", "rebuilt the intake form's conditional logic"),
    ("2025-02-20", "Greenway", "7", "reviewed the gala page design with Tomás"),
    ("2025-02-25", "Peak Physio", "3", "made the sitemap and content inventory"),
    ("2025-02-27", "Hale and Sons", "2", "formatted three blog posts"),
    ("2025-03-03", "Orbit", "5", "launch day: switched DNS and added the 301 redirects"),
    ("2025-03-04", "Orbit", "4", "fixed shipping rates and tax settings after the launch"),
    ("2025-03-05", "Hale and Sons", "1", "showed Margaret two chat widgets"),
    ("2025-03-06", "Casa Verde", "2", "built the Easter pre-order collection"),
    ("2025-03-11", "Hale and Sons", "1.5", "ran the monthly plugin updates"),
    ("2025-03-12", "Peak Physio", "6", "built the home and services pages in Webflow"),
    ("2025-03-13", "Greenway", "4", "added a Sanity schema for gala sponsors"),
    ("2025-03-19", "Peak Physio", "6", "built the team and booking pages"),
    ("2025-03-20", "Casa Verde", "2", "fixed the allergen table on 12 products"),
    ("2025-03-25", "Greenway", "6", "connected gala tickets to Eventbrite"),
    ("2025-03-26", "Orbit", "2", "added a skip-a-month option to the Recharge subscriptions"),
    ("2025-04-01", "Peak Physio", "5", "moved the 38 blog posts into the new collection"),
    ("2025-04-02", "Casa Verde", "3", "built the wholesale page"),
    ("2025-04-03", "Hale and Sons", "2", "re-checked the intake form against WCAG"),
    ("2025-04-08", "Hale and Sons", "1.5", "ran the monthly plugin updates"),
    ("2025-04-09", "Greenway", "3", "put in the translator's new French copy"),
    ("2025-04-10", "Orbit", "1", "set up gift cards"),
    ("2025-04-15", "Peak Physio", "7", "built the Lonsdale location page and map"),
    ("2025-04-16", "Casa Verde", "1", "rotated the wholesale page password"),
)
RAVI_TABLES = "".join(
    f"log.{day}.{client.split()[0].lower()} | {day} | "
    + (
        f"Work log {day}: {hours} hours for {client}; {what}.\n"
        if index % 2
        else f"On {day} Ravi spent {hours} hours on {client}: {what}.\n"
    )
    for index, (day, client, hours, what) in enumerate(RAVI_LOG)
)

RAVI = Unit(
    key="ravi",
    owner="user-ravi",
    name="Ravi",
    start="2024-02-05",
    end="2025-04-28",
    facts="""
about | 2024-02-05 | The user is Ravi Menon, a freelance web developer in Vancouver who works alone with a few subcontractors.
clients | 2024-02-05 | Ravi's clients: Casa Verde Bakery (Shopify), Hale and Sons Law (WordPress), Greenway Trust (Next.js), Peak Physio (Webflow) and Orbit Coffee Roasters.
# his business
rate-85 | 2024-02-05 | Ravi's hourly rate is $85 CAD.
rate-95 | 2024-12-02 | Ravi raised his hourly rate from $85 to $95 CAD from 2025-01-01; clients were told on 2024-12-02.
nonprofit-rate | | Greenway Trust, a nonprofit, pays a discounted $75 an hour.
terms | | Ravi's invoices are due in 14 days; late invoices get 1.5% a month.
deposit | | New projects start after a 30% deposit; the rest is billed at milestones.
invoicing | | Ravi invoices from FreshBooks on the first business day of each month.
gst | | Ravi is registered for GST, so Canadian clients are charged 5% on top.
gst-number | | Ravi's GST number is 78421 5530 RT0001.
accountant | | Ravi's bookkeeping goes to his accountant every quarter as a FreshBooks export.
contract | | Every client signs Ravi's standard services agreement; change requests beyond the scope are billed hourly.
hours | | Ravi works Monday to Thursday, 9:00 to 17:00 Pacific; Fridays are for admin and learning.
neg-friday-calls | | Ravi does NOT take client calls on Fridays.
response-time | | Ravi promises a reply to client email within one business day; emergencies get a text.
emergency | | A site down counts as an emergency; a typo on a page does not.
neg-passwords | | Ravi does NOT keep client passwords in notes or email; they live in shared 1Password vaults, one per client.
one-password | | Each client has a 1Password vault named after it, shared with that client's contact.
registrar | | Ravi registers domains at Namecheap and always turns on auto-renew and WHOIS privacy.
email-hosting | | Ravi sets up client email on Google Workspace, never on the web host.
backups-rule | | Every client site has an offsite backup at least daily; Ravi checks a restore twice a year.
uptime | | All client sites are watched by UptimeRobot every 5 minutes, alerting Ravi by text.
tools | | Ravi works in VS Code on a MacBook Pro, with Local for WordPress sites and pnpm for Node projects.
git | | Every client site that has code is in a private GitHub repository under the org ravimenon-clients.
staging-rule | | Ravi never edits a live site directly; changes go to a staging copy first.
estimates | | Ravi estimates in half days and adds 20% for unknowns.
time-tracking | | Ravi tracks his time in Toggl, one project per client, rounded to 15 minutes.
subcontractors | | Design goes to Zoe Chen and copywriting to Dale Morris when a project needs them; Ravi bills them through at cost plus 10%.
portfolio | | Ravi may show client work in his portfolio unless the contract says otherwise; Hale and Sons said no.
neg-hale-portfolio | | Hale and Sons Law must not appear in Ravi's portfolio or case studies.
holidays | 2025-04-10 | Ravi is away from 2025-07-14 to 2025-08-01; clients were told in April.
holiday-cover | 2025-04-10 | During Ravi's holiday, emergencies go to his friend and fellow freelancer Jun Park.
insurance | | Ravi carries professional liability insurance of $2 million, renewed every March.
learning | | Ravi is learning Astro in 2025 for small brochure sites.
# Casa Verde Bakery
cv-about | 2024-02-05 | Casa Verde Bakery is a family bakery in Vancouver's Commercial Drive; its online shop runs on Shopify.
cv-contact | | Casa Verde's contact is Lucia Ferrante, the owner's daughter; she answers email in the afternoons.
cv-plan | | Casa Verde is on the Shopify Basic plan.
cv-theme | | Casa Verde's theme is a customized copy of Shopify's Dawn theme, kept in GitHub and pushed with the Shopify CLI.
cv-domain | | Casa Verde's domain is casaverdebakery.ca, renewing on 2025-09-14.
cv-products | | Casa Verde sells about 60 products online, mostly breads, cakes to order and gift boxes.
cv-pickup | | Casa Verde offers pickup only, no delivery; orders for the weekend close on Thursday at 18:00.
cv-cakes | | Custom cake orders need 5 days' notice and are handled with the app Cake Order Form.
cv-retainer | | Casa Verde pays a monthly retainer of 6 hours.
cv-neg-popup | | Casa Verde does NOT want a newsletter popup on the shop; a signup box in the footer is fine.
cv-newsletter | | Casa Verde's newsletter goes out from Klaviyo once a month.
cv-photos | | Casa Verde's product photos come from the photographer Mina Ortiz; Ravi crops them to 2048 px squares.
cv-holiday-hours | 2024-12-02 | Casa Verde's shop closed orders from 2024-12-24 to 2024-12-27; Ravi set the banner.
cv-wholesale | 2025-02-17 | Casa Verde wants a wholesale page for cafés, behind a password, by May 2025.
cv-pos | | Casa Verde's counter uses Shopify POS, so stock is shared between the shop and the website.
cv-allergens | | Every Casa Verde product page must list allergens; Lucia checks them.
cv-translation | | Casa Verde's site is in English only; Italian was discussed and dropped.
cv-analytics | | Casa Verde uses Shopify's own analytics, with no Google Analytics.
cv-reviews | | Product reviews on Casa Verde use Judge.me.
cv-sales | 2025-01-15 | Casa Verde's online sales in December 2024 were $18,400, their best month.
# Hale and Sons Law
hs-about | 2024-02-05 | Hale and Sons Law is a family-law firm in Burnaby; its site runs on WordPress.
hs-contact | | Hale and Sons' contact is Margaret Hale, the managing partner; she prefers phone calls to email.
hs-host | | The Hale and Sons site is hosted on Kinsta, which takes daily backups.
hs-plugins | | Hale and Sons uses Yoast SEO, Gravity Forms and WP Rocket; nothing else gets installed without Margaret's approval.
hs-neg-updates | | NEVER update plugins on the Hale and Sons site without taking a manual backup first: a Gravity Forms update broke the intake form once.
hs-forms-incident | 2024-05-13 | On 2024-05-13 a Gravity Forms update broke the Hale and Sons intake form for two days; no inquiries arrived.
hs-intake | | The Hale and Sons intake form sends to intake@halesonslaw.ca and stores nothing in WordPress.
hs-neg-store | | The intake form must not store submissions in the WordPress database, for client confidentiality.
hs-domain | | The Hale and Sons domain is halesonslaw.ca, renewing on 2026-02-03.
hs-billing | | Hale and Sons is billed hourly, with a cap of 10 hours a month unless Margaret approves more.
hs-a11y | 2024-10-07 | Hale and Sons asked for a WCAG 2.1 AA audit in October 2024; Ravi fixed 23 issues.
hs-lawyers | | The Hale and Sons team page lists 7 lawyers; photos are updated each January.
hs-blog | | Hale and Sons posts one blog article a month, written by the lawyers and formatted by Ravi.
hs-theme | | The Hale and Sons theme is a child theme of GeneratePress.
hs-php | | The Hale and Sons site runs on PHP 8.2.
hs-wp | | The Hale and Sons site is on WordPress 6.5.
hs-chat | 2025-03-10 | Margaret decided on 2025-03-10 against a chat widget on the Hale and Sons site.
hs-maintenance | | Plugin updates on the Hale and Sons site happen on the second Tuesday of each month.
# Greenway Trust
gw-about | 2024-02-05 | Greenway Trust is a land-conservation nonprofit; its site is a Next.js app with content in Sanity.
gw-contact | | Greenway's contact is Tomás Ibarra, their communications manager.
gw-netlify | 2024-02-05 | The Greenway site is hosted on Netlify.
gw-vercel | 2024-08-26 | Moved the Greenway site from Netlify to Vercel on 2024-08-26 for preview deployments and image optimization.
gw-donations | | Greenway's donations go through Stripe Checkout, with monthly and one-time gifts.
gw-receipts | | Donation receipts for Greenway are sent by Stripe with the charity number in the footer.
gw-charity | | Greenway Trust's charity registration number is 11894 2290 RR0001.
gw-sanity | | Greenway's content editors work in Sanity Studio at greenway.sanity.studio.
gw-domain | | Greenway's domain is greenwaytrust.org, renewing on 2025-06-30.
gw-map | | The Greenway site has a map of 41 protected properties, built with Mapbox.
gw-mapbox-cost | | Mapbox stays on the free tier for Greenway: under 50,000 map loads a month.
gw-events | | Greenway's events calendar is fed from their Eventbrite account.
gw-gala | 2025-02-24 | Greenway's spring gala page must be live by 2025-05-01 for the gala on 2025-06-07.
gw-grant | 2024-09-16 | Greenway got a grant to rebuild their volunteer signup; Ravi's quote was $6,500.
gw-volunteers | 2024-11-25 | The new Greenway volunteer signup went live on 2024-11-25, storing signups in Airtable.
gw-airtable | | Greenway volunteer signups land in the Airtable base Volunteers 2024 onward.
gw-node | | The Greenway app runs on Next.js 14 with the app router and Node 20.
gw-neg-tracking | | Greenway does not want Google Analytics; they use Plausible.
gw-lighthouse | | Greenway's homepage must keep a Lighthouse performance score above 90 on mobile.
gw-french | | Greenway's site is bilingual English and French; French text comes from their translator, never from machine translation.
# Peak Physio
pp-about | 2024-06-03 | Peak Physio is a physiotherapy clinic in North Vancouver; its site is on Webflow.
pp-contact | | Peak Physio's contact is Dr. Anika Shah, the clinic owner.
pp-booking | | Online booking on the Peak Physio site is the Jane App widget; Ravi does not touch the booking system itself.
pp-redesign | 2025-02-10 | Peak Physio signed a redesign for Q2 2025 with a budget of $8,000.
pp-redesign-deposit | 2025-02-14 | Peak Physio paid the 30% redesign deposit, $2,400, on 2025-02-14.
pp-launch | 2025-03-31 | The new Peak Physio site is to launch on 2025-06-16.
pp-design | | Zoe Chen is designing the Peak Physio redesign in Figma.
pp-plan | | Peak Physio is on the Webflow CMS site plan.
pp-domain | | Peak Physio's domain is peakphysio.ca, renewing on 2025-11-20.
pp-blog | | Peak Physio's exercise articles are a Webflow CMS collection with 38 posts.
pp-photos | | Peak Physio wants real photos of the clinic, not stock photos.
pp-neg-prices | | Peak Physio does not want prices on the site, only a link to Jane App's services list.
pp-locations | 2025-03-17 | Peak Physio is opening a second clinic in Lonsdale in September 2025; the site must list both.
# Orbit Coffee Roasters
oc-about | 2024-02-05 | Orbit Coffee Roasters sells coffee beans and subscriptions online.
oc-contact | | Orbit's contact is Ben Yusuf, the head roaster and owner.
oc-woo | 2024-02-05 | Orbit's shop runs on WooCommerce on a SiteGround server.
oc-shopify | 2025-03-03 | Moved Orbit Coffee from WooCommerce to Shopify on 2025-03-03, after repeated payment plugin failures.
oc-migration-cost | 2025-03-10 | The Orbit migration to Shopify was billed at 42 hours.
oc-subscriptions | | Orbit's coffee subscriptions run on the Recharge app since the move to Shopify.
oc-subscribers | | Orbit has about 310 active coffee subscribers.
oc-domain | | Orbit's domain is orbitcoffee.ca, renewing on 2025-05-22.
oc-shipping | | Orbit ships across Canada with Canada Post; orders over $60 ship free.
oc-roast-day | | Orbit roasts on Mondays and Thursdays; orders placed by 10:00 ship the same day.
oc-wholesale | | Orbit's wholesale customers order by email, not through the website.
oc-neg-ads | | Ben does not want to run paid ads; Orbit grows by word of mouth and markets.
oc-redirects | 2025-03-03 | All old WooCommerce product URLs for Orbit were redirected to the new Shopify URLs with 301s.
oc-email | | Orbit's order emails are customized Shopify notifications with the roast date added.
oc-woo-problem | 2024-12-16 | On 2024-12-16 Orbit's WooCommerce payment plugin failed during the holiday rush for 9 hours.
# invoices
inv-cv-jan | 2025-02-03 | Invoice 2025-004 to Casa Verde: 6 hours in January 2025, $570 plus GST, paid on 2025-02-10.
inv-cv-feb | 2025-03-03 | Invoice 2025-011 to Casa Verde: 7.5 hours in February 2025, $712.50 plus GST, paid on 2025-03-12.
inv-hs-jan | 2025-02-03 | Invoice 2025-005 to Hale and Sons: 4 hours in January 2025, $380 plus GST, paid on 2025-02-14.
inv-hs-feb | 2025-03-03 | Invoice 2025-012 to Hale and Sons: 9.5 hours in February 2025, $902.50 plus GST, paid on 2025-03-20.
inv-gw-feb | 2025-03-03 | Invoice 2025-013 to Greenway: 12 hours in February 2025 at $75, $900 plus GST, paid on 2025-03-06.
inv-oc-mig | 2025-03-10 | Invoice 2025-015 to Orbit: the Shopify migration, 42 hours, $3,990 plus GST, paid on 2025-03-31.
inv-pp-dep | 2025-02-14 | Invoice 2025-009 to Peak Physio: the redesign deposit, $2,400 plus GST, paid on 2025-02-14.
inv-overdue | 2025-04-21 | Invoice 2025-019 to Hale and Sons ($475, March 2025) is overdue since 2025-04-17; Margaret said it will be paid this week.
inv-gw-mar | 2025-04-01 | Invoice 2025-018 to Greenway: 10 hours in March 2025 at $75, $750 plus GST.
inv-cv-mar | 2025-04-01 | Invoice 2025-016 to Casa Verde: 6 hours in March 2025, $570 plus GST, paid on 2025-04-09.
revenue-2024 | 2025-01-10 | Ravi's revenue in 2024 was $96,300 CAD before tax.
revenue-goal | 2025-01-10 | Ravi's goal for 2025 is $110,000 CAD, with at most 32 billable hours a week.
# preferences about how to work with him
pref-summaries | | Ravi wants a three-line summary at the top of any long email draft.
pref-tone | | Ravi's client emails are friendly and plain, without jargon; he signs off with "Cheers, Ravi".
pref-meetings | | Ravi prefers 30-minute video calls on Google Meet, booked through his Calendly link.
pref-calendly | | Ravi's Calendly only offers Tuesday and Wednesday afternoons.
pref-scope | | When a client asks for something new, Ravi wants a short written change request with a price before starting.
pref-docs | | Ravi leaves each client a one-page handover doc in their Google Drive folder.
pref-code | | For code projects Ravi uses TypeScript, Prettier defaults and ESLint, and squash-merges his own pull requests.
pref-css | | Ravi writes plain CSS with custom properties for small sites and Tailwind for Next.js projects.
pref-images | | Images are served as WebP or AVIF, never larger than 2560 px wide.
pref-fonts | | Ravi self-hosts web fonts instead of loading them from Google Fonts, for privacy.
pref-seo | | Every page Ravi builds gets a unique title, a meta description and Open Graph image.
pref-a11y | | Ravi tests every page with a keyboard and the axe browser extension before launch.
pref-launch | | Ravi launches sites on Tuesday mornings, never on Fridays.
neg-page-builders | | Ravi does not use Elementor or other page builders for new WordPress sites.
neg-nulled | | Ravi never installs pirated or nulled themes or plugins, even for a test.
neg-fixed-price-support | | Ravi does not sell fixed-price support plans any more; support is retainer or hourly.
fixed-price-old | 2024-02-05 | Ravi sells a fixed-price support plan at $250 a month for 3 hours.
support-change | 2024-09-03 | Ravi stopped selling the $250 fixed-price support plan on 2024-09-03; existing clients moved to hourly or a retainer.
hosting-margin | | Ravi passes hosting costs through to clients without a markup.
domains-own | | Clients own their domains in their own registrar accounts; Ravi only has delegated access.
m-cost-cv | | Casa Verde's Shopify Basic plan costs $39 USD a month, billed to the bakery's card.
m-cost-hs | | Kinsta hosting for Hale and Sons costs $35 USD a month on the Starter plan.
m-cost-gw | | Greenway's Vercel Pro plan costs $20 USD a month; Vercel gave no nonprofit discount.
m-cost-pp | | Peak Physio's Webflow plan is billed yearly to the clinic.
m-siteground-off | 2025-04-01 | Orbit's SiteGround hosting was cancelled on 2025-04-01, after the move to Shopify.
m-own-site | | Ravi's own site is ravimenon.dev, a static Astro site on Netlify.
m-own-domain | | ravimenon.dev renews on 2025-10-02.
m-own-email | | Ravi's work email is hello@ravimenon.dev on Google Workspace.
m-texts | | Clients may text Ravi's work number for emergencies only.
m-newsletter | | Ravi sends a short newsletter to past clients twice a year, in March and September.
m-referral-credit | | Most new clients come from referrals; Ravi gives a $200 credit for each referral that signs.
m-referral-pp | 2024-05-27 | Peak Physio came to Ravi through a referral from Casa Verde.
m-leads | | New leads use the form at ravimenon.dev/contact and get a reply within two business days.
m-minimum | | Ravi's minimum project size is $2,000.
m-capacity | | Ravi takes at most two projects at a time besides the retainers.
m-next-opening | 2025-04-14 | Ravi's next opening for a new project is September 2025.
m-software | | Ravi's software costs about $180 a month: FreshBooks, Toggl, 1Password, Figma and Google Workspace.
m-laptop | 2024-11-18 | Ravi bought a MacBook Pro M4 on 2024-11-18 as a business expense.
m-installments | | Ravi pays income tax in quarterly installments, on the 15th of March, June, September and December.
m-gst-returns | | Ravi's GST returns are filed every quarter by Priti.
m-no-rollover | | Unused retainer hours do not roll over to the next month.
m-overage | | Retainer hours beyond the monthly amount are billed at the hourly rate.
m-onsite | | Ravi visits clients on site only within Metro Vancouver, billed door to door.
m-coffee | | Ben sends Ravi a bag of Orbit's coffee every month; it is not counted against invoices.
m-cards | | Ravi sends each client a card and a small gift in December.
m-cv-launch | 2024-02-12 | Casa Verde's Shopify shop launched on 2024-02-12.
m-hs-since | | Hale and Sons has been Ravi's client since 2021.
m-gw-since | | Greenway Trust has been a client since 2022.
m-pp-first | 2024-06-03 | Peak Physio became a client on 2024-06-03 with a small Webflow fix.
m-oc-since | | Orbit Coffee has been a client since 2023.
m-brightline | 2024-07-15 | Ravi stopped working for Brightline Dental on 2024-07-15 over unpaid invoices, and will not take them back.
m-ai-clause | 2025-01-06 | Ravi's January 2025 services agreement adds an AI clause: he may use AI coding assistants on client code but never put client customer data into them.
m-restore-test | 2025-03-24 | Ravi's last restore test was on 2025-03-24, on the Hale and Sons staging site; it took 12 minutes.
"""
    + RAVI_TABLES,
    people=(
        ("lucia", "Lucia Ferrante", "Casa Verde Bakery's contact", "Vancouver", "Approves every product page."),
        ("margaret", "Margaret Hale", "the managing partner of Hale and Sons Law", "Burnaby", "Prefers phone calls."),
        ("tomas", "Tomás Ibarra", "Greenway Trust's communications manager", "Victoria", "Edits the site in Sanity."),
        ("anika", "Dr. Anika Shah", "Peak Physio's owner", "North Vancouver", "Signs off on the redesign."),
        ("ben", "Ben Yusuf", "Orbit Coffee's owner and head roaster", "Vancouver", "Only free before 10:00."),
        ("zoe", "Zoe Chen", "the freelance designer Ravi subcontracts", "Vancouver", "Works in Figma."),
        ("dale", "Dale Morris", "the freelance copywriter Ravi subcontracts", "Calgary", "Charges by the page."),
        ("priti", "Priti Sandhu", "Ravi's accountant", "Surrey", "Files his GST returns every quarter."),
        ("jun", "Jun Park", "a fellow freelancer", "Vancouver", "Covers Ravi's emergencies while he is away."),
        ("mina", "Mina Ortiz", "the food photographer", "Vancouver", "Shoots Casa Verde's products."),
        ("lina", "Lina Ferrante", "Casa Verde's owner", "Vancouver", "Lucia's mother; she signs the contracts."),
        ("kyle", "Kyle Hale", "a partner at Hale and Sons", "Burnaby", "Writes most of the blog articles."),
        ("sarah", "Sarah Lee", "Peak Physio's office manager", "North Vancouver", "Sends the clinic photos."),
    ),
    questions="""
? paraphrase | How much does he charge for sixty minutes of work these days? | rate-95
? paraphrase | Which weekday is he unreachable by phone for customers? | neg-friday-calls
? paraphrase | Where are site logins kept? | neg-passwords
? paraphrase | What should never interrupt shoppers at the bakery's storefront? | cv-neg-popup
? paraphrase | Which precaution is mandatory before upgrading the lawyers' add-ons? | hs-neg-updates
? paraphrase | Why did the conservation group switch platforms? | gw-vercel
? paraphrase | How many people get recurring bean deliveries? | oc-subscribers
? paraphrase | How much can the clinic spend on its new look? | pp-redesign
? paraphrase | Who handles urgent problems while he's on vacation? | holiday-cover
? paraphrase | How much did he earn last year? | revenue-2024
? paraphrase | When is the cut-off for Saturday bread? | cv-pickup
? paraphrase | What does the charity rely on to count visitors? | gw-neg-tracking
? name | Who is Margaret Hale, and how does she like to be contacted? | who.margaret
? name | What is Jane App used for? | pp-booking
? name | What does Recharge do for Orbit? | oc-subscriptions
? name | Who is Zoe Chen working for right now? | pp-design
? name | What is Klaviyo used for? | cv-newsletter
? name | What does Ravi use Toggl for? | time-tracking
? name | Which host runs the Hale and Sons site? | hs-host
? name | What is Greenway's Airtable base for? | gw-airtable
? name | Who shoots Casa Verde's product photos? | cv-photos
? name | What does Priti Sandhu do for Ravi? | who.priti, m-gst-returns
? number | What is Greenway's hourly rate? | nonprofit-rate, inv-gw-feb
? number | How many hours a month does Casa Verde's retainer cover? | cv-retainer
? number | How many lawyers are on the Hale and Sons team page? | hs-lawyers
? number | How many properties are on Greenway's map? | gw-map
? number | What is the free-shipping threshold at Orbit? | oc-shipping
? number | How much was the Peak Physio deposit? | pp-redesign-deposit, inv-pp-dep
? number | How many hours did the Orbit migration take? | oc-migration-cost, inv-oc-mig
? number | What was Casa Verde's best month of online sales? | cv-sales
? number | What is Hale and Sons' monthly hour cap? | hs-billing
? date | When does casaverdebakery.ca renew? | cv-domain
? date | What happened on 2024-05-13? | hs-forms-incident
? date | When did Orbit move to Shopify? | oc-shopify
? date | When does the new Peak Physio site launch? | pp-launch
? date | When is Ravi on holiday this summer? | holidays
? date | When did the Greenway volunteer signup go live? | gw-volunteers
? date | Which invoice is overdue, and since when? | inv-overdue
? date | When does the Greenway gala page have to be live? | gw-gala
? negation | Can I add a newsletter popup to Casa Verde's shop? | cv-neg-popup
? negation | Can we show the Hale and Sons site in Ravi's portfolio? | neg-hale-portfolio
? negation | Should the intake form save submissions in WordPress? | hs-neg-store
? negation | Can I book a client call for Friday? | neg-friday-calls
? negation | Should I build the new WordPress site with Elementor? | neg-page-builders
? negation | Should Peak Physio's site show treatment prices? | pp-neg-prices
? negation | Can we run Google Ads for Orbit? | oc-neg-ads
? update | What is Ravi's hourly rate? | rate-95
? update | Where is the Greenway site hosted? | gw-vercel
? update | What platform is Orbit's shop on? | oc-shopify
? update | What did Ravi charge per hour in 2024? | rate-85
? update | Does Ravi still sell the fixed-price support plan? | support-change
? update | Where was Orbit's shop hosted before the move? | oc-woo
? multi-hop | Who designs the Peak Physio redesign, and how much is its budget? | pp-design, pp-redesign
? multi-hop | Why did Orbit leave WooCommerce, and what did the move cost in hours? | oc-woo-problem, oc-migration-cost
? multi-hop | Which plugin broke the Hale and Sons intake form, and what rule came out of it? | hs-forms-incident, hs-neg-updates
? multi-hop | Who covers emergencies during Ravi's holiday, and what counts as one? | holiday-cover, emergency
? multi-hop | How much did Greenway pay for February 2025, and at what rate? | inv-gw-feb, nonprofit-rate
? multi-hop | Who approves Casa Verde's product pages, and what must every one of them list? | who.lucia, cv-allergens
""",
)

UNITS = (HARBOR, LUMEN, DANA, FERNWOOD, QUILL, RAVI)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
