import json
import logging
import random
import subprocess
import sys
import time

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from sweetrl_gym.similarity import (
    ClipSimilarity,
    make_similarity,
    perceptual_components,
    perceptual_similarity,
)

WORDS = (
    "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
    "incididunt labore dolore magna aliqua"
).split()


def _paragraph(draw, x, y, width, size, fill, rng, lines=3):
    font = ImageFont.load_default(size=size)
    for i in range(lines):
        line = ""
        while True:
            word = rng.choice(WORDS)
            if draw.textlength(f"{line} {word}", font=font) > width:
                break
            line = f"{line} {word}".strip()
        draw.text((x, y + i * int(size * 1.4)), line, fill=fill, font=font)


def draw_page(
    *,
    bg="#ffffff",
    nav="#1f2937",
    hero="#3b82f6",
    card="#f3f4f6",
    footer="#111827",
    columns=3,
    rows=2,
    order=("nav", "hero", "cards", "footer"),
    text_seed=0,
    top=0,
    width=1280,
):
    """A page-like screenshot: nav bar, hero, grid of cards, footer (Tailwind colours)."""
    rng = random.Random(text_seed)
    heights = {"nav": 72, "hero": 420, "cards": 40 + rows * 340, "footer": 160}
    image = Image.new("RGB", (width, top + sum(heights[s] for s in order)), bg)
    draw = ImageDraw.Draw(image)
    y = top
    for section in order:
        height = heights[section]
        if section == "nav":
            draw.rectangle([0, y, width, y + height], fill=nav)
            draw.rectangle([32, y + 20, 160, y + 52], fill="#f59e0b")
            for i in range(4):
                _paragraph(draw, width - 520 + i * 120, y + 26, 100, 18, "#e5e7eb", rng, 1)
        elif section == "hero":
            draw.rectangle([0, y, width, y + height], fill=hero)
            title = " ".join(rng.choice(WORDS) for _ in range(4)).title()
            draw.text((120, y + 120), title, fill="white", font=ImageFont.load_default(size=56))
            _paragraph(draw, 120, y + 220, 700, 22, "#f9fafb", rng)
            draw.rounded_rectangle([120, y + 320, 300, y + 370], 8, fill="#ffffff")
        elif section == "cards":
            gap = 32
            card_width = (width - gap * (columns + 1)) // columns
            for r in range(rows):
                for c in range(columns):
                    x0, y0 = gap + c * (card_width + gap), y + 40 + r * 340
                    draw.rounded_rectangle([x0, y0, x0 + card_width, y0 + 300], 12, fill=card)
                    draw.rectangle([x0, y0, x0 + card_width, y0 + 150], fill="#9ca3af")
                    _paragraph(draw, x0 + 16, y0 + 170, card_width - 32, 18, "#374151", rng)
        else:
            draw.rectangle([0, y, width, y + height], fill=footer)
            _paragraph(draw, 120, y + 50, 900, 16, "#9ca3af", rng)
        y += height
    return image


def unrelated_page():
    image = Image.new("RGB", (1280, 1500), "#fdf6e3")
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, 0, 280, 1500], fill="#064e3b")
    rng = random.Random(7)
    for i in range(12):
        _paragraph(draw, 320, 40 + i * 110, 900, 20, "#1f2937", rng)
    draw.ellipse([900, 900, 1200, 1200], fill="#dc2626")
    return image


BLANK = Image.new("RGB", (1280, 800), "white")
BLACK = Image.new("RGB", (1280, 800), "black")


@pytest.fixture(scope="module")
def table():
    """Perceptual similarity of each variant against the base page."""
    base = draw_page()
    variants = {
        "identical": draw_page(),
        "text changed": draw_page(text_seed=1),
        "shifted 16px": draw_page(top=16),
        "one section colour": draw_page(hero="#10b981"),
        "two section colours": draw_page(hero="#10b981", nav="#fde68a"),
        "four section colours": draw_page(
            hero="#10b981", nav="#fde68a", footer="#e0e7ff", card="#fecaca"
        ),
        "columns 3->2": draw_page(columns=2, rows=3),
        "sections reordered": draw_page(order=("nav", "cards", "hero", "footer")),
        "shifted 200px": draw_page(top=200),
        "unrelated page": unrelated_page(),
        "blank white": BLANK,
        "black": BLACK,
    }
    return {name: perceptual_similarity(base, image) for name, image in variants.items()}


def test_identical_pages_score_exactly_one(table):
    assert table["identical"] == 1.0


def test_small_changes_barely_matter(table):
    # CLIP hardly sees the words or a 16 px offset; neither should the offline default.
    assert table["text changed"] > 0.95
    assert table["shifted 16px"] > 0.9


def test_blank_and_black_pages_fall_clearly(table):
    assert table["blank white"] < table["one section colour"] - 0.3
    assert table["black"] < table["one section colour"] - 0.3
    assert table["black"] < table["blank white"]


def test_score_falls_as_pages_look_more_different(table):
    chain = [
        "identical",
        "text changed",
        "one section colour",
        "two section colours",
        "four section colours",
        "unrelated page",
    ]
    scores = [table[name] for name in chain]
    assert scores == sorted(scores, reverse=True), dict(zip(chain, scores))
    assert table["shifted 16px"] > table["shifted 200px"]
    for layout_change in ("columns 3->2", "sections reordered"):
        assert table["blank white"] < table[layout_change] < table["text changed"] - 0.15
    assert all(0.0 <= score <= 1.0 for score in table.values())


def test_a_blank_page_is_not_close_to_a_mostly_white_page():
    # Typical generated pages are white with dark text: the shared margin must not count.
    white_page = draw_page(hero="#ffffff", card="#ffffff", footer="#f9fafb")
    changed_nav = draw_page(hero="#ffffff", card="#ffffff", footer="#f9fafb", nav="#dc2626")
    blank = perceptual_similarity(white_page, BLANK)
    assert blank < perceptual_similarity(white_page, changed_nav) - 0.3
    assert blank < 0.6


def test_components_are_reported_and_symmetric():
    a, b = draw_page(), draw_page(columns=2, rows=3)
    forward, backward = perceptual_components(a, b), perceptual_components(b, a)
    assert forward == pytest.approx(backward, abs=1e-12)
    assert set(forward) == {"similarity", "colour", "structure", "palette"}
    terms = [forward["colour"], forward["structure"], forward["palette"]]
    assert forward["similarity"] == pytest.approx(sum(terms) / 3)
    # Moving sections keeps the palette but breaks the layout terms.
    moved = perceptual_components(a, draw_page(order=("nav", "cards", "hero", "footer")))
    assert moved["palette"] > 0.9 > 0.6 > moved["structure"]


def test_any_mode_and_size_is_accepted():
    page = draw_page()
    assert perceptual_similarity(page, page.convert("RGBA")) == 1.0
    transparent = Image.new("RGBA", (640, 400), (255, 0, 0, 0))
    assert perceptual_similarity(transparent, Image.new("RGB", (640, 400), "white")) == 1.0
    for image in (
        page.convert("L"),
        page.convert("P"),
        Image.new("1", (3, 2)),
        page.resize((7, 9)),
    ):
        assert 0.0 <= perceptual_similarity(page, image) <= 1.0
    # Width does not matter, only what the page looks like.
    assert perceptual_similarity(page, page.resize((640, 686))) > 0.97


def test_huge_images_take_bounded_time():
    page = draw_page()
    start = time.perf_counter()
    tall = perceptual_similarity(page, Image.new("RGB", (1280, 60_000), "white"))
    wide = perceptual_similarity(page, Image.new("RGB", (12_000, 6_000), "#3b82f6"))
    assert time.perf_counter() - start < 10
    assert 0.0 <= tall < 0.6 and 0.0 <= wide < 0.6


@pytest.mark.parametrize("size", [(0, 10), (10, 0)])
def test_empty_images_are_rejected(size):
    with pytest.raises(ValueError, match="no pixels"):
        perceptual_similarity(Image.new("RGB", size), BLANK)


def test_non_images_are_rejected():
    with pytest.raises(TypeError, match="PIL"):
        perceptual_similarity(np.zeros((10, 10, 3)), BLANK)


# --- CLIP -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory):
    """A random-init CLIP saved like a hub checkpoint (32 px images, 8 px patches)."""
    from transformers import CLIPConfig, CLIPModel

    try:  # transformers >= 5 (CLIPImageProcessor would want torchvision)
        from transformers import CLIPImageProcessorPil as CLIPImageProcessor
    except ImportError:
        from transformers import CLIPImageProcessor

    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    text = dict(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        vocab_size=64,
        max_position_embeddings=16,
        bos_token_id=0,
        eos_token_id=1,
        pad_token_id=2,
    )
    vision = dict(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=32,
        patch_size=8,
    )
    path = tmp_path_factory.mktemp("tiny-clip")
    CLIPModel(CLIPConfig(text_config=text, vision_config=vision, projection_dim=8)).save_pretrained(
        path
    )
    processor = CLIPImageProcessor(
        size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
    )
    processor.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def clip(tiny_clip):
    return make_similarity("clip", clip_model=tiny_clip)


def test_clip_similarity_is_a_cosine(clip):
    assert isinstance(clip, ClipSimilarity)
    page, other = draw_page(), unrelated_page()
    assert clip(page, page) == pytest.approx(1.0, abs=1e-5)
    assert clip(page, other) == pytest.approx(clip(other, page), abs=1e-6)
    assert -1.0 <= clip(page, other) < 1.0 - 1e-4
    assert clip(page, page.convert("RGBA")) == pytest.approx(1.0, abs=1e-5)


def test_clip_embeddings_are_unit_vectors(clip):
    images = [draw_page(), BLACK, BLANK, draw_page()]
    vectors = clip.embed(images)
    assert vectors.shape == (4, 8)
    assert np.linalg.norm(vectors, axis=1) == pytest.approx(np.ones(4), abs=1e-5)
    assert np.allclose(vectors[0], vectors[3])
    assert clip.embed([]).shape == (0, 8)
    with pytest.raises(TypeError, match="sequence"):
        clip.embed(BLACK)


def test_clip_caches_repeated_images_in_a_bounded_lru(tiny_clip, monkeypatch):
    clip = ClipSimilarity(tiny_clip, device="cpu", cache_size=2)
    forwarded = []
    real_forward = clip._forward
    monkeypatch.setattr(
        clip, "_forward", lambda images: forwarded.append(len(images)) or real_forward(images)
    )
    target = draw_page()
    clip(target, BLACK)
    clip(target, BLANK)  # the target comes from the cache; BLACK, least recently used, goes
    assert forwarded == [2, 1]
    clip(target, BLANK)
    assert forwarded == [2, 1]
    clip(target, BLACK)  # evicts BLANK
    assert forwarded == [2, 1, 1]
    clip.embed([BLANK, BLANK])
    assert forwarded == [2, 1, 1, 1]


def test_clip_checkpoint_without_preprocessor_config_uses_clip_defaults(
    tiny_clip, tmp_path, caplog
):
    for name in ("config.json", "model.safetensors"):
        (tmp_path / name).write_bytes((tiny_clip / name).read_bytes())
    with caplog.at_level(logging.WARNING, logger="sweetrl_gym.similarity.clip"):
        clip = ClipSimilarity(tmp_path, device="cpu")
    assert "preprocessor_config.json" in caplog.text
    assert clip(BLACK, BLACK) == pytest.approx(1.0, abs=1e-5)


def test_missing_clip_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"does not exist.*a hub id"):
        make_similarity("clip", clip_model=tmp_path / "nowhere")
    with pytest.raises(ValueError, match=r"no config\.json"):
        ClipSimilarity(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    with pytest.raises(ValueError, match="'gpt2' model, not a CLIP"):
        ClipSimilarity(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "clip"}))
    with pytest.raises(ValueError, match="no CLIP weights"):
        ClipSimilarity(tmp_path)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        ClipSimilarity(tmp_path / "file")


def test_make_similarity_choices(tiny_clip):
    assert make_similarity() is perceptual_similarity
    assert make_similarity("perceptual") is perceptual_similarity
    assert isinstance(make_similarity(clip_model=tiny_clip, device="cpu"), ClipSimilarity)

    def mine(a, b):
        return 0.5

    assert make_similarity(mine) is mine
    with pytest.raises(ValueError, match="needs clip_model"):
        make_similarity("clip")
    with pytest.raises(ValueError, match="would ignore it"):
        make_similarity("perceptual", clip_model=tiny_clip)
    with pytest.raises(ValueError, match="unknown similarity 'ssim'"):
        make_similarity("ssim")
    with pytest.raises(TypeError, match="callable"):
        make_similarity(3)


def test_importing_the_package_does_not_import_torch():
    code = "import sys, sweetrl_gym.similarity; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_rendered_pages_with_the_real_browser():
    render = pytest.importorskip("sweetrl_gym.render").render_html
    page = "<html><body style='margin:0'><div style='height:300px;background:{}'></div><p>Hello</p></body></html>"
    blue, red = render(page.format("#3b82f6")), render(page.format("#dc2626"))
    assert perceptual_similarity(blue, render(page.format("#3b82f6"))) == 1.0
    assert perceptual_similarity(blue, red) < 0.9


def test_a_clip_hub_id_is_fetched_into_the_cache_once(tiny_clip, monkeypatch, tmp_path):
    import huggingface_hub

    calls = []

    def snapshot_download(repo_id, **kwargs):
        calls.append(repo_id)
        return str(tiny_clip)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    clip = ClipSimilarity("openai/clip-vit-base-patch32", device="cpu")
    assert calls == ["openai/clip-vit-base-patch32"]
    assert clip(BLACK, BLACK) == pytest.approx(1.0, abs=1e-5)
    # A path is never taken for a hub id, nor a folder of a hub id's name that exists here.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        ClipSimilarity("./clip-vit-base-patch32")
    (tmp_path / "org").mkdir()
    (tmp_path / "org" / "clip").symlink_to(tiny_clip)
    ClipSimilarity("org/clip", device="cpu")
    assert calls == ["openai/clip-vit-base-patch32"]


def test_an_uncached_clip_hub_id_offline_is_a_clear_error(monkeypatch, tmp_path):
    import huggingface_hub
    from huggingface_hub.errors import LocalEntryNotFoundError

    def snapshot_download(repo_id, **kwargs):
        raise LocalEntryNotFoundError("not in the cache and HF_HUB_OFFLINE is set")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    with pytest.raises(FileNotFoundError, match="HF_HUB_OFFLINE=1 only the Hugging Face cache"):
        ClipSimilarity("openai/clip-vit-base-patch32")
