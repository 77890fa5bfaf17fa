"""The numba tree engine: arrays in, arrays out. It knows nothing of scikit-learn.

Which module does what, for whom:

| module          | what it does                                         | used by              |
| --------------- | ---------------------------------------------------- | -------------------- |
| binning         | quantile bin edges, uint8 codes, the missing bin     | every estimator      |
| gradient_grower | one Newton tree on (g, h), depthwise or lossguide    | GBT, L2Boost,        |
|                 |                                                      | LogitBoost           |
| histogram       | (g, h, count, 0) node histograms, subtraction        | gradient_grower      |
| partition       | batched parallel partition of a level's rows         | gradient_grower      |
| cart_grower     | one CART tree: Gini, entropy or squared error,       | random forest, extra |
|                 | random features per node, best or random thresholds  | trees, bagging,      |
|                 |                                                      | AdaBoost             |
| cart_histogram  | histograms of the features drawn at a node           | cart_grower          |
| cart_partition  | in-place split of a node's rows, left sums on the way| cart_grower          |
| node_arrays     | the flat node arrays, the rules of growth they share | both growers         |
| splitting       | the gain formulas and the threshold scans            | both growers         |
| categories      | splits of a categorical feature into two category    | both growers, tree,  |
|                 | sets: the orders, the scans, the 256-bit sets        | partitions           |
| tree            | the grown tree: prediction, importances              | every estimator      |
| bootstrap       | a forest tree's bootstrap counts, scikit-learn's     | forests              |
|                 | draws for the tree's seed                            |                      |
| work_queue      | row chunks as work items, taken largest first        | histogram, partition |
| merge_sort      | a stable sort of (key, item) pairs, no allocation    | work_queue,          |
|                 |                                                      | categories           |
| borrowing       | the inner kernels' decorators: no reference counts   | the growers' inner   |
|                 | on the arrays they borrow, no allocation             | kernels              |
| simd, prefetch, | LLVM intrinsics: four-lane add, software prefetch,   | the histogram and    |
| llvm_arrays     | an element's address, type checks; plain Python      | partition kernels    |
|                 | under NUMBA_DISABLE_JIT=1 (to step through the code) |                      |
| threads         | n_jobs -> numba threads                              | every estimator      |
| array_views     | arrays read at their addresses: a packed ensemble's  | tree                 |
|                 | trees, without copying them into one table           |                      |
| kernel_cache    | where numba caches the kernels: one directory per    | every module that    |
|                 | version of their sources, any checkout's path        | compiles kernels     |

numba's on-disk cache: kernel_cache (one directory per version of the sources of kernels,
shared by every checkout of them).

Kernels copy one array into another with a loop, not an array assignment (`a[:] = b`): numba
compiles an assignment's shape check with the text of its error message, string formatting
included, once per dimension count and process (3 s of a one-process cold start, measured).
Filling with a scalar (`a[:] = 0.0`) has no such check.
"""

from ensembles.engine.kernel_cache import use_engine_cache

use_engine_cache()
