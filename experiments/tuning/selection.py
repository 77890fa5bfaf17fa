"""Which inner metric a study minimizes and how it chooses its best trial: one rule for the
Tuner and the reports' best-so-far curves (no Optuna, no engine: reports may import it)."""

from experiments.configs import Task

TUNE_METRICS = {
    Task.binary: ("logloss", "error"),
    Task.multiclass: ("logloss", "error"),
    Task.regression: ("rmse", "mae"),
}


def tune_metric(metric: str | None, task: Task) -> str:
    """The inner metric to minimize: `metric` (tune.metric), else the task's first one: log-loss
    to classify (a proper scoring rule: error ties on small validation sets), rmse to regress."""
    return metric or TUNE_METRICS[task][0]


def tiebreak_metric(metric: str) -> str:
    """The other inner metric of the task of `metric`, which breaks its ties: error <-> logloss,
    rmse <-> mae (each name belongs to one task's pair)."""
    pair = next(pair for pair in TUNE_METRICS.values() if metric in pair)
    return pair[1] if metric == pair[0] else pair[0]


def selection_key(inner_score: float, inner_tiebreak: float, trial: int) -> tuple:
    """The order in which trials are preferred: the lowest inner score of the tuned metric,
    then the lowest inner value of the tie-break metric (tiebreak_metric), then the earlier trial
    (trial 0 is the default configuration, so a tie with it keeps the default). A NaN tie-break
    (a model without the metric) ranks after any number."""
    tiebreak = inner_tiebreak if inner_tiebreak == inner_tiebreak else float("inf")
    return (inner_score, tiebreak, trial)
