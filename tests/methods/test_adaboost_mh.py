"""AdaBoost.MH (Schapire and Singer 1999, "Improved boosting algorithms using confidence-rated
predictions", sections 4 and 7; Friedman, Hastie and Tibshirani 2000, section 8) against the
algorithm written out below in numpy, with a tree grower of its own: K binary problems on the
N K pairs (i, k), y_ik = +1 if y_i = k else -1, weights w_ik = w_i / (N K) at first; each round
one tree whose leaves j are shared by the K problems, grown on the K problems' summed weighted
squared error sum_k [sum w_ik y_ik^2 - G_k^2 / H_k] (G_k = sum w_ik y_ik, H_k = sum w_ik over a
leaf's rows; for y in {-1, +1} the same splits as the binary Gini of (W+_k, W-_k) summed over
k), best first (the split of largest decrease next) or to a depth; then per leaf and class a
value from W+_jk, W-_jk (the leaf's weights of class k's pairs with y = +1, -1):

- discrete: sign(W+ - W-), r = sum_ik w_ik y_ik h_k(x_i), err = (1 - r) / 2, alpha = 1/2 eta
  log((1 - err) / err), w_ik <- w_ik exp(-alpha y_ik h_k(x_i));
- real: 1/2 log(p+ / p-), p+- = W+- / (W+ + W-) clipped below at float64 eps (the lab's SAMME.R
  clipping), w_ik <- w_ik exp(-eta y_ik c_k(x_i));
- gentle: eta (W+ - W-) / (W+ + W-), w_ik <- w_ik exp(-y_ik c_k(x_i));

F_k <- F_k + alpha c_k (alpha = 1 for real and gentle), weights renormalized over all (i, k).
Every feature takes a few integer values (exact bins) and the rows random positive weights (no
tied leaf values), so both growers see the same candidate splits and tie nowhere."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from ensembles import AdaBoostClassifier

VALUES = np.arange(6.0)  # every feature takes these values
EPS = np.finfo(np.float64).eps
N_ROUNDS = 25


@parametrize_with_checks([AdaBoostClassifier(n_estimators=5, multiclass="mh", algorithm=algorithm)
                          for algorithm in ("SAMME", "SAMME.R", "gentle")])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_an_unknown_multiclass_scheme_names_the_valid_ones():
    with pytest.raises(ValueError, match="unknown multiclass 'ovr'; choose one of: samme, mh"):
        AdaBoostClassifier(multiclass="ovr").fit(np.eye(3), [0, 1, 2])


def _noisy_classes(n_classes, n_train=800, n_test=300, seed=1):
    """Four features on VALUES, K classes drawn from the softmax of class scores that vary
    with all of them (noisy: leaves stay mixed), and random positive sample weights."""
    rng = np.random.default_rng(seed)
    X = rng.choice(VALUES, size=(n_train + n_test, 4))
    centers = rng.uniform(0, 5, size=(n_classes, 4))
    score = -0.25 * ((X[:, None, :] - centers[None]) ** 2).sum(axis=2)
    cumulative = np.cumsum(np.exp(score) / np.exp(score).sum(axis=1, keepdims=True), axis=1)
    y = (rng.uniform(size=(len(X), 1)) > cumulative[:, :-1]).sum(axis=1)
    return X[:n_train], y[:n_train], X[n_train:], rng.uniform(0.5, 1.5, n_train)


def _summed_squares_score(G, H):
    """sum_k G_k^2 / H_k over the last axis (0 where H_k = 0)."""
    return np.sum(np.divide(G * G, H, out=np.zeros_like(G), where=H > 0), axis=-1)


def _best_split(X, rows, signs, w):
    """(gain, feature, value) of the split "x_f <= value" of `rows` of largest decrease of the
    summed squared error, or None when no split leaves rows on both sides."""
    best = None
    parent = _summed_squares_score((w[rows] * signs[rows]).sum(axis=0), w[rows].sum(axis=0))
    for feature in range(X.shape[1]):
        codes = np.searchsorted(VALUES, X[rows, feature])
        G, H = np.zeros((len(VALUES), signs.shape[1])), np.zeros((len(VALUES), signs.shape[1]))
        np.add.at(G, codes, w[rows] * signs[rows])
        np.add.at(H, codes, w[rows])
        count = np.bincount(codes, minlength=len(VALUES))
        left_G, left_H = np.cumsum(G, axis=0)[:-1], np.cumsum(H, axis=0)[:-1]
        left_n = np.cumsum(count)[:-1]
        gains = (_summed_squares_score(left_G, left_H)
                 + _summed_squares_score(G.sum(axis=0) - left_G, H.sum(axis=0) - left_H) - parent)
        gains[(left_n == 0) | (left_n == len(rows))] = -np.inf
        cut = int(np.argmax(gains))
        if gains[cut] > -np.inf and (best is None or gains[cut] > best[0]):
            best = (gains[cut], feature, VALUES[cut])
    return best


def _shared_tree(X, y, signs, w, max_depth, max_leaf_nodes):
    """The leaves of one tree on the pairs, each a list of conditions (feature, value, left),
    in the order they were made: the open leaf whose split gains most is split first (the
    first made on ties), up to max_leaf_nodes leaves and max_depth levels (None: no limit); a
    leaf of one class or of one point is not split."""
    leaves = [[]]
    while max_leaf_nodes is None or len(leaves) < max_leaf_nodes:
        candidates = []
        for index, conditions in enumerate(leaves):
            rows = np.flatnonzero(_in_leaf(X, conditions))
            if (max_depth is not None and len(conditions) >= max_depth) or len(set(y[rows])) < 2:
                continue
            split = _best_split(X, rows, signs, w)
            if split is not None:
                candidates.append((split[0], -index, split[1], split[2]))
        if not candidates:
            return leaves
        _, negative_index, feature, value = max(candidates)
        parent = leaves.pop(-negative_index)
        leaves += [parent + [(feature, value, True)], parent + [(feature, value, False)]]
    return leaves


def _in_leaf(X, conditions):
    inside = np.ones(len(X), dtype=bool)
    for feature, value, left in conditions:
        inside &= (X[:, feature] <= value) == left
    return inside


def _leaf_of(X, leaves):
    return np.select([_in_leaf(X, conditions) for conditions in leaves], np.arange(len(leaves)))


def _discrete_values(plus, minus, learning_rate):
    return np.sign(plus - minus)


def _real_values(plus, minus, learning_rate):
    p_plus = np.maximum(plus / (plus + minus), EPS)
    p_minus = np.maximum(minus / (plus + minus), EPS)
    return 0.5 * np.log(p_plus / p_minus)


def _gentle_values(plus, minus, learning_rate):
    return learning_rate * (plus - minus) / (plus + minus)


LEAF_VALUES = {"SAMME": _discrete_values, "SAMME.R": _real_values, "gentle": _gentle_values}


def _adaboost_mh(algorithm, X, y, sample_weight, X_test, learning_rate, max_depth,
                 max_leaf_nodes):
    """AdaBoost.MH (module docstring) for N_ROUNDS rounds: the staged F on X and X_test, the
    votes alpha_m and the rounds' errors (discrete: (1 - r) / 2; real and gentle: the weighted
    share of pairs whose value's sign is not y_ik)."""
    n_classes = y.max() + 1
    signs = np.where(np.eye(n_classes)[y] == 1, 1.0, -1.0)
    w = np.repeat(sample_weight[:, None], n_classes, axis=1)
    w /= w.sum()
    F, F_test = np.zeros((len(X), n_classes)), np.zeros((len(X_test), n_classes))
    staged, votes, errors = [], [], []
    for _ in range(N_ROUNDS):
        leaves = _shared_tree(X, y, signs, w, max_depth, max_leaf_nodes)
        leaf, leaf_test = _leaf_of(X, leaves), _leaf_of(X_test, leaves)
        plus = np.array([(w * (signs > 0))[leaf == j].sum(axis=0) for j in range(len(leaves))])
        minus = np.array([(w * (signs < 0))[leaf == j].sum(axis=0) for j in range(len(leaves))])
        values = LEAF_VALUES[algorithm](plus, minus, learning_rate)
        h, h_test = values[leaf], values[leaf_test]
        if algorithm == "SAMME":
            error = (1.0 - np.sum(w * signs * h)) / 2.0
            vote = learning_rate * 0.5 * np.log((1.0 - error) / error)
            w = w * np.exp(-vote * signs * h)
        else:
            error, vote = np.sum(w * (np.sign(h) != signs)), 1.0
            w = w * np.exp(-(learning_rate if algorithm == "SAMME.R" else 1.0) * signs * h)
        w /= w.sum()
        F, F_test = F + vote * h, F_test + vote * h_test
        staged.append((F, F_test))
        votes.append(vote)
        errors.append(error)
    return staged, np.array(votes), np.array(errors)


@pytest.mark.parametrize("algorithm", ["SAMME", "SAMME.R", "gentle"])
@pytest.mark.parametrize("n_classes, learning_rate, max_depth, max_leaf_nodes", [
    (3, 1.0, 1, None),  # stumps
    (3, 0.5, None, 4),  # 4-node trees, best first
    (4, 1.0, 2, None),  # depth 2, depth first
])
def test_adaboost_mh_is_the_algorithm_on_shared_trees(algorithm, n_classes, learning_rate,
                                                      max_depth, max_leaf_nodes):
    """Round by round, on training and test rows: decision_function is F (n_samples, K),
    predict_proba 1 / (1 + exp(-2 F_k)) normalized over k, predict argmax_k F_k; the votes and
    errors are the algorithm's."""
    X, y, X_test, sample_weight = _noisy_classes(n_classes)
    staged, votes, errors = _adaboost_mh(algorithm, X, y, sample_weight, X_test, learning_rate,
                                         max_depth, max_leaf_nodes)
    model = AdaBoostClassifier(N_ROUNDS, algorithm=algorithm, multiclass="mh",
                               learning_rate=learning_rate, max_depth=max_depth,
                               max_leaf_nodes=max_leaf_nodes).fit(X, y, sample_weight)
    assert len(model.estimators_) == N_ROUNDS
    assert np.abs(model.estimator_weights_ - votes).max() < 1e-9
    assert np.abs(model.estimator_errors_ - errors).max() < 1e-9
    for rows, side in ((X, 0), (X_test, 1)):
        stages = zip(model.staged_decision_function(rows), model.staged_predict_proba(rows),
                     model.staged_predict(rows), staged, strict=True)
        for ours, our_proba, our_classes, reference in stages:
            F = reference[side]
            assert np.abs(ours - F).max() < 1e-8
            proba = 1.0 / (1.0 + np.exp(-2.0 * F))
            assert np.abs(our_proba - proba / proba.sum(axis=1, keepdims=True)).max() < 1e-8
            assert np.array_equal(our_classes, np.argmax(F, axis=1))


@pytest.mark.parametrize("algorithm", ["SAMME", "SAMME.R", "gentle"])
def test_two_class_adaboost_mh_is_the_binary_algorithm(algorithm):
    """For K = 2 the pairs (i, 0) and (i, 1) mirror each other: AdaBoost.MH written out above
    gives F_0 = -F_1, and the estimator (the binary algorithm under either scheme) the same
    classes round by round; FHT's F = F_1 is gentle's decision function and half the sum of
    real's (scikit-learn's SAMME.R decision function is its mean over the rounds, 2 F / m);
    discrete's votes are SAMME's halved, its errors the same."""
    X, y, X_test, sample_weight = _noisy_classes(2)
    staged, votes, errors = _adaboost_mh(algorithm, X, y, sample_weight, X_test, 1.0, 2, None)
    models = [AdaBoostClassifier(N_ROUNDS, algorithm=algorithm, multiclass=multiclass,
                                 max_depth=2).fit(X, y, sample_weight)
              for multiclass in ("mh", "samme")]  # fmt: skip
    assert np.array_equal(models[0].decision_function(X_test), models[1].decision_function(X_test))
    model = models[0]
    for m, (our_classes, ours, (_, F_test)) in enumerate(zip(
            model.staged_predict(X_test), model.staged_decision_function(X_test), staged,
            strict=True), start=1):
        assert np.abs(F_test[:, 0] + F_test[:, 1]).max() < 1e-12
        assert np.array_equal(our_classes, np.argmax(F_test, axis=1))
        if algorithm == "gentle":
            assert np.abs(ours - F_test[:, 1]).max() < 1e-8
        if algorithm == "SAMME.R":
            assert np.abs(ours - 2.0 * F_test[:, 1] / m).max() < 1e-8
    assert np.abs(model.estimator_errors_ - errors).max() < 1e-9
    if algorithm == "SAMME":
        assert np.abs(model.estimator_weights_ - 2.0 * votes).max() < 1e-9


def test_a_round_is_one_tree_shared_by_the_classes():
    X, y, _, _ = _noisy_classes(3, n_train=300)
    model = AdaBoostClassifier(5, algorithm="gentle", multiclass="mh", max_leaf_nodes=8,
                               max_depth=None).fit(X, y)
    for tree in model.estimators_:
        assert tree.value.shape == (8, 3)  # 8 leaves, a value per class
    assert np.isclose(model.feature_importances_.sum(), 1.0)


def test_a_categorical_feature_is_split_into_sets_of_categories_shared_by_the_classes():
    """Three classes by sets of a 10-level category ({1, 4, 7}, {0, 2}, the rest), no threshold
    on its codes separates them: each shared stump sends whole classes' categories to one side
    (the best prefix of the K classes' orders, engine.categories), and a few rounds classify
    every row."""
    rng = np.random.default_rng(0)
    category = rng.integers(0, 10, 3000)
    y = np.select([np.isin(category, [1, 4, 7]), np.isin(category, [0, 2])], [0, 1], 2)
    X = np.column_stack([category, rng.normal(size=len(category))])
    model = AdaBoostClassifier(10, algorithm="gentle", multiclass="mh",
                               categorical_features=[0]).fit(X, y)
    assert model.score(X, y) == 1.0
    for tree in model.estimators_[:3]:
        bits = np.unpackbits(tree.category_bits[0].view(np.uint8), bitorder="little")
        left = set(np.flatnonzero(bits[:10]))
        for group in ({1, 4, 7}, {0, 2}):
            assert group <= left or not group & left
