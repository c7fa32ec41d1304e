"""Where the test suite's files are: one definition for every test module, whatever its folder."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
REPO = TESTS.parent
