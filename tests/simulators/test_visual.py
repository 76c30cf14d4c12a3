import pytest

from sweetrl_gym.render import Block, Renderer
from sweetrl_gym.simulators import SimulatorError
from sweetrl_gym.simulators.visual import (
    VisualDiffSimulator,
    describe_design,
    page_differences,
    section_name,
)


def block(tag="section", y=0.0, height=200.0, background="rgb(255, 255, 255)", **fields) -> Block:
    values = {
        "id": "",
        "classes": "",
        "x": 0.0,
        "width": 1280.0,
        "color": "rgb(17, 24, 39)",
        "align": "start",
        "columns": 1,
        "heading": "",
        "heading_size": 0.0,
        "text": "",
    }
    values.update(fields)
    return Block(tag=tag, y=y, height=height, background=background, **values)


def page():
    return [
        block("nav", 0, 60, "rgb(67, 56, 202)", links=4, color="rgb(255, 255, 255)"),
        block(
            "header",
            60,
            400,
            "rgb(239, 68, 68)",
            heading="Fresh bread",
            heading_size=48,
            align="center",
        ),
        block("section", 460, 300, id="pricing", heading="Plans", columns=3),
        block("footer", 760, 100, "rgb(31, 41, 55)", color="rgb(243, 244, 246)"),
    ]


def test_sections_get_names_a_person_would_use():
    names = [section_name(b, i, 4) for i, b in enumerate(page())]
    assert names == ["navigation bar", "hero banner", "pricing section", "footer"]
    assert section_name(block(inputs=3), 1, 3) == "contact form"
    assert section_name(block(heading="Our story"), 2, 5) == "section titled 'Our story'"


def test_identical_pages_have_no_differences():
    assert page_differences(page(), page()) == []


def test_a_wrong_background_is_named_with_its_colours_and_place():
    mine = page()
    mine[1] = block(
        "header",
        60,
        400,
        "rgb(22, 101, 52)",
        heading="Fresh bread",
        heading_size=48,
        align="center",
    )
    (difference,) = page_differences(page(), mine)
    assert difference.kind == "background"
    assert difference.sentence == "The hero banner should have a red, not dark green background."


def test_missing_sections_come_before_small_details():
    mine = page()[:3]  # no footer
    mine[2] = block("section", 460, 300, id="pricing", heading="Plans", columns=2)
    differences = page_differences(page(), mine)
    assert [d.kind for d in differences] == ["missing", "columns"]
    assert differences[0].sentence.startswith(
        "Add a footer at the bottom, with a dark gray background"
    )
    assert "3 items side by side" in differences[1].sentence


def test_extra_replaced_and_layout_differences():
    mine = [*page()[:2], block("section", 460, 300, id="gallery"), page()[3]]
    mine[1] = block(
        "header", 60, 400, "rgb(239, 68, 68)", heading="Fresh bread", heading_size=20, align="start"
    )
    kinds = {d.kind: d.sentence for d in page_differences(page(), mine)}
    assert kinds["replaced"].startswith("Replace the gallery with a pricing section")
    assert kinds["alignment"] == "The text in the hero banner should be centered."
    assert kinds["heading_size"] == "The hero banner heading should be much larger."
    extra = page_differences(page(), [*page(), block("section", 860, 300, id="faq")])
    assert [d.kind for d in extra] == ["extra"] and "FAQ section" in extra[0].sentence


def test_describing_the_design_leans_to_the_question():
    overview = describe_design(page(), "Can you tell me more?")
    assert overview.startswith("From top to bottom, the page has a navigation bar, a hero banner")
    colours = describe_design(page(), "Which colours do you like?")
    assert colours.startswith("The ") and "red" in colours.split(".")[0]
    layout = describe_design(page(), "What layout, how many columns?")
    assert layout.startswith("The pricing section shows 3 items side by side")
    assert len(describe_design(page() * 30)) <= 1000


@pytest.fixture(scope="module")
def simulator():
    with Renderer(timeout_s=2.0, pages=1) as renderer:
        yield VisualDiffSimulator(renderer)


TARGET = (
    '<html><head><script src="https://cdn.tailwindcss.com"></script></head><body>'
    '<nav class="bg-indigo-700 text-white p-4 flex gap-4"><a>Home</a><a>Shop</a></nav>'
    '<header class="bg-red-500 text-white py-24 text-center"><h1 class="text-5xl">Fresh bread</h1></header>'
    '<footer class="bg-gray-800 text-gray-100 p-8">Bakery</footer></body></html>'
)


def ask(simulator, message):
    return simulator.reply(
        {"ground_truth": TARGET},
        [{"role": "user", "content": "A site"}, {"role": "assistant", "content": message}],
    )


def test_replies_compare_real_renders(simulator):
    assert ask(simulator, TARGET) == "That looks just like what I had in mind."
    reply = ask(simulator, TARGET.replace("bg-red-500", "bg-blue-900"))
    assert reply == "The hero banner should have a red, not very dark blue background."
    assert ask(simulator, "<html><body></body></html>").startswith("Your page looks empty to me.")
    assert "could not see your page" in ask(
        simulator, "<html><body><script>while(1){}</script></body></html>"
    )
    assert ask(simulator, "Which colours?").startswith("The navigation bar is dark indigo")


def test_replies_are_deterministic_and_bounded(simulator):
    message = TARGET.replace("text-center", "text-right").replace("bg-gray-800", "bg-white")
    first = ask(simulator, message)
    assert first == ask(simulator, message)
    assert 0 < len(first) <= 1000 and first.count(". ") <= 2


def test_bad_input_is_a_clear_error(simulator):
    with pytest.raises(ValueError, match="agent"):
        simulator.reply({"ground_truth": TARGET}, [{"role": "user", "content": "hi"}])
    with pytest.raises(TypeError, match="ground_truth"):
        simulator.reply({}, [{"role": "assistant", "content": "hi"}])
    with pytest.raises(SimulatorError, match="target page"):
        simulator.reply(
            {"ground_truth": "<html><script>while(1){}</script></html>"},
            [{"role": "assistant", "content": "hi"}],
        )
    with pytest.raises(ValueError, match="max_differences"):
        VisualDiffSimulator(max_differences=0)
