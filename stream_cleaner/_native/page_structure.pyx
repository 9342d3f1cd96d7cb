# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""`page_structure.structure_features` and `page_structure.score_context` in C.

The elements (runs of blocks whose tag paths share their first tags) are kept on a stack as
the blocks go by: one pass sums each element's characters, prose and link characters (or its
scores), a second pass replays the same stack and writes each block's row. The arithmetic is
the reference's, in the same order, so both give the same numbers (tests compare them).

Python twins (what each function must equal; DEVELOPERS.md names the tests):
`structure_features` (and `structure_features_of_rows`), `score_context`, `common_depths`:
the functions of the same names in `page_structure`; `page_scores`: its ``_page_scores``; `page_type_features`:
`page_types._page_type_features`; `prose_run`: `guard.prose_run` with the prose blocks
`guard.guard_content` picks (``guard._prose_run``); `main_words`: ``guard._main_words``'s
numpy path (`guard.main_prose`); `calls_to_action_candidates`: at least
``guard._calls_to_action_candidates``' blocks (`guard.drop_calls_to_action` decides the
same with either).
"""

from libc.math cimport expm1, floor, log1p
from libc.stdlib cimport qsort
from libc.string cimport memset


cdef extern from "Python.h":
    object PyUnicode_FromKindAndData(int kind, const void *buffer, Py_ssize_t size)
    int PyUnicode_KIND(object o)
    void *PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    Py_UCS4 PyUnicode_READ(int kind, const void *data, Py_ssize_t index) nogil

import numpy as np


include "pairwise_sum.pxi"


cdef Py_ssize_t _count_elements(const long[::1] depths, const long[::1] common, Py_ssize_t n):
    cdef Py_ssize_t i, total = 0, open_ = 0, keep
    for i in range(n):
        keep = common[i] if i else 0
        if keep > depths[i]:
            keep = depths[i]
        if keep > open_:
            keep = open_
        total += depths[i] - keep
        open_ = depths[i]
    return total


def structure_features_of_rows(const long[::1] depths, const long[::1] common,
                               const double[::1] chars, const double[::1] words,
                               const double[:, :] rows, Py_ssize_t link_column,
                               Py_ssize_t non_ascii_column, double[:, ::1] out,
                               double min_words, double min_chars_cjk, double max_link_density,
                               double main_share, long small_blocks, long up_levels):
    """`page_structure.structure_features` from the page's rows, its blocks' characters and
    words: `page_structure.is_prose`, the link densities and the two totals here (one call
    instead of a dozen of numpy's), then `structure_features`."""
    cdef Py_ssize_t n = depths.shape[0], i
    cdef double[::1] prose = np.empty(n)
    cdef double[::1] link = np.empty(n)
    cdef double[::1] prose_chars = np.empty(n)
    cdef double total_t = 0.0, total_p = 0.0
    if chars.shape[0] != n or words.shape[0] != n or rows.shape[0] != n:
        raise ValueError("one row, character and word count for each block")
    for i in range(n):
        link[i] = rows[i, link_column]
        prose[i] = 1.0 if (
            (words[i] >= min_words
             or (rows[i, non_ascii_column] >= 0.5 and chars[i] >= min_chars_cjk))
            and link[i] < max_link_density
        ) else 0.0
        prose_chars[i] = chars[i] * prose[i]
    if n:
        total_t = _pairwise_sum(&chars[0], n)
        total_p = _pairwise_sum(&prose_chars[0], n)
    return structure_features(depths, common, chars, prose, link, out, total_t, total_p,
                              main_share, small_blocks, up_levels)


def structure_features(const long[::1] depths, const long[::1] common, const double[::1] chars,
                       const double[::1] prose, const double[::1] link, double[:, ::1] out,
                       double total_t, double total_p, double main_share, long small_blocks,
                       long up_levels):
    """The reference's ``_structure_features``: ``(out, inside)``; ``total_t`` and ``total_p``
    are the page's characters and prose characters as the reference sums them."""
    cdef Py_ssize_t n = depths.shape[0], n_el = _count_elements(depths, common, n)
    cdef Py_ssize_t max_depth = 0, i, d, k, e, keep, open_, main = -1, first, end, base, depth
    for i in range(n):
        if depths[i] > max_depth:
            max_depth = depths[i]
    el_depth_a = np.zeros(n_el, dtype=np.int64)
    el_start_a = np.zeros(n_el, dtype=np.int64)
    el_end_a = np.full(n_el, n, dtype=np.int64)
    el_sums_a = np.zeros((n_el, 3), dtype=np.float64)
    el_count_a = np.zeros(n_el, dtype=np.int64)
    stack_a = np.zeros(max_depth + 1, dtype=np.int64)
    inside_a = np.zeros(n, dtype=np.uint8)
    between_a = np.zeros(n, dtype=np.int64)
    cdef long[::1] el_depth = el_depth_a, el_start = el_start_a, el_end = el_end_a
    cdef long[::1] el_count = el_count_a, stack = stack_a, between = between_a
    cdef double[:, ::1] el_sums = el_sums_a
    cdef unsigned char[::1] inside = inside_a
    cdef double t, p, lk, need, safe_t, ref, main_t, best, v
    cdef long low, shared, main_depth
    cdef Py_ssize_t next_id = 0
    if n == 0:
        return out, inside_a.view(bool)
    # pass 1: the elements and their sums
    open_ = 0
    for i in range(n):
        keep = common[i] if i else 0
        if keep > depths[i]:
            keep = depths[i]
        if keep > open_:
            keep = open_
        for d in range(keep, open_):
            el_end[stack[d]] = i
        for d in range(keep, depths[i]):
            stack[d] = next_id
            el_depth[next_id] = d
            el_start[next_id] = i
            next_id += 1
        open_ = depths[i]
        t = chars[i]
        p = t * prose[i]
        lk = t * link[i]
        for d in range(open_):
            e = stack[d]
            el_sums[e, 0] += t
            el_sums[e, 1] += p
            el_sums[e, 2] += lk
            el_count[e] += 1
    # the main element
    k = 1 if total_p > 0 else 0
    need = main_share * (total_p if k else total_t)
    low = -1
    for e in range(n_el):
        if el_sums[e, k] >= need and el_depth[e] > low:
            main = e
            low = el_depth[e]
    if main < 0:
        return out, inside_a.view(bool)
    main_depth = el_depth[main]
    first, end = el_start[main], el_end[main]
    for i in range(first, end):
        inside[i] = depths[i] > main_depth
    main_t = el_sums[main, 0]
    safe_t = total_t if total_t > 1.0 else 1.0
    ref = total_p if total_p > 0 else 0.0
    for i in range(n):
        between[i] = main_depth + 1
    low = main_depth + 1
    for i in range(first - 1, -1, -1):
        if common[i + 1] < low:
            low = common[i + 1]
        between[i] = low
    low = main_depth + 1
    for i in range(end, n):
        if common[i] < low:
            low = common[i]
        between[i] = low
    # pass 2: replay the stack, one row per block
    open_ = 0
    next_id = 0
    for i in range(n):
        keep = common[i] if i else 0
        if keep > depths[i]:
            keep = depths[i]
        if keep > open_:
            keep = open_
        for d in range(keep, depths[i]):
            stack[d] = next_id
            next_id += 1
        open_ = depths[i]
        depth = depths[i]
        shared = between[i]
        if depth < shared:
            shared = depth
        if main_depth + 1 < shared:
            shared = main_depth + 1
        out[i, 0] = 1.0 if inside[i] else 0.0
        out[i, 1] = 0.0 if inside[i] else <double> (shared - (main_depth + 1))
        out[i, 2] = main_t / safe_t
        out[i, 3] = log1p(<double> el_count[main])
        if depth == 0:
            continue
        for k in range(1, up_levels + 1):
            d = depth - k
            if d < 0:
                d = 0
            e = stack[d]
            t = el_sums[e, 0]
            base = 4 + (k - 1) * 5
            out[i, base] = el_sums[e, 1] / ref if ref else 0.0
            out[i, base + 1] = t / safe_t
            out[i, base + 2] = el_sums[e, 2] / (t if t > 1.0 else 1.0)
            out[i, base + 3] = log1p(<double> el_count[e])
            out[i, base + 4] = el_sums[e, 1] / (t if t > 1.0 else 1.0)
        if ref:
            best = 0.0
            for d in range(depth):
                e = stack[d]
                if el_count[e] <= small_blocks:
                    v = el_sums[e, 1] / ref
                    if v > best:
                        best = v
            out[i, 4 + up_levels * 5] = best
    return out, inside_a.view(bool)


def score_context(const long[::1] depths, const long[::1] common, const double[::1] scores,
                  const double[::1] chars, const unsigned char[::1] main_in, double[:, ::1] out,
                  tuple page, long up_levels, double outside_main):
    """The reference's ``_score_context``; ``page`` holds the page-wide columns as the
    reference computes them (highest, median and 90th percentile score, positive share, the
    main element's mean score or ``None`` without one)."""
    cdef Py_ssize_t n = depths.shape[0], n_el = _count_elements(depths, common, n)
    cdef Py_ssize_t max_depth = 0, i, d, k, e, keep, open_, next_id = 0, j
    cdef double top = page[0], median = page[1], q90_score = page[2], share = page[3], c
    cdef bint has_main = page[4] is not None
    cdef double main_mean = page[4] if has_main else 0.0
    cdef int phase
    if n == 0:
        return out
    for i in range(n):
        if depths[i] > max_depth:
            max_depth = depths[i]
    sums_a = np.zeros((n_el, 2), dtype=np.float64)
    stack_a = np.zeros(max_depth + 1, dtype=np.int64)
    cdef double[:, ::1] sums = sums_a
    cdef long[::1] stack = stack_a
    for i in range(n):
        out[i, 0] = scores[i]
        out[i, 1] = top
        out[i, 2] = scores[i] - top
        out[i, 3] = median
        out[i, 4] = q90_score
        out[i, 5] = share
    for phase in range(2):
        open_ = 0
        next_id = 0
        for i in range(n):
            keep = common[i] if i else 0
            if keep > depths[i]:
                keep = depths[i]
            if keep > open_:
                keep = open_
            for d in range(keep, depths[i]):
                stack[d] = next_id
                next_id += 1
            open_ = depths[i]
            if phase == 0:
                c = chars[i]
                for d in range(open_):
                    sums[stack[d], 0] += c
                    sums[stack[d], 1] += c * scores[i]
            elif open_:
                for k in range(1, up_levels + 1):
                    d = open_ - k
                    if d < 0:
                        d = 0
                    e = stack[d]
                    out[i, 5 + k] = sums[e, 1] / (sums[e, 0] if sums[e, 0] > 1e-9 else 1e-9)
    for i in range(n):
        j = i - 1 if i >= 1 else 0
        k = i + 1 if i + 1 < n else n - 1
        out[i, 6 + up_levels] = (scores[j] + scores[k]) / 2
        j = i - 2 if i >= 2 else 0
        k = i + 2 if i + 2 < n else n - 1
        out[i, 7 + up_levels] = (scores[j] + scores[k]) / 2
        if has_main:
            out[i, 8 + up_levels] = main_mean if main_in[i] else outside_main
    return out


def page_scores(const double[::1] scores, const double[::1] chars,
                const unsigned char[::1] main_in):
    """The reference's ``_page_scores`` of a page with at least one block: its sums as numpy
    makes them (pairwise, `_pairwise_sum`, from 0.0), the cumulative share of characters one
    by one in the stable order of the scores, as ``np.cumsum`` adds them."""
    cdef Py_ssize_t n = scores.shape[0], i, m = 0, median = -1, q90 = -1
    cdef double total, denominator, cumulative = 0.0, share, main_chars
    order_a = np.argsort(np.asarray(scores), kind="stable")
    weighted_a = np.empty(n, dtype=np.float64)
    main_chars_a = np.empty(n, dtype=np.float64)
    cdef long[::1] order = order_a
    cdef double[::1] weighted = weighted_a, inside_chars = main_chars_a
    total = 0.0 + _pairwise_sum(&chars[0], n)
    denominator = total if total >= 1e-9 else 1e-9
    for i in range(n):
        cumulative += chars[order[i]]
        share = cumulative / denominator
        if median < 0 and share >= 0.5:
            median = i
        if q90 < 0 and share >= 0.9:
            q90 = i
    if median < 0:
        median = n - 1
    if q90 < 0:
        q90 = n - 1
    # characters scored above 0
    for i in range(n):
        weighted[i] = chars[i] * (1.0 if scores[i] > 0 else 0.0)
    share = (0.0 + _pairwise_sum(&weighted[0], n)) / denominator
    for i in range(n):
        if main_in[i]:
            weighted[m] = scores[i] * chars[i]
            inside_chars[m] = chars[i]
            m += 1
    mean = None
    if m:
        main_chars = 0.0 + _pairwise_sum(&inside_chars[0], m)
        mean = (0.0 + _pairwise_sum(&weighted[0], m)) / (main_chars if main_chars >= 1e-9 else 1e-9)
    return (scores[order[n - 1]], scores[order[median]], scores[order[q90]], share, mean)


cdef long _shared_tags(str a, str b):
    """How many leading tags two space-separated tag paths share."""
    cdef Py_ssize_t i = 0, na = len(a), nb = len(b)
    cdef long tags = 0
    while i < na and i < nb and a[i] == b[i]:
        if a[i] == u" ":
            tags += 1
        i += 1
    if i > 0 and (i == na or a[i] == u" ") and (i == nb or b[i] == u" ") and a[i - 1] != u" ":
        tags += 1
    return tags


def common_depths(list blocks):
    """The reference's ``common_depths``: ``(depths, common)``."""
    cdef Py_ssize_t n = len(blocks), i
    depths_a = np.zeros(n, dtype=np.int64)
    common_a = np.zeros(n, dtype=np.int64)
    cdef long[::1] depths = depths_a, common = common_a
    cdef str previous = u"", path
    for i in range(n):
        block = blocks[i]
        path = block.tag_path
        depths[i] = block.depth
        if i:
            common[i] = depths[i] if path is previous or path == previous else _shared_tags(previous, path)
        previous = path
    return depths_a, common_a


cdef int _compare_doubles(const void *a, const void *b) noexcept nogil:
    cdef double x = (<const double *> a)[0], y = (<const double *> b)[0]
    return (x > y) - (x < y)


cdef double _quantile(const double *ordered, Py_ssize_t n, double q) noexcept nogil:
    """`page_types._quantiles` of one ``q`` over ``n`` > 0 sorted values."""
    cdef Py_ssize_t last = n - 1, low, high
    cdef double position = q * last
    low = <Py_ssize_t> floor(position)
    high = low + 1 if low + 1 < last else last
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def page_type_features(const double[:, :] rows, const long[::1] read, list blocks,
                       const double[::1] chars, const double[::1] words, double min_prose_words,
                       double max_prose_link, double long_words, bint class_words,
                       long n_groups, unsigned long long max_levels):
    """`page_types._page_type_features`: the page-type row's columns before the URL's, and
    (with ``class_words``) those after it."""
    cdef Py_ssize_t n = len(blocks), i, k, g, prose_blocks = 0, long_blocks = 0, most = 0
    cdef double total, headings = 0.0, dates = 0.0, link
    cdef double[::1] product = np.empty(n)
    cdef double[::1] ordered = np.empty(n)
    cdef unsigned char[::1] prose = np.empty(n, dtype=np.uint8)
    cdef unsigned long long[::1] codes
    cdef list common, named
    cdef dict paths = {}
    if n == 0 or len(chars) != n or len(words) != n or rows.shape[0] != n:
        raise ValueError("one row, character and word count for each of at least one block")
    total = _pairwise_sum(&chars[0], n) + 1.0
    for i in range(n):
        link = rows[i, read[2]]
        prose[i] = words[i] >= min_prose_words and link < max_prose_link
        prose_blocks += prose[i]
        long_blocks += words[i] >= long_words
        headings += rows[i, read[8]]
        dates += rows[i, read[9]]
        ordered[i] = words[i]
    common = [log1p(n), log1p(total - 1.0)]
    for i in range(n):
        product[i] = chars[i] * prose[i]
    common.append(_pairwise_sum(&product[0], n) / total)
    for i in range(n):
        product[i] = chars[i] * rows[i, read[2]]
    common.append(_pairwise_sum(&product[0], n) / total)
    for k in range(3, 8):
        for i in range(n):
            product[i] = chars[i] * (1.0 if rows[i, read[k]] > 0 else 0.0)
        common.append(_pairwise_sum(&product[0], n) / total)
    if class_words:
        codes = np.empty(n, dtype=np.uint64)
    for i in range(n):
        block = blocks[i]
        path = block.tag_path
        count = paths.get(path, 0) + 1
        paths[path] = count
        if <Py_ssize_t> count > most:
            most = count
        if class_words:
            codes[i] = block.class_words
    qsort(&ordered[0], n, sizeof(double), _compare_doubles)
    common += [
        <double> prose_blocks / n, headings, dates / n, _quantile(&ordered[0], n, 0.5),
        _quantile(&ordered[0], n, 0.9), log1p(long_blocks), log1p(most), <double> len(paths) / n,
    ]
    if not class_words:
        return common, []
    named = [log1p(blocks[n - 1].comment_marks)]
    for g in range(n_groups):
        for i in range(n):
            product[i] = chars[i] * (1.0 if (codes[i] >> (4 * g)) & max_levels else 0.0)
        named.append(_pairwise_sum(&product[0], n) / total)
    return common, named


def levels_around_main(const double[:, :] rows, Py_ssize_t depth_column,
                       Py_ssize_t opened_column, const unsigned char[::1] main_in):
    """`guard.levels_around_main` in one pass (``None`` on a page without a main element)."""
    cdef Py_ssize_t n = main_in.shape[0], i, first = -1, end = -1
    cdef long top, low, depth
    if rows.shape[0] != n:
        raise ValueError("one row and main-element flag for each block")
    for i in range(n):
        if main_in[i]:
            if first < 0:
                first = i
            end = i + 1
    if first < 0:
        return None
    cdef long[::1] out = np.empty(n, dtype=np.int_)
    top = <long> rows[first, depth_column]
    for i in range(first + 1, end):
        top = min(top, <long> rows[i, depth_column] - <long> rows[i, opened_column])
    for i in range(first, end):
        out[i] = <long> rows[i, depth_column] - min(top, <long> rows[i, depth_column])
    low = top
    for i in range(first - 1, -1, -1):  # before it: the tags shared with every block up to it
        low = min(low, <long> rows[i + 1, depth_column] - <long> rows[i + 1, opened_column])
        depth = <long> rows[i, depth_column]
        out[i] = depth - min(low, depth)
    low = top
    for i in range(end, n):  # after it: likewise
        low = min(low, <long> rows[i, depth_column] - <long> rows[i, opened_column])
        depth = <long> rows[i, depth_column]
        out[i] = depth - min(low, depth)
    return np.asarray(out)


cdef inline bint _any_positive(const double[:, :] rows, Py_ssize_t i,
                               const long[::1] columns) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(columns.shape[0]):
        if rows[i, columns[k]] > 0:
            return True
    return False


def prose_run(const double[::1] words, const double[:, :] rows, Py_ssize_t links_column,
              Py_ssize_t ends_column, const long[::1] outside_columns, list blocks,
              unsigned long long outside_bits, double min_block_words, double max_link_density,
              Py_ssize_t max_gap, const long[::1] around=None,
              unsigned long long below_bits=0, const long[::1] gap_free_columns=None,
              bint lead_ins=False, const long[::1] gap_free_unlinked_columns=None,
              Py_ssize_t colon_column=-1):
    """`guard.prose_run` over the blocks `guard.guard_content` takes as prose, found in the
    same pass: ``(run, its words)``; with ``around`` (`guard.levels_around_main`), a name of
    the groups in ``below_bits`` counts only below the main element (`guard.outside`); a
    block with a positive value in one of ``gap_free_columns`` (`guard.GAP_FREE_COLUMNS`)
    is not counted among the blocks between two of the run's, nor (``lead_ins``,
    `guard.GAP_FREE_LEAD_INS`) the block before such a block, nor a block under
    ``max_link_density`` with a positive value in one of ``gap_free_unlinked_columns``
    (`guard.GAP_FREE_UNLINKED_COLUMNS`); with ``colon_column`` (not -1), a block with a
    positive value there may join the run as one that ends a sentence does (rule 59)."""
    cdef Py_ssize_t n = len(blocks), i, k, count = 0, best_count = 0
    cdef Py_ssize_t between = max_gap + 1  # blocks counted since the run's last block
    cdef double run_words = 0.0, best_words = 0.0
    cdef bint left_out, counted
    cdef unsigned long long code, nibble
    cdef long[::1] run = np.empty(max(n, 1), dtype=np.int_)
    cdef long[::1] best = np.empty(max(n, 1), dtype=np.int_)
    if len(words) != n or rows.shape[0] != n:
        raise ValueError("one row and word count for each block")
    if around is not None and around.shape[0] != n:
        raise ValueError("one level around the main element for each block")
    for i in range(n):
        left_out = not (words[i] >= min_block_words and rows[i, links_column] < max_link_density
                        and (rows[i, ends_column] != 0
                             or colon_column >= 0 and rows[i, colon_column] != 0))
        left_out = left_out or _any_positive(rows, i, outside_columns)
        if not left_out:
            code = (<unsigned long long> blocks[i].class_words) & outside_bits
            if code and around is not None:
                for k in range(16):  # each group's 4 bits: levels up to its nearest name
                    nibble = (code >> (4 * k)) & 0xF
                    if nibble and (below_bits >> (4 * k)) & 0xF and <long> nibble > around[i]:
                        code &= ~(<unsigned long long> 0xF << (4 * k))
            left_out = code != 0
        if left_out:
            counted = gap_free_columns is None or not (
                _any_positive(rows, i, gap_free_columns)
                or lead_ins and i + 1 < n and _any_positive(rows, i + 1, gap_free_columns)
            )
            if counted and gap_free_unlinked_columns is not None:
                counted = not (rows[i, links_column] < max_link_density
                               and _any_positive(rows, i, gap_free_unlinked_columns))
            between += counted
            continue
        if between > max_gap:
            count, run_words = 0, 0.0
        between = 0
        run[count] = i
        count += 1
        run_words += words[i]
        if run_words > best_words:
            best[:count] = run[:count]
            best_count, best_words = count, run_words
    return [best[k] for k in range(best_count)], best_words


def main_words(const double[::1] words, const double[:, :] rows, Py_ssize_t chars_column,
               Py_ssize_t links_column, Py_ssize_t non_ascii_column,
               const unsigned char[::1] main_in, list content, double min_words,
               double min_chars_cjk, double max_link_density):
    """``guard._main_words``: the words of the main element's prose, of those the decision
    keeps, and of the prose it keeps on the whole page (prose: `page_structure.is_prose`)."""
    cdef Py_ssize_t n = len(content), i
    cdef double total = 0.0, kept_main = 0.0, kept_page = 0.0, chars
    cdef bint prose
    if len(words) != n or rows.shape[0] != n or main_in.shape[0] != n:
        raise ValueError("one row, word count and main-element flag for each block")
    for i in range(n):
        if not rows[i, links_column] < max_link_density:
            continue
        prose = words[i] >= min_words
        if not prose and rows[i, non_ascii_column] >= 0.5:
            chars = expm1(rows[i, chars_column])
            prose = chars >= min_chars_cjk
        if not prose:
            continue
        if main_in[i]:
            total += words[i]
        if content[i]:
            kept_page += words[i]
            if main_in[i]:
                kept_main += words[i]
    return total, kept_main, kept_page


cdef inline unsigned int _ascii_lower(unsigned int c) noexcept nogil:
    return c + 32 if 65 <= c <= 90 else c


cdef bint _may_hold_word(str text, const unsigned char **words, const Py_ssize_t *sizes,
                         Py_ssize_t count, const unsigned long long *seconds):
    """Whether ``text.lower()`` may hold one of the ``count`` ``words`` (lowercase ASCII of
    two letters or more; ``seconds``: per first letter from "@", the bits of the second
    letters from "@"): compared as ASCII, which is exact for a text whose characters outside
    ASCII lowercase to none of ASCII (all but U+0130 and U+212A: a text holding either may)."""
    cdef int kind = PyUnicode_KIND(text)
    cdef const void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, j, k, m
    cdef unsigned int c, d = 0
    for i in range(n):
        c, d = d, _ascii_lower(PyUnicode_READ(kind, data, i))
        if d == 0x130 or d == 0x212A:
            return True
        # a word starts at i - 1 only where its first two letters are c and d
        if not (64 <= c < 128 and 64 <= d < 128 and (seconds[c - 64] >> (d - 64)) & 1):
            continue
        for j in range(count):
            m = sizes[j]
            if words[j][0] != c or words[j][1] != d or i - 1 + m > n:
                continue
            k = 2
            while k < m and _ascii_lower(PyUnicode_READ(kind, data, i - 1 + k)) == words[j][k]:
                k += 1
            if k == m:
                return True
    return False


def calls_to_action_candidates(list content, list blocks, const double[:, :] rows,
                               Py_ssize_t words_column, double short_below,
                               const unsigned long long[::1] starts, Py_ssize_t length,
                               tuple words):
    """``guard._calls_to_action_candidates``, or more: the short kept blocks a call to action
    may be. The reference's test on each block's lowercased text, read from the text itself:
    its first ``length`` characters (ASCII letters lowercased, digits as "0") one of
    ``starts`` (sorted, as `guard.start_codes` writes them), or one of ``words`` (lowercase
    ASCII) in it; a block whose first characters are not all ASCII, or that holds U+0130 or
    U+212A (the two characters outside ASCII that lowercase to ASCII), is a candidate as it
    is: `guard.drop_calls_to_action` matches every candidate's lowercased text itself."""
    cdef Py_ssize_t n = len(blocks), i, k, size, low, high, middle
    cdef Py_ssize_t count = len(words), n_starts = starts.shape[0]
    cdef str text
    cdef unsigned int c
    cdef unsigned long long code
    cdef bint plain
    cdef list out = [], encoded = [w.encode("ascii") for w in words]
    cdef const unsigned char *word_chars[16]
    cdef Py_ssize_t word_sizes[16]
    cdef unsigned long long seconds[64]
    if rows.shape[0] != n or len(content) != n:
        raise ValueError("one row and one decision for each block")
    if not 0 < length <= 8:
        raise ValueError("starts of 1 to 8 characters")
    if count > 16:
        raise ValueError("at most 16 words")
    memset(seconds, 0, sizeof(seconds))
    for k in range(count):
        word = encoded[k]
        if len(word) < 2 or not (64 <= word[0] < 128 and 64 <= word[1] < 128):
            raise ValueError("words of two lowercase ASCII letters or more")
        seconds[word[0] - 64] |= 1ULL << (word[1] - 64)
        word_chars[k], word_sizes[k] = word, len(word)
    for i in range(n):
        if not rows[i, words_column] < short_below or not content[i]:
            continue
        text = blocks[i].text
        size = PyUnicode_GET_LENGTH(text)
        if size >= length:
            plain, code = True, 0
            for k in range(length):
                c = PyUnicode_READ(PyUnicode_KIND(text), PyUnicode_DATA(text), k)
                if c > 127:
                    plain = False
                    break
                code |= (<unsigned long long> (48 if 48 <= c <= 57 else _ascii_lower(c))) << (8 * k)
            if plain:  # a binary search of the sorted codes
                low, high = 0, n_starts
                while low < high:
                    middle = (low + high) // 2
                    if starts[middle] < code:
                        low = middle + 1
                    else:
                        high = middle
                plain = not (low < n_starts and starts[low] == code)
            if not plain:
                out.append(i)
                continue
        if _may_hold_word(text, word_chars, word_sizes, count, seconds):
            out.append(i)
    return out
