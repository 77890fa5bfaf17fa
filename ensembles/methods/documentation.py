"""The estimators' numpydoc sections, each parameter, attribute and reference written once.

`numpydoc_sections` puts Parameters (the class's signature: its order, its defaults),
Attributes and References into a class's docstring, before its Examples; the docstring itself
keeps the method's summary, its formulas and its Examples.
"""

import inspect
import textwrap


def entries(text: str) -> dict[str, list[str]]:
    """numpydoc entries by name: a line `name : type`, then its indented description."""
    found = {}
    for line in text.strip("\n").splitlines():
        if not line.startswith(" "):
            name = line.split(" : ")[0]
            found[name] = []
        found[name].append(line)
    return found


PARAMETERS = entries("""
criterion : {"gini", "entropy", "log_loss"}
    Impurity of a node of class shares p_k: Gini 1 - sum_k p_k^2, entropy -sum_k p_k log p_k
    ("log_loss" is entropy, as in scikit-learn).
max_leaf_nodes : int or None
    At most this many leaves per tree; None: no limit.
min_samples_split : int
    Rows a node needs to be split (at least 2 min_samples_leaf, scikit-learn's rule).
min_samples_leaf : int
    Rows each child of a split keeps at least.
max_features : {"sqrt", "log2"}, int, float or None
    Features drawn at random at each node: sqrt(F), log2(F), a count, a fraction of the F
    features, or None (all F). A drawn feature constant in the node counts among them; when
    every drawn one is constant, more are drawn until one is not (scikit-learn's rule).
bootstrap : bool
    Grow each tree on a bootstrap sample (n draws with replacement, scikit-learn's draws for
    the tree's seed); False: on every row.
max_samples : float in (0, 1] or None
    Draws of a bootstrap, max(int(max_samples n), 1); None: n.
oob_score : bool
    Score the out-of-bag predictions (each row predicted by the trees whose bootstrap left
    it out): accuracy for a classifier, R^2 for a regressor.
learning_rate : float
    Shrinkage eta of each round: F_m = F_{m-1} + eta f_m.
subsample : float in (0, 1]
    Share of the rows each round's trees are grown on, drawn without replacement (stochastic
    gradient boosting).
loss : {"squared", "absolute", "huber", "quantile", "poisson"}
    The loss l(y, F) whose gradient g and hessian h each tree fits (ensembles.losses);
    absolute, huber and quantile refit each leaf on the loss itself (MART).
quantile_alpha : float
    The quantile of loss="quantile".
huber_delta : float
    The threshold of loss="huber" between its squared and absolute parts.
max_leaves : int
    At most this many leaves per tree; 0: no limit.
grow_policy : {"depthwise", "lossguide"}
    Level by level (XGBoost's default), or the leaf of largest gain first (LightGBM's).
reg_lambda : float
    L2 penalty lambda of the leaf weights: w* = -T_alpha(G) / (H + lambda).
reg_alpha : float
    L1 penalty alpha, the soft threshold T_alpha(G) = sign(G) max(abs(G) - alpha, 0).
gamma : float
    Smallest split gain: a split is made if S(left) + S(right) - S(parent) >= gamma, with
    S = T_alpha(G)^2 / (H + lambda) (XGBoost's code; the paper's gain has a factor 1/2).
min_child_weight : float
    Smallest hessian sum H of a child.
min_child_samples : int
    Fewest rows of a child (LightGBM's name).
colsample_bytree : float in (0, 1]
    Share of the features drawn for each tree.
colsample_bynode : float in (0, 1]
    Share of the tree's features drawn for each node.
cat_smooth : float
    Categories of fewer rows at a node are not sorted in; the order is G / (H + cat_smooth)
    (LightGBM's name, as the four below; the rules: ensembles.engine.categories,
    docs/categorical_splits.md).
cat_l2 : float
    Added to reg_lambda in a set split's children's scores.
min_data_per_group : int
    Rows each side of a set split.
max_cat_threshold : int
    Categories one side of a set split at most.
max_cat_to_onehot : int
    With fewer categories in the feature: one against the rest.
base_score : float or None
    Initial prediction in the output space; None: the loss's best constant, estimated from
    the data.
early_stopping_rounds : int or None
    Stop when the validation loss has not improved for this many rounds, and keep the rounds
    up to the best; None: no early stopping.
validation_fraction : float in (0, 1)
    Share of the rows held out for early stopping (stratified for a classifier).
z_max : float or None
    Bound on the working response, abs(z) <= z_max (FHT's advice for stability); None: no
    bound.
algorithm : {"SAMME", "SAMME.R", "gentle"}
    Discrete AdaBoost (SAMME), Real AdaBoost (SAMME.R) or Gentle AdaBoost; each round's
    update is in ensembles.methods.adaboost_rounds.
max_bins : int
    Quantile bins per feature (2 to 255); missing values (NaN) have a bin of their own.
categorical_features : "from_dtype", None, array of bool, int or str
    Categorical features, as scikit-learn's HistGradientBoosting reads them: "from_dtype"
    takes pandas category columns; a mask, indices or column names; None: none.
random_state : int, RandomState instance or None
    Seeds every random draw of the fit (rows, features, thresholds).
n_jobs : int or None
    Threads of fit and predict, as joblib (None: 1, -1: every core); a boosting fit on fewer
    than 2^20 values (rows x features) runs on one (engine.threads.SERIAL_TABLE). The model
    does not depend on it.
verbose : int
    Above 0, a progress bar over the trees or rounds (on a terminal only).
""")
FOREST = PARAMETERS | entries("""
n_estimators : int
    Number of trees M; the ensemble averages them, f(x) = (1/M) sum_m T_m(x).
max_depth : int or None
    Deepest level of a tree; None: grow until the leaves are pure or too small to split.
""")
BOOSTING = PARAMETERS | entries("""
n_estimators : int
    Boosting rounds M (each adds one tree per output).
max_depth : int
    Depth of each tree.
""")
GBT = BOOSTING | entries("""
max_depth : int
    Deepest level of a tree; 0: no limit (then max_leaves > 0).
""")
GBT_CLASSIFIER = GBT | entries("""
loss : {"logistic", "exponential", "softmax"} or None
    The loss (ensembles.losses): logistic or exponential for two classes, softmax (one tree
    per class per round) for more; None: logistic for two classes, softmax for more.
""")
BEST_FIRST = BOOSTING | entries("""
max_depth : int or None
    Depth of each tree; None: no limit (max_leaf_nodes bounds the tree, or nothing).
max_leaf_nodes : int or None
    At most this many leaves per tree, grown best first (the leaf whose split gains most is
    split next, as scikit-learn's trees with max_leaf_nodes; FHT's J-node trees); None: depth
    first to max_depth. With both, both bound the tree.
""")
ADABOOST = BEST_FIRST | entries("""
n_estimators : int
    Most rounds M (fewer when boosting stops early).
learning_rate : float
    Shrinkage eta: SAMME's vote alpha_m = eta (log((1 - err_m) / err_m) + log(K - 1)); the
    exponent of SAMME.R's weights; the leaves of gentle's trees (likewise for AdaBoost.MH's
    vote, weights and leaves).
max_depth : int or None
    Depth of each tree (1: stumps); None: no limit.
multiclass : {"samme", "mh"}
    How K > 2 classes are boosted: "samme", the multi-class AdaBoost of Zhu et al. (SAMME,
    SAMME.R; gentle one against the rest, a tree per class), or "mh", AdaBoost.MH (Schapire
    and Singer): K binary problems on the pairs (sample, class), one tree a round shared by
    the classes with a value per leaf and class. Two classes are the binary algorithm under
    either.
""")

FITTED = entries("""
n_features_in_ : int
    Number of features seen in fit.
feature_names_in_ : ndarray of shape (n_features,)
    Column names of X, when X is a DataFrame with string column names.
is_categorical_ : ndarray of bool or None
    Which features are categorical (None: none).
""")
CLASSES = entries("""
classes_ : ndarray of shape (n_classes,)
    The class labels.
""")
FOREST_ATTRIBUTES = entries("""
estimators_ : list of Tree
    The grown trees (ensembles.engine.tree.Tree).
feature_importances_ : ndarray of shape (n_features,)
    Mean over trees of each tree's normalized split gains (scikit-learn's MDI).
""") | FITTED
FOREST_CLASSIFIER_ATTRIBUTES = FOREST_ATTRIBUTES | CLASSES | entries("""
oob_score_ : float
    Out-of-bag accuracy, with oob_score=True.
oob_decision_function_ : ndarray of shape (n_samples, n_classes)
    Out-of-bag class probabilities of the training rows (NaN for a row in every bootstrap),
    with oob_score=True.
""")
FOREST_REGRESSOR_ATTRIBUTES = FOREST_ATTRIBUTES | entries("""
oob_score_ : float
    Out-of-bag R^2, with oob_score=True.
oob_prediction_ : ndarray of shape (n_samples,)
    Out-of-bag predictions of the training rows (NaN for a row in every bootstrap), with
    oob_score=True.
""")
BOOSTING_ATTRIBUTES = entries("""
trees_ : list of list of Tree
    The trees, round by round, one per output (ensembles.engine.tree.Tree), their leaf values
    multiplied by learning_rate.
init_raw_ : ndarray of shape (n_outputs,)
    F_0, the raw scores every round starts from.
n_estimators_ : int
    Rounds kept.
feature_importances_ : ndarray of shape (n_features,)
    Total split gain per feature over all trees, normalized to sum 1.
""") | FITTED
EARLY_STOPPING_ATTRIBUTES = entries("""
best_iteration_ : int or None
    Index of the round of least validation loss, with early stopping.
validation_score_ : list of float
    Validation loss after each round, with early stopping.
""")
ADABOOST_ATTRIBUTES = entries("""
estimators_ : list of Tree
    The rounds' trees (ensembles.engine.tree.Tree); a gentle round with K > 2 classes holds a
    list of K trees, one per class (multiclass="samme"); an AdaBoost.MH round's tree holds a
    value per leaf and class.
estimator_weights_ : ndarray of shape (n_rounds,)
    The votes alpha_m of SAMME and of discrete AdaBoost.MH; 1 a round for SAMME.R, gentle and
    their AdaBoost.MH forms (as scikit-learn's SAMME.R).
estimator_errors_ : ndarray of shape (n_rounds,)
    Each round's weighted training error err_m; over the pairs (sample, class), the weighted
    Hamming error, for AdaBoost.MH and K-class gentle.
feature_importances_ : ndarray of shape (n_features,)
    Vote-weighted mean of the rounds' normalized split gains.
""") | CLASSES | FITTED

REFERENCES = {
    "breiman1996": 'Leo Breiman, "Bagging predictors", Machine Learning 24(2), 123-140, 1996.',
    "breiman2001": 'Leo Breiman, "Random forests", Machine Learning 45(1), 5-32, 2001.',
    "geurts2006": 'Pierre Geurts, Damien Ernst and Louis Wehenkel, "Extremely randomized '
                  'trees", Machine Learning 63(1), 3-42, 2006.',
    "straka": 'Milan Straka, NPFL129 lecture 8, "Model combinations, gradient boosted trees" '
              "(the seed notes: bagging, random forests, extra trees).",
    "csc411": 'CSC411 "Ensemble methods: gradient boost tree" (the seed notes: "Taylor '
              'expansion approximation of loss", "The structure score").',
    "chen2016": 'Tianqi Chen and Carlos Guestrin, "XGBoost: a scalable tree boosting system", '
                "KDD 2016, 785-794.",
    "friedman2001": 'Jerome H. Friedman, "Greedy function approximation: a gradient boosting '
                    'machine", Annals of Statistics 29(5), 1189-1232, 2001.',
    "buhlmann2003": 'Peter Buhlmann and Bin Yu, "Boosting with the L2 loss: regression and '
                    'classification", Journal of the American Statistical Association '
                    "98(462), 324-339, 2003.",
    "probaml": 'Kevin P. Murphy, "Probabilistic machine learning", section 18.5 Boosting (the '
               "seed notes).",
    "fht2000": 'Jerome Friedman, Trevor Hastie and Robert Tibshirani, "Additive logistic '
               'regression: a statistical view of boosting", Annals of Statistics 28(2), '
               "337-407, 2000.",
    "zhu2009": 'Ji Zhu, Hui Zou, Saharon Rosset and Trevor Hastie, "Multi-class AdaBoost", '
               "Statistics and Its Interface 2(3), 349-360, 2009.",
    "schapire1999": 'Robert E. Schapire and Yoram Singer, "Improved boosting algorithms using '
                    'confidence-rated predictions", Machine Learning 37(3), 297-336, 1999.',
    "adaboost_dtree": 'Gradient boosted decision tree, "Adaptive boosted decision tree" (the '
                      "seed notes: AdaBoost-DTree, alpha = ln sqrt((1 - eps) / eps)).",
}


def _default(value) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def numpydoc_sections(parameters: dict, attributes: dict, references: tuple[str, ...]):
    """Class decorator: Parameters (each __init__ parameter in order, described by
    `parameters`, with its default), Attributes and References ([1]_, [2]_, ... in the order
    of `references`' keys) go into the class's docstring before its line "Examples"."""

    def document(cls):
        if cls.__doc__ is None:  # python -OO
            return cls
        signature = inspect.signature(cls.__init__).parameters.values()
        described = [[f"{head}, default={_default(p.default)}", *text]
                     for p in signature if p.name != "self"
                     for head, *text in [parameters[p.name]]]
        lines = ["Parameters", "----------", *(line for entry in described for line in entry),
                 "", "Attributes", "----------",
                 *(line for entry in attributes.values() for line in entry),
                 "", "References", "----------",
                 *(line for i, key in enumerate(references, 1)
                   for line in textwrap.wrap(f".. [{i}] {REFERENCES[key]}", 92,
                                             subsequent_indent=" " * 7)), ""]
        head, examples = cls.__doc__.split("\n    Examples\n", 1)
        cls.__doc__ = "\n".join([head, *("    " + line if line else "" for line in lines),
                                 "    Examples", examples])
        return cls

    return document
