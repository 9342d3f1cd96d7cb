# cython: language_level=3, boundscheck=False, wraparound=False
"""`labeller.TreeEnsemble.leaf_values` in C: every tree walked for every row, one loop.

numpy's version takes one vectorised step per tree level over a (rows x trees) index array,
a dozen array operations per level; here each (row, tree) pair walks its own path. The same
comparison (``value > split``, so NaN goes left) and the same "a leaf points to itself" rule
give the same leaves; the sums stay numpy's, so scores are bit-identical.

Python twins (what each function must equal; DEVELOPERS.md names the tests):
`leaf_values`, `leaf_values_complete`: `labeller.TreeEnsemble.leaf_values`; `leaf_sums`
and `raw_scores_complete`: the numpy sums of `labeller.TreeEnsemble.raw_scores`.
`leaf_values_complete` walks trees of depth 7 or 8 with AVX-512 where the CPU has it
(``trees_avx512.h``, `vector_walk`), `use_fastest_walk` switching that off for the tests.
"""

import numpy as np

cdef extern from "trees_avx512.h":
    int sc_trees_walk(const double *x, Py_ssize_t n, int depth, const int *feature,
                      const double *split, const double *leaf_value, Py_ssize_t n_trees,
                      double *leaves, Py_ssize_t row_stride, Py_ssize_t tree_stride) nogil
    int sc_trees_force(int fastest) nogil
    int sc_trees_vector() nogil


def use_fastest_walk(bint fastest):
    """For tests: ``False`` walks trees of depth 7 or 8 one row at a time, as on a CPU without
    AVX-512; returns whether the AVX-512 walk is now in use."""
    return bool(sc_trees_force(fastest))


def vector_walk():
    """Whether trees of depth 7 or 8 are walked eight rows at a time (AVX-512) in this
    process."""
    return bool(sc_trees_vector())


def leaf_values(const double[:, ::1] features, const long[::1] feature,
                const double[::1] split, const long[::1] children,
                const double[::1] value, const long[::1] roots, int depth):
    """The leaf value of every tree for every row: a (rows, trees) float64 array."""
    cdef Py_ssize_t n = features.shape[0], n_trees = roots.shape[0], r, t
    cdef int level
    cdef long node
    out = np.empty((n, n_trees), dtype=np.float64)
    cdef double[:, ::1] leaves = out
    cdef long a, b, c, d, e, f, g, h
    with nogil:
        for t in range(n_trees):
            r = 0
            while r + 8 <= n:  # eight rows at a time: independent chains of loads overlap
                a = b = c = d = e = f = g = h = roots[t]
                for level in range(depth):
                    a = children[2 * a + (features[r, feature[a]] > split[a])]
                    b = children[2 * b + (features[r + 1, feature[b]] > split[b])]
                    c = children[2 * c + (features[r + 2, feature[c]] > split[c])]
                    d = children[2 * d + (features[r + 3, feature[d]] > split[d])]
                    e = children[2 * e + (features[r + 4, feature[e]] > split[e])]
                    f = children[2 * f + (features[r + 5, feature[f]] > split[f])]
                    g = children[2 * g + (features[r + 6, feature[g]] > split[g])]
                    h = children[2 * h + (features[r + 7, feature[h]] > split[h])]
                leaves[r, t] = value[a]
                leaves[r + 1, t] = value[b]
                leaves[r + 2, t] = value[c]
                leaves[r + 3, t] = value[d]
                leaves[r + 4, t] = value[e]
                leaves[r + 5, t] = value[f]
                leaves[r + 6, t] = value[g]
                leaves[r + 7, t] = value[h]
                r += 8
            while r + 4 <= n:  # then four
                a = b = c = d = roots[t]
                for level in range(depth):
                    a = children[2 * a + (features[r, feature[a]] > split[a])]
                    b = children[2 * b + (features[r + 1, feature[b]] > split[b])]
                    c = children[2 * c + (features[r + 2, feature[c]] > split[c])]
                    d = children[2 * d + (features[r + 3, feature[d]] > split[d])]
                leaves[r, t] = value[a]
                leaves[r + 1, t] = value[b]
                leaves[r + 2, t] = value[c]
                leaves[r + 3, t] = value[d]
                r += 4
            while r < n:
                node = roots[t]
                for level in range(depth):
                    node = children[2 * node + (features[r, feature[node]] > split[node])]
                leaves[r, t] = value[node]
                r += 1
    return out


def leaf_values_complete(const double[:, ::1] columns, const int[:, ::1] feature,
                         const double[:, ::1] split, const double[:, ::1] leaf_value,
                         int depth):
    """`leaf_values` of trees laid out complete (`labeller._complete_layout`): tree ``t``'s
    node ``k`` tests ``feature[t, k]`` against ``split[t, k]`` and has its children at
    ``2k + 1`` (left) and ``2k + 2``, so a step needs no load of a child index; after ``depth``
    steps the node is ``2 ** depth - 1`` plus a column of ``leaf_value[t]``.

    ``columns`` is the feature matrix transposed, (features, rows): the rows walked together
    read one feature from one cache line. Same comparison (``value > split``, NaN goes left),
    same leaf for every row, so the same (rows, trees) array as `leaf_values`. Trees of depth
    7 or 8 go to ``trees_avx512.h``'s vector walk where the CPU has AVX-512 (auto's two stages
    walked in ~30 % less time on CleanEval's pages); the same leaves again.
    """
    cdef Py_ssize_t n = columns.shape[1], n_trees = feature.shape[0]
    out = np.empty((n, n_trees), dtype=np.float64)
    if n == 0 or n_trees == 0:
        return out
    _check_complete(feature, split, leaf_value, n_trees, depth)
    cdef double[:, ::1] leaves = out
    _walk_complete(columns, feature, split, leaf_value, depth, &leaves[0, 0], n_trees, 1)
    return out


def raw_scores_complete(const double[:, ::1] columns, const int[:, ::1] feature,
                        const double[:, ::1] split, const double[:, ::1] leaf_value, int depth,
                        Py_ssize_t num_class):
    """`leaf_sums` of `leaf_values_complete`, the leaves held tree by tree on the way (a
    vector walk stores eight rows' leaves at once instead of eight scattered values): the
    same sums in the same order, so the same scores bit for bit."""
    cdef Py_ssize_t n = columns.shape[1], n_trees = feature.shape[0]
    if n == 0 or n_trees == 0:
        return _sum_leaves(NULL, n, n_trees, num_class, n_trees, 1)
    _check_complete(feature, split, leaf_value, n_trees, depth)
    cdef double[:, ::1] leaves = np.empty((n_trees, n), dtype=np.float64)
    _walk_complete(columns, feature, split, leaf_value, depth, &leaves[0, 0], 1, n)
    return _sum_leaves(&leaves[0, 0], n, n_trees, num_class, 1, n)


cdef _check_complete(const int[:, ::1] feature, const double[:, ::1] split,
                     const double[:, ::1] leaf_value, Py_ssize_t n_trees, int depth):
    cdef Py_ssize_t first_leaf = ((<Py_ssize_t> 1) << depth) - 1
    if depth < 1 or feature.shape[1] != first_leaf or split.shape[1] != first_leaf or \
            leaf_value.shape[1] != first_leaf + 1 or split.shape[0] != n_trees or \
            leaf_value.shape[0] != n_trees:
        raise ValueError("not a complete layout of this depth")


cdef void _walk_complete(const double[:, ::1] columns, const int[:, ::1] feature,
                         const double[:, ::1] split, const double[:, ::1] leaf_value, int depth,
                         double *leaves, Py_ssize_t row_stride, Py_ssize_t tree_stride):
    """Row ``r``'s leaf of tree ``t`` into ``leaves[r * row_stride + t * tree_stride]``."""
    cdef Py_ssize_t n = columns.shape[1], n_trees = feature.shape[0], r, t
    cdef Py_ssize_t first_leaf = ((<Py_ssize_t> 1) << depth) - 1
    cdef int level
    cdef const double *x = &columns[0, 0]
    cdef const double *row
    cdef const int *ft
    cdef const double *sp
    cdef const double *lv
    cdef double *out
    cdef Py_ssize_t a, b, c, d, e, f, g, h
    # the article and auto labellers' (depth 7); the vector walk's offsets (feature * rows)
    # and row numbers are ints
    if (depth == 7 or depth == 8) and columns.shape[0] * n < 2 ** 31:
        with nogil:
            if sc_trees_walk(x, n, depth, &feature[0, 0], &split[0, 0], &leaf_value[0, 0],
                             n_trees, leaves, row_stride, tree_stride):
                return
    with nogil:
        for t in range(n_trees):
            ft = &feature[t, 0]
            sp = &split[t, 0]
            lv = &leaf_value[t, 0]
            out = leaves + t * tree_stride
            r = 0
            while r + 8 <= n:  # eight rows at a time: independent chains of loads overlap
                row = x + r
                a = b = c = d = e = f = g = h = 0
                for level in range(depth):
                    a = 2 * a + 1 + (row[ft[a] * n] > sp[a])
                    b = 2 * b + 1 + (row[ft[b] * n + 1] > sp[b])
                    c = 2 * c + 1 + (row[ft[c] * n + 2] > sp[c])
                    d = 2 * d + 1 + (row[ft[d] * n + 3] > sp[d])
                    e = 2 * e + 1 + (row[ft[e] * n + 4] > sp[e])
                    f = 2 * f + 1 + (row[ft[f] * n + 5] > sp[f])
                    g = 2 * g + 1 + (row[ft[g] * n + 6] > sp[g])
                    h = 2 * h + 1 + (row[ft[h] * n + 7] > sp[h])
                out[r * row_stride] = lv[a - first_leaf]
                out[(r + 1) * row_stride] = lv[b - first_leaf]
                out[(r + 2) * row_stride] = lv[c - first_leaf]
                out[(r + 3) * row_stride] = lv[d - first_leaf]
                out[(r + 4) * row_stride] = lv[e - first_leaf]
                out[(r + 5) * row_stride] = lv[f - first_leaf]
                out[(r + 6) * row_stride] = lv[g - first_leaf]
                out[(r + 7) * row_stride] = lv[h - first_leaf]
                r += 8
            while r < n:
                a = 0
                for level in range(depth):
                    a = 2 * a + 1 + (x[ft[a] * n + r] > sp[a])
                out[r * row_stride] = lv[a - first_leaf]
                r += 1


def raw_scores_preorder(const double[:, ::1] features, const int[::1] feature,
                        const double[::1] split, const int[::1] right, const int[::1] roots,
                        Py_ssize_t num_class):
    """`raw_scores_complete` of a few rows, the trees laid out in preorder
    (`labeller._preorder_layout`): node ``k`` tests ``feature[k]`` against ``split[k]``, its
    left child is ``k + 1`` and its right one ``right[k]``; a leaf has feature -1 and its
    value in ``split``. Each tree's nodes lie together, the trees one after another, and a
    walk only goes forward, so one row reads the trees from memory in order: a page's type
    (one row, its trees cold after the labeller's) walks in about half the time the complete
    layout takes, whose trees are padded to ``2 ** depth`` nodes. Same comparison
    (``value > split``, NaN goes left), same leaves, same sums (`leaf_sums`)."""
    cdef Py_ssize_t n = features.shape[0], n_trees = roots.shape[0], width = features.shape[1]
    cdef Py_ssize_t r, t, nodes = feature.shape[0]
    cdef int k
    cdef const double *row
    if split.shape[0] != nodes or right.shape[0] != nodes:
        raise ValueError("not a preorder layout")
    for t in range(nodes):  # every walk stays in the arrays and in the row, and moves on
        if feature[t] >= width or (feature[t] >= 0 and not t < right[t] < nodes):
            raise ValueError("not a preorder layout of trees reading these columns")
    for t in range(n_trees):
        if not 0 <= roots[t] < nodes:
            raise ValueError("not a preorder layout")
    if n == 0 or n_trees == 0:
        return _sum_leaves(NULL, n, n_trees, num_class, n_trees, 1)
    cdef double[:, ::1] leaves = np.empty((n, n_trees), dtype=np.float64)
    with nogil:
        for r in range(n):
            row = &features[r, 0]
            for t in range(n_trees):
                k = roots[t]
                while feature[k] >= 0:
                    k = right[k] if row[feature[k]] > split[k] else k + 1
                leaves[r, t] = split[k]
    return _sum_leaves(&leaves[0, 0], n, n_trees, num_class, n_trees, 1)


include "pairwise_sum.pxi"


def leaf_sums(const double[:, ::1] leaves, Py_ssize_t num_class):
    """``labeller.TreeEnsemble.raw_scores``'s sums of a (rows, trees) array of leaf values,
    as numpy adds them: from 0.0 (the identity numpy's add reduction starts from), with one
    class each row's pairwise sum (``values.sum(axis=1)``, `_pairwise_sum`); with
    ``num_class`` classes, tree ``t`` adding to class ``t % num_class``, each class's values
    one by one in tree order (``values.reshape(rows, -1, num_class).sum(axis=1)``)."""
    cdef Py_ssize_t n = leaves.shape[0], n_trees = leaves.shape[1]
    if n == 0 or n_trees == 0:
        return _sum_leaves(NULL, n, n_trees, num_class, n_trees, 1)
    return _sum_leaves(&leaves[0, 0], n, n_trees, num_class, n_trees, 1)


cdef _sum_leaves(const double *leaves, Py_ssize_t n, Py_ssize_t n_trees, Py_ssize_t num_class,
                 Py_ssize_t row_stride, Py_ssize_t tree_stride):
    """`leaf_sums` of the leaves at ``leaves[r * row_stride + t * tree_stride]``."""
    cdef Py_ssize_t r, t, c
    cdef double *row_out
    cdef const double *row
    if num_class < 1 or n_trees % num_class:
        raise ValueError("the trees are not a whole number of rounds of the classes")
    if num_class == 1:
        out = np.empty(n, dtype=np.float64)
    else:
        out = np.empty((n, num_class), dtype=np.float64)
    if n == 0:
        return out
    cdef double[::1] flat = out.reshape(-1)
    with nogil:
        for r in range(n):
            row = leaves + r * row_stride
            if num_class == 1:
                flat[r] = 0.0 + _pairwise_sum_strided(row, n_trees, tree_stride)
            else:
                row_out = &flat[r * num_class]
                for c in range(num_class):
                    row_out[c] = 0.0
                for t in range(n_trees):
                    row_out[t % num_class] += row[t * tree_stride]
    return out
