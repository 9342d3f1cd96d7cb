# cython: language_level=3, boundscheck=False, wraparound=False
"""`labeller.TreeEnsemble.leaf_values` in C: every tree walked for every row, one loop.

numpy's version takes one vectorised step per tree level over a (rows x trees) index array,
a dozen array operations per level; here each (row, tree) pair walks its own path. The same
comparison (``value > split``, so NaN goes left) and the same "a leaf points to itself" rule
give the same leaves; the sums stay numpy's, so scores are bit-identical.
"""

import numpy as np


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
