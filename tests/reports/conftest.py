"""What the report tests share: reading a table of the written markdown back."""

import pytest


def _table_rows(markdown: str, title: str) -> dict[str, list[str]]:
    """The table under `## title` as {first cell: the other cells}, its header row included."""
    section = markdown.split(f"## {title}\n")[1].split("\n## ")[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    return {row[0]: row[1:] for row in [rows[0], *rows[2:]]}


@pytest.fixture(scope="session")
def table_rows():
    """_table_rows, for the tests that read a report's tables."""
    return _table_rows
