"""Build benchmarks/data/dev.jsonl, the development set for `python -m benchmarks.retrieval`.

    python benchmarks/data/make_dev.py            # rewrites dev.jsonl next to this file
    python benchmarks/data/make_dev.py --check    # exits 1 if dev.jsonl is out of date

Everything here is hand-written and deterministic (no randomness). Two kinds of data:

* Conversations: five multi-session chats between two named friends, one owner
  per conversation. Every turn is one memory, `Name said, "..."`, stamped with
  its session's time. Questions ask who/what/when/where, numbers and counts,
  and facts spread over several turns, worded so their overlap with the turns
  is partial (a question about "the dog" when the turn says "Biscuit").
* Agent memory: facts an assistant would keep about a developer (two projects
  in their own namespaces), a household and a small company: preferences,
  config values, names, versions, dates, decisions and negations, each with
  near-duplicate siblings that differ in one value (staging vs production port,
  free vs paid rate limit, 3.4.0 vs 3.4.1), and two exact re-statements.

Memory ids: `<conv>-s<session>-t<turn>` for turns, `<owner prefix>-<label>` for
agent facts. Query categories (the `category` field) let the benchmark break
figures down: conv-fact, conv-when, conv-number, conv-multi, agent-fact,
agent-sibling, agent-negation, agent-update.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

OUT = Path(__file__).with_name("dev.jsonl")


@dataclass(frozen=True)
class Conversation:
    key: str
    owner: str
    speakers: dict[str, str]
    # (session start, turns); a turn is (speaker, words) or (speaker, words, label)
    sessions: list[tuple[str, list[tuple[str, ...]]]]
    # (question, evidence labels, category)
    questions: list[tuple[str, list[str], str]]


# --------------------------------------------------------------------------------------
# Conversations
# --------------------------------------------------------------------------------------

PRIYA_TOMAS = Conversation(
    key="c1",
    owner="conv-priya-tomas",
    speakers={"P": "Priya", "T": "Tomás"},
    sessions=[
        (
            "2024-03-09T18:20:00Z",
            [
                ("P", "Tomás! It's been ages. How's the workshop treating you?"),
                (
                    "T",
                    "Busy, honestly. I just finished a walnut dining table for a couple in Hood River, eight seats with a live edge.",
                    "table",
                ),
                ("P", "That sounds gorgeous. I'm still on night shifts in the ER, three twelves a week.", "nights"),
                ("T", "Three twelve-hour nights? I don't know how you sleep."),
                (
                    "P",
                    "Blackout curtains and a white noise machine. Also I signed up for the Bridge City half marathon in October, so I run in the mornings before bed.",
                    "halfsignup",
                ),
                ("T", "A half marathon! Is that your first?"),
                (
                    "P",
                    "First half. I did a 10K on St. Patrick's Day a couple of years ago and nearly died on the hills.",
                    "10k",
                ),
                ("T", "Ha. My daughter Lucía just started violin lessons, so our house isn't quiet either.", "violin"),
                ("P", "How old is she now?"),
                (
                    "T",
                    "She turned nine in January. She practices Twinkle Twinkle about forty times a day.",
                    "lucia_age",
                ),
                (
                    "P",
                    "Adorable. Speaking of noise, I've been thinking about adopting a dog from the shelter on 82nd.",
                    "dogthink",
                ),
                ("T", "Do it. We had a beagle when I was a kid and he was the best part of my childhood."),
                ("P", "My landlord says pets under 40 pounds are okay, so I'm looking at smaller breeds.", "landlord"),
                ("T", "Send me pictures when you pick one."),
            ],
        ),
        (
            "2024-04-14T10:05:00Z",
            [
                (
                    "P",
                    "Guess who has a dog now! Meet Biscuit, a two-year-old corgi mix. I brought him home yesterday.",
                    "adopt",
                ),
                ("T", "He's so fluffy! Corgis shed like crazy though, right?"),
                ("P", "Everywhere. I've vacuumed more this week than in the whole of last year."),
                (
                    "T",
                    "Worth it. Hey, remember I said I wanted to build a boat? I bought the plans for a cedar-strip canoe.",
                    "canoeplans",
                ),
                ("P", "You never told me that! How long does something like that take?"),
                (
                    "T",
                    "About two hundred hours if I'm careful. I'm aiming to paddle it on the Willamette by Labor Day.",
                    "canoegoal",
                ),
                ("P", "That's ambitious with a kid and a full-time business."),
                ("T", "Lucía wants to help sand it, so I'm calling it a father-daughter project.", "sand"),
                (
                    "P",
                    "Love that. My training is going well, I ran eleven miles this morning without walking.",
                    "elevenmiles",
                ),
                ("T", "Eleven! What's your pace?"),
                ("P", "Around 9:40 per mile. My goal for October is to finish under two hours fifteen.", "goaltime"),
                ("T", "You'll crush it. Does Biscuit run with you?"),
                ("P", "His little legs last about a mile, then he sits down on the sidewalk in protest.", "biscuitrun"),
            ],
        ),
        (
            "2024-05-26T20:40:00Z",
            [
                ("T", "Rough week. I sliced my thumb on the table saw on Wednesday and needed six stitches.", "thumb"),
                ("P", "Oh no, Tomás! Did you go to urgent care?"),
                (
                    "T",
                    "Went to your ER actually, but you weren't on shift. The nurse said the blade guard probably saved my finger.",
                ),
                ("P", "Please keep it dry and watch for redness. Are you able to work?"),
                (
                    "T",
                    "Only light stuff. The canoe is on pause, I've only got the first twelve strips on.",
                    "canoepause",
                ),
                ("P", "Rest is good. I have news too, I'm switching to day shifts starting in June.", "dayshift"),
                ("T", "Finally! What changed?"),
                ("P", "A charge nurse position opened up on the cardiac floor and I got it.", "chargenurse"),
                ("T", "Congratulations, that's huge!"),
                (
                    "P",
                    "Thanks. It comes with a raise, so I'm putting part of it toward a trip to Kerala in December to see my grandmother.",
                    "kerala",
                ),
                ("T", "How old is she?"),
                ("P", "Ninety-one, and she still makes the best fish curry in the state.", "grandma"),
                (
                    "T",
                    "Lucía had her first recital yesterday, by the way. She played a minuet and only squeaked once.",
                    "recital",
                ),
                ("P", "I'm so sorry I missed it. Did you record it?"),
                ("T", "Every second. I'll send you the video."),
            ],
        ),
        (
            "2024-07-02T19:15:00Z",
            [
                ("P", "Happy almost Fourth! Any plans?"),
                (
                    "T",
                    "We're driving out to Cannon Beach to watch the fireworks. My thumb healed fine, by the way.",
                    "fourth",
                ),
                (
                    "P",
                    "Glad to hear it. Biscuit will be hiding under the bed all night, he hates fireworks.",
                    "biscuitfireworks",
                ),
                ("T", "Poor guy. Have you tried one of those compression vests?"),
                ("P", "The vet suggested a ThunderShirt, I ordered one on Monday.", "thundershirt"),
                (
                    "T",
                    "Canoe update: I'm back on it, all the strips are on and I'm fiberglassing this weekend.",
                    "fiberglass",
                ),
                ("P", "So you might actually make it by Labor Day?"),
                ("T", "If the epoxy cooperates. There's a dark red stripe down the middle, Lucía's choice.", "stripe"),
                (
                    "P",
                    "And my big news: I ran the Forest Park trail race on Saturday, 15K, and came second in my age group.",
                    "trailrace",
                ),
                ("T", "Second place! Was that part of the plan?"),
                ("P", "Not really, a coworker dared me. It was a good test before the half in October."),
                ("T", "How's the new job on the cardiac floor?"),
                (
                    "P",
                    "Way more paperwork, but I love having weekends off. I sleep like a normal human now.",
                    "weekends",
                ),
                ("T", "Same time next month?"),
                ("P", "Deal. Bring canoe photos."),
            ],
        ),
    ],
    questions=[
        ("What kind of dog did Priya adopt?", ["adopt"], "conv-fact"),
        ("When did Priya bring Biscuit home?", ["adopt"], "conv-when"),
        ("What is Tomás building with his daughter?", ["canoeplans", "sand"], "conv-multi"),
        ("How did Tomás hurt his hand?", ["thumb"], "conv-fact"),
        ("How many stitches did Tomás need after the accident in the workshop?", ["thumb"], "conv-number"),
        ("Which race is Priya training for, and when is it?", ["halfsignup"], "conv-when"),
        ("What instrument is Tomás's kid learning?", ["violin"], "conv-fact"),
        ("How old is Lucía?", ["lucia_age"], "conv-number"),
        ("Why is Priya moving from nights to days?", ["dayshift", "chargenurse"], "conv-multi"),
        ("Who is Priya going to visit in India at the end of the year?", ["kerala"], "conv-fact"),
        ("What size of pet is Priya allowed in her apartment?", ["landlord"], "conv-fact"),
        ("What finishing time is Priya hoping for in the half?", ["goaltime"], "conv-number"),
        ("Which race did Priya come second in?", ["trailrace"], "conv-fact"),
        ("Where is Tomás's family watching fireworks for the Fourth of July?", ["fourth"], "conv-fact"),
        (
            "What did the vet recommend for the dog's fear of fireworks?",
            ["thundershirt", "biscuitfireworks"],
            "conv-multi",
        ),
        ("What colour is the stripe on the canoe and who chose it?", ["stripe"], "conv-fact"),
        ("What races has Priya run so far?", ["10k", "trailrace"], "conv-multi"),
        ("What piece of furniture did Tomás make for the couple in Hood River?", ["table"], "conv-fact"),
        ("When was Lucía's first recital?", ["recital"], "conv-when"),
        ("How far can Biscuit run before he gives up?", ["biscuitrun"], "conv-number"),
        ("How does Priya manage to sleep during the day?", ["halfsignup"], "conv-fact"),
        ("By when does Tomás want to launch his boat, and on which river?", ["canoegoal"], "conv-when"),
    ],
)

INES_MARCUS = Conversation(
    key="c2",
    owner="conv-ines-marcus",
    speakers={"I": "Inés", "M": "Marcus"},
    sessions=[
        (
            "2023-09-17T14:30:00Z",
            [
                ("I", "Marcus, hi! Sorry I vanished, fieldwork season ate my entire summer."),
                ("M", "No worries. Where were you diving this time?"),
                (
                    "I",
                    "Mostly off Point Lobos, counting sea urchins in the kelp forest. We logged over three thousand urchins in August alone.",
                    "urchins",
                ),
                ("M", "Three thousand? Are they bad for the kelp?"),
                (
                    "I",
                    "Purple urchins mow it down when there are no sea stars around to eat them. It's basically my whole dissertation.",
                    "dissertation",
                ),
                ("M", "Heavy. My news is smaller but scary: I handed in my notice at Fennel last Friday.", "notice"),
                ("I", "You quit? You've been sous chef there for what, six years?", "souschef"),
                ("M", "Seven in November. I'm buying a used food truck and doing Korean-Texan barbecue.", "foodtruck"),
                ("I", "Brisket and kimchi? I'd eat there every day."),
                ("M", "That's the idea. Gochujang-glazed brisket, kimchi mac and cheese, sesame slaw.", "menu"),
                ("I", "What are you calling it?"),
                ("M", "Smoke & Sesame. My sister Dana designed the logo, a little pig holding chopsticks.", "logo"),
                ("I", "Perfect. When do you open?"),
                ("M", "If the health permit comes through, the first weekend of November.", "openplan"),
            ],
        ),
        (
            "2023-11-05T19:00:00Z",
            [
                ("I", "How was opening weekend?? I saw the photos on Instagram."),
                ("M", "Chaotic and amazing. We sold out of brisket by 1:30 on Saturday.", "soldout"),
                ("I", "Sold out! Where were you parked?"),
                (
                    "M",
                    "In the brewery lot on Alvarado Street. They let us plug into their power, which saves me from running the generator.",
                    "location",
                ),
                ("I", "Smart. I'm jealous, my week was grant writing and a broken dive computer.", "divecomputer"),
                ("M", "Can you dive without it?"),
                (
                    "I",
                    "Not safely. A new one is about nine hundred dollars and the lab budget is frozen until January.",
                    "price",
                ),
                ("M", "Ouch. Can I help? I could do a fundraiser plate."),
                ("I", "That's sweet, but my advisor found me a loaner from the aquarium.", "loaner"),
                ("M", "Which aquarium?"),
                (
                    "I",
                    "Monterey Bay. I volunteered there as an undergrad, so I still know half the dive team.",
                    "aquarium",
                ),
                (
                    "M",
                    "Small world. Oh, I forgot, Dana is getting married in April in Austin, and I'm catering the rehearsal dinner.",
                    "wedding",
                ),
                ("I", "For how many people?"),
                ("M", "Sixty, give or take. No pressure.", "sixty"),
            ],
        ),
        (
            "2023-12-10T11:45:00Z",
            [
                (
                    "M",
                    "I have to tell you about the disaster on Thursday. The smoker on the truck caught fire.",
                    "fire",
                ),
                ("I", "Marcus! Is everyone okay?"),
                (
                    "M",
                    "Everyone's fine. Grease had built up in the chimney, my fault for skipping a cleaning. The fire department was there in four minutes.",
                    "grease",
                ),
                ("I", "Is the truck ruined?"),
                ("M", "Just the smoker. Insurance covers most of it but I'm closed until after New Year's.", "closed"),
                ("I", "I'm so sorry. What will you do with the time off?"),
                ("M", "Honestly, sleep. And I'm testing a vegetarian menu, jackfruit burnt ends.", "jackfruit"),
                ("I", "That sounds wild. I'd try it."),
                ("I", "My update: I passed my qualifying exam on Tuesday!", "quals"),
                ("M", "Dr. Carvalho! Well, almost. How do you feel?"),
                ("I", "Relieved. The committee grilled me for three hours on sea star wasting disease.", "wasting"),
                ("M", "Three hours. I'd have cried."),
                ("I", "I did cry, afterwards, in the parking lot. Happy tears mostly."),
                ("M", "We're celebrating when the truck's back. Dinner's on me."),
            ],
        ),
        (
            "2024-01-21T16:10:00Z",
            [
                ("M", "We reopened on January 12th and the line was longer than on opening weekend.", "reopen"),
                ("I", "That's the best comeback story. Did the jackfruit make the menu?"),
                ("M", "It did, and it outsells the pulled pork on Fridays, which I did not expect.", "jackfruitsells"),
                ("I", "Vegetarians of Monterey unite."),
                ("M", "How's diving in winter? Isn't the water freezing?"),
                (
                    "I",
                    "It's around 52 degrees. I wear a 7-millimeter wetsuit plus a hood and still can't feel my hands after forty minutes.",
                    "cold",
                ),
                ("M", "No thank you. Any new urchin counts?"),
                (
                    "I",
                    "Fewer urchins at our Point Lobos site this winter, actually. The sunflower sea stars we reintroduced seem to be eating them.",
                    "fewer",
                ),
                ("M", "So the good guys are winning?"),
                ("I", "Too early to say, but I'm presenting the data at a conference in Hawaii in March.", "hawaii"),
                ("M", "Hawaii in March. Your life is clearly harder than mine."),
                ("I", "I'll bring you back macadamia nuts as an apology."),
                (
                    "M",
                    "Deal. Also I hired my first employee, Teodoro, a culinary student from Cabrillo College.",
                    "hire",
                ),
                ("I", "Look at you, a boss."),
            ],
        ),
    ],
    questions=[
        ("What kind of food does Marcus sell from his truck?", ["foodtruck", "menu"], "conv-multi"),
        (
            "Where did Marcus cook before he started his own business, and what was his job there?",
            ["notice", "souschef"],
            "conv-multi",
        ),
        ("What is the truck called?", ["logo"], "conv-fact"),
        ("Who drew the logo for Marcus's business?", ["logo"], "conv-fact"),
        ("What is Inés researching for her PhD?", ["dissertation", "urchins"], "conv-multi"),
        ("When did the fire happen on the truck?", ["fire"], "conv-when"),
        ("What started the fire?", ["grease"], "conv-fact"),
        ("When did Smoke & Sesame open again after the fire?", ["reopen"], "conv-when"),
        ("How much would a replacement dive computer cost?", ["price"], "conv-number"),
        ("Where did Inés get a dive computer to borrow?", ["loaner", "aquarium"], "conv-multi"),
        ("When did Inés pass her quals?", ["quals"], "conv-when"),
        ("What did the examiners mostly ask Inés about?", ["wasting"], "conv-fact"),
        ("Whose wedding is Marcus cooking for, and where is it?", ["wedding"], "conv-fact"),
        ("How many guests will be at the rehearsal dinner?", ["sixty"], "conv-number"),
        ("Which meatless dish did Marcus come up with?", ["jackfruit", "jackfruitsells"], "conv-multi"),
        ("Where does Marcus park the truck?", ["location"], "conv-fact"),
        ("Why are there fewer urchins at Point Lobos this winter?", ["fewer"], "conv-fact"),
        ("Where will Inés present her research in March?", ["hawaii"], "conv-when"),
        ("How cold is the ocean when Inés dives in winter?", ["cold"], "conv-number"),
        ("Who did Marcus hire first?", ["hire"], "conv-fact"),
        ("How many urchins did the team count in August?", ["urchins"], "conv-number"),
        ("How quickly did the brisket sell out on opening weekend?", ["soldout"], "conv-when"),
    ],
)

HANA_DEREK = Conversation(
    key="c3",
    owner="conv-hana-derek",
    speakers={"H": "Hana", "D": "Derek"},
    sessions=[
        (
            "2024-08-18T09:30:00Z",
            [
                ("H", "Morning Derek! Did the twins survive their first week of kindergarten?", "twinsq"),
                ("D", "They did, barely. Maya loves it, but Kofi cried every morning until Thursday.", "twins"),
                ("H", "Poor Kofi. Thursday is a good sign though."),
                (
                    "D",
                    "His teacher gave him the job of feeding the class guinea pig. That fixed everything.",
                    "guineapig",
                ),
                (
                    "H",
                    "Ha, a guinea pig is a strong motivator. I go back on the 26th, seventh-grade science again.",
                    "backtoschool",
                ),
                ("D", "Same school as last year?"),
                (
                    "H",
                    "Yep, Lincoln Middle. I'm also taking over the robotics club because Mr. Aldana retired.",
                    "robotics",
                ),
                ("D", "Robotics! Do you know anything about robots?"),
                ("H", "Absolutely nothing. I've been watching YouTube tutorials every night."),
                ("D", "You'll be fine. How's the pottery going?"),
                (
                    "H",
                    "I finally threw a set of six matching mugs on the wheel. Well, five matching and one that leans.",
                    "mugs",
                ),
                ("D", "Save the leaning one for me."),
                (
                    "H",
                    "Deal. Also my mom is getting her knee replaced in September, so I'll be driving up to Milwaukee a lot.",
                    "knee",
                ),
                ("D", "Let me know if you need anything while she recovers."),
            ],
        ),
        (
            "2024-09-22T20:15:00Z",
            [
                ("D", "How's your mom doing after the surgery?"),
                (
                    "H",
                    "Better than expected. She was up with a walker the day after, and the physical therapist says she's ahead of schedule.",
                    "recovery",
                ),
                ("D", "That's great news."),
                (
                    "H",
                    "The hard part is stopping her from doing too much. She tried to mow the lawn last Sunday.",
                    "mow",
                ),
                ("D", "Classic. We finally closed on the farmhouse, by the way!", "farmhouse"),
                ("H", "The one in Galena with the red barn?", "galena"),
                ("D", "That's the one. Built in 1887, needs a new roof and every single window leaks.", "1887"),
                ("H", "When are you moving in?"),
                ("D", "Not until spring. We're doing the roof and the furnace first, then the kitchen.", "movein"),
                ("H", "Ambitious. Are you still running the choir?"),
                (
                    "D",
                    "Yes, the Riverside Community Choir has forty-two members now. We're doing the Messiah in December.",
                    "choir",
                ),
                ("H", "The whole thing?"),
                ("D", "Just the Christmas part, thank goodness. Rehearsals are Tuesday nights.", "tuesday"),
                ("H", "Our robotics team named their robot Sir Beeps-a-Lot. I was outvoted.", "robotname"),
                ("D", "That's a perfect name."),
            ],
        ),
        (
            "2024-10-27T15:00:00Z",
            [
                ("H", "We placed third at the regional robotics competition yesterday!", "third"),
                ("D", "Third! With a coach who knew nothing in August?"),
                ("H", "The kids did all the work. Sir Beeps-a-Lot only fell over once."),
                ("D", "So proud of you all. Our roofers found a raccoon family living in the attic.", "raccoon"),
                ("H", "Oh no. What did you do?"),
                (
                    "D",
                    "Called a wildlife rescue. They moved the mother and four babies to a preserve near Dubuque.",
                    "relocate",
                ),
                ("H", "Better than the alternative. How much did the roof end up costing?"),
                ("D", "Thirty-one thousand, about four grand over the estimate because of rotten boards.", "roofcost"),
                ("H", "Ouch. I sold my first pottery pieces at the Logan Square fall market, by the way.", "market"),
                ("D", "How many?"),
                ("H", "Eleven pieces, mostly bowls. I made two hundred and sixty dollars.", "sold"),
                ("D", "A professional potter now!"),
                ("H", "Ha, it covered my kiln fees for the year. Barely."),
                ("D", "Maya wants to be a potter too now, I showed her your pictures."),
                ("H", "Bring her to the studio over winter break, I'll teach her to center clay.", "winterbreak"),
            ],
        ),
        (
            "2024-12-15T18:45:00Z",
            [
                ("D", "The Messiah concert was last night. We got a standing ovation.", "messiah"),
                ("H", "I'm sorry I missed it. I was in Milwaukee for my mom's birthday.", "mombday"),
                ("D", "How old did she turn?"),
                ("H", "Seventy-five. She danced at her party, on the new knee.", "75"),
                ("D", "That's the best possible outcome."),
                ("H", "It really is. Are the twins excited for Christmas?"),
                (
                    "D",
                    "Kofi asked Santa for a real guinea pig, which is a problem because Maya is allergic.",
                    "allergic",
                ),
                ("H", "Oh dear. Maybe a fish?"),
                ("D", "That's plan B. How was the end of the semester?"),
                ("H", "Exhausting. I'm flying to Japan over New Year's to see my grandparents in Sapporo.", "sapporo"),
                ("D", "How long are you going for?"),
                ("H", "Two weeks. I'm back on January 6th.", "back"),
                (
                    "D",
                    "Send snow photos. We'll be stuck in the farmhouse with no heat if the furnace guy doesn't show up Monday.",
                    "furnace",
                ),
                ("H", "Fingers crossed for you."),
            ],
        ),
    ],
    questions=[
        ("Which of Derek's kids had a hard time starting kindergarten?", ["twins"], "conv-fact"),
        ("What helped Kofi settle in at school?", ["guineapig"], "conv-fact"),
        ("What subject and grade does Hana teach?", ["backtoschool"], "conv-fact"),
        ("Why did Hana end up in charge of the robotics club?", ["robotics"], "conv-fact"),
        ("What did Hana make on the pottery wheel?", ["mugs"], "conv-fact"),
        ("What operation did Hana's mother have?", ["knee"], "conv-fact"),
        ("Where is Derek's farmhouse and how old is it?", ["galena", "1887"], "conv-multi"),
        ("How many singers are in Derek's choir?", ["choir"], "conv-number"),
        ("Which night does the choir practice?", ["tuesday"], "conv-when"),
        ("What did the students call their robot?", ["robotname"], "conv-fact"),
        ("How did Hana's team do at regionals?", ["third"], "conv-fact"),
        ("What animals were living in the attic, and where did they go?", ["raccoon", "relocate"], "conv-multi"),
        ("How much did the new roof cost?", ["roofcost"], "conv-number"),
        ("How much money did Hana earn selling pottery?", ["sold", "market"], "conv-multi"),
        ("When did the choir perform the Messiah?", ["messiah"], "conv-when"),
        ("How old is Hana's mom?", ["75"], "conv-number"),
        ("Why can't Kofi have a guinea pig at home?", ["allergic"], "conv-fact"),
        ("Where is Hana spending the holidays?", ["sapporo"], "conv-fact"),
        ("When does Hana return from Japan?", ["back"], "conv-when"),
        ("When will Derek's family move into the farmhouse?", ["movein"], "conv-when"),
        ("How many children does Derek have, and what are their names?", ["twinsq", "twins"], "conv-multi"),
        ("What did Hana's mother try to do too soon after surgery?", ["mow"], "conv-fact"),
    ],
)

OLU_GRETA = Conversation(
    key="c4",
    owner="conv-olu-greta",
    speakers={"O": "Olu", "G": "Greta"},
    sessions=[
        (
            "2023-02-12T16:00:00Z",
            [
                ("G", "Olu, dear, how was Iceland? I've been waiting for the pictures."),
                ("O", "Unreal, Greta. We saw the northern lights three nights out of seven.", "aurora"),
                ("G", "Three! My husband and I went to Tromsø in 1998 and saw nothing but clouds.", "tromso"),
                (
                    "O",
                    "I got lucky with the weather. The best shot was over Jökulsárlón, the glacier lagoon.",
                    "lagoon",
                ),
                ("G", "Are you going to sell prints?"),
                ("O", "A gallery in Brooklyn wants five of them for a group show in April.", "gallery"),
                ("G", "Olu! That's wonderful."),
                ("O", "I'm nervous. It's my first show where people can actually buy the work."),
                (
                    "G",
                    "They'll sell. Meanwhile I've started my tomato seedlings under grow lights in the basement.",
                    "seedlings",
                ),
                ("O", "Already? It's February."),
                (
                    "G",
                    "Eight weeks before the last frost, that's the rule. I'm growing Cherokee Purple and Sungold this year.",
                    "varieties",
                ),
                ("O", "I don't know what either of those are, but they sound delicious."),
                ("G", "Sungolds are little orange cherry tomatoes, sweet as candy. I'll save you some.", "sungold"),
                ("O", "Please do."),
            ],
        ),
        (
            "2023-03-26T13:20:00Z",
            [
                (
                    "G",
                    "Our book club just finished 'The Remains of the Day'. Half the group hated the ending.",
                    "bookclub",
                ),
                ("O", "What did you think?"),
                ("G", "I cried. I'm the one who picked it, so I had to defend it for two hours.", "picked"),
                ("O", "Ha. I'm reading a photography book right now, nothing so literary."),
                ("G", "Which one?"),
                (
                    "O",
                    "A collection of Malick Sidibé's portraits from Bamako. My uncle gave it to me when I was sixteen and I reread it every year.",
                    "sidibe",
                ),
                ("G", "How lovely. Is your uncle a photographer too?"),
                (
                    "O",
                    "He ran a portrait studio in Lagos for thirty years. He's the reason I picked up a camera.",
                    "uncle",
                ),
                (
                    "G",
                    "Family runs deep. My granddaughter Elsa just learned to ride a bike without training wheels.",
                    "elsa",
                ),
                ("O", "How old is she?"),
                ("G", "Six. She wobbled straight into my rose bush on the first try, but she got back on.", "six"),
                ("O", "Tough kid. I'm printing the gallery pieces this week, thirty by forty inches.", "print"),
                ("G", "That's enormous."),
                (
                    "O",
                    "The print shop is charging me eighteen hundred dollars for the five. I'm hoping they sell.",
                    "printcost",
                ),
            ],
        ),
        (
            "2023-04-30T10:10:00Z",
            [
                ("O", "The gallery opening was on Thursday. Three of the five prints sold the first night!", "opening"),
                ("G", "Congratulations! Which ones?"),
                (
                    "O",
                    "The glacier lagoon, the black sand beach at Reynisfjara, and one of the horses in the snow.",
                    "sold3",
                ),
                ("G", "The horses! I'd have bought that one."),
                ("O", "I'll make you a small print, on the house.", "smallprint"),
                (
                    "G",
                    "You're too generous. My news is less exciting: a late frost killed half my tomato seedlings last week.",
                    "frost",
                ),
                ("O", "Oh no! After all that work."),
                (
                    "G",
                    "The Sungolds survived, the Cherokee Purples didn't. I'm buying replacement plants at the farmers market.",
                    "survived",
                ),
                ("O", "Nature is rude."),
                (
                    "G",
                    "It is. Elsa and her brother are staying with me all of June while their parents are in Portugal.",
                    "june",
                ),
                ("O", "A whole month with two kids? Brave."),
                ("G", "Nils is nine and only eats plain pasta, so at least the cooking will be easy.", "nils"),
                ("O", "I have a wedding to shoot in June as well, my first one.", "weddingshoot"),
                ("G", "A wedding photographer now?"),
                (
                    "O",
                    "It's a friend's wedding in Charleston. I said yes before I realized how much pressure it is.",
                    "charleston",
                ),
            ],
        ),
        (
            "2023-06-25T19:30:00Z",
            [
                ("G", "How was the wedding?"),
                ("O", "Hot, a hundred and two degrees, and the bride's veil blew into the harbor.", "veil"),
                ("G", "No!"),
                ("O", "A groomsman jumped in and rescued it. That photo is the couple's favorite now.", "groomsman"),
                (
                    "G",
                    "What a story. The grandkids and I are doing well, we've been to the lake every afternoon.",
                    "lake",
                ),
                ("O", "Is Nils still on the plain pasta diet?"),
                ("G", "He tried my pesto on Tuesday and asked for seconds. I consider it a personal victory.", "pesto"),
                ("O", "Huge. And the tomatoes?"),
                ("G", "The first Sungolds ripened this week. I counted forty on one plant.", "forty"),
                ("O", "You promised me some."),
                ("G", "I did. Come over Saturday and I'll send you home with a bag.", "saturday"),
                ("O", "I'll bring the small print of the horses.", "bringprint"),
                ("G", "Perfect trade. Are you taking more weddings?"),
                (
                    "O",
                    "Two inquiries already, but I think I'll stick to landscapes. One wedding was enough stress for a lifetime.",
                    "landscapes",
                ),
            ],
        ),
    ],
    questions=[
        ("How many nights did Olu see the aurora in Iceland?", ["aurora"], "conv-number"),
        ("Where did Greta go with her husband in 1998?", ["tromso"], "conv-when"),
        ("Where will Olu's photographs be shown?", ["gallery"], "conv-fact"),
        ("When did Greta start growing her tomatoes indoors?", ["seedlings"], "conv-when"),
        ("Which tomato varieties is Greta growing this year?", ["varieties"], "conv-fact"),
        ("Which novel did Greta's book club read, and who chose it?", ["bookclub", "picked"], "conv-multi"),
        ("Who got Olu interested in photography?", ["uncle"], "conv-fact"),
        ("What book did Olu's uncle give him as a teenager?", ["sidibe"], "conv-fact"),
        ("How old is Elsa?", ["six"], "conv-number"),
        ("How much did Olu pay to have the gallery prints made?", ["printcost"], "conv-number"),
        ("How many prints sold on the opening night?", ["opening"], "conv-number"),
        ("Which of Olu's photos sold?", ["sold3"], "conv-fact"),
        ("What happened to Greta's seedlings in April, and which ones made it?", ["frost", "survived"], "conv-multi"),
        ("Who is staying with Greta in June?", ["june"], "conv-fact"),
        ("What happened to the bride's veil at the wedding Olu shot?", ["veil", "groomsman"], "conv-multi"),
        ("In which city was the wedding Olu photographed?", ["charleston"], "conv-fact"),
        ("What new food did Nils finally try?", ["pesto"], "conv-fact"),
        ("How many tomatoes were on a single plant?", ["forty"], "conv-number"),
        ("Does Olu want to keep shooting weddings?", ["landscapes"], "conv-fact"),
        ("What are the names of Greta's grandchildren?", ["elsa", "june"], "conv-multi"),
        ("What is Olu giving Greta in exchange for tomatoes?", ["bringprint", "smallprint"], "conv-multi"),
        ("When did Olu's gallery show open?", ["opening"], "conv-when"),
    ],
)

SAM_RAFAELA = Conversation(
    key="c5",
    owner="conv-sam-rafaela",
    speakers={"S": "Sam", "R": "Rafaela"},
    sessions=[
        (
            "2024-01-14T20:00:00Z",
            [
                ("S", "Rafa! How was your first week at the new clinic?"),
                ("R", "Intense. Four spays and a cat who swallowed a hair tie, all on Wednesday.", "hairtie"),
                ("S", "A hair tie? Is the cat okay?"),
                (
                    "R",
                    "She's fine, we got it out with an endoscope, no surgery needed. Her name is Noodle, which feels appropriate.",
                    "noodle",
                ),
                ("S", "Ha! My team won our first game of the season, 58 to 51 against Eastview.", "firstwin"),
                ("R", "Coach Whitaker! Who was the star?"),
                ("S", "A sophomore named Trey scored twenty-two. He was cut from the team last year.", "trey"),
                ("R", "Redemption arc. I love it."),
                ("S", "I also finally bought an acoustic guitar. Jordan got tired of me borrowing his.", "guitar"),
                ("R", "What are you learning first?"),
                ("S", "Wonderwall, obviously. My fingertips are killing me.", "wonderwall"),
                ("R", "They'll toughen up. Any progress on the wedding planning?"),
                ("S", "We booked the venue, a barn outside Boulder, for September 21st.", "venue"),
                ("R", "Save the date officially saved."),
            ],
        ),
        (
            "2024-02-18T11:30:00Z",
            [
                ("R", "I went climbing at Eldorado Canyon yesterday, my first outdoor lead climb.", "lead"),
                ("S", "Outdoors in February?"),
                ("R", "It was sixty degrees and sunny. Colorado weather makes no sense.", "sunny"),
                ("S", "True. We lost the district semifinal on Friday, by one point.", "semifinal"),
                ("R", "One point! That hurts."),
                ("S", "Trey missed a free throw at the buzzer. He's taking it harder than anyone.", "freethrow"),
                ("R", "Poor kid. Tell him even the pros miss."),
                ("S", "I did. I'm taking him to a Nuggets game next week to cheer him up.", "nuggets"),
                (
                    "R",
                    "Great coach move. At the shelter we had twelve puppies surrendered on Tuesday, all from one house.",
                    "puppies",
                ),
                ("S", "Twelve? Are they healthy?"),
                (
                    "R",
                    "Mostly. Two have parvo, so they're in isolation. The rest go up for adoption in March.",
                    "parvo",
                ),
                ("S", "Jordan is going to want one, I can already tell."),
                ("R", "I'll send you photos of the mellow ones."),
            ],
        ),
        (
            "2024-03-31T17:00:00Z",
            [
                ("S", "So... we adopted one of the puppies. Her name is Pepper.", "pepper"),
                ("R", "I knew it! Which one?"),
                ("S", "The black one with the white sock on her left paw.", "sock"),
                ("R", "She's the sweetest. Is she sleeping through the night?"),
                ("S", "Mostly. She chewed through Jordan's guitar strap on day two, though.", "strap"),
                ("R", "Teething. Give her frozen carrots.", "carrots"),
                ("S", "Your vet advice is now my entire personality. How's climbing?"),
                (
                    "R",
                    "I sprained my ankle bouldering at the gym two weeks ago, so I'm off the wall until May.",
                    "sprain",
                ),
                ("S", "Oh no. Are you okay?"),
                (
                    "R",
                    "It's just a grade-two sprain. The worst part is I had to cancel the Red Rocks trip in April.",
                    "redrocks",
                ),
                ("S", "That's a bummer. We picked our caterer, a taco truck from Denver called La Güera.", "caterer"),
                ("R", "Tacos at a wedding is elite."),
                ("S", "Jordan wanted a sit-down dinner, but I won that argument.", "sitdown"),
            ],
        ),
        (
            "2024-05-19T14:15:00Z",
            [
                ("R", "My ankle is healed! I led my first climb since the sprain on Thursday.", "healed"),
                ("S", "Welcome back to the wall."),
                ("R", "Thanks. How's Pepper?"),
                (
                    "S",
                    "She graduated from puppy class last week, top of the class for sit, bottom for stay.",
                    "puppyclass",
                ),
                ("R", "Honestly that tracks for a shepherd mix."),
                (
                    "S",
                    "I can play three full songs on guitar now, and Jordan wants me to play one at the wedding.",
                    "threesongs",
                ),
                ("R", "Which one?"),
                ("S", "'Harvest Moon' by Neil Young. I'm terrified.", "harvestmoon"),
                (
                    "R",
                    "You'll be amazing. I have news: I'm applying for an emergency medicine residency at Colorado State.",
                    "residency",
                ),
                ("S", "That's huge, Rafa!"),
                ("R", "It's three years, and the clinic said they'd keep my job open part-time.", "threeyears"),
                ("S", "When will you hear back?"),
                ("R", "Interviews are in August and decisions come out in October.", "october"),
                ("S", "So you'll know after the wedding. Good, no distractions during my Neil Young debut."),
            ],
        ),
    ],
    questions=[
        ("What did the cat at the clinic swallow, and what is the cat's name?", ["hairtie", "noodle"], "conv-multi"),
        ("What was the final score of the team's first win?", ["firstwin"], "conv-number"),
        ("Which player scored 22 points?", ["trey"], "conv-fact"),
        ("What was the first song Sam learned on guitar?", ["wonderwall"], "conv-fact"),
        ("Where and when are Sam and Jordan getting married?", ["venue"], "conv-when"),
        ("Where did Rafaela lead her first climb outside?", ["lead"], "conv-fact"),
        ("How did the semifinal end for Sam's team?", ["semifinal", "freethrow"], "conv-multi"),
        ("How many puppies were dropped off at the shelter?", ["puppies"], "conv-number"),
        ("What did Sam and Jordan name their new dog?", ["pepper"], "conv-fact"),
        ("What did the puppy chew up?", ["strap"], "conv-fact"),
        ("How did Rafaela get hurt?", ["sprain"], "conv-fact"),
        ("Which trip did Rafaela have to call off?", ["redrocks"], "conv-fact"),
        ("Who is providing the food at Sam's wedding?", ["caterer"], "conv-fact"),
        ("What song is Sam going to perform at the wedding?", ["harvestmoon", "threesongs"], "conv-multi"),
        ("What program is Rafaela applying to?", ["residency"], "conv-fact"),
        ("When will Rafaela hear whether she got in?", ["october"], "conv-when"),
        ("When did Rafaela start climbing again after her injury?", ["healed"], "conv-when"),
        ("How did Pepper do in obedience class?", ["puppyclass"], "conv-fact"),
        ("How is Sam trying to cheer Trey up?", ["nuggets"], "conv-fact"),
        ("What does Pepper look like?", ["sock"], "conv-fact"),
        ("How long is the residency program?", ["threeyears"], "conv-number"),
    ],
)

CONVERSATIONS = [PRIYA_TOMAS, INES_MARCUS, HANA_DEREK, OLU_GRETA, SAM_RAFAELA]


# --------------------------------------------------------------------------------------
# Agent memory
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FactSet:
    prefix: str
    owner: str
    namespace: str | None
    first_day: str  # facts are stamped one after another from this day
    # (label, text)
    facts: list[tuple[str, str]]


DEV_GENERAL = FactSet(
    "dev",
    "agent-dev",
    None,
    "2024-06-10",
    [
        ("indent", "User prefers tabs in Go code but 4-space indentation in Python."),
        ("editor", "User's editor is Neovim with the LazyVim distribution."),
        ("nopush", "User does NOT want the assistant to run git push without asking first."),
        ("commit", "The assistant may run git commit on its own once the tests pass."),
        ("handle", "User's GitHub handle is @kestrel-dev."),
        ("msgstyle", "Commit messages: imperative mood, subject line under 72 characters, body wrapped at 80."),
        ("laptop", "User's work laptop is a 2023 MacBook Pro M3 with 36 GB of RAM."),
        ("pi", "User's home server is a Raspberry Pi 5 running Debian 12 at 192.168.1.40."),
        ("nas", "User's NAS is a Synology DS920+ at 192.168.1.41."),
        ("pytest", "User prefers pytest over unittest and wants fixtures instead of setUp methods."),
        ("sql", "User dislikes ORMs; use raw SQL with psycopg 3."),
        ("short", "Keep answers short unless the user asks for detail; no long preambles."),
        ("tz", "User's timezone is Europe/Berlin."),
        ("nomd", "Do NOT let Prettier reformat Markdown files."),
        ("prettier", "Prettier should format TypeScript and JSON files on save."),
        ("shell", "User's shell is fish, not bash; give fish syntax for environment variables."),
    ],
)

DEV_ATLAS = FactSet(
    "atlas",
    "agent-dev",
    "atlas",
    "2024-06-12",
    [
        ("stack", "Atlas billing service runs on Python 3.12 and FastAPI 0.111."),
        ("dbprod", "Atlas production database: PostgreSQL 16 on db-prod.atlas.internal, port 5432."),
        ("dbstaging", "Atlas staging database: PostgreSQL 16 on db-staging.atlas.internal, port 5433."),
        ("redis", "Atlas uses Redis 7.2 for the rate limiter; keys are prefixed atlas:rl:."),
        (
            "dramatiq",
            "Decision 2024-02-12: Atlas moved background jobs from Celery to Dramatiq because Celery workers kept leaking memory.",
        ),
        ("deploydays", "Atlas deploys go out Tuesdays and Thursdays at 14:00 UTC. No deploys on Fridays."),
        ("ratepaid", "Atlas API rate limit for paid plans: 600 requests per minute per API key."),
        ("ratefree", "Atlas API rate limit for the free tier: 60 requests per minute per API key."),
        ("oncall", "The Atlas on-call rotation hands over every Monday at 09:00 Berlin time."),
        ("invoices", "Atlas generates invoices on the 1st of each month at 03:00 UTC (cron job generate_invoices)."),
        ("webhook", "Atlas Stripe webhook endpoint is /v1/webhooks/stripe, verified with STRIPE_WEBHOOK_SECRET."),
        ("proration", "Feature flag ENABLE_PRORATION is on in staging but OFF in production."),
        ("ownerpay", "Code owner of the Atlas payments module is Lena Hoffmann."),
        ("ownertax", "Code owner of the Atlas tax module is Ravi Menon."),
        ("paypal", "Atlas will not support PayPal; decided in the March 2024 planning meeting."),
        ("coverage", "CI fails the Atlas build if test coverage drops below 85%."),
        ("image", "Atlas Docker base image is python:3.12-slim-bookworm."),
        ("loglevel", "Atlas log level is WARNING in production and DEBUG in staging."),
        ("repo", "The Atlas repository is github.com/kestrel-dev/atlas-billing."),
        ("pg14", "Atlas ran PostgreSQL 14 until the upgrade to 16 on 2024-05-18."),
    ],
)

DEV_BRAMBLE = FactSet(
    "bramble",
    "agent-dev",
    "bramble",
    "2024-06-14",
    [
        ("stack", "Bramble mobile app: React Native 0.74 with Expo SDK 51."),
        ("minos", "Bramble supports iOS 15 and later, and Android API level 26 and later."),
        ("sentry", "Bramble crash reports go to Sentry, project slug bramble-mobile."),
        ("train", "Bramble ships a new TestFlight build every other Wednesday."),
        ("apiprod", "Bramble production API base URL: https://api.bramble.app/v2"),
        ("apistaging", "Bramble staging API base URL: https://staging-api.bramble.app/v2"),
        ("noredux", "Decision: Bramble does NOT use Redux; app state lives in Zustand stores."),
        ("designer", "Bramble's designer is Camille Dubois; the Figma file is 'Bramble v3 - Main'."),
        ("push", "Bramble push notifications go through Expo Push, not straight to FCM or APNs."),
        ("v341", "Bramble 3.4.1 has been live on the App Store since 2024-06-03."),
        ("v340", "Bramble 3.4.0 was pulled from the App Store on 2024-05-29 because of a crash on login."),
    ],
)

PERSONAL = FactSet(
    "home",
    "agent-personal",
    None,
    "2024-07-01",
    [
        ("coffee", "User prefers dark roast coffee, black, no sugar."),
        ("samicoffee", "User's partner Sami prefers light roast coffee with oat milk."),
        ("noweekendmail", "User does NOT want emails on weekends."),
        ("digest", "User wants a daily summary email on weekdays at 7:30."),
        ("veg", "User is vegetarian but eats fish now and then."),
        ("cashew", "User is allergic to cashews; peanuts are fine."),
        ("zara", "User's daughter Zara was born on 2016-08-14."),
        ("idris", "User's son Idris was born on 2019-02-03."),
        ("mombday", "User's mother's birthday is November 2."),
        ("dentist", "User's dentist is Dr. Patel at Riverside Dental; check-ups every six months."),
        ("dentistnext", "User's next dentist appointment is on 2024-10-08 at 16:00."),
        ("car", "User drives a 2019 Toyota Prius, silver."),
        ("gym", "User goes to the gym Monday, Wednesday and Friday at 6:30 in the morning."),
        ("swim", "Since August, User swims on Fridays instead of going to the gym."),
        ("flights", "User prefers aisle seats on flights and never wants red-eye flights."),
        ("trains", "On trains User prefers a window seat in the quiet carriage."),
        ("alcohol", "User does not drink alcohol; suggest alcohol-free options for dinners."),
        ("restaurant", "User's favourite restaurant is Tamarind on Elm Street; ask for the window table."),
        ("reminders", "User wants meeting reminders 30 minutes ahead, not 10."),
        ("bookclub", "User's book club meets on the first Thursday of every month."),
        ("leila", "User's sister Leila lives in Toronto; they call every Sunday evening."),
        ("leilabday", "Leila's birthday is March 9."),
        ("nomornings", "No meetings before 10:00 on User's calendar."),
        ("coffee2", "user prefers dark roast coffee,  black, no sugar."),
        ("passport", "User's passport expires on 2027-04-30."),
        ("samipassport", "Sami's passport expires on 2025-01-15 and needs renewing before the winter trip."),
        ("flyer", "User collects miles with Lufthansa Miles & More."),
        ("pickup", "Zara's school pickup is at 15:15 on weekdays, except Wednesdays at 13:00."),
    ],
)

OPS = FactSet(
    "ops",
    "agent-ops",
    None,
    "2024-06-15",
    [
        ("vpn", "The company VPN is Tailscale; the exit node is in Frankfurt."),
        (
            "incapril",
            "Incident 2024-04-03: the shop was down for 47 minutes because the TLS certificate for shop.lindenhaus.de expired.",
        ),
        (
            "incjune",
            "Incident 2024-06-11: checkout failed for 2 hours because the disk on the Postgres primary filled up.",
        ),
        ("support", "Customer support hours are 08:00-18:00 CET, Monday to Friday. There is no weekend support."),
        ("wifi", "The office Wi-Fi password changes on the first Monday of each quarter."),
        ("bigapprove", "Invoices over 5,000 EUR need approval from Martina Keller (finance)."),
        ("smallapprove", "Invoices up to 5,000 EUR can be approved by any team lead."),
        (
            "backups",
            "Backups run nightly at 02:00 UTC to the Backblaze B2 bucket lindenhaus-backups and are kept for 30 days.",
        ),
        ("allhands", "The monthly all-hands is on the last Friday of the month at 15:00."),
        ("linear", "Decision 2024-05-06: we move from Jira to Linear by the end of Q3."),
        ("noslack", "The company does NOT use Slack; internal chat is Mattermost."),
        ("laptopdev", "New engineers get a ThinkPad T14 Gen 4 with 32 GB of RAM."),
        ("laptopdesign", "New designers get a 14-inch MacBook Pro with 32 GB of RAM instead of the ThinkPad."),
        ("sla", "The shop's uptime SLA is 99.9% per calendar month."),
        ("dns", "Domains are registered at INWX; DNS is hosted on Cloudflare."),
        ("hoe", "Tobias Brandt has been head of engineering since January 2024."),
        ("prevhoe", "Anke Vogel was head of engineering until she left in December 2023."),
        ("staging", "The staging shop is staging.lindenhaus.de, behind HTTP basic auth."),
        ("leave", "Parental leave: 16 weeks fully paid, for every parent."),
        ("fiscal", "The fiscal year starts on April 1."),
    ],
)

FACT_SETS = [DEV_GENERAL, DEV_ATLAS, DEV_BRAMBLE, PERSONAL, OPS]

# (owner, namespace or None, question, evidence ids, category)
AGENT_QUESTIONS: list[tuple[str, str | None, str, list[str], str]] = [
    (
        "agent-dev",
        None,
        "Am I allowed to push to the remote without checking with the user?",
        ["dev-nopush"],
        "agent-negation",
    ),
    ("agent-dev", None, "Which text editor does the user work in?", ["dev-editor"], "agent-fact"),
    ("agent-dev", None, "What's the IP of the Synology box?", ["dev-nas"], "agent-sibling"),
    ("agent-dev", None, "ssh address for the raspberry pi", ["dev-pi"], "agent-sibling"),
    ("agent-dev", None, "how should I word commit messages", ["dev-msgstyle"], "agent-fact"),
    ("agent-dev", None, "Should README.md get auto-formatted?", ["dev-nomd"], "agent-negation"),
    ("agent-dev", None, "Which test framework does the user like?", ["dev-pytest"], "agent-fact"),
    ("agent-dev", None, "what time zone is the user in", ["dev-tz"], "agent-fact"),
    ("agent-dev", None, "How much memory does the work MacBook have?", ["dev-laptop"], "agent-fact"),
    ("agent-dev", None, "how do I set an env var in the user's shell", ["dev-shell"], "agent-fact"),
    ("agent-dev", None, "Should I use SQLAlchemy for the new queries?", ["dev-sql"], "agent-negation"),
    ("agent-dev", "atlas", "port of the staging postgres", ["atlas-dbstaging"], "agent-sibling"),
    ("agent-dev", "atlas", "Which host is the production database on?", ["atlas-dbprod"], "agent-sibling"),
    ("agent-dev", "atlas", "Why did we stop using Celery?", ["atlas-dramatiq"], "agent-fact"),
    ("agent-dev", "atlas", "Can I ship a release on Friday afternoon?", ["atlas-deploydays"], "agent-negation"),
    ("agent-dev", "atlas", "How many requests per minute do free users get?", ["atlas-ratefree"], "agent-sibling"),
    ("agent-dev", "atlas", "rate limit for paying customers", ["atlas-ratepaid"], "agent-sibling"),
    ("agent-dev", "atlas", "Who should review changes to the tax code?", ["atlas-ownertax"], "agent-sibling"),
    ("agent-dev", "atlas", "Is proration turned on in prod?", ["atlas-proration"], "agent-negation"),
    ("agent-dev", "atlas", "Does Atlas accept PayPal payments?", ["atlas-paypal"], "agent-negation"),
    ("agent-dev", "atlas", "When does the monthly invoice run happen?", ["atlas-invoices"], "agent-fact"),
    ("agent-dev", "atlas", "Which Postgres version did we use before the May upgrade?", ["atlas-pg14"], "agent-update"),
    ("agent-dev", "atlas", "minimum coverage required by CI", ["atlas-coverage"], "agent-fact"),
    ("agent-dev", "atlas", "What's the secret env var for verifying Stripe events?", ["atlas-webhook"], "agent-fact"),
    ("agent-dev", "bramble", "What's the API URL for the staging app build?", ["bramble-apistaging"], "agent-sibling"),
    (
        "agent-dev",
        "bramble",
        "Which state management library should new screens use?",
        ["bramble-noredux"],
        "agent-negation",
    ),
    (
        "agent-dev",
        "bramble",
        "Which version of the app is currently on the App Store?",
        ["bramble-v341"],
        "agent-update",
    ),
    ("agent-dev", "bramble", "Why was the 3.4.0 release withdrawn?", ["bramble-v340"], "agent-update"),
    ("agent-dev", "bramble", "oldest Android version we support", ["bramble-minos"], "agent-fact"),
    ("agent-dev", "bramble", "Who does the design work for the mobile app?", ["bramble-designer"], "agent-fact"),
    ("agent-dev", "bramble", "How often do we push a beta to testers?", ["bramble-train"], "agent-fact"),
    ("agent-personal", None, "How does the user take their coffee?", ["home-coffee", "home-coffee2"], "agent-sibling"),
    (
        "agent-personal",
        None,
        "Is it OK to send the user an email on Saturday?",
        ["home-noweekendmail"],
        "agent-negation",
    ),
    ("agent-personal", None, "What time should the daily digest go out?", ["home-digest"], "agent-fact"),
    ("agent-personal", None, "Any food allergies I should know about?", ["home-cashew"], "agent-fact"),
    ("agent-personal", None, "When is Zara's birthday?", ["home-zara"], "agent-sibling"),
    ("agent-personal", None, "How old is the user's son?", ["home-idris"], "agent-sibling"),
    ("agent-personal", None, "When is the next dental check-up?", ["home-dentistnext"], "agent-fact"),
    ("agent-personal", None, "What does the user do on Fridays now?", ["home-swim"], "agent-update"),
    ("agent-personal", None, "Book a flight: which seat does the user want?", ["home-flights"], "agent-sibling"),
    ("agent-personal", None, "How does Sami like his coffee?", ["home-samicoffee"], "agent-sibling"),
    ("agent-personal", None, "When does the user's passport run out?", ["home-passport"], "agent-sibling"),
    ("agent-personal", None, "How long before a meeting should I remind the user?", ["home-reminders"], "agent-fact"),
    ("agent-personal", None, "Which city does the user's sister live in?", ["home-leila"], "agent-fact"),
    (
        "agent-personal",
        None,
        "What's the earliest I can schedule a call for the user?",
        ["home-nomornings"],
        "agent-negation",
    ),
    ("agent-personal", None, "Should I order wine for the dinner party?", ["home-alcohol"], "agent-negation"),
    ("agent-personal", None, "What time do I pick up Zara on Wednesday?", ["home-pickup"], "agent-fact"),
    ("agent-ops", None, "What caused the outage in June?", ["ops-incjune"], "agent-sibling"),
    ("agent-ops", None, "Why was the shop down in April?", ["ops-incapril"], "agent-sibling"),
    ("agent-ops", None, "Who has to sign off on a 12,000 EUR invoice?", ["ops-bigapprove"], "agent-sibling"),
    ("agent-ops", None, "Where are backups stored and how long do we keep them?", ["ops-backups"], "agent-fact"),
    ("agent-ops", None, "Can I message the team on Slack?", ["ops-noslack"], "agent-negation"),
    ("agent-ops", None, "What laptop should we order for the new designer?", ["ops-laptopdesign"], "agent-sibling"),
    ("agent-ops", None, "Who leads engineering now?", ["ops-hoe"], "agent-update"),
    ("agent-ops", None, "When is the all-hands meeting?", ["ops-allhands"], "agent-fact"),
    ("agent-ops", None, "Are we still going to be on Jira next year?", ["ops-linear"], "agent-update"),
    ("agent-ops", None, "Does anyone answer support tickets on Sunday?", ["ops-support"], "agent-negation"),
    ("agent-ops", None, "Where is DNS managed?", ["ops-dns"], "agent-fact"),
]


# --------------------------------------------------------------------------------------
# Build
# --------------------------------------------------------------------------------------

TURN_GAP = timedelta(seconds=50)
FACT_GAP = timedelta(hours=7, minutes=13)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def conversation_lines(conv: Conversation) -> tuple[list[dict], list[dict]]:
    memories: list[dict] = []
    by_label: dict[str, str] = {}
    for number, (start, turns) in enumerate(conv.sessions, start=1):
        began = datetime.strptime(start, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
        for index, turn in enumerate(turns, start=1):
            speaker, words = turn[0], turn[1]
            if '"' in words:
                raise ValueError(f"{conv.key}: use single quotes inside turns: {words!r}")
            memory_id = f"{conv.key}-s{number}-t{index:02d}"
            if len(turn) > 2:
                if turn[2] in by_label:
                    raise ValueError(f"{conv.key}: label {turn[2]!r} used twice")
                by_label[turn[2]] = memory_id
            memories.append(
                {
                    "type": "memory",
                    "id": memory_id,
                    "owner": conv.owner,
                    "text": f'{conv.speakers[speaker]} said, "{words}"',
                    "occurred_at": _iso(began + TURN_GAP * (index - 1)),
                }
            )
    queries = []
    for number, (question, labels, category) in enumerate(conv.questions, start=1):
        missing = [label for label in labels if label not in by_label]
        if missing:
            raise ValueError(f"{conv.key}: question {question!r} cites unknown labels {missing}")
        queries.append(
            {
                "type": "query",
                "id": f"{conv.key}-q{number:02d}",
                "owner": conv.owner,
                "query": question,
                "evidence": [by_label[label] for label in labels],
                "category": category,
            }
        )
    return memories, queries


def fact_lines(facts: FactSet) -> list[dict]:
    moment = datetime.strptime(facts.first_day, "%Y-%m-%d").replace(hour=9, tzinfo=timezone.utc)
    lines = []
    labels = set()
    for label, text in facts.facts:
        if label in labels:
            raise ValueError(f"{facts.prefix}: label {label!r} used twice")
        labels.add(label)
        line = {"type": "memory", "id": f"{facts.prefix}-{label}", "owner": facts.owner, "text": text}
        if facts.namespace:
            line["namespace"] = facts.namespace
        line["occurred_at"] = _iso(moment)
        moment += FACT_GAP
        lines.append(line)
    return lines


def build() -> list[dict]:
    memories: list[dict] = []
    queries: list[dict] = []
    for conv in CONVERSATIONS:
        conv_memories, conv_queries = conversation_lines(conv)
        memories += conv_memories
        queries += conv_queries
    for facts in FACT_SETS:
        memories += fact_lines(facts)
    known = {m["id"]: m for m in memories}
    for number, (owner, namespace, question, evidence, category) in enumerate(AGENT_QUESTIONS, start=1):
        for item in evidence:
            memory = known.get(item)
            if memory is None or memory["owner"] != owner or memory.get("namespace") != namespace:
                raise ValueError(f"agent question {question!r}: evidence {item!r} is not in {owner}/{namespace}")
        line = {
            "type": "query",
            "id": f"a-q{number:02d}",
            "owner": owner,
            "query": question,
            "evidence": evidence,
            "category": category,
        }
        if namespace:
            line["namespace"] = namespace
        queries.append(line)
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
    lines = build()
    memories = [line for line in lines if line["type"] == "memory"]
    queries = [line for line in lines if line["type"] == "query"]
    conv_m = sum(1 for m in memories if m["owner"].startswith("conv-"))
    conv_q = sum(1 for q in queries if q["owner"].startswith("conv-"))
    owners = len({m["owner"] for m in memories})
    print(
        f"wrote {OUT}: {len(memories)} memories ({conv_m} conversational), {owners} owners, "
        f"{len(queries)} queries ({conv_q} conversational)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
