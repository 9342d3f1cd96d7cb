/* trees.pyx's `leaf_values_complete` for trees of depth 7 (the article and auto labellers')
   or 8, eight rows to a vector with AVX-512.

   The scalar walk does one (row, tree, level) step at a time: three loads and a comparison.
   Here one vector steps eight rows: the top three levels compare the eight rows' contiguous
   values of each of the seven nodes (plain loads, no gathers), levels 3 to 6 pick each row's
   node from the level's features and splits held in registers (permutes), and only the values
   of the rows' features (and at depth 8 the eighth level's node data, 128 nodes) are gathered.
   The same comparison (`_CMP_GT_OQ` is C's `>`: false when either side is NaN, so NaN goes
   left) at the same nodes gives the same leaf as the scalar walk, so the same values, bit for
   bit.

   Gathers are what a vector walk pays for: gathering each level's node data as well (three
   gathers a level) walked auto's stages only ~10 % faster than the scalar walk; this way,
   ~30 % (CleanEval's test pages, one core). Trees of depth 7 were once laid out at depth 8
   (each leaf copied under itself) to walk here: walked at their own depth, without the
   eighth level's three gathers, `auto` took 5 % less CPU a page (2026-12-02, `core_ab`).

   On a CPU without AVX-512 (or built elsewhere than x86-64 with GCC or clang) `sc_trees_walk`
   returns 0 and trees.pyx walks as before. The choice is made once, at the first call. */

#ifndef STREAM_CLEANER_TREES_AVX512_H
#define STREAM_CLEANER_TREES_AVX512_H

#include <stddef.h>

static int sc_trees_mode = -1; /* -1 unknown, 0 scalar, 1 AVX-512 */
static int sc_trees_best = 0;   /* what this CPU can */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SC_TREES_AVX512 1
#define SC_TARGET __attribute__((target("avx2,avx512f,avx512vl")))

/* a <- 2a + 1, plus 1 where the row goes right (heap numbering from 0) */
#define SC_DOWN(A, RIGHT) do { \
        __m256i d_ = _mm256_add_epi32(_mm256_add_epi32(A, A), one); \
        A = _mm256_mask_add_epi32(d_, RIGHT, d_, one); \
    } while (0)

/* the rows' values of the features at offsets O (feature * n), against splits S */
#define SC_GT(O, B, S) \
    _mm512_cmp_pd_mask(_mm512_i32gather_pd(_mm256_add_epi32(O, B), x, 8), S, _CMP_GT_OQ)

SC_TARGET
static inline __mmask8 sc_trees_gt8(const double *p, double split) {
    return _mm512_cmp_pd_mask(_mm512_loadu_pd(p), _mm512_set1_pd(split), _CMP_GT_OQ);
}

/* Levels 0 to 2: the seven nodes' comparisons for rows r .. r + 7, combined per row into
   its node of level 3 (7 + 4 b0 + 2 b1 + b2, bi: right at level i). */
SC_TARGET
static inline __m256i sc_trees_top(const double *x, const int *off, const double *sp,
                                   ptrdiff_t r) {
    const double *row = x + r;
    __mmask8 m0 = sc_trees_gt8(row + off[0], sp[0]);
    __mmask8 m1 = sc_trees_gt8(row + off[1], sp[1]), m2 = sc_trees_gt8(row + off[2], sp[2]);
    __mmask8 m3 = sc_trees_gt8(row + off[3], sp[3]), m4 = sc_trees_gt8(row + off[4], sp[4]);
    __mmask8 m5 = sc_trees_gt8(row + off[5], sp[5]), m6 = sc_trees_gt8(row + off[6], sp[6]);
    __mmask8 b0 = m0, b1 = (m1 & ~b0) | (m2 & b0);
    __mmask8 b2 = (m3 & ~b0 & ~b1) | (m4 & ~b0 & b1) | (m5 & b0 & ~b1) | (m6 & b0 & b1);
    __m256i a = _mm256_set1_epi32(7);
    a = _mm256_mask_add_epi32(a, b0, a, _mm256_set1_epi32(4));
    a = _mm256_mask_add_epi32(a, b1, a, _mm256_set1_epi32(2));
    return _mm256_mask_add_epi32(a, b2, a, _mm256_set1_epi32(1));
}

/* One tree's levels 3 to 7 for the vector of rows at node A, B their row numbers; one macro a
   level, so that four vectors can go down level by level side by side (their gathers then
   overlap). */
#define SC_LEVEL3(A, B) do { /* 8 nodes: one register each for features and splits */ \
        __m256i j_ = _mm256_sub_epi32(A, _mm256_set1_epi32(7)); \
        __mmask8 g_ = SC_GT(_mm256_permutevar8x32_epi32(o3, j_), B, \
                            _mm512_permutexvar_pd(_mm512_cvtepi32_epi64(j_), s3)); \
        SC_DOWN(A, g_); \
    } while (0)
#define SC_LEVEL4(A, B) do { /* 16 nodes */ \
        __m256i j_ = _mm256_sub_epi32(A, _mm256_set1_epi32(15)); \
        __mmask8 g_ = SC_GT(_mm256_permutex2var_epi32(o4a, j_, o4b), B, \
                            _mm512_permutex2var_pd(s4a, _mm512_cvtepi32_epi64(j_), s4b)); \
        SC_DOWN(A, g_); \
    } while (0)
#define SC_LEVEL5(A, B) do { /* 32 nodes */ \
        __m256i j_ = _mm256_sub_epi32(A, _mm256_set1_epi32(31)); \
        __m512i w_ = _mm512_cvtepi32_epi64(j_); \
        __mmask8 h16_ = _mm512_test_epi64_mask(w_, sixteen); \
        __mmask8 g_ = SC_GT( \
            _mm512_castsi512_si256( \
                _mm512_permutex2var_epi32(o5a, _mm512_castsi256_si512(j_), o5b)), B, \
            _mm512_mask_blend_pd(h16_, _mm512_permutex2var_pd(s5[0], w_, s5[1]), \
                                 _mm512_permutex2var_pd(s5[2], w_, s5[3]))); \
        SC_DOWN(A, g_); \
    } while (0)
#define SC_LEVEL6(A, B) do { /* 64 nodes */ \
        __m256i j_ = _mm256_sub_epi32(A, _mm256_set1_epi32(63)); \
        __m512i w_ = _mm512_cvtepi32_epi64(j_); \
        __m512i k_ = _mm512_castsi256_si512(j_); \
        __mmask8 h16_ = _mm512_test_epi64_mask(w_, sixteen); \
        __mmask8 h32_ = _mm512_test_epi64_mask(w_, thirty_two); \
        __m256i o_ = _mm256_mask_blend_epi32( \
            h32_, _mm512_castsi512_si256(_mm512_permutex2var_epi32(o6[0], k_, o6[1])), \
            _mm512_castsi512_si256(_mm512_permutex2var_epi32(o6[2], k_, o6[3]))); \
        __m512d lo_ = _mm512_mask_blend_pd(h16_, _mm512_permutex2var_pd(s6[0], w_, s6[1]), \
                                           _mm512_permutex2var_pd(s6[2], w_, s6[3])); \
        __m512d hi_ = _mm512_mask_blend_pd(h16_, _mm512_permutex2var_pd(s6[4], w_, s6[5]), \
                                           _mm512_permutex2var_pd(s6[6], w_, s6[7])); \
        __mmask8 g_ = SC_GT(o_, B, _mm512_mask_blend_pd(h32_, lo_, hi_)); \
        SC_DOWN(A, g_); \
    } while (0)
/* the leaf values of the rows at nodes A of the last level */
#define SC_LEAF(A) _mm512_i32gather_pd(_mm256_sub_epi32(A, first_leaf), lv, 8)

#define SC_LEVEL7(A, B) do { /* 128 nodes: gathered */ \
        __mmask8 g_ = SC_GT(_mm256_i32gather_epi32(off, A, 4), B, _mm512_i32gather_pd(A, sp, 8)); \
        SC_DOWN(A, g_); \
    } while (0)

/* The walk of trees of `depth` 7 or 8: x the columns (features, n), feature/split
   (trees, 2^depth - 1), leaf_value (trees, 2^depth); row r's leaf of tree t goes to leaves[r * row_stride + t * tree_stride]:
   (n, trees) with strides (trees, 1), or tree by tree, (trees, n) with strides (1, n), where
   eight rows' leaves are one store. Offsets are int: the caller checks features * n < 2^31. */
SC_TARGET __attribute__((always_inline))
static inline void sc_trees_walk_avx512(const double *x, ptrdiff_t n, const int *feature,
                                        const double *split, const double *leaf_value,
                                        ptrdiff_t n_trees, double *leaves, ptrdiff_t row_stride,
                                        ptrdiff_t tree_stride, const int depth) {
    const int nodes = (1 << depth) - 1; /* 127 or 255; the leaves follow them */
    const int tree_major = row_stride == 1;
    const __m256i one = _mm256_set1_epi32(1);
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m512i sixteen = _mm512_set1_epi64(16), thirty_two = _mm512_set1_epi64(32);
    const __m256i nv = _mm256_set1_epi32((int)n);
    const __m256i first_leaf = _mm256_set1_epi32(nodes);
    int off[256];
    double tmp[32];
    ptrdiff_t t, r, k, i;
    for (t = 0; t < n_trees; t++) {
        const int *ft = feature + t * nodes;
        const double *sp = split + t * nodes;
        const double *lv = leaf_value + t * (nodes + 1); /* node nodes + i: leaf i */
        for (k = 0; k + 8 <= nodes; k += 8) {
            _mm256_storeu_si256((__m256i *)(off + k), _mm256_mullo_epi32(
                _mm256_loadu_si256((const __m256i *)(ft + k)), nv));
        }
        for (; k < nodes; k++) {
            off[k] = ft[k] * (int)n;
        }
        const __m256i o3 = _mm256_loadu_si256((const __m256i *)(off + 7));
        const __m256i o4a = _mm256_loadu_si256((const __m256i *)(off + 15));
        const __m256i o4b = _mm256_loadu_si256((const __m256i *)(off + 23));
        const __m512i o5a = _mm512_loadu_si512((const void *)(off + 31));
        const __m512i o5b = _mm512_loadu_si512((const void *)(off + 47));
        const __m512d s3 = _mm512_loadu_pd(sp + 7);
        const __m512d s4a = _mm512_loadu_pd(sp + 15), s4b = _mm512_loadu_pd(sp + 23);
        __m512i o6[4];
        __m512d s5[4], s6[8];
        for (i = 0; i < 4; i++) {
            o6[i] = _mm512_loadu_si512((const void *)(off + 63 + 16 * i));
            s5[i] = _mm512_loadu_pd(sp + 31 + 8 * i);
        }
        for (i = 0; i < 8; i++) {
            s6[i] = _mm512_loadu_pd(sp + 63 + 8 * i);
        }
        r = 0;
        for (; r + 32 <= n; r += 32) { /* four vectors: their gathers overlap */
            __m256i b0 = _mm256_add_epi32(_mm256_set1_epi32((int)r), lanes);
            __m256i b1 = _mm256_add_epi32(b0, _mm256_set1_epi32(8));
            __m256i b2 = _mm256_add_epi32(b0, _mm256_set1_epi32(16));
            __m256i b3 = _mm256_add_epi32(b0, _mm256_set1_epi32(24));
            __m256i a0 = sc_trees_top(x, off, sp, r), a1 = sc_trees_top(x, off, sp, r + 8);
            __m256i a2 = sc_trees_top(x, off, sp, r + 16), a3 = sc_trees_top(x, off, sp, r + 24);
            SC_LEVEL3(a0, b0); SC_LEVEL3(a1, b1); SC_LEVEL3(a2, b2); SC_LEVEL3(a3, b3);
            SC_LEVEL4(a0, b0); SC_LEVEL4(a1, b1); SC_LEVEL4(a2, b2); SC_LEVEL4(a3, b3);
            SC_LEVEL5(a0, b0); SC_LEVEL5(a1, b1); SC_LEVEL5(a2, b2); SC_LEVEL5(a3, b3);
            SC_LEVEL6(a0, b0); SC_LEVEL6(a1, b1); SC_LEVEL6(a2, b2); SC_LEVEL6(a3, b3);
            if (depth == 8) {
                SC_LEVEL7(a0, b0); SC_LEVEL7(a1, b1); SC_LEVEL7(a2, b2); SC_LEVEL7(a3, b3);
            }
            if (tree_major) {
                double *out = leaves + t * tree_stride + r;
                _mm512_storeu_pd(out, SC_LEAF(a0));
                _mm512_storeu_pd(out + 8, SC_LEAF(a1));
                _mm512_storeu_pd(out + 16, SC_LEAF(a2));
                _mm512_storeu_pd(out + 24, SC_LEAF(a3));
                continue;
            }
            _mm512_storeu_pd(tmp, SC_LEAF(a0));
            _mm512_storeu_pd(tmp + 8, SC_LEAF(a1));
            _mm512_storeu_pd(tmp + 16, SC_LEAF(a2));
            _mm512_storeu_pd(tmp + 24, SC_LEAF(a3));
            for (i = 0; i < 32; i++) {
                leaves[(r + i) * row_stride + t * tree_stride] = tmp[i];
            }
        }
        for (; r + 8 <= n; r += 8) {
            __m256i b0 = _mm256_add_epi32(_mm256_set1_epi32((int)r), lanes);
            __m256i a0 = sc_trees_top(x, off, sp, r);
            SC_LEVEL3(a0, b0);
            SC_LEVEL4(a0, b0);
            SC_LEVEL5(a0, b0);
            SC_LEVEL6(a0, b0);
            if (depth == 8) {
                SC_LEVEL7(a0, b0);
            }
            if (tree_major) {
                _mm512_storeu_pd(leaves + t * tree_stride + r, SC_LEAF(a0));
                continue;
            }
            _mm512_storeu_pd(tmp, SC_LEAF(a0));
            for (i = 0; i < 8; i++) {
                leaves[(r + i) * row_stride + t * tree_stride] = tmp[i];
            }
        }
        for (; r < n; r++) { /* the last few rows one by one */
            ptrdiff_t a = 0;
            for (int level = 0; level < depth; level++) {
                a = 2 * a + 1 + (x[(ptrdiff_t)off[a] + r] > sp[a]);
            }
            leaves[r * row_stride + t * tree_stride] = lv[a - nodes];
        }
    }
}

/* Depth 7 or 8, each an instance of its own: the level-7 test and the layout's sizes are
   constants in each. */
SC_TARGET
static void sc_trees_walk_avx512_at(const double *x, ptrdiff_t n, int depth, const int *feature,
                                    const double *split, const double *leaf_value,
                                    ptrdiff_t n_trees, double *leaves, ptrdiff_t row_stride,
                                    ptrdiff_t tree_stride) {
    if (depth == 7) {
        sc_trees_walk_avx512(x, n, feature, split, leaf_value, n_trees, leaves, row_stride,
                             tree_stride, 7);
    } else {
        sc_trees_walk_avx512(x, n, feature, split, leaf_value, n_trees, leaves, row_stride,
                             tree_stride, 8);
    }
}
#endif

static void sc_trees_choose(void) {
#ifdef SC_TREES_AVX512
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f")
            && __builtin_cpu_supports("avx512vl")) {
        sc_trees_best = 1;
    }
#endif
    sc_trees_mode = sc_trees_best;
}

/* The walk of trees of depth 7 or 8 with AVX-512 where the CPU has it: 1 when it walked, 0
   when the caller must walk (no AVX-512, another depth, or fewer than 8 rows). */
static int sc_trees_walk(const double *x, ptrdiff_t n, int depth, const int *feature,
                         const double *split, const double *leaf_value, ptrdiff_t n_trees,
                         double *leaves, ptrdiff_t row_stride, ptrdiff_t tree_stride) {
    if (sc_trees_mode < 0) {
        sc_trees_choose();
    }
#ifdef SC_TREES_AVX512
    if (sc_trees_mode == 1 && n >= 8 && (depth == 7 || depth == 8)) {
        sc_trees_walk_avx512_at(x, n, depth, feature, split, leaf_value, n_trees, leaves,
                                row_stride, tree_stride);
        return 1;
    }
#endif
    return 0;
}

/* 1 when sc_trees_walk walks eight rows at a time (AVX-512, not forced off), else 0. */
static int sc_trees_vector(void) {
    if (sc_trees_mode < 0) {
        sc_trees_choose();
    }
    return sc_trees_mode;
}

/* For tests: 0 makes sc_trees_walk decline (the scalar walk), 1 the fastest way again;
   returns the mode now in use (0 or 1). */
static int sc_trees_force(int fastest) {
    if (sc_trees_mode < 0) {
        sc_trees_choose();
    }
    sc_trees_mode = fastest ? sc_trees_best : 0;
    return sc_trees_mode;
}

#endif
