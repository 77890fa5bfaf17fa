"""The Newton boosting loop shared by GBT, L2Boost and LogitBoost.

Round m fits one tree per output k to the loss's (g, h) at the current raw scores and adds it
with shrinkage eta: F_k <- F_k + eta f_mk (CSC411 GBT notes, "Recap: Boosted Tree
Algorithm"; leaf w* = -G / (H + lambda), split gain from the structure score).
"""

import dataclasses

import numba
import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ensembles.class_choice import class_labels
from ensembles.engine.binning import MAX_BINS, BinMapper
from ensembles.engine.categories import CategoryRegularization
from ensembles.engine.gradient_grower import (
    DEPTHWISE,
    LOSSGUIDE,
    GradientParams,
    TreeDelivery,
    gradient_workspace,
    grow_gradient_tree_fields,
)
from ensembles.engine.threads import LOAD_CHECK_ROUNDS, engine_threads
from ensembles.engine.tree import Tree
from ensembles.losses import compiled_stats_targets, kernel_weights
from ensembles.methods.newton_rounds import RoundTargets, grow_newton_rounds
from ensembles.methods.packing import packed_trees
from ensembles.methods.validation import validate_prediction_data
from ensembles.progress import progress

GROW_POLICIES = {"depthwise": DEPTHWISE, "lossguide": LOSSGUIDE}
SEED_RANGE = np.iinfo(np.int32).max
XGBOOST_MIN_SPLIT_GAIN = 1e-6  # XGBoost's kRtEps: a split must gain more than this
NOT_ADDED = np.empty((0, 1))  # a TreeDelivery's `out` when the caller adds the tree


@dataclasses.dataclass(frozen=True)
class TreeParams:
    """How each tree is grown (meanings as in XGBoost; the categorical set splits'
    regularization, cat_smooth to max_cat_to_onehot, as in LightGBM: engine.categories)."""

    grow_policy: str = "depthwise"
    max_depth: int = 6
    max_leaves: int = 0
    reg_lambda: float = 1.0
    reg_alpha: float = 0.0
    gamma: float = 0.0
    min_child_weight: float = 1.0
    min_child_samples: int = 1
    min_split_gain: float = XGBOOST_MIN_SPLIT_GAIN
    colsample_bytree: float = 1.0
    colsample_bynode: float = 1.0
    cat_smooth: float = 3.0
    cat_l2: float = 0.0
    min_data_per_group: int = 1
    max_cat_threshold: int = 32
    max_cat_to_onehot: int = 4

    def category_regularization(self) -> CategoryRegularization:
        """The set splits' regularization as the engine takes it (floats all)."""
        return CategoryRegularization(
            float(self.cat_smooth), float(self.cat_l2), float(self.min_data_per_group),
            float(self.max_cat_threshold), float(self.max_cat_to_onehot))

    def grower_params(self, threads: int = 1) -> GradientParams:
        """These parameters as the gradient grower takes them (typed: one numba signature),
        for a fit on `threads` threads."""
        return GradientParams(
            GROW_POLICIES[self.grow_policy], self.max_depth, self.max_leaves, self.reg_lambda,
            self.reg_alpha, self.gamma, self.min_child_weight, self.min_child_samples,
            self.min_split_gain, self.colsample_bynode, threads).typed()

    def validate(self) -> None:
        if self.grow_policy not in GROW_POLICIES:
            raise ValueError(f"unknown grow_policy {self.grow_policy!r}; choose one of: "
                             f"{', '.join(GROW_POLICIES)}")
        if self.max_depth < 0 or self.max_leaves < 0:
            raise ValueError("max_depth and max_leaves must be >= 0 (0: no limit)")
        if self.max_depth == 0 and self.max_leaves == 0:
            raise ValueError("max_depth=0 (no depth limit) needs max_leaves > 0")
        for name in ("reg_lambda", "reg_alpha", "gamma", "min_child_weight", "cat_smooth",
                     "cat_l2", "min_data_per_group", "max_cat_to_onehot"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not self.max_cat_threshold >= 1:
            raise ValueError(f"max_cat_threshold must be >= 1, got {self.max_cat_threshold}")
        for name in ("colsample_bytree", "colsample_bynode"):
            if not 0.0 < getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in (0, 1], got {getattr(self, name)}")


FLOAT32_SAFE = 1e37  # float32 holds up to 3.4e38; a row's w g stays within w times y's range


class NewtonBoosting:
    """Mixin for estimators: `_boost` fits, `_raw_predict` / `_staged_raw_predict` predict.

    The subclass provides n_estimators, learning_rate and random_state as parameters,
    `_tree_params()`, and may override `_combine_round(update)` (identity unless the method
    recentres a round's class outputs, as J-class LogitBoost does) and `_initial_raw`. The
    settings below are
    parameters of GBT; a method that does not expose one boosts with the value given here.
    """

    subsample = 1.0
    max_bins = MAX_BINS
    base_score = None
    early_stopping_rounds = None
    validation_fraction = 0.1

    def _combine_round(self, update: np.ndarray) -> np.ndarray:
        """A round's tree outputs (rows x outputs) as added to the raw scores; a round of one
        output must come back unchanged. (Where it is the identity, _add_round adds the
        trees to the raw scores in place.)"""
        return update

    def _initial_raw(self, loss, y, sample_weight, n_outputs) -> np.ndarray:
        """F_0: the loss's best constant, or base_score mapped to the raw scale."""
        if self.base_score is None:
            return loss.init_raw(y, sample_weight)
        return loss.raw_from_output(self.base_score, n_outputs)

    def _check_boosting_params(self) -> None:
        if not (isinstance(self.n_estimators, (int, np.integer)) and self.n_estimators >= 1):
            raise ValueError(f"n_estimators must be an int >= 1, got {self.n_estimators!r}")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate!r}")
        if not 0.0 < self.subsample <= 1.0:
            raise ValueError(f"subsample must be in (0, 1], got {self.subsample!r}")
        if self.early_stopping_rounds is not None and not (
                self.early_stopping_rounds >= 1 and 0.0 < self.validation_fraction < 1.0):
            raise ValueError("early stopping needs early_stopping_rounds >= 1 and "
                             "0 < validation_fraction < 1")

    def _boost(self, X, y, sample_weight, loss, n_outputs, stratify=None):
        """Fit the rounds on n_jobs engine threads (joblib's meaning: None is 1, -1 every core;
        the fit does not depend on it), fewer on a small table (threads.table_threads: one
        below SERIAL_TABLE values, and below SHARED_TABLE no more than the cores idle at the
        start and at every LOAD_CHECK_ROUNDS-th round)."""
        with engine_threads(self.n_jobs, X.size) as follow_load:
            return self._fit_rounds(X, y, sample_weight, loss, n_outputs, stratify,
                                    follow_load)

    def _fit_rounds(self, X, y, sample_weight, loss, n_outputs, stratify, follow_load):
        """Fit the rounds; sets init_raw_, trees_ (rounds x outputs) and, with early stopping,
        validation_score_ and best_iteration_; before every LOAD_CHECK_ROUNDS-th round,
        follow_load (engine_threads') sets the thread count again. (No training loss per
        round: it cost a tenth of a round at 800k rows and nothing reads it.)"""
        self._check_boosting_params()
        tree_params = self._tree_params()
        tree_params.validate()
        rng = check_random_state(self.random_state)
        X_val = y_val = w_val = None
        if self.early_stopping_rounds is not None:
            X, X_val, y, y_val, sample_weight, w_val = train_test_split(
                X, y, sample_weight, test_size=self.validation_fraction, stratify=stratify,
                random_state=rng.randint(SEED_RANGE))
        active = np.flatnonzero(sample_weight > 0).astype(np.int32)  # rows of positive weight
        active = None if len(active) == len(y) else active
        self._bin_mapper = BinMapper(self.max_bins, categorical=getattr(
            self, "is_categorical_", None)).fit(X if active is None else X[active])
        codes = self._bin_mapper.transform(X, order="C")
        columns = np.asfortranarray(codes)
        self.init_raw_ = self._initial_raw(loss, y, sample_weight, n_outputs)
        raw = np.asfortranarray(np.tile(self.init_raw_, (len(y), 1)))  # a column per output
        raw_val = None if X_val is None else np.asfortranarray(
            np.tile(self.init_raw_, (len(y_val), 1)))
        codes_val = None if X_val is None else self._bin_mapper.transform(X_val, order="C")
        # (g, h) * sample weight per output in float32, as XGBoost, LightGBM and
        # HistGradientBoosting keep them (the histograms sum them in float64): half the bytes
        # each histogram pass reads
        stats = np.empty((n_outputs, len(y), 2), dtype=np.float32)
        scale = float(np.max(sample_weight)) * max(1.0, float(np.ptp(y)))
        if not scale < FLOAT32_SAFE:
            raise ValueError(
                f"the largest sample weight times the range of y is {scale:.3g}: the per-row "
                f"gradient statistics w g, kept in float32 as XGBoost and LightGBM keep them, "
                f"could overflow (above {FLOAT32_SAFE:.0e}); rescale the targets or the weights")
        n_features = X.shape[1]
        n_used = n_features
        if tree_params.colsample_bytree < 1.0:
            n_used = max(1, int(tree_params.colsample_bytree * n_features))
        workspace = gradient_workspace(len(y) if active is None else len(active), n_used,
                                       tree_params.max_depth, tree_params.max_leaves,
                                       tree_params.min_child_samples,
                                       self._bin_mapper.categorical_)
        grower_params = tree_params.grower_params(numba.get_num_threads())
        category_regularization = tree_params.category_regularization()
        self.trees_, self.validation_score_ = [], []
        self.best_iteration_ = None
        adds_while_growing = not (loss.refits_leaves or self._combines(n_outputs))
        compiled = self._compiled_targets(
            loss, y, sample_weight, n_outputs, adds_while_growing and active is None
            and self.subsample == 1.0 and n_used == n_features and raw_val is None)
        for m in progress(range(self.n_estimators), self.n_estimators, self.verbose, "round"):
            if m % LOAD_CHECK_ROUNDS == LOAD_CHECK_ROUNDS - 1:
                grower_params = grower_params._replace(threads=follow_load())
            if compiled is not None:
                if m == 0 or m % LOAD_CHECK_ROUNDS == LOAD_CHECK_ROUNDS - 1:
                    # the rounds up to the next look at the load, in one call
                    stop = min(self.n_estimators,
                               ((m + 1) // LOAD_CHECK_ROUNDS + 1) * LOAD_CHECK_ROUNDS - 1)
                    fields, workspace = grow_newton_rounds(
                        codes, columns, compiled, stats, self._bin_mapper.n_bins_,
                        self._bin_mapper.categorical_, np.arange(n_features, dtype=np.int32),
                        grower_params, category_regularization,
                        rng.randint(SEED_RANGE, size=stop - m), workspace,
                        TreeDelivery(self._bin_mapper.padded_edges, float(self.learning_rate),
                                     raw))
                    self.trees_ += [[Tree.from_fields(tree)] for tree in fields]
                continue
            loss.weighted_stats(y, raw, sample_weight, stats)
            rows = np.arange(len(y), dtype=np.int32) if active is None else active.copy()
            if self.subsample < 1.0:
                rows = rows[rng.uniform(size=len(rows)) < self.subsample]
            features = np.arange(n_features, dtype=np.int32)
            if n_used < n_features:
                features = np.sort(rng.choice(n_features, n_used, replace=False)).astype(np.int32)
            round_trees, partitions = [], []
            added = adds_while_growing and len(rows) == len(y)
            for k in range(n_outputs):
                keep_rows = loss.refits_leaves or k + 1 < n_outputs  # the grower reorders them
                fields, partition, node_start, workspace = grow_gradient_tree_fields(
                    codes, columns, stats[k], rows.copy() if keep_rows else rows,
                    self._bin_mapper.n_bins_, self._bin_mapper.categorical_, features,
                    grower_params, category_regularization, rng.randint(SEED_RANGE), workspace,
                    TreeDelivery(self._bin_mapper.padded_edges, float(self.learning_rate),
                                 raw[:, k:k + 1] if added else NOT_ADDED))
                tree = Tree.from_fields(fields)
                if loss.refits_leaves:
                    tree = self._refit_leaves(tree, loss, codes, y, raw[:, k], sample_weight,
                                              rows)
                round_trees.append(tree)
                partitions.append((partition, node_start))
            self.trees_.append(round_trees)
            if not added:
                self._add_round(raw, round_trees, codes, (columns, partitions))
            del rows, partition, partitions  # freed before the next round's rows are made
            if raw_val is not None:
                self._add_round(raw_val, round_trees, codes_val)
                self.validation_score_.append(loss.loss(y_val, raw_val, w_val))
                if self._should_stop():
                    break
        if self.best_iteration_ is not None:
            del self.trees_[self.best_iteration_ + 1:]
        self.n_estimators_ = len(self.trees_)
        for k in range(n_outputs):
            self._packed_output(k)  # packed for prediction once
        return self

    def _should_stop(self) -> bool:
        """Early stopping: no better validation loss in the last early_stopping_rounds rounds."""
        self.best_iteration_ = int(np.argmin(self.validation_score_))
        return len(self.validation_score_) - 1 - self.best_iteration_ >= self.early_stopping_rounds

    def _compiled_targets(self, loss, y, sample_weight, n_outputs, plain_rounds):
        """The RoundTargets of rounds run in compiled calls (newton_rounds) when they can: one
        output of a loss with compiled statistics, and plain_rounds: every round's tree grown
        on every row and feature and added as it is grown, no validation set, so that the
        random state gives the Python loop's seeds (one draw a tree, nothing else drawn);
        else None."""
        if not (plain_rounds and n_outputs == 1 and loss.compiled_stats):
            return None
        return RoundTargets(loss.compiled_stats, *compiled_stats_targets(loss.compiled_stats, y),
                            *kernel_weights(sample_weight))

    def _combines(self, n_outputs: int) -> bool:
        """Whether a round's trees are combined (_combine_round) before they are added."""
        return n_outputs > 1 and type(self)._combine_round is not NewtonBoosting._combine_round

    def _add_round(self, raw, round_trees, codes, grown=None):
        """raw += the round's combined tree outputs on binned `codes`. grown = (columns,
        partitions) of the training rows: a tree grown on every row reads its rows' leaves
        from its partition instead of walking the tree. Each tree adds into a C-contiguous
        (rows, 1) block (one numba specialization, no strided writes): its own column of raw
        (column-major) when the round is added as it is (one output, or no _combine_round),
        else a block of `update`, which _combine_round combines (its zeros and transposed
        add took 3% of an 8-class fit)."""
        combines = self._combines(len(round_trees))
        update = np.zeros((len(round_trees), codes.shape[0], 1)) if combines else None
        for k, tree in enumerate(round_trees):
            out = update[k] if combines else raw[:, k:k + 1]
            if grown is not None and len(grown[1][k][0]) == codes.shape[0]:
                tree.add_by_partition(*grown[1][k], grown[0], out)
            else:
                tree.add_binned(codes, out)
        if combines:
            raw += self._combine_round(update[:, :, 0].T)

    def _refit_leaves(self, tree, loss, codes, y, raw, weight, rows):
        """MART's line search per leaf: value = eta * argmin_c sum l(y, F + c) over the rows of
        the leaf."""
        leaf_of_row = tree.apply_binned(codes[rows])
        value = tree.value.copy()
        for leaf in np.unique(leaf_of_row):
            in_leaf = rows[leaf_of_row == leaf]
            value[leaf, 0] = self.learning_rate * loss.refit_leaf(y[in_leaf], raw[in_leaf],
                                                                  weight[in_leaf])
        return dataclasses.replace(tree, value=value)

    def _staged_raw_predict(self, X):
        """Raw scores after each round: F_0 + sum_{m <= M} combined round updates."""
        check_is_fitted(self, "trees_")
        X = validate_prediction_data(self, X)
        raw = np.tile(self.init_raw_, (X.shape[0], 1))
        for round_trees in self.trees_:
            update = np.zeros_like(raw)
            for k, tree in enumerate(round_trees):
                update[:, k] = tree.predict(X)[:, 0]
            raw = raw + self._combine_round(update)
            yield raw

    def _raw_predict(self, X):
        check_is_fitted(self, "trees_")
        X = validate_prediction_data(self, X)
        total = np.zeros((len(self.init_raw_), X.shape[0], 1))  # C-contiguous per output
        with engine_threads(self.n_jobs):
            for k in range(total.shape[0]):
                self._packed_output(k).add_to(X, total[k])
        raw = self._combine_round(total[:, :, 0].T)
        raw += self.init_raw_  # in place: a new array of 1M rows is first touched page by page
        return raw

    def _packed_output(self, k: int):
        """The trees of output k, packed for prediction (packing.packed_trees)."""
        return packed_trees(self, f"output {k}", [round_trees[k] for round_trees in self.trees_])

    @property
    def feature_importances_(self):
        """Total split gain per feature over all trees, normalized to sum 1 (gain importance)."""
        check_is_fitted(self, "trees_")
        gains = sum(tree.feature_gains(self.n_features_in_)
                    for round_trees in self.trees_ for tree in round_trees)
        total = np.sum(gains)
        return gains / total if total > 0 else np.zeros(self.n_features_in_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


class LossClassifierOutputs:
    """predict_proba, predict and their staged versions of a boosted classifier whose class
    probabilities are its loss's output of the raw scores (`self._loss`)."""

    def predict_proba(self, X):
        raw = self._raw_predict(X)
        return self._loss.output(raw)

    def predict(self, X):
        raw = self._raw_predict(X)  # its own: the classes' indices are written over it
        return class_labels(self.classes_, self._loss.most_probable(raw, overwrite=True))

    def staged_predict_proba(self, X):
        for raw in self._staged_raw_predict(X):
            yield self._loss.output(raw)

    def staged_predict(self, X):
        for raw in self._staged_raw_predict(X):
            yield class_labels(self.classes_, self._loss.most_probable(raw))
