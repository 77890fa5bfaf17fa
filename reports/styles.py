"""Line styles shared by the figures: an engine is a dash pattern, so colours can tell methods
(or round counts) apart."""

from matplotlib import colormaps

ENGINE_STYLES = {"inhouse": "-", "sklearn": "--", "xgboost": ":", "lightgbm": "-."}


def engine_style(engine: str) -> str:
    """The dash pattern of an engine (dotted for one not listed)."""
    return ENGINE_STYLES.get(engine, ":")


def hues(columns: list[tuple[str, ...]], keys: list[str]) -> dict[tuple[str, ...], tuple]:
    """A tab10 colour per column (a tuple of `keys`), one per method (and encoding): columns
    that differ by their engine only share it, the engine being their dash pattern."""
    engine = keys.index("engine")
    order = sorted({column[:engine] + column[engine + 1 :] for column in columns})
    tab10 = colormaps["tab10"]
    return {column: tab10(order.index(column[:engine] + column[engine + 1 :]) % 10)
            for column in columns}  # fmt: skip
