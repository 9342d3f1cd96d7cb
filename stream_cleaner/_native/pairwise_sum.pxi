# `trees.pyx` and `page_structure.pyx` include this: one home for numpy's summation order.


cdef double _pairwise_sum(const double *a, Py_ssize_t n) noexcept nogil:
    """numpy's pairwise sum of ``n`` contiguous doubles (``DOUBLE_pairwise_sum`` in
    ``loops_utils.h.src``): under 8 items one by one from -0.0; up to 128 in eight
    interleaved partial sums, combined pairwise, then the rest one by one; above that the
    two halves (the first a multiple of 8 long) summed so and added."""
    return _pairwise_sum_strided(a, n, 1)


cdef double _pairwise_sum_strided(const double *a, Py_ssize_t n, Py_ssize_t s) noexcept nogil:
    """`_pairwise_sum` of ``a[0], a[s], a[2 s]...``: the same additions in the same order."""
    cdef Py_ssize_t i, n2
    cdef double res
    cdef double r[8]
    if n < 8:
        res = -0.0
        for i in range(n):
            res += a[i * s]
        return res
    elif n <= 128:
        for i in range(8):
            r[i] = a[i * s]
        i = 8
        while i < n - (n % 8):
            r[0] += a[i * s]
            r[1] += a[(i + 1) * s]
            r[2] += a[(i + 2) * s]
            r[3] += a[(i + 3) * s]
            r[4] += a[(i + 4) * s]
            r[5] += a[(i + 5) * s]
            r[6] += a[(i + 6) * s]
            r[7] += a[(i + 7) * s]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res += a[i * s]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise_sum_strided(a, n2, s) + _pairwise_sum_strided(a + n2 * s, n - n2, s)
