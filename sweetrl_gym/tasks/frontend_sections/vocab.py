"""Word lists: kinds of business and the copy their pages are written from.

Every list is a tuple (never a set: order must be stable for seeded draws). Business
names start with a word from :data:`NAME_STEMS` or :data:`FIRST_NAMES`; each split
gets its own share of those words (:func:`words_for_split`), so no train page can
equal a test page. Nothing here names a colour.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

__all__ = [
    "BUSINESSES",
    "FIRST_NAMES",
    "GENERAL_WISHES",
    "LAST_NAMES",
    "NAME_STEMS",
    "PEOPLE",
    "SECTION_WISHES",
    "STREETS",
    "Business",
    "words_for_split",
]

NAME_STEMS = tuple(
    """Sunrise Maple Harbor Cedar Summit Willow Atlas Nova Orbit Pine River Bright North Oak
    Meadow Aspen Beacon Birch Bloom Brook Canyon Clover Coastal Comet Crest Delta Echo Ember
    Fable Falcon Fern Field Fjord Forge Frost Grove Haven Hearth Horizon Hudson
    Juniper Kestrel Lantern Laurel Legacy Lighthouse Linden Lotus Lumen Lunar Magnolia Marble
    Mesa Midtown Mosaic Nimbus Nomad Oasis Paper Parkside Peak Pebble Pioneer Prairie Quarry
    Quill Radiant Ridge Riverside Rocket Sequoia Shore Sierra Solstice Sparrow Spruce
    Starlight Sterling Tandem Terra Thistle Thrive Tidal Timber Trail Tulip Union Upland
    Valley Vantage Vista Wander Wave Wildflower Wren Zenith Alder Anchor Arbor Bayside Cobble
    Compass Cove Dawn Driftwood Elm Everest Foxglove Gable Glacier Granite Harvest Highland
    Kindred Lark Mariner Morning Nest Northwind Orchard Paragon Pillar Plume Poppy Quest
    Rooftop Shepherd Signal Spark Springfield Square Sunny Swift Tango Tinker Wayfarer
    Westward Windmill""".split()
)
FIRST_NAMES = tuple(
    """Maya Liam Noah Ava Ethan Zoe Lucas Mia Owen Aria Leo Nora Ezra Iris Caleb Luna Julian
    Elena Felix Clara Hugo Ines Jonah Kira Marco Nadia Oscar Priya Rafael Sofia Theo Uma
    Victor Wanda Yusuf Zara Amir Bea Dario Esme Farah Gideon Hana Ivan Kofi Lena Mateo Nico
    Olga Pavel Quinn Sami Tomas Vera Xavier Yara Anya Bruno Celine Dmitri""".split()
)
LAST_NAMES = tuple(
    """Okafor Lindqvist Moreau Tanaka Alvarez Brennan Castillo Duarte Eriksen Fischer Haddad
    Ibsen Jansen Kowalski Larsen Mendez Nakamura Oyelaran Petrov Quintero Rossi Silva
    Takahashi Ueda Varga Weber Yilmaz Zhou Adeyemi Bianchi""".split()
)
PEOPLE = tuple(
    """Jordan P.|Sam K.|Alex R.|Taylor M.|Morgan L.|Casey D.|Riley S.|Jamie T.|Avery H.|
    Dana W.|Chris N.|Robin F.|Pat O.|Kim B.|Lee J.|Charlie V.""".replace("\n", "").split("|")
)
STREETS = tuple("Main Market Church Mill Park High Station Harbor Bridge Elm Union Canal".split())

_TEST_EVERY = 8  # every 8th name word belongs to the test split


@functools.lru_cache(maxsize=16)
def words_for_split(words: tuple[str, ...], split: str) -> tuple[str, ...]:
    """Return the share of ``words`` a split may start names with (disjoint across splits)."""
    if split == "test":
        return words[::_TEST_EVERY]
    return tuple(w for i, w in enumerate(words) if i % _TEST_EVERY)


def _items(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split("|") if part.strip())


def _pairs(text: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for item in _items(text):
        head, _, tail = item.partition(":: ")
        pairs.append((head.strip(), tail.strip()))
    return tuple(pairs)


def _nouns(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``"noun=Ending/Ending|noun"`` -> ((noun, (endings...)), (noun, ()))."""
    nouns = []
    for item in _items(text):
        noun, _, endings = item.partition("=")
        nouns.append((noun, tuple(e for e in endings.split("/") if e)))
    return tuple(nouns)


@dataclass(frozen=True)
class Business:
    """A kind of business and the copy its pages draw from.

    Attributes:
        family: Family name recorded on tasks (``"bakery"``).
        nouns: What the business is, as the user says it (``"bakery"``), each with the
            name endings that fit it (empty: use ``suffixes``).
        suffixes: Default name endings (``"Bakehouse"``).
        person: Whether names are a person's (portfolios) rather than a brand's.
        taglines: Hero headings.
        subtitles: Hero sub-headings.
        offerings: (title, blurb) for feature cards.
        plans: Plan (or ticket, tier) names, cheapest first.
        prices: Lowest and highest price, in dollars.
        unit: Price suffix (``"/month"``, or ``""``).
        perks: Plan bullet points.
        stats: Labels of headline numbers.
        actions: Button labels.
        links: Navigation link labels.
        quotes: Customer quotes.
        faqs: (question, answer) pairs.
        gallery: Captions of gallery tiles.
        preferred: Middle sections this business uses more often.

    """

    family: str
    nouns: tuple[tuple[str, tuple[str, ...]], ...]
    suffixes: tuple[str, ...]
    person: bool
    taglines: tuple[str, ...]
    subtitles: tuple[str, ...]
    offerings: tuple[tuple[str, str], ...]
    plans: tuple[str, ...]
    prices: tuple[int, int]
    unit: str
    perks: tuple[str, ...]
    stats: tuple[str, ...]
    actions: tuple[str, ...]
    links: tuple[str, ...]
    quotes: tuple[str, ...]
    faqs: tuple[tuple[str, str], ...]
    gallery: tuple[str, ...]
    preferred: tuple[str, ...]


def _business(**fields: str | bool | tuple[int, int]) -> Business:
    data: dict[str, object] = {}
    for key, value in fields.items():
        if key in ("offerings", "faqs"):
            data[key] = _pairs(value)  # type: ignore[arg-type]
        elif key == "nouns":
            data[key] = _nouns(value)  # type: ignore[arg-type]
        elif key in ("family", "unit", "person", "prices"):
            data[key] = value
        else:
            data[key] = _items(value)  # type: ignore[arg-type]
    return Business(**data)  # type: ignore[arg-type]


BUSINESSES: tuple[Business, ...] = (
    _business(
        family="bakery",
        nouns="bakery|bread shop|neighborhood bakery|pastry shop",
        suffixes="Bakery|Breads|Bakehouse|Ovens|Pastries",
        person=False,
        taglines="Baked fresh every morning|Bread worth waking up for|Small batches, big flavor|"
        "From our oven to your table",
        subtitles="Sourdough, pastries and cakes made by hand with local flour.|"
        "Stop by for a warm loaf or order a cake for your next celebration.|"
        "A neighborhood bakery with the coffee on and the ovens warm.",
        offerings="Sourdough loaves:: Slow-fermented for a crackling crust and a tender crumb.|"
        "Croissants:: Buttery layers, folded by hand every night.|"
        "Celebration cakes:: Custom cakes for birthdays, weddings and everything between.|"
        "Morning coffee:: Locally roasted beans to go with your pastry.|"
        "Gluten-free range:: A growing selection baked in a dedicated space.|"
        "Wholesale orders:: Fresh bread delivered to cafes and restaurants.|"
        "Seasonal pies:: Fruit pies that change with the farmers market.|"
        "Baking classes:: Learn to shape your own loaf on weekend mornings.",
        plans="Weekly Loaf|Family Box|Baker's Dozen",
        prices=(12, 60),
        unit="/week",
        perks="One fresh loaf a week|Free pastry on Fridays|Skip any week|Pick up or delivery|"
        "Members-only specials|10% off cakes",
        stats="Loaves baked daily|Years in the neighborhood|Happy regulars|Recipes perfected",
        actions="Order now|Visit us|See the menu|Pre-order a cake",
        links="Menu|Cakes|Wholesale|About|Visit",
        quotes="The best sourdough in town, hands down.|"
        "Their croissants are worth the early alarm.|"
        "They made our wedding cake and everyone is still talking about it.|"
        "My Saturday morning ritual starts here.",
        faqs="Do you take custom cake orders?:: Yes, order three days ahead and we design it "
        "with you.|Do you have gluten-free options?:: We bake a gluten-free range every day.|"
        "Can I order for delivery?:: We deliver within five miles on weekday mornings.|"
        "When do you open?:: Every day from seven, until the bread runs out.",
        gallery="Sourdough|Croissants|Cakes|Pies|Cookies|Our ovens|Morning rush|The counter",
        preferred="features|gallery|contact|testimonials",
    ),
    _business(
        family="restaurant",
        nouns="restaurant|cafe=Cafe/Coffee/Kitchen|bistro=Bistro/Table/Kitchen|"
        "pizzeria=Pizza/Pizzeria/Kitchen|ramen bar=Ramen/Noodle Bar/Kitchen|family restaurant",
        suffixes="Kitchen|Bistro|Cafe|Table|Eatery|Grill",
        person=False,
        taglines="Good food, good company|Seasonal plates, made with care|"
        "Your new favorite table|Fresh from the market to your plate",
        subtitles="Open for lunch and dinner, with a menu that changes with the seasons.|"
        "Cooking with local produce in a relaxed, friendly room.|"
        "Book a table, order takeaway or join us for brunch.",
        offerings="Seasonal menu:: Dishes built around what local farms bring us each week.|"
        "Weekend brunch:: Pancakes, eggs and strong coffee from nine until three.|"
        "Private dining:: A quiet room for birthdays, rehearsals and team dinners.|"
        "Takeaway:: Order ahead and pick up your meal still hot.|"
        "Catering:: Our kitchen comes to your office or event.|"
        "Wine list:: Small producers chosen to go with the food.|"
        "Kids menu:: Smaller plates that young eaters actually finish.|"
        "Cooking nights:: Learn a dish from our chefs once a month.",
        plans="Lunch Set|Tasting Menu|Chef's Table",
        prices=(18, 120),
        unit=" per person",
        perks="Three courses|Paired drinks available|Seasonal ingredients|"
        "Vegetarian option|Reserved seating|Dessert included",
        stats="Dishes on the menu|Local farms we work with|Tables served weekly|Years open",
        actions="Book a table|View the menu|Order takeaway|Reserve now",
        links="Menu|Reservations|Events|About|Contact",
        quotes="Every dish was a small surprise.|The brunch alone is worth the trip.|"
        "Warm service and the best pasta in the city.|We celebrate every anniversary here.",
        faqs="Do you take reservations?:: Yes, online or by phone, up to a month ahead.|"
        "Are there vegetarian dishes?:: Every course has a vegetarian option.|"
        "Can you host a private event?:: Our back room seats up to thirty guests.|"
        "Is there parking?:: There is a public lot right behind the building.",
        gallery="The dining room|Our chefs|Brunch|Desserts|The bar|Fresh pasta|Terrace",
        preferred="features|gallery|testimonials|contact",
    ),
    _business(
        family="saas",
        nouns="software startup|project management app|analytics tool|invoicing platform|"
        "scheduling app|team chat app",
        suffixes="Labs|HQ|App|Cloud|Works|Base",
        person=False,
        taglines="Work smarter, not longer|All your projects in one place|"
        "The simplest way to run your team|Ship faster with less busywork",
        subtitles="Plan, track and deliver without the spreadsheet chaos.|"
        "Set up in minutes and connect the tools you already use.|"
        "Trusted by small teams and growing companies alike.",
        offerings="Real-time dashboards:: See every project's status at a glance.|"
        "Integrations:: Connect your calendar, email and storage in one click.|"
        "Automations:: Let routine tasks run themselves.|"
        "Secure by default:: Encryption and single sign-on for every plan.|"
        "Mobile apps:: Keep up with your work from anywhere.|"
        "Reports:: Export clear summaries for clients and managers.|"
        "Team spaces:: Give every group its own organized workspace.|"
        "Friendly support:: Real people answer within the hour.",
        plans="Starter|Pro|Team|Enterprise",
        prices=(9, 99),
        unit="/month",
        perks="Unlimited projects|Up to 10 users|Priority support|Custom reports|"
        "Single sign-on|API access|Daily backups",
        stats="Active users|Uptime|Countries|Tasks completed",
        actions="Start free trial|Get started|Book a demo|Sign up free",
        links="Features|Pricing|Customers|Docs|Log in",
        quotes="We cut our weekly meetings in half.|Setup took ten minutes, really.|"
        "Finally a tool the whole team actually uses.|Support is fast and genuinely helpful.",
        faqs="Is there a free trial?:: Every plan starts with fourteen days free.|"
        "Can I cancel anytime?:: Yes, there are no contracts or cancellation fees.|"
        "Is my data secure?:: Data is encrypted in transit and at rest.|"
        "Do you offer discounts?:: Nonprofits and schools get half off.",
        gallery="Dashboard|Reports|Calendar|Mobile|Integrations|Settings",
        preferred="features|pricing|stats|cta|faq",
    ),
    _business(
        family="portfolio",
        nouns="photographer|illustrator|product designer|architect|freelance web developer|"
        "ceramic artist",
        suffixes="Studio|Design|Photography|Works",
        person=True,
        taglines="Design with purpose|Telling stories through images|"
        "Thoughtful work for thoughtful brands|Making ideas visible",
        subtitles="Independent work for clients who care about the details.|"
        "Available for commissions and collaborations.|"
        "A selection of recent projects, big and small.",
        offerings="Brand identity:: Logos and visual systems that last.|"
        "Editorial work:: Images and layouts for magazines and books.|"
        "Web design:: Sites that are simple to use and easy to update.|"
        "Portraits:: Natural, relaxed portraits for people and teams.|"
        "Workshops:: Hands-on sessions for teams and students.|"
        "Consulting:: A second pair of eyes on your next launch.|"
        "Packaging:: Boxes and labels that stand out on the shelf.|"
        "Illustration:: Custom drawings for campaigns and products.",
        plans="Mini Session|Half Day|Full Project",
        prices=(150, 2400),
        unit="",
        perks="Initial consultation|Two rounds of revisions|All source files|"
        "Delivery within two weeks|Usage rights included|Print-ready files",
        stats="Projects delivered|Happy clients|Years of experience|Awards",
        actions="See my work|Hire me|Get in touch|Download resume",
        links="Work|About|Services|Journal|Contact",
        quotes="A joy to work with from start to finish.|They understood our brand instantly.|"
        "Delivered early and beyond what we asked for.|We keep coming back for every launch.",
        faqs="How do projects start?:: With a short call to understand your goals.|"
        "What is your availability?:: I book about a month ahead.|"
        "Do you work remotely?:: Yes, with clients all over the world.|"
        "How is payment handled?:: Half up front, half on delivery.",
        gallery="Recent project|Brand work|Editorial|Packaging|Portraits|Sketches|Exhibition",
        preferred="gallery|features|testimonials|contact",
    ),
    _business(
        family="agency",
        nouns="marketing agency|branding studio|web design agency|consulting firm|"
        "social media agency",
        suffixes="Creative|Collective|Partners|Agency|Group|Digital",
        person=False,
        taglines="We help brands grow|Strategy, design and results|"
        "Ideas that move people|Your growth partner",
        subtitles="A small team of strategists, designers and writers.|"
        "We turn good businesses into well-known ones.|"
        "From first sketch to launch day and beyond.",
        offerings="Brand strategy:: Find the story that sets you apart.|"
        "Web design:: Fast, accessible sites that convert.|"
        "Content:: Articles, videos and posts your audience wants.|"
        "Advertising:: Campaigns measured by results, not impressions.|"
        "Social media:: A steady voice on every channel.|"
        "Analytics:: Know what works and do more of it.|"
        "Email marketing:: Newsletters people look forward to.|"
        "Workshops:: Get your whole team aligned in a day.",
        plans="Launch|Grow|Scale",
        prices=(900, 9000),
        unit="/month",
        perks="Dedicated strategist|Monthly report|Two campaigns a month|Design support|"
        "Quarterly workshop|Ad management",
        stats="Clients served|Campaigns launched|Average growth|Team members",
        actions="Start a project|Book a call|See our work|Get a quote",
        links="Services|Work|Team|Insights|Contact",
        quotes="Our sign-ups tripled in one quarter.|They feel like part of our team.|"
        "Clear strategy and beautiful work.|The best decision we made this year.",
        faqs="What size clients do you work with?:: Mostly small and mid-sized companies.|"
        "How long is a typical project?:: Six to twelve weeks from kickoff.|"
        "Do you work with startups?:: Yes, we have a package made for early teams.|"
        "Where are you based?:: We are remote, with a small office downtown.",
        gallery="Case study|Campaign|Rebrand|Website|Launch|Workshop",
        preferred="features|stats|testimonials|cta",
    ),
    _business(
        family="fitness",
        nouns="gym=Gym/Fitness/Strength|yoga studio=Yoga/Yoga Studio|"
        "climbing gym=Climbing/Bouldering|personal training business=Fitness/Strength/Training|"
        "pilates studio=Pilates/Movement|boxing club=Boxing/Boxing Club",
        suffixes="Fitness|Yoga|Athletics|Gym|Strength|Movement",
        person=False,
        taglines="Stronger every day|Find your flow|Train with purpose|Move more, feel better",
        subtitles="Classes for every level, coaches who know your name.|"
        "Your first class is on us.|"
        "Open early and late so training fits your day.",
        offerings="Group classes:: Over forty classes a week, from gentle to intense.|"
        "Personal training:: One-on-one coaching built around your goals.|"
        "Open gym:: Equipment and space whenever you want it.|"
        "Beginner program:: Six weeks to learn the basics with confidence.|"
        "Recovery room:: Stretching, rollers and a quiet space to reset.|"
        "Nutrition coaching:: Simple habits that support your training.|"
        "Kids classes:: Fun, safe movement for young athletes.|"
        "Online classes:: Train with us from your living room.",
        plans="Drop-in|Monthly|Unlimited",
        prices=(15, 150),
        unit="/month",
        perks="All group classes|Free towel service|One coaching session|Guest passes|"
        "Locker included|Online classes",
        stats="Weekly classes|Members|Certified coaches|Years open",
        actions="Book a class|Join today|Try a free class|See the schedule",
        links="Classes|Schedule|Coaches|Pricing|Join",
        quotes="I have never stuck with a gym this long.|The coaches make every class fun.|"
        "Friendly people, great energy.|I feel stronger than I did at twenty.",
        faqs="Do I need experience?:: No, every class has options for beginners.|"
        "What should I bring?:: Water, comfortable clothes and a good attitude.|"
        "Can I freeze my membership?:: Yes, for up to two months a year.|"
        "Is there parking?:: Free parking is available right outside.",
        gallery="Studio|Weights|Classes|Outdoor training|Recovery|Community",
        preferred="features|pricing|testimonials|cta",
    ),
    _business(
        family="event",
        nouns="tech conference=Summit/Conference/Days|music festival=Fest/Festival/Live/Weekend|"
        "food festival=Food Fest/Festival/Weekend|design summit=Summit/Days/Conference|"
        "book fair=Book Fair/Festival/Days|charity run=Run/Dash/Challenge",
        suffixes="Fest|Summit|Conference|Festival|Weekend|Days",
        person=False,
        taglines="Two days of ideas and music|Join thousands this summer|"
        "Where the community meets|The event of the season",
        subtitles="Talks, workshops and performances in the heart of the city.|"
        "Tickets are limited, so reserve yours early.|"
        "Bring friends, bring family, bring your curiosity.",
        offerings="Keynotes:: Inspiring talks from people shaping the field.|"
        "Workshops:: Small hands-on sessions led by experts.|"
        "Live music:: Performances on two stages every evening.|"
        "Food market:: Local vendors serving dishes from around the world.|"
        "Networking:: Meet people who share your interests.|"
        "Family area:: Activities and quiet spaces for kids.|"
        "After party:: Celebrate the weekend with everyone.|"
        "Exhibitors:: Discover new products and projects.",
        plans="Day Pass|Weekend Pass|VIP Pass",
        prices=(25, 400),
        unit="",
        perks="Entry to all talks|Lunch included|Workshop seat|Front row seating|"
        "Meet the speakers|Event merchandise",
        stats="Speakers|Attendees|Workshops|Stages",
        actions="Get tickets|See the program|Register now|Become a sponsor",
        links="Program|Speakers|Tickets|Venue|Sponsors",
        quotes="The best weekend of my year.|I left with pages of notes and new friends.|"
        "Perfectly organized from start to finish.|I already bought next year's ticket.",
        faqs="Where is the venue?:: In the old market hall, five minutes from the station.|"
        "Can I get a refund?:: Tickets are refundable until two weeks before.|"
        "Is there a student discount?:: Yes, students get thirty percent off.|"
        "Is the venue accessible?:: Every stage and area is step-free.",
        gallery="Main stage|Workshops|Crowd|Food market|Speakers|Night",
        preferred="features|stats|pricing|faq",
    ),
    _business(
        family="nonprofit",
        nouns="charity|animal shelter=Animal Rescue/Shelter/Rescue|"
        "community garden=Community Garden/Garden Project/Growers|"
        "literacy nonprofit=Reading Project/Literacy Project/Readers|"
        "food bank=Food Bank/Pantry/Food Project|youth mentoring program=Mentors/Youth Project",
        suffixes="Foundation|Project|Alliance|Trust|Initiative|Network",
        person=False,
        taglines="Together we can do more|Every bit of help counts|"
        "Building a kinder community|Join us in making a difference",
        subtitles="Volunteers and donors make everything we do possible.|"
        "Local people helping local people since we started.|"
        "See where your support goes and how to get involved.",
        offerings="Volunteer:: Give an hour or a weekend, every bit helps.|"
        "Donate:: Every gift goes straight to our programs.|"
        "Programs:: Year-round support for the people who need it.|"
        "Partnerships:: We work with schools, shops and local groups.|"
        "Events:: Community days, drives and fundraisers.|"
        "Advocacy:: Raising our voice on the issues that matter.|"
        "Education:: Workshops that build skills and confidence.|"
        "Transparency:: Yearly reports on every dollar spent.",
        plans="Friend|Supporter|Champion",
        prices=(5, 100),
        unit="/month",
        perks="Quarterly newsletter|Annual impact report|Invitation to events|"
        "Your name on our wall|Tax-deductible|Volunteer day",
        stats="Volunteers|Families helped|Meals served|Years of service",
        actions="Donate now|Volunteer|Get involved|Learn more",
        links="About|Programs|Volunteer|Donate|Contact",
        quotes="Volunteering here changed my whole year.|They were there when we needed it most.|"
        "A small team doing remarkable work.|I give every month and see the difference.",
        faqs="Is my donation tax-deductible?:: Yes, you receive a receipt for every gift.|"
        "How can I volunteer?:: Sign up online and join an orientation session.|"
        "Where does the money go?:: Most of every dollar funds programs directly.|"
        "Can companies partner with you?:: Yes, we welcome local business partners.",
        gallery="Volunteers|Community day|Our garden|Workshops|Food drive|Team",
        preferred="stats|features|cta|testimonials",
    ),
    _business(
        family="shop",
        nouns="candle shop=Candle Co./Goods/Makers|ceramics shop=Ceramics/Pottery/Goods|"
        "plant shop=Plants/Botanicals/Plant Shop|bookshop=Books/Bookshop/Reading Room|"
        "coffee roastery=Coffee/Roasters/Coffee Co.|skincare brand=Skincare/Botanicals/Goods",
        suffixes="Goods|Supply Co.|Market|Shop|Trading|Makers",
        person=False,
        taglines="Made by hand, made to last|Small things, made well|"
        "Thoughtful goods for everyday life|Shop small, live well",
        subtitles="Everything is made in small batches in our own workshop.|"
        "Free shipping on orders over fifty dollars.|"
        "Gifts, everyday favorites and limited runs.",
        offerings="Handmade:: Every piece is made by a person, not a machine.|"
        "Free shipping:: On all orders over fifty dollars.|"
        "Gift wrapping:: Add a note and we will wrap it for you.|"
        "Easy returns:: Thirty days to change your mind.|"
        "Subscriptions:: Get new favorites delivered each month.|"
        "Local pickup:: Collect your order from our studio.|"
        "Sustainable:: Recycled packaging and natural materials.|"
        "Gift cards:: Let them pick something they love.",
        plans="Monthly Box|Seasonal Box|Collector Box",
        prices=(20, 120),
        unit="/box",
        perks="Free shipping|Members-only products|Early access to drops|Cancel anytime|"
        "Gift option|Surprise extra",
        stats="Orders shipped|Five-star reviews|Products|Makers",
        actions="Shop now|Browse the collection|Join the box|Find a gift",
        links="Shop|New|Gifts|About|Journal",
        quotes="Beautifully made and packed with care.|My go-to place for gifts.|"
        "It arrived quickly and looks even better in person.|Quality you can feel.",
        faqs="How long does shipping take?:: Orders ship within two working days.|"
        "Do you ship abroad?:: Yes, to most countries.|"
        "Can I return an item?:: Returns are free within thirty days.|"
        "Do you sell wholesale?:: Yes, write to us for our wholesale catalog.",
        gallery="New arrivals|Bestsellers|Workshop|Gift sets|Limited edition|Packaging",
        preferred="features|gallery|testimonials|pricing",
    ),
    _business(
        family="education",
        nouns="online coding school=Code Academy/Coding School/Academy|"
        "tutoring service=Tutors/Tutoring/Learning|language school=Languages/Language School|"
        "music school=Music School/Music Academy|driving school=Driving School/Driving Academy|"
        "art school=Art School/Art Studio",
        suffixes="Academy|Learning|School|Institute|Tutors|Classroom",
        person=False,
        taglines="Learn at your own pace|Skills that open doors|"
        "Teachers who believe in you|Start learning today",
        subtitles="Small classes, patient teachers and lessons that stick.|"
        "Courses for beginners and those ready for the next step.|"
        "Study online or in person, mornings or evenings.",
        offerings="Live lessons:: Small groups with a real teacher.|"
        "Self-paced courses:: Learn whenever it suits you.|"
        "One-on-one tutoring:: Focused help where you need it most.|"
        "Certificates:: Show what you have learned.|"
        "Practice projects:: Apply every lesson to something real.|"
        "Study groups:: Learn alongside people at your level.|"
        "Progress tracking:: See how far you have come.|"
        "Career support:: Advice on the next step after the course.",
        plans="Basic|Standard|Premium",
        prices=(19, 299),
        unit="/month",
        perks="All recorded lessons|Weekly live class|Personal feedback|Certificate|"
        "Practice exercises|Mentor sessions",
        stats="Students taught|Courses|Teachers|Completion rate",
        actions="Enroll now|Book a trial lesson|Browse courses|Start learning",
        links="Courses|Teachers|Pricing|Blog|Sign in",
        quotes="I finally understand it, thanks to my teacher.|Flexible and encouraging.|"
        "My kids ask to go to class.|Worth every minute.",
        faqs="Do I need any experience?:: No, every course starts from the basics.|"
        "Can I switch courses?:: Yes, at any point during your first month.|"
        "Are lessons recorded?:: Every live lesson is recorded for later.|"
        "Do you offer group discounts?:: Yes, for groups of three or more.",
        gallery="Classroom|Students|Workshop|Graduation|Study space|Projects",
        preferred="features|pricing|testimonials|faq",
    ),
    _business(
        family="travel",
        nouns="tour company=Tours/Expeditions/Journeys|travel agency=Travel/Journeys|"
        "boutique hotel=Hotel/House/Inn|campsite=Camping/Campground|mountain lodge=Lodge/Chalet|"
        "sailing school=Sailing/Sailing School",
        suffixes="Travel|Tours|Expeditions|Retreats|Journeys|Lodge",
        person=False,
        taglines="Adventures worth remembering|Your next escape starts here|"
        "Travel slower, see more|Find your place in the world",
        subtitles="Small-group trips planned by people who love to travel.|"
        "Quiet rooms, big views and breakfast on the terrace.|"
        "Plan with us and leave the details to us.",
        offerings="Guided tours:: Local guides who know every hidden corner.|"
        "Custom trips:: Tell us your dream and we plan the route.|"
        "Family friendly:: Trips and rooms that work for all ages.|"
        "Outdoor adventures:: Hiking, kayaking and cycling days.|"
        "Comfortable stays:: Hand-picked places to rest each night.|"
        "All inclusive:: Meals, transport and tickets sorted.|"
        "Flexible booking:: Change your dates without fees.|"
        "Group travel:: Special rates for clubs and teams.",
        plans="Weekend|One Week|Grand Tour",
        prices=(199, 3200),
        unit=" per person",
        perks="Accommodation|Daily breakfast|Local guide|Airport transfer|"
        "Travel insurance|Small groups",
        stats="Trips run|Destinations|Happy travelers|Years of experience",
        actions="Plan my trip|See destinations|Book now|Check availability",
        links="Trips|Destinations|Stays|About|Book",
        quotes="Every day was better than the last.|They thought of everything.|"
        "The most relaxing week we have had in years.|Already planning our next trip with them.",
        faqs="How big are the groups?:: Never more than twelve travelers.|"
        "Can I change my dates?:: Yes, free of charge up to a month before.|"
        "Are flights included?:: Flights are not included, transfers are.|"
        "Is it suitable for children?:: Many trips welcome kids from six up.",
        gallery="Mountains|Coastline|Old town|Our rooms|Trails|Sunset dinners",
        preferred="gallery|features|testimonials|pricing",
    ),
    _business(
        family="clinic",
        nouns="dental clinic=Dental/Dentistry/Smiles|veterinary clinic=Vets/Animal Clinic/Pet Care|"
        "physiotherapy practice=Physio/Physiotherapy/Movement Clinic|"
        "family practice=Health/Medical/Family Practice|eye clinic=Eye Care/Optometry/Vision",
        suffixes="Dental|Health|Clinic|Care|Wellness|Medical",
        person=False,
        taglines="Care you can count on|Healthy smiles for the whole family|"
        "Feel better, move better|Your health, our priority",
        subtitles="Friendly experts, short waiting times and modern equipment.|"
        "New patients welcome, same-week appointments available.|"
        "Gentle care for every member of the family.",
        offerings="Checkups:: Regular visits that catch problems early.|"
        "Emergency care:: Same-day appointments when it cannot wait.|"
        "Family care:: Patients of every age, from toddlers up.|"
        "Modern equipment:: Faster, more comfortable treatment.|"
        "Online booking:: Pick a time that suits you in a minute.|"
        "Insurance:: We work with most major insurers.|"
        "Follow-up:: We check in to make sure you are doing well.|"
        "Prevention:: Advice that keeps you healthy between visits.",
        plans="Essential|Family|Complete",
        prices=(15, 89),
        unit="/month",
        perks="Two checkups a year|Discounted treatment|No waiting list|Emergency line|"
        "Covers the whole family|Free first visit",
        stats="Patients cared for|Specialists|Years of practice|Five-star reviews",
        actions="Book an appointment|Call us|Meet the team|Register",
        links="Services|Team|Patients|Insurance|Contact",
        quotes="The kindest team I have ever visited.|No more dreading appointments.|"
        "They saw me the same day.|Clear explanations and gentle care.",
        faqs="Are you accepting new patients?:: Yes, register online or by phone.|"
        "Do you take insurance?:: We work with most major insurers.|"
        "What if I need urgent care?:: Call us and we will fit you in the same day.|"
        "Where can I park?:: There is free parking behind the building.",
        gallery="Reception|Treatment room|Our team|Waiting area|Equipment|Garden",
        preferred="features|faq|contact|testimonials",
    ),
    _business(
        family="realestate",
        nouns="real estate agency=Realty/Real Estate/Estates|"
        "property management company=Properties/Property Management|"
        "home builder=Homes/Builders/Construction|vacation rental business=Rentals/Stays/Getaways",
        suffixes="Realty|Homes|Properties|Living|Estates|Rentals",
        person=False,
        taglines="Find the place you call home|Homes for every chapter|"
        "Buying and selling made simple|Your move starts here",
        subtitles="Local agents who know every street and every school.|"
        "Honest advice, fair prices and no surprises.|"
        "Browse homes, book a viewing or ask for a valuation.",
        offerings="Buying:: We find homes that fit your life and budget.|"
        "Selling:: A fair price and a quick, stress-free sale.|"
        "Renting:: Quality rentals with responsive management.|"
        "Valuations:: Know what your home is worth today.|"
        "New builds:: Modern homes built to last.|"
        "Property management:: We handle tenants, repairs and rent.|"
        "Mortgage advice:: Partners who find you the right loan.|"
        "Virtual tours:: View homes from your sofa.",
        plans="Basic Listing|Full Service|Premium",
        prices=(499, 4900),
        unit="",
        perks="Professional photos|Online listing|Open house|Negotiation support|"
        "Dedicated agent|Legal paperwork",
        stats="Homes sold|Average days on market|Local agents|Client rating",
        actions="Browse homes|Book a viewing|Get a valuation|Talk to an agent",
        links="Buy|Sell|Rent|Agents|Contact",
        quotes="We found our dream home in two weeks.|They sold our house above asking.|"
        "Patient, honest and always available.|The smoothest move we have ever made.",
        faqs="How much does selling cost?:: A flat fee, agreed before we start.|"
        "How long does a sale take?:: Most homes sell within six weeks.|"
        "Do you manage rentals?:: Yes, from finding tenants to repairs.|"
        "Can I book a viewing online?:: Yes, pick any open slot on a listing.",
        gallery="Family home|City apartment|Country cottage|New build|Garden|Kitchen",
        preferred="gallery|features|stats|contact",
    ),
)

GENERAL_WISHES = (
    "It should look clean and professional.",
    "Make it feel friendly and welcoming.",
    "Something modern, nothing too busy.",
    "Keep it simple.",
    "I want it to feel trustworthy.",
    "It should look polished but not stuffy.",
    "I'd like it to stand out a bit.",
    "Nothing fancy, just something that looks good.",
    "It should feel warm and inviting.",
    "I want it to look confident and bold.",
)
# Broad wishes a request may carry about a section the page has (never how it looks).
SECTION_WISHES = {
    "features": ("It should show what's on offer.", "Visitors should quickly see what we do."),
    "pricing": ("People should be able to compare prices.", "It needs to show what things cost."),
    "testimonials": ("I'd like to include a few reviews.", "Happy customers should get a say."),
    "stats": ("It should highlight a few numbers.", "I'd love to show off some results."),
    "cta": ("It should nudge visitors to take the next step.",),
    "gallery": (
        "There should be a place to show things off.",
        "I'd like to give visitors a look at what we do.",
    ),
    "faq": ("It should answer common questions.",),
    "contact": ("Make it easy to get in touch.", "People should be able to reach us."),
}
