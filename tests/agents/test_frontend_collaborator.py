import pytest

from agents.evaluation import evaluate
from agents.frontend_collaborator import FrontendCollaborator, Update, apply_update, read_reply
from sweetrl_gym.actions import ANSWER_MARKER, extract_html
from sweetrl_gym.render import Block
from sweetrl_gym.simulators.skeleton import PageSketch, SectionSketch
from sweetrl_gym.simulators.visual import describe_design, page_differences

WHITE, NAVY, INK = "rgb(255, 255, 255)", "rgb(30, 58, 138)", "rgb(17, 24, 39)"


def block(kind, height=300.0, background=WHITE, color=INK, columns=1, align="start", tag="section"):
    return Block(
        tag=tag, id=kind, classes="", x=0.0, y=0.0, width=1280.0, height=height,
        background=background, color=color, align=align, columns=columns,
        heading="", heading_size=0.0, text="",
    )  # fmt: skip


TARGET = [
    block("navigation", 64, NAVY, WHITE, columns=4, tag="nav"),
    block("hero", 420, NAVY, WHITE, align="center", tag="header"),
    block("pricing", 480, columns=3),
    block("faq", 400),
    block("footer", 120, INK, WHITE, tag="footer"),
]


def test_a_described_design_is_read_as_the_sections_colours_and_layout():
    updates = read_reply(describe_design(TARGET, "What colours and layout?"))
    assert Update("sections", value=("navigation", "hero", "pricing", "faq", "footer")) in updates
    assert Update("background", "hero", "very dark blue") in updates
    assert Update("text", "hero", "white") in updates
    assert Update("columns", "pricing", 3) in updates
    assert Update("align", "hero", "center") in updates
    sketch = PageSketch.default()
    for update in updates:
        sketch = apply_update(sketch, update)
    assert [s.kind for s in sketch.sections] == ["navigation", "hero", "pricing", "faq", "footer"]
    hero = sketch.sections[1]
    assert (hero.background, hero.text, hero.align) == ("very dark blue", "white", "center")
    assert sketch.sections[2].columns == 3


def test_every_difference_the_human_names_is_read_and_applied():
    draft = [
        block("navigation", 64, tag="nav"),  # colours and columns differ
        block("hero", 100),  # colours differ; much shorter; left-aligned
        block("gallery", 300),  # where the pricing section should be
        block("contact", 300),  # where the FAQ section should be
        block("footer", 120, INK, WHITE, tag="footer"),
    ]
    sentences = [d.sentence for d in page_differences(TARGET, draft)]
    assert len(sentences) == 9
    sketch = PageSketch(
        (
            SectionSketch("navigation", size="short"),
            SectionSketch("hero", size="short"),
            SectionSketch("gallery"),
            SectionSketch("contact"),
            SectionSketch("footer", "black", "white", size="short"),
        )
    )
    updates = read_reply(" ".join(sentences))
    assert len(updates) == len(sentences)  # each sentence read once
    for update in updates:
        sketch = apply_update(sketch, update)
    assert sketch == PageSketch(
        (
            SectionSketch("navigation", "very dark blue", "white", columns=4, size="short"),
            SectionSketch("hero", "very dark blue", "white", align="center", size="medium"),
            SectionSketch("pricing", "white", "dark gray"),
            SectionSketch("faq", "white", "dark gray"),
            SectionSketch("footer", "black", "white", size="short"),
        )
    )


@pytest.mark.parametrize(
    ("sentence", "update"),
    [
        (
            "Add a FAQ section after the pricing section, with a very light gray background, "
            "with 2 items side by side.",
            Update("insert", "faq", "pricing", "very light gray", 2),
        ),
        (
            "Add a navigation bar at the top, with a white background.",
            Update("insert", "navigation", "", "white", 1),
        ),
        (
            "Add a footer titled 'Thanks' at the bottom, with a black background.",
            Update("insert", "footer", None, "black", 1),
        ),
        ("Remove the gallery; it is not part of my design.", Update("remove", "gallery")),
        (
            "Replace the gallery with a pricing section on a dark blue background.",
            Update("replace", "gallery", "pricing", "dark blue"),
        ),
        (
            "The hero banner should have a very dark purple, not white background.",
            Update("background", "hero", "very dark purple"),
        ),
        ("The text in the footer should be light gray, not white.", Update("text", "footer", "light gray")),
        (
            "The statistics row should show 4 items side by side in a row, not 2.",
            Update("columns", "stats", 4),
        ),
        (
            "The features grid should stack its content in a single column, not 3.",
            Update("columns", "features", 1),
        ),
        ("The text in the call-to-action banner should be right-aligned.", Update("align", "cta", "right")),
        ("The contact form should be taller.", Update("size", "contact", 1)),
        ("The hero banner should be shorter.", Update("size", "hero", -1)),
    ],
)  # fmt: skip
def test_sentence_forms(sentence, update):
    assert read_reply(sentence) == [update]


def test_what_is_not_understood_changes_nothing():
    assert read_reply("Make it pop! The hero banner should have a lighter blue background.") == []
    assert read_reply("") == []


def test_updates_apply_where_they_fit():
    page = PageSketch((SectionSketch("navigation"), SectionSketch("hero"), SectionSketch("footer")))
    kinds = lambda s: [x.kind for x in s.sections]  # noqa: E731
    assert kinds(apply_update(page, Update("insert", "faq", "hero", "black", 2))) == [
        "navigation", "hero", "faq", "footer",
    ]  # fmt: skip
    inserted = apply_update(page, Update("insert", "faq", "hero", "black", 2)).sections[2]
    assert (inserted.background, inserted.text, inserted.columns) == ("black", "white", 2)
    assert kinds(apply_update(page, Update("insert", "cta", "", "white")))[0] == "cta"
    assert kinds(apply_update(page, Update("insert", "cta", None, "white")))[-1] == "cta"
    assert kinds(apply_update(page, Update("insert", "cta", "gallery", "white")))[-1] == "cta"
    assert apply_update(page, Update("insert", "hero", None, "white")) == page  # already there
    assert kinds(apply_update(page, Update("remove", "hero"))) == ["navigation", "footer"]
    assert apply_update(page, Update("remove", "gallery")) == page
    replaced = apply_update(page, Update("replace", "hero", "pricing", "dark blue")).sections[1]
    assert (replaced.kind, replaced.background) == ("pricing", "dark blue")
    taller = apply_update(page, Update("size", "hero", 1)).sections[1]
    assert taller.size == "tall"
    tallest = apply_update(
        PageSketch((SectionSketch("hero", size="very tall"),)), Update("size", "hero", 1)
    )
    assert tallest.sections[0].size == "very tall"
    assert apply_update(page, Update("columns", "hero", 9)) == page  # cannot be drawn


def test_the_collaborator_plans_asks_drafts_and_answers():
    request = [{"role": "user", "content": "I need a website for my bakery, Crumb & Co."}]
    asking = FrontendCollaborator(ask_probability=1.0, apply_probability=1.0, max_turns=4)
    first = asking.act([request])[0]
    assert extract_html(first) is None and first.endswith("?")
    dialogue = [
        *request,
        {"role": "assistant", "content": first},
        {"role": "user", "content": describe_design(TARGET)},
    ]
    draft = asking.act([dialogue])[0]
    page = extract_html(draft)
    assert page is not None and not draft.startswith(ANSWER_MARKER)
    assert 'id="pricing"' in page and 'id="faq"' in page
    never = FrontendCollaborator(ask_probability=0.0, max_turns=4)
    assert extract_html(never.act([request])[0]) == PageSketch.default().to_html()
    once = FrontendCollaborator(ask_probability=1.0, max_turns=1)
    assert once.act([request])[0].startswith(ANSWER_MARKER)
    # Two turns: a question, then the answer written from the reply (no draft between).
    twice = FrontendCollaborator(ask_probability=1.0, apply_probability=1.0, max_turns=2)
    assert extract_html(twice.act([request])[0]) is None
    answer = twice.act([dialogue])[0]
    assert answer.startswith(ANSWER_MARKER) and 'id="pricing"' in extract_html(answer)
    drafting = FrontendCollaborator(ask_probability=0.0, max_turns=2)
    assert not drafting.act([request])[0].startswith(ANSWER_MARKER)
    # The same conversation gets the same reply whatever the batch around it.
    other = [{"role": "user", "content": "Can you build a homepage for Nova Labs?"}]
    half = FrontendCollaborator(ask_probability=0.5, apply_probability=0.5, seed=3)
    assert half.act([request, other]) == half.act([other, request])[::-1]


def test_nothing_applied_keeps_the_default():
    deaf = FrontendCollaborator(ask_probability=1.0, apply_probability=0.0)
    dialogue = [
        {"role": "user", "content": "I need a website."},
        {"role": "assistant", "content": "What should it look like?"},
        {"role": "user", "content": describe_design(TARGET)},
    ]
    assert deaf.picture(dialogue) == PageSketch.default()


@pytest.mark.parametrize(
    "kwargs", [{"ask_probability": 1.5}, {"apply_probability": -0.1}, {"max_turns": 0}]
)
def test_bad_settings(kwargs):
    with pytest.raises(ValueError):
        FrontendCollaborator(**kwargs)


def test_listening_raises_similarity_in_the_environment():
    """Played in ColBench-Frontend-v0 (real renders): a collaborator that asks and applies
    everything ends closer to the targets than one that writes the default page."""
    scores = {}
    for ask, apply in ((0.0, 0.0), (1.0, 1.0)):
        agent = FrontendCollaborator(ask, apply, max_turns=4)
        metrics = evaluate(
            agent,
            "ColBench-Frontend-v0",
            num_tasks=6,
            num_envs=6,
            env_kwargs={"max_turns": 4},
            progress=False,
        )
        scores[ask] = metrics["similarity"]
    assert scores[1.0] > scores[0.0] + 0.1
