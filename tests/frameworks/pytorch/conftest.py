"""Fixtures of the PyTorch hook tests (run with .venv-torch/bin/python; see scripts/frameworks/torch.sh):
smdebug_dump and smd_tool, shared with the other framework suites (tests/frameworks/fwtest.py)."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))         # models.py
sys.path.insert(0, str(HERE.parent))  # fwtest.py

from fwtest import REPO, smd_tool, smdebug_dump  # noqa: E402,F401  (fixtures)
