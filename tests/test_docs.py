"""The docs site builds strictly: a broken API reference or page fails the tests."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build(config: Path, site: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config)]
    return subprocess.run([*command, "-d", str(site)], capture_output=True, text=True, timeout=300)


def test_the_docs_build_strictly_and_hold_the_api_reference(tmp_path):
    done = build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    reference = (tmp_path / "site" / "reference" / "algorithms" / "index.html").read_text()
    assert 'id="algorithms.SweetRL"' in reference and "critic_learning_rate" in reference
    assert (tmp_path / "site" / "training" / "index.html").is_file()


def test_a_broken_reference_fails_the_build(tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    (docs / "reference" / "agents.md").write_text("# Agents\n\n::: agents.NoSuchAgent\n")
    config = (ROOT / "mkdocs.yml").read_text().replace("docs_dir: docs", f"docs_dir: {docs}")
    config = config.replace("paths: [.]", f"paths: [{ROOT}]")
    (tmp_path / "mkdocs.yml").write_text(config)
    done = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0 and "NoSuchAgent" in done.stderr
