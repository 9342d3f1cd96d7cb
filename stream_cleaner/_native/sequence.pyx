# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""`multilingual_labeller.SequenceLayer`'s recurrence in C: GRU steps over a page's rows.

numpy's version takes a dozen array operations per row (a batched matrix product, the gates,
the update), each a few microseconds of Python and dispatch for a few thousand multiply-adds;
here each step is plain loops, without the GIL. The same gates (torch's GRU: reset, update,
candidate); the sigmoid and tanh are written with ``exp`` (glibc's ``tanh`` is several times
slower), so the states differ from numpy's by rounding only (1e-15 on the shipped networks).

Python twins (what each function must equal; DEVELOPERS.md names the tests):
`gru_states`: `multilingual_labeller.gru_states`.
"""

import numpy as np

from libc.math cimport exp
from posix.time cimport CLOCK_THREAD_CPUTIME_ID, clock_gettime, timespec


cdef inline double _thread_time() noexcept nogil:
    """`time.thread_time`, which reads this clock: the page's deadline is on it."""
    cdef timespec now
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return now.tv_sec + now.tv_nsec * 1e-9


def gru_states(const double[:, :, ::1] gates, const double[:, :, ::1] w_hh_t,
               const double[:, ::1] b_hh, deadline=None, timeout_error=TimeoutError,
               Py_ssize_t check_every=256):
    """The hidden state of every direction after every row: a (rows, directions, hidden) array.

    ``gates`` holds each row's input projections, ``x @ W_ih + b_ih``, per direction (the rows
    of a backward direction already reversed, so step ``t`` of every direction reads
    ``gates[t]``); ``w_hh_t`` (directions, hidden, 3 hidden: torch's ``weight_hh``
    transposed, so that the products run along contiguous rows with no chain of additions)
    and ``b_hh`` (directions, 3 hidden) are the recurrent weights, gates in torch's order
    (reset, update, candidate).

    Past ``deadline`` (a `time.thread_time` instant, looked at every ``check_every`` rows),
    ``timeout_error`` is raised: a page of 100,000 blocks takes seconds here.
    """
    cdef bint timed = deadline is not None
    cdef double limit = deadline if timed else 0.0
    cdef bint late = False
    cdef Py_ssize_t n = gates.shape[0], dirs = gates.shape[1], hid = w_hh_t.shape[1]
    cdef Py_ssize_t t, d, j, k
    cdef double hk, r, z, c, previous
    if gates.shape[2] != 3 * hid or w_hh_t.shape[0] != dirs or w_hh_t.shape[2] != 3 * hid:
        raise ValueError("gates, weights and biases of different shapes")
    if b_hh.shape[0] != dirs or b_hh.shape[1] != 3 * hid:
        raise ValueError("gates, weights and biases of different shapes")
    out = np.zeros((n, dirs, hid), dtype=np.float64)
    cdef double[:, :, ::1] states = out
    recurrent_array = np.empty(3 * hid, dtype=np.float64)
    zeros_array = np.zeros(hid, dtype=np.float64)
    cdef double[::1] recurrent = recurrent_array
    cdef double[::1] zeros = zeros_array
    cdef const double* h
    cdef const double* w
    cdef const double* g
    cdef double* rec = &recurrent[0]
    cdef double* state
    cdef Py_ssize_t width = 3 * hid
    if n == 0:
        return out
    if check_every < 1:
        raise ValueError("check_every must be positive")
    with nogil:
        for t in range(n):
            if timed and t % check_every == 0 and t and _thread_time() > limit:
                late = True
                break
            for d in range(dirs):
                # the direction's state after the row before (zeros before the first)
                h = &states[t - 1, d, 0] if t > 0 else &zeros[0]
                for j in range(width):
                    rec[j] = b_hh[d, j]
                for k in range(hid):  # rows of the transposed weights: no chain of sums
                    hk = h[k]
                    w = &w_hh_t[d, k, 0]
                    for j in range(width):
                        rec[j] += w[j] * hk
                g = &gates[t, d, 0]
                state = &states[t, d, 0]
                for j in range(hid):  # exp, not tanh: glibc's tanh took 2.5 ms of a page
                    r = 1.0 / (1.0 + exp(-(g[j] + rec[j])))
                    z = 1.0 / (1.0 + exp(-(g[hid + j] + rec[hid + j])))
                    c = 2.0 / (1.0 + exp(-2.0 * (g[2 * hid + j] + r * rec[2 * hid + j]))) - 1.0
                    previous = h[j]
                    state[j] = c + z * (previous - c)
    if late:
        raise timeout_error("time budget exceeded in the multilingual labeller's recurrence")
    return out
