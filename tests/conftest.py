import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))


def pytest_configure(config):
    config.addinivalue_line("markers", "site: checks on the built site in _build/html (make test builds it first)")
