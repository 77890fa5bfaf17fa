"""Line styles shared by the figures: an engine is a dash pattern, so colours can tell methods
(or round counts) apart."""

ENGINE_STYLES = {"inhouse": "-", "sklearn": "--", "xgboost": ":", "lightgbm": "-."}


def engine_style(engine: str) -> str:
    """The dash pattern of an engine (dotted for one not listed)."""
    return ENGINE_STYLES.get(engine, ":")
