import pytest

from sweetrl_gym.render import Renderer


@pytest.fixture(scope="module")
def renderer():
    # Short limits so that the hostile-page tests stay quick.
    with Renderer(timeout_s=2.0, max_height=3000, pages=2) as shared:
        yield shared


def page(body: str, head: str = '<script src="https://cdn.tailwindcss.com"></script>') -> str:
    return f"<html><head>{head}</head><body>{body}</body></html>"
