"""Structured configs: the schema every yaml in conf/ is checked against before a job runs.

Each option of a group (conf/<group>/<option>.yaml) names its schema node in its defaults list,
so a misspelled key or a value of the wrong type is refused at composition time.
"""

from dataclasses import dataclass, field, make_dataclass
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, DictConfig, OmegaConf

from experiments.paths import CONF_DIR
from experiments.studies import register_study_resolvers


class Task(Enum):
    binary = "binary"
    multiclass = "multiclass"
    regression = "regression"


class EvalKind(Enum):
    holdout = "holdout"
    kfold = "kfold"
    bias_variance = "bias_variance"  # a fixed holdout test set, n_bootstrap training sets


class Criterion(Enum):
    """Classification impurity; regression trees always use squared error."""

    gini = "gini"
    entropy = "entropy"


@dataclass
class DatasetConfig:
    """A bundled dataset: its registry name and its task."""

    name: str = MISSING
    task: Task = MISSING


@dataclass
class Hastie10_2Config(DatasetConfig):
    """ESL eq. (10.2): y = 1 if sum of 10 squared N(0,1) features > chi2_10 median 9.34."""

    name: str = "hastie_10_2"
    task: Task = Task.binary
    n_samples: int = 12000
    data_seed: int = 0


@dataclass
class Friedman1Config(DatasetConfig):
    """Friedman (1991): y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4 + 5 x5 + noise N(0, 1)."""

    name: str = "friedman1"
    task: Task = Task.regression
    n_samples: int = 2000
    n_features: int = 10
    noise: float = 1.0
    data_seed: int = 0


@dataclass
class Friedman2Config(DatasetConfig):
    """Friedman (1991) #2: y = (x1^2 + (x2 x3 - 1/(x2 x4))^2)^0.5 + noise N(0, 125^2), the 3:1
    signal-to-noise ratio of Breiman (1996, "Bagging predictors")."""

    name: str = "friedman2"
    task: Task = Task.regression
    n_samples: int = 2000
    noise: float = 125.0
    data_seed: int = 0


@dataclass
class Friedman3Config(Friedman2Config):
    """Friedman (1991) #3: y = arctan((x2 x3 - 1/(x2 x4)) / x1) + noise N(0, 0.1^2), the 3:1
    signal-to-noise ratio of Breiman (1996, "Bagging predictors")."""

    name: str = "friedman3"
    noise: float = 0.1


@dataclass
class NestedSpheresConfig(DatasetConfig):
    """Friedman, Hastie, Tibshirani (2000, sec. 6): X ~ N(0, I_p), K equally likely classes cut
    at chi2_p quantiles of sum x_j^2; task must be binary for K = 2, multiclass for K > 2."""

    name: str = "nested_spheres"
    task: Task = Task.binary
    n_samples: int = 10000
    n_features: int = 10
    n_classes: int = 2
    data_seed: int = 0


@dataclass
class SyntheticClassificationConfig(DatasetConfig):
    """scikit-learn's make_classification (Guyon 2003, the Madelon design), same parameters;
    task must be binary for n_classes = 2, multiclass for n_classes > 2."""

    name: str = "synthetic_classification"
    task: Task = Task.binary
    n_samples: int = 10000
    n_features: int = 20
    n_informative: int = 10
    n_redundant: int = 0
    n_classes: int = 2
    flip_y: float = 0.01
    class_sep: float = 1.0
    data_seed: int = 0


@dataclass
class SyntheticRegressionConfig(DatasetConfig):
    """scikit-learn's make_regression: y = X w + noise N(0, noise^2), w nonzero on n_informative
    features."""

    name: str = "synthetic_regression"
    task: Task = Task.regression
    n_samples: int = 10000
    n_features: int = 20
    n_informative: int = 10
    noise: float = 1.0
    data_seed: int = 0


class CategoricalEncoding(Enum):
    """How a table's non-numeric features reach the engines: ordinal (one column of category
    codes, 0..K-1 in the categories' sorted order), onehot (one 0/1 column per category, and
    one for a missing value where the feature has missing values) or native (the codes of
    ordinal, and each engine told which columns are categorical, so that it splits them into
    sets of categories where it can: experiments.engines.categorical)."""

    ordinal = "ordinal"
    onehot = "onehot"
    native = "native"


class DecimalMark(Enum):
    """The decimal mark of a CSV file's numbers (dataset.decimal=comma for 1,5)."""

    point = "."
    comma = ","


class ThousandsMark(Enum):
    """The thousands separator of a table's numbers (dataset.thousands=comma for 1,234; space
    for 1 234 with any space; none: the file has none)."""

    comma = ","
    point = "."
    space = " "
    apostrophe = "'"
    none = ""


@dataclass
class TableConfig(DatasetConfig):
    """A local CSV or Parquet file (experiments.data.table_files): `name` names it in runs and
    reports (default: the file's stem); `target` is the label column; the task is the user's to
    state (dataset.task=binary|multiclass|regression); `categorical`: how non-numeric features
    are encoded; `sep` (None: sniffed among , ; tab |), `decimal` (point, comma) and
    `thousands` (None: detected per column) read a CSV file; `na_values`: tokens read as
    missing besides empty cells and NaN, NULL, #N/A, ...; `drop`: columns left out (an ID, a
    leak)."""

    name: str = "${file_stem:${.path}}"
    loader: str = "csv"
    path: str = MISSING
    target: str = MISSING
    categorical: CategoricalEncoding = CategoricalEncoding.ordinal
    sep: str | None = None
    decimal: DecimalMark = DecimalMark.point
    thousands: ThousandsMark | None = None
    na_values: list[str] = field(default_factory=list)
    drop: list[str] = field(default_factory=list)


@dataclass
class OpenMLConfig(DatasetConfig):
    """An OpenML dataset by id, cached in data_home (None: env ENSEMBLES_OPENML_HOME, else
    ~/.cache/ensembles-lab/openml); target None: its default target; the task is the user's."""

    name: str = "openml_${.data_id}"
    loader: str = "openml"
    data_id: int = MISSING
    target: str | None = None
    data_home: str | None = None
    categorical: CategoricalEncoding = CategoricalEncoding.ordinal


@dataclass
class SuiteDatasetConfig(DatasetConfig):
    """A dataset of a benchmark suite (conf/suite/), read from the offline cache that
    `make data SUITE=<suite>` fills (cache None: $ENSEMBLES_OPENML_HOME/suites, else
    ~/.cache/ensembles-lab/openml/suites). `name` is its key in suite.datasets, whose data_id,
    target and task conf/dataset/suite.yaml interpolates; max_train_rows caps the training rows
    of each split (subsampled with the job seed; None: no cap)."""

    name: str = MISSING
    loader: str = "suite"
    suite: str = MISSING
    data_id: int = MISSING
    target: str | None = None
    cache: str | None = None
    max_train_rows: int | None = None
    categorical: CategoricalEncoding = CategoricalEncoding.ordinal


@dataclass
class SuiteEntry:
    """One dataset of a suite: its OpenML id, target (None: OpenML's default) and task."""

    data_id: int = MISSING
    target: str | None = None
    task: Task = MISSING


class UncachedPolicy(Enum):
    """What a suite sweep does with datasets missing from the offline cache: stop before any run,
    naming them all (fail), or run the cached ones and log each missing one as a skipped job."""

    fail = "fail"
    skip = "skip"


@dataclass
class SuiteConfig:
    """A benchmark suite: its name, OpenML suite or study id, the preprocessing its paper states
    (max_train_rows), its datasets by key (conf/suite/<name>.yaml; `none`: no suite), and what
    to do with the datasets missing from the cache (`uncached`: fail | skip)."""

    name: str = "none"
    openml_suite: int | None = None
    openml_study: int | None = None
    preprocessing: dict[str, Any] = field(default_factory=dict)
    datasets: dict[str, SuiteEntry] = field(default_factory=dict)
    uncached: UncachedPolicy = UncachedPolicy.fail


@dataclass
class MethodConfig:
    """A method option: `name` is its option and its `method` tag; the schema's `key` is the
    estimator family it builds (a variant such as conf/method/stump.yaml reuses a schema)."""

    key: ClassVar[str] = ""
    name: str = MISSING


@dataclass
class RandomForestConfig(MethodConfig):
    """Breiman (2001) random forest; parameters as scikit-learn's RandomForest*."""

    key: ClassVar[str] = "random_forest"
    name: str = "random_forest"
    n_estimators: int = 100
    max_depth: int | None = None
    min_samples_split: int = 2
    min_samples_leaf: int = 1
    max_features: Any = "auto"  # sqrt for classification, 1.0 for regression (as scikit-learn)
    max_leaf_nodes: int | None = None
    bootstrap: bool = True
    max_samples: float | None = None  # rows drawn per tree / n (a bootstrap's); None: n draws
    oob_score: bool = False
    criterion: Criterion = Criterion.gini


@dataclass
class ExtraTreesConfig(RandomForestConfig):
    """Geurts et al. (2006) extra trees: a random threshold per candidate feature, all rows."""

    key: ClassVar[str] = "extra_trees"
    name: str = "extra_trees"
    bootstrap: bool = False


@dataclass
class BaggingConfig(MethodConfig):
    """Breiman (1996) bagging: full CART trees on bootstrap samples, every feature at each split."""

    key: ClassVar[str] = "bagging"
    name: str = "bagging"
    n_estimators: int = 10
    max_depth: int | None = None
    min_samples_split: int = 2
    min_samples_leaf: int = 1
    max_leaf_nodes: int | None = None
    bootstrap: bool = True
    max_samples: float | None = None  # rows drawn per tree / n (a bootstrap's); None: n draws
    oob_score: bool = False
    criterion: Criterion = Criterion.gini


# Which AdaBoost (ensembles.AdaBoostClassifier's `algorithm`): discrete SAMME (Zhu et al.
# 2009; AdaBoost.M1 for 2 classes), real SAMME.R (FHT 2000 Algorithm 2, Zhu et al. for K
# classes) or gentle (FHT 2000 Algorithm 4). Built by name: "SAMME.R" is no identifier.
ADABOOST_ALGORITHMS = ("SAMME", "SAMME.R", "gentle")
AdaBoostAlgorithm = Enum("AdaBoostAlgorithm", [(name, name) for name in ADABOOST_ALGORITHMS])


class AdaBoostMulticlass(Enum):
    """How AdaBoost boosts K > 2 classes (ensembles.AdaBoostClassifier's `multiclass`): samme,
    the multi-class AdaBoost of Zhu et al. (2009), or mh, AdaBoost.MH (Schapire and Singer
    1999; FHT 2000 section 8); two classes are the binary algorithm under either."""

    samme = "samme"
    mh = "mh"


@dataclass
class AdaBoostConfig(MethodConfig):
    """AdaBoost of trees of max_depth, or of max_leaf_nodes leaves grown best first;
    `algorithm`: SAMME (default), SAMME.R or gentle; `multiclass`: samme (default) or mh."""

    key: ClassVar[str] = "adaboost"
    name: str = "adaboost"
    n_estimators: int = 50
    learning_rate: float = 1.0
    max_depth: int | None = 1
    max_leaf_nodes: int | None = None
    algorithm: AdaBoostAlgorithm = AdaBoostAlgorithm.SAMME
    multiclass: AdaBoostMulticlass = AdaBoostMulticlass.samme


@dataclass
class LogitBoostConfig(MethodConfig):
    """Friedman, Hastie, Tibshirani (2000) LogitBoost; working responses clipped at z_max; trees
    of max_depth, or of max_leaf_nodes leaves grown best first."""

    key: ClassVar[str] = "logitboost"
    name: str = "logitboost"
    n_estimators: int = 100
    learning_rate: float = 1.0
    max_depth: int | None = 3
    max_leaf_nodes: int | None = None
    z_max: float = 4.0


@dataclass
class L2BoostConfig(MethodConfig):
    """Buhlmann and Yu (2003) L2Boost: least-squares trees on residuals (+-1 codes to classify)."""

    key: ClassVar[str] = "l2boost"
    name: str = "l2boost"
    n_estimators: int = 100
    learning_rate: float = 0.1
    max_depth: int = 3
    min_samples_leaf: int = 1
    subsample: float = 1.0


class GrowPolicy(Enum):
    depthwise = "depthwise"
    lossguide = "lossguide"


@dataclass
class GBTConfig(MethodConfig):
    """Regularized second-order gradient tree boosting (Chen and Guestrin 2016); XGBoost's
    parameter names, meanings and defaults (max_depth=0: unlimited, needs max_leaves > 0)."""

    key: ClassVar[str] = "gbt"
    name: str = "gbt"
    n_estimators: int = 100
    learning_rate: float = 0.3
    max_depth: int = 6
    max_leaves: int = 0
    grow_policy: GrowPolicy = GrowPolicy.depthwise
    reg_lambda: float = 1.0
    reg_alpha: float = 0.0
    gamma: float = 0.0
    min_child_weight: float = 1.0
    min_child_samples: int = 1
    subsample: float = 1.0
    colsample_bytree: float = 1.0
    colsample_bynode: float = 1.0
    max_bins: int = 255
    # categorical (set) splits, LightGBM's names (ensembles.engine.categories; the engines'
    # equivalents: experiments.engines.categorical)
    cat_smooth: float = 3.0
    cat_l2: float = 0.0
    min_data_per_group: int = 1
    max_cat_threshold: int = 32
    max_cat_to_onehot: int = 4
    base_score: float | None = None
    early_stopping_rounds: int | None = None
    validation_fraction: float = 0.1


def method_key(method: DictConfig) -> str:
    """The estimator family of a method config: its schema's key (`stump` -> `adaboost`)."""
    return OmegaConf.get_type(method).key


@dataclass
class LossConfig:
    """A loss key of ensembles.losses, or `auto`: the method's natural loss for the task."""

    name: str = MISSING


@dataclass
class QuantileLossConfig(LossConfig):
    """Pinball loss of the alpha-quantile."""

    name: str = "quantile"
    alpha: float = 0.5


@dataclass
class HuberLossConfig(LossConfig):
    """Huber loss: squared for |residual| <= delta, linear beyond."""

    name: str = "huber"
    delta: float = 1.0


class EngineDefaults(Enum):
    """Whose defaults a reference library runs with: the lab's (the method config mapped to
    the library, every engine alike) or the library's own (its constructor's defaults for every
    hyper-parameter: the column a user of the library gets without tuning)."""

    lab = "lab"
    library = "library"


@dataclass
class EngineConfig:
    """Which implementation runs the method: inhouse, xgboost, lightgbm or sklearn, with whose
    defaults (`EngineDefaults`)."""

    name: str = MISSING
    n_jobs: int = 1
    defaults_from: EngineDefaults = EngineDefaults.lab


@dataclass
class EvalConfig:
    """Splitting protocol (repeated holdout or repeated k-fold, stratified for classification),
    the learning-curve step and the parity check against the in-house engine."""

    kind: EvalKind = EvalKind.holdout
    test_size: float | int = 0.25  # a fraction of the rows, or a number of rows
    n_splits: int = 5
    n_repeats: int = 1
    curve_every: int = 10  # learning-curve step of iterative methods, in rounds
    parity: bool = False  # also fit the in-house estimator and log parity_* metrics
    n_bootstrap: int = 20  # training sets of kind=bias_variance (experiments/bias_variance.py)


@dataclass
class MlflowConfig:
    """Tracking store; None means env MLFLOW_TRACKING_URI, else sqlite:///<project>/mlflow.db."""

    tracking_uri: str | None = None
    experiment_name: str = "default"
    # outcomes the store did not take (experiments.store.journal)
    journal_dir: str = "multirun/journal"


class InnerKind(Enum):
    holdout = "holdout"
    kfold = "kfold"


@dataclass
class TuneConfig:
    """Hyper-parameter tuning inside each job (experiments/tuning/): `name` is the Optuna
    sampler (none: no tuning, random, tpe); n_trials or timeout_seconds (checked between
    trials), whichever ends first; trial_seconds: a hard limit per trial, every engine stopped
    there (tuning.trial_limit; the trial is failed, counted in tune_timed_out_trials);
    the inner split of the outer training rows; the inner metric to minimize (None: logloss to
    classify, rmse to regress; ties broken by experiments.tuning.selection.selection_key); the
    sampler's seed (None: the job's seed). Trial 0 of every study is the default
    configuration; n_trials counts the trials that ran or failed, not the infeasible ones. With
    `tunability`, each parameter of the space is also tuned alone (the others at the method
    config's values), for Probst et al.'s (2019) tunability."""

    name: str = "none"
    n_trials: int = 20
    timeout_seconds: float | None = None
    trial_seconds: float | None = None
    inner: InnerKind = InnerKind.holdout
    test_size: float = 0.2  # inner holdout: a fraction of the outer training rows
    n_splits: int = 3  # inner kfold
    metric: str | None = None
    seed: int | None = None
    tunability: bool = False


class Distribution(Enum):
    int = "int"
    float = "float"
    categorical = "categorical"


@dataclass
class ParamSpace:
    """The values one method parameter takes in a search: an int or float range [low, high]
    (log: sampled uniformly in log scale), or a list of choices."""

    distribution: Distribution = MISSING
    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: list[Any] | None = None


def method_schemas(base: type[MethodConfig] = MethodConfig) -> dict[str, type[MethodConfig]]:
    """Method key -> schema: every subclass of `base` that declares its own `key`, in the order
    defined (experiments.engines.catalog declares each key's method)."""
    schemas = {}
    for schema in base.__subclasses__():
        if "key" in vars(schema):
            schemas[schema.key] = schema
        schemas |= method_schemas(schema)
    return schemas


METHOD_SCHEMAS = method_schemas()

SearchSpaceConfig = make_dataclass(
    "SearchSpaceConfig",
    [(key, dict[str, Any], field(default_factory=dict)) for key in METHOD_SCHEMAS],
    namespace={
        "__module__": __name__,
        "__doc__": """One search space per method key (conf/search_space/<method>.yaml):
        parameter -> its ParamSpace (checked by experiments.tuning.space; a dict here so that `+`
        can add one).""",
    },
)


@dataclass
class Config:
    dataset: DatasetConfig = MISSING
    method: MethodConfig = MISSING
    loss: LossConfig = MISSING
    engine: EngineConfig = MISSING
    tune: TuneConfig = MISSING
    search_space: SearchSpaceConfig = field(default_factory=SearchSpaceConfig)
    suite: SuiteConfig = MISSING
    study: str | None = None  # a study file of one's own tables (experiments.studies)
    seed: int = 0
    eval: EvalConfig = field(default_factory=EvalConfig)
    mlflow: MlflowConfig = field(default_factory=MlflowConfig)
    resume: bool = True


SCHEMAS: dict[str, dict[str, type]] = {
    "dataset": {
        "dataset_schema": DatasetConfig,
        "hastie_10_2_schema": Hastie10_2Config,
        "friedman1_schema": Friedman1Config,
        "friedman2_schema": Friedman2Config,
        "friedman3_schema": Friedman3Config,
        "nested_spheres_schema": NestedSpheresConfig,
        "synthetic_classification_schema": SyntheticClassificationConfig,
        "synthetic_regression_schema": SyntheticRegressionConfig,
        "csv_schema": TableConfig,
        "openml_schema": OpenMLConfig,
        "suite_dataset_schema": SuiteDatasetConfig,
    },
    "method": {f"{key}_schema": schema for key, schema in METHOD_SCHEMAS.items()},
    "loss": {
        "loss_schema": LossConfig,
        "quantile_schema": QuantileLossConfig,
        "huber_schema": HuberLossConfig,
    },
    "engine": {"engine_schema": EngineConfig},
    "tune": {"tune_schema": TuneConfig},
    "suite": {"suite_schema": SuiteConfig},
}


def register_configs() -> None:
    """Store the schema nodes that conf/config.yaml and the group yamls extend, and the resolvers
    ${suite_datasets:} (the suite's dataset keys, comma-separated: a sweep over them) and
    ${file_stem:PATH} (a file's name without its suffix: a table's default dataset.name), and
    those of a study file (experiments.studies)."""
    OmegaConf.register_new_resolver(
        "suite_datasets", lambda *, _root_: ",".join(_root_.suite.datasets), replace=True
    )
    OmegaConf.register_new_resolver("file_stem", lambda path: Path(path).stem, replace=True)
    register_study_resolvers()
    store = ConfigStore.instance()
    store.store(name="config_schema", node=Config)
    for group, nodes in SCHEMAS.items():
        for name, node in nodes.items():
            store.store(group=group, name=name, node=node)


def group_options(group: str) -> list[str]:
    """The options of a config group: its yaml files in conf/ (schema nodes left out)."""
    return sorted(path.stem for path in (CONF_DIR / group).glob("*.yaml"))
