import pytest

from sweetrl_gym.render import Renderer
from sweetrl_gym.simulators.skeleton import (
    SIZES,
    PageSketch,
    SectionSketch,
    colour_class,
    default_size,
    size_of,
)
from sweetrl_gym.simulators.visual import page_differences
from sweetrl_gym.tasks.frontend_loaders import load_frontend_tasks
from sweetrl_gym.tasks.frontend_sections.sections import SECTION_KINDS

# Every colour word the skeleton maps to a class, as the simulated human names colours.
COLOURS = (
    "white", "very light gray", "light gray", "gray", "dark gray", "black",
    "very light red", "light red", "red", "dark red", "very dark red",
    "very light yellow", "light yellow", "orange", "dark orange",
    "very light green", "light green", "green", "dark green",
    "very light sky blue", "light sky blue", "sky blue", "blue", "dark blue", "very dark blue",
    "very light blue", "light blue", "dark indigo", "very dark indigo",
    "very light purple", "light purple", "purple", "dark purple", "very dark purple",
    "very light pink", "light pink", "pink", "dark pink", "very dark pink",
)  # fmt: skip


@pytest.fixture(scope="module")
def renderer():
    with Renderer(timeout_s=5.0, pages=1) as shared:
        yield shared


def sketches():
    """Pages that use every colour word (as background and text), kind, alignment and size."""
    kinds = [k for k in SECTION_KINDS if k not in ("navigation", "footer")]
    sections = []
    for i, background in enumerate(COLOURS):
        kind = kinds[i % len(kinds)]
        sections.append(
            SectionSketch(
                kind,
                background,
                COLOURS[(i + 7) % len(COLOURS)],
                columns=1 + i % 4,
                align=("left", "center", "right")[i % 3],
                size=("medium", "tall", "very tall")[i % 3],
            )
        )
    pages = [sections[i : i + 8] for i in range(0, len(sections), 8)]
    ends = (
        SectionSketch("navigation", "dark blue", "white", size="short"),
        SectionSketch("footer", "black", "light gray", align="center", size="short"),
    )
    return [PageSketch((ends[0], *page, ends[1])) for page in pages]


@pytest.mark.parametrize("index", range(5))
def test_a_rendered_skeleton_reads_back_as_the_same_design(renderer, index):
    sketch = sketches()[index]
    blocks = renderer.render_page(sketch.to_html()).blocks
    assert PageSketch.from_blocks(blocks) == sketch


@pytest.mark.parametrize("task_index", [0, 1, 2, 3])
def test_the_human_sees_no_difference_of_fact_in_a_skeleton_of_every_fact(renderer, task_index):
    """Sections, colours, columns and alignment are the human's words: none is left to say."""
    task = load_frontend_tasks("bundled", "test")[task_index]
    target = renderer.render_page(task.ground_truth).blocks
    skeleton = renderer.render_page(PageSketch.from_blocks(target).to_html()).blocks
    differences = page_differences(target, skeleton)
    kinds = {d.kind for d in differences}
    assert kinds <= {"background", "heading", "heading_size", "height"}
    # A colour word spans several shades: the human may still ask for a lighter or darker one.
    shades = [d.sentence for d in differences if d.kind == "background"]
    assert all(" lighter " in s or " darker " in s for s in shades), shades
    default = renderer.render_page(PageSketch.default().to_html()).blocks
    assert {"missing", "columns"} & {d.kind for d in page_differences(target, default)}


def test_colour_words_map_to_classes():
    assert colour_class("dark blue", "bg") == "bg-blue-800"
    assert colour_class("  Very  Light Gray ", "text") == "text-gray-100"
    # Words the bundled palette never produces: the nearest hue and shade, else gray.
    assert colour_class("very light teal", "bg") == "bg-green-100"
    assert colour_class("dark orange", "bg") == "bg-yellow-900"
    assert colour_class("light mauve", "bg") == "bg-gray-300"
    assert colour_class("teal", "text") == "text-green-500"


def test_sizes():
    assert size_of(70) == "short"
    assert size_of(300) == "medium"
    assert size_of(420) == "tall"
    assert size_of(2000) == "very tall"
    assert [default_size(k) for k in ("navigation", "hero", "pricing", "footer")] == [
        "short",
        "tall",
        "medium",
        "short",
    ]
    page = PageSketch((SectionSketch("hero", size="short"), SectionSketch("faq", size="tall")))
    assert [s.size for s in page.with_default_sizes().sections] == ["tall", "medium"]
    assert set(SIZES) == {"short", "medium", "tall", "very tall"}


@pytest.mark.parametrize(
    "fields",
    [
        {"kind": "banner"},
        {"kind": "hero", "align": "justify"},
        {"kind": "hero", "size": "huge"},
        {"kind": "hero", "columns": 0},
        {"kind": "hero", "columns": 7},
        {"kind": "hero", "columns": 2.0},
    ],
)
def test_bad_sections_are_refused(fields):
    with pytest.raises(ValueError):
        SectionSketch(**fields)


def test_a_skeleton_is_a_fraction_of_its_target_page(renderer):
    """What a small policy can write: a bundled target is 1,000-12,000 characters."""
    for task in load_frontend_tasks("bundled", "test")[:8]:
        sketch = PageSketch.from_blocks(renderer.render_page(task.ground_truth).blocks)
        assert len(sketch.to_html()) < len(task.ground_truth) / 2
    assert len(PageSketch.default().to_html()) < 700
