"""One declaration per method, read by every layer: its config schema (and so its defaults), the
losses it takes per task, the in-house estimator it is, the builder of each engine that runs it
and why the others do not, and what the analyses can read of its fitted members.

Layering, one way: experiments.configs holds the schemas (a leaf: Hydra composes and checks
configs without loading an engine; its SCHEMAS["method"] and SearchSpaceConfig are derived
from the schema classes, so a schema is named once); the builders (inhouse.py, sklearn_models.py,
...) read configs; this catalog imports both; mapping.py (build), the analyses (margins,
member_votes) and the declarations' test read the catalog. It lives in the engines package
because the package's __init__ imports mapping, which imports it: from anywhere else its
import of a builder would run that __init__ and come back to a half-loaded catalog.

The yamls (conf/method/<key>.yaml, conf/search_space/<key>.yaml) state the same defaults and
the searched parameters; tests/experiments/test_method_declarations.py checks every declaration
against them, against the in-house estimator's signature and against its engines.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from sklearn.base import BaseEstimator, is_classifier

from experiments.configs import (
    AdaBoostConfig,
    BaggingConfig,
    ExtraTreesConfig,
    GBTConfig,
    L2BoostConfig,
    LogitBoostConfig,
    MethodConfig,
    RandomForestConfig,
    Task,
)
from experiments.engines.inhouse import inhouse_estimator, inhouse_gbt
from experiments.engines.lightgbm_models import lightgbm_gbt, lightgbm_random_forest
from experiments.engines.sklearn_models import (
    sklearn_adaboost,
    sklearn_bagging,
    sklearn_forest,
    sklearn_gbt,
    sklearn_l2boost,
)
from experiments.engines.spec import Built, Spec
from experiments.engines.xgboost_models import xgboost_gbt, xgboost_random_forest

ENGINES = ("inhouse", "sklearn", "xgboost", "lightgbm")  # conf/engine/<name>.yaml
Builder = Callable[[Spec], Built]


class Members(Enum):
    """How a method combines its members, which tells the analyses what they may read."""

    independent = "independent"  # fitted apart, equal votes (bagging, forests): diversity
    rounds = "rounds"  # fitted in sequence, voted with weights or added (boosting)


class Margins(Enum):
    """The training margins a boosting method's rounds give (experiments.analyses.margins)."""

    votes = "votes"  # a vote times the round's class scores (AdaBoost, every algorithm)
    trees = "trees"  # confidence-rated real-valued trees, summed (LogitBoost)


@dataclass(frozen=True)
class MethodDeclaration:
    """A method: `schema` (its key, fields and defaults: experiments.configs); `family`, the
    in-house estimators ensembles.<family>Classifier / <family>Regressor, named as
    scikit-learn's (a fitted classifier of either is this method to the analyses); `losses`, the
    loss keys each task takes (`auto` among them, the method's natural loss; a task it lacks, it
    does not run on); `engines`, engine -> builder; `no_reference`, engine -> why it has no
    builder; `members` and `margins`, what the analyses read of a fitted model."""

    schema: type[MethodConfig]
    family: str
    losses: Mapping[Task, frozenset[str]]
    engines: Mapping[str, Builder]
    no_reference: Mapping[str, str] = field(default_factory=dict)
    members: Members = Members.rounds
    margins: Margins | None = None

    @property
    def key(self) -> str:
        """The method key: conf/method/<key>.yaml, search_space.<key>, the `method` tag."""
        return self.schema.key


def losses(**by_task: set[str]) -> dict[Task, frozenset[str]]:
    """Task -> the loss keys it takes ("auto" added: the method's natural loss for the task)."""
    return {Task[task]: frozenset({"auto", *names}) for task, names in by_task.items()}


def reasons(template: str, *engines: str) -> dict[str, str]:
    """Engine -> why it has no builder: `template` with its {engine} filled in."""
    return {engine: template.format(engine=engine) for engine in engines}


FOREST_LOSSES = losses(binary=set(), multiclass=set(), regression={"squared"})

DECLARATIONS = (
    MethodDeclaration(
        RandomForestConfig, "RandomForest", FOREST_LOSSES,
        engines={"inhouse": inhouse_estimator, "sklearn": sklearn_forest,
                 "xgboost": xgboost_random_forest, "lightgbm": lightgbm_random_forest},
        members=Members.independent,
    ),
    MethodDeclaration(
        ExtraTreesConfig, "ExtraTrees", FOREST_LOSSES,
        engines={"inhouse": inhouse_estimator, "sklearn": sklearn_forest},
        no_reference={
            "xgboost": "xgboost has no random-threshold (extra) trees",
            "lightgbm": "lightgbm's rf mode needs row bagging; extra trees use all rows",
        },
        members=Members.independent,
    ),
    MethodDeclaration(
        BaggingConfig, "Bagging", FOREST_LOSSES,
        engines={"inhouse": inhouse_estimator, "sklearn": sklearn_bagging},
        no_reference=reasons("{engine} subsamples rows without replacement; no bootstrap of "
                             "trees", "xgboost", "lightgbm"),
        members=Members.independent,
    ),
    MethodDeclaration(
        AdaBoostConfig, "AdaBoost", losses(binary={"exponential"}, multiclass={"exponential"}),
        engines={"inhouse": inhouse_estimator, "sklearn": sklearn_adaboost},
        no_reference=reasons("{engine} has no AdaBoost (SAMME)", "xgboost", "lightgbm"),
        margins=Margins.votes,
    ),
    MethodDeclaration(
        LogitBoostConfig, "LogitBoost", losses(binary={"logistic"}, multiclass={"softmax"}),
        engines={"inhouse": inhouse_estimator},
        no_reference=reasons("no reference library implements LogitBoost (FHT 2000)",
                             "sklearn", "xgboost", "lightgbm"),
        margins=Margins.trees,
    ),
    MethodDeclaration(
        L2BoostConfig, "L2Boost",
        losses(binary={"squared"}, multiclass={"squared"}, regression={"squared"}),
        engines={"inhouse": inhouse_estimator, "sklearn": sklearn_l2boost},
        no_reference=reasons("l2boost's reference is scikit-learn's GradientBoostingRegressor",
                             "xgboost", "lightgbm"),
    ),
    MethodDeclaration(
        GBTConfig, "GradientBoosting",
        losses(regression={"squared", "absolute", "huber", "quantile", "poisson"},
               binary={"logistic", "exponential", "softmax"}, multiclass={"softmax"}),
        engines={"inhouse": inhouse_gbt, "xgboost": xgboost_gbt, "lightgbm": lightgbm_gbt,
                 "sklearn": sklearn_gbt},
    ),
)
METHODS: dict[str, MethodDeclaration] = {method.key: method for method in DECLARATIONS}

# the in-house and scikit-learn classifiers by class name (the in-house ones bear scikit-learn's)
CLASSIFIER_NAMES = {f"{method.family}Classifier": method for method in DECLARATIONS}
CLASSIFIER_MODULES = ("ensembles.", "sklearn.ensemble.")


def classifier_method(model: BaseEstimator) -> MethodDeclaration | None:
    """The declaration of a fitted classifier of the in-house or scikit-learn engine, found by
    its class name (or a base class's): ensembles.<family>Classifier or scikit-learn's of that
    name; None for other models (a regressor, XGBoost's, LightGBM's, HistGradientBoosting)."""
    if not is_classifier(model):
        return None
    for cls in type(model).__mro__:
        if cls.__module__.startswith(CLASSIFIER_MODULES) and cls.__name__ in CLASSIFIER_NAMES:
            return CLASSIFIER_NAMES[cls.__name__]
    return None
