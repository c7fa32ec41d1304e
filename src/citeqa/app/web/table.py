"""The value the pages give a ``gr.Dataframe``: its column names and its rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict


class Table(TypedDict):
    """``{"headers": [...], "data": [...]}``: the column names, then one row of cells per line."""

    headers: list[str]
    data: Sequence[Sequence[object]]
