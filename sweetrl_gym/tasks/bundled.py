from pathlib import Path
BUNDLED_BACKEND_PATH = Path(__file__).parent / "data" / "backend_bundled.jsonl.gz"
