# cython: language_level=3, boundscheck=False, wraparound=False
# distutils: language = c++
"""A page's normalised sentences scored in one call: log10 probability, tokens and OOVs.

The kenlm module scores one sentence per call and cannot count out-of-vocabulary words
without a Python object per token; here every token is looked up once, in C++, through the
model the ``kenlm.Model`` object already holds (its struct is read directly: kenlm's class has
no cdef methods, so its layout is the object header, the model pointer, the path and the
vocabulary pointer). The result is exactly what ``Model.score(s, bos=True, eos=True)`` gives.

Two memo tables sit in front of the model's lookups, one per scorer (so per model and
process), bounded and direct-mapped (a new entry overwrites the old one in its slot):

- vocabulary: a token's 64-bit MurmurHash64A (seed 0) -> its word index. KenLM's
  vocabularies store nothing but that hash of each word (``lm::ngram::detail::HashForVocab``),
  so a token with the same hash has the same index: the memo answers exactly as
  ``Vocabulary::Index`` does, and saves its search of the sorted hash array. Web text repeats
  its words: 96.5 % of the lookups hit 65,536 slots (92.5 % with 16,384), the pages of
  CleanEval dev and test and Dragnet cleaned once each.
- bigram scores (order-2 models only): everything ``BaseScore`` reads of a bigram model's
  input state (its length, its word and backoff when the length is 1) and the new word ->
  the log10 probability and the output state. ``BaseScore`` is a pure function of those, so
  the memo returns the same float and the same state, and saves the trie search: 73.6 % of
  the bigrams hit 262,144 slots on the same pages (58.6 % with 32,768).

Together the tables take 7.3 MB a scorer. Against 0.8 MB (16,384 and 32,768 slots) they took
3 to 4 % off the CPU a page costs (`bench/core_ab.py`, every page seen once); 4 times the
bigram slots (25 MB) took 1 % more. They are mapped with ``madvise(MADV_HUGEPAGE)``: in 2 MiB
pages, where the kernel's transparent huge pages allow it, a lookup no longer misses the TLB
too, and `auto` took 5-7 % less CPU a CleanEval test page (2026-11-30, both orders).

A page's sentences are normalised with the GIL held, then scored without it: the worker's
event loop (another thread) publishes and fetches meanwhile, on the other core. A scorer's
memo tables are not safe for two threads at once, so each scorer has a lock, taken without
the GIL.

Python twins (what each function must equal; DEVELOPERS.md names the tests):
`PageScorer.score_many`, `.score_texts`, `.score_columns`: the Python loops of
  `lm.LanguageModel.score_many`, `.score_texts`, `.score_columns` (`LanguageModel.score` per
  sentence, after `lm.normalize_many` for the last two).
"""

from cpython.pythread cimport (
    WAIT_LOCK,
    PyThread_acquire_lock,
    PyThread_allocate_lock,
    PyThread_free_lock,
    PyThread_release_lock,
    PyThread_type_lock,
)
from cpython.ref cimport Py_DECREF, PyObject
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset
from libcpp.string cimport string
from libcpp.vector cimport vector


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object text)


cdef extern from "lm/word_index.hh" namespace "lm":
    ctypedef unsigned WordIndex

cdef extern from "lm/state.hh" namespace "lm::ngram":
    cdef cppclass State:
        WordIndex words[1]  # KENLM_MAX_ORDER - 1 entries; a bigram state uses the first
        float backoff[1]
        unsigned char length

cdef extern from "util/murmur_hash.hh" namespace "util" nogil:
    uint64_t MurmurHash64A(const void *key, size_t length, uint64_t seed)

cdef extern from "util/string_piece.hh" nogil:
    cdef cppclass StringPiece:
        StringPiece(const char *data, size_t length)

cdef extern from "lm/virtual_interface.hh" namespace "lm::base" nogil:
    cdef cppclass Vocabulary:
        WordIndex Index(const StringPiece &word) const
        WordIndex EndSentence() const
        WordIndex NotFound() const

    cdef cppclass Model:
        void BeginSentenceWrite(void *to) const
        float BaseScore(const void *in_state, WordIndex new_word, void *out_state) const
        const Vocabulary &BaseVocabulary() const
        unsigned char Order() const


cdef extern from *:
    """
    typedef struct {
        PyObject_HEAD
        lm::base::Model *model;
        PyObject *path;
        const lm::base::Vocabulary *vocab;
    } sc_KenlmModelObject;
    """
    ctypedef struct sc_KenlmModelObject:
        Model *model


cdef struct VocabSlot:
    uint64_t hash
    WordIndex index
    uint32_t used


cdef struct BigramSlot:
    uint64_t key  # (input length and word) << 32 | new word
    uint32_t in_backoff  # the bits of the input state's backoff (length 1)
    float score
    WordIndex out_word
    float out_backoff
    uint8_t out_length
    uint8_t used


cdef enum:
    VOCAB_BITS = 16  # 65,536 slots of 16 bytes
    BIGRAM_BITS = 18  # 262,144 slots of 24 bytes
    CHUNK = 32  # tokens whose memo slots are prefetched together (`PageScorer._score`)


cdef extern from *:
    void __builtin_prefetch(const void *address) nogil

cdef extern from "sys/mman.h" nogil:
    void *mmap(void *addr, size_t length, int prot, int flags, int fd, long offset)
    int munmap(void *addr, size_t length)
    int madvise(void *addr, size_t length, int advice)
    void *MAP_FAILED
    int PROT_READ, PROT_WRITE, MAP_PRIVATE, MAP_ANONYMOUS, MADV_HUGEPAGE


cdef void *_table(size_t size) noexcept nogil:
    """Zeroed memory for a memo table, asked for in huge pages (a table's slots are read at
    random: with 4 KiB pages nearly every lookup also misses the TLB)."""
    cdef void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
    if p == MAP_FAILED:
        return NULL
    madvise(p, size, MADV_HUGEPAGE)  # a hint: where the kernel refuses, 4 KiB pages serve
    return p


cdef inline uint64_t _slot(uint64_t key, int bits) noexcept nogil:
    return (key * <uint64_t> 0x9E3779B97F4A7C15) >> (64 - bits)


cdef class PageScorer:
    """Scores lists of normalised sentences with one ``kenlm.Model``."""

    cdef object kenlm_model  # keeps the model, and so the C++ object, alive
    cdef const Model *model
    cdef const Vocabulary *vocab
    cdef VocabSlot *vocab_slots
    cdef BigramSlot *bigram_slots  # NULL unless the model is a bigram
    cdef PyThread_type_lock lock  # held while the memo tables are in use

    def __cinit__(self):
        self.vocab_slots = NULL
        self.bigram_slots = NULL
        self.lock = PyThread_allocate_lock()
        if self.lock == NULL:
            raise MemoryError()

    def __init__(self, kenlm_model):
        import kenlm

        if type(kenlm_model) is not kenlm.Model:
            raise TypeError(f"expected a kenlm.Model, not {type(kenlm_model).__name__}")
        self.kenlm_model = kenlm_model
        if _N_FOLD == 0:
            _load_fold_table()
        self.model = (<sc_KenlmModelObject *> <PyObject *> kenlm_model).model
        self.vocab = &self.model.BaseVocabulary()
        if self.vocab_slots == NULL:
            self.vocab_slots = <VocabSlot *> _table(sizeof(VocabSlot) << VOCAB_BITS)
            if self.vocab_slots == NULL:
                raise MemoryError()
        memset(self.vocab_slots, 0, sizeof(VocabSlot) << VOCAB_BITS)
        if self.bigram_slots != NULL:
            munmap(self.bigram_slots, sizeof(BigramSlot) << BIGRAM_BITS)
        self.bigram_slots = NULL
        if self.model.Order() == 2:
            self.bigram_slots = <BigramSlot *> _table(sizeof(BigramSlot) << BIGRAM_BITS)
            if self.bigram_slots == NULL:
                raise MemoryError()
            memset(self.bigram_slots, 0, sizeof(BigramSlot) << BIGRAM_BITS)

    def __dealloc__(self):
        if self.vocab_slots != NULL:
            munmap(self.vocab_slots, sizeof(VocabSlot) << VOCAB_BITS)
        if self.bigram_slots != NULL:
            munmap(self.bigram_slots, sizeof(BigramSlot) << BIGRAM_BITS)
        if self.lock != NULL:
            PyThread_free_lock(self.lock)

    cdef inline WordIndex _index(
        self, uint64_t hash, const char *data, size_t length
    ) noexcept nogil:
        """``Vocabulary::Index`` of a token whose MurmurHash64A is ``hash``, through the
        vocabulary memo."""
        cdef VocabSlot *slot = &self.vocab_slots[_slot(hash, VOCAB_BITS)]
        if slot.used and slot.hash == hash:
            return slot.index
        slot.index = self.vocab.Index(StringPiece(data, length))
        slot.hash = hash
        slot.used = 1
        return slot.index

    cdef inline float _base_score(
        self, State *current, WordIndex word, State *following
    ) noexcept nogil:
        """``BaseScore`` through the bigram memo when the model is a bigram."""
        cdef BigramSlot *slot
        cdef uint64_t key
        cdef uint32_t in_backoff = 0
        cdef float score
        if self.bigram_slots == NULL or current.length > 1:
            return self.model.BaseScore(current, word, following)
        if current.length:
            key = ((<uint64_t> current.words[0] + 1) << 32) | word
            memcpy(&in_backoff, &current.backoff[0], sizeof(float))
        else:
            key = word
        slot = &self.bigram_slots[_slot(key, BIGRAM_BITS)]
        if slot.used and slot.key == key and slot.in_backoff == in_backoff:
            following.length = slot.out_length
            following.words[0] = slot.out_word
            following.backoff[0] = slot.out_backoff
            return slot.score
        score = self.model.BaseScore(current, word, following)
        if following.length <= 1:
            slot.key = key
            slot.in_backoff = in_backoff
            slot.score = score
            slot.out_length = following.length
            slot.out_word = following.words[0] if following.length else 0
            slot.out_backoff = following.backoff[0] if following.length else 0.0
            slot.used = 1
        return score

    cdef void _score(
        self, const char *data, size_t length, float *log10_p, int *tokens, int *oovs
    ) noexcept nogil:
        """log10 p, tokens and OOVs of one normalised sentence: tokens separated by one space."""
        cdef State state, out_state
        cdef State *current = &state
        cdef State *following = &out_state
        cdef State *swap
        cdef size_t start = 0, i = 0
        cdef float total = 0.0
        cdef int n_tokens = 0, n_oov = 0, m, k
        cdef WordIndex word, previous, not_found = self.vocab.NotFound()
        # up to CHUNK tokens at a time: first every token's memo slots are asked for
        # (prefetched), then they are read in order; the misses of a chunk overlap instead of
        # waiting one after the other. The lookups and sums are the same, in the same order.
        cdef size_t token_start[CHUNK]
        cdef size_t token_length[CHUNK]
        cdef uint64_t hashes[CHUNK]
        cdef WordIndex words[CHUNK]
        self.model.BeginSentenceWrite(current)
        while True:
            m = 0
            while i <= length and m < CHUNK:
                if i == length or data[i] == b" ":
                    if i > start:
                        token_start[m] = start
                        token_length[m] = i - start
                        hashes[m] = MurmurHash64A(data + start, i - start, 0)
                        __builtin_prefetch(&self.vocab_slots[_slot(hashes[m], VOCAB_BITS)])
                        m += 1
                    start = i + 1
                i += 1
            for k in range(m):
                words[k] = self._index(hashes[k], data + token_start[k], token_length[k])
            if self.bigram_slots != NULL and current.length == 1:
                # the slots of the bigrams each word most likely makes with the one before
                previous = current.words[0]
                for k in range(m):
                    __builtin_prefetch(&self.bigram_slots[_slot(
                        ((<uint64_t> previous + 1) << 32) | words[k], BIGRAM_BITS
                    )])
                    previous = words[k]
            for k in range(m):
                word = words[k]
                n_tokens += 1
                if word == not_found:
                    n_oov += 1
                total += self._base_score(current, word, following)
                swap = current
                current = following
                following = swap
            if i > length:
                break
        total += self._base_score(current, self.vocab.EndSentence(), following)
        log10_p[0] = total
        tokens[0] = n_tokens
        oovs[0] = n_oov

    cdef void _score_all(self, const string &joined, const vector[size_t] &ends,
                         vector[float] &log10_p, vector[int] &tokens,
                         vector[int] &oovs) noexcept nogil:
        """`_score` of each sentence of ``joined`` (sentence k ends at ``ends[k]``), under
        the scorer's lock, into the three vectors."""
        cdef size_t k, start = 0, n = ends.size()
        log10_p.resize(n)
        tokens.resize(n)
        oovs.resize(n)
        PyThread_acquire_lock(self.lock, WAIT_LOCK)
        for k in range(n):
            self._score(joined.data() + start, ends[k] - start, &log10_p[k], &tokens[k],
                        &oovs[k])
            start = ends[k]
        PyThread_release_lock(self.lock)

    cdef void _fill(self, list scores, score_type, const string &joined,
                    const vector[size_t] &ends, const vector[Py_ssize_t] &at):
        """Score the sentences of ``joined`` without the GIL; ``scores[at[k]]`` is the k-th."""
        cdef vector[float] log10_p
        cdef vector[int] tokens, oovs
        cdef size_t k
        with nogil:
            self._score_all(joined, ends, log10_p, tokens, oovs)
        if _is_tuple_type(score_type):
            for k in range(ends.size()):
                scores[at[k]] = _new_tuple3(score_type, log10_p[k], tokens[k], oovs[k])
            return
        for k in range(ends.size()):
            scores[at[k]] = _make(score_type, (log10_p[k], tokens[k], oovs[k]))

    def score_many(self, list sentences, score_type):
        """``score_type(log10_prob, n_tokens, n_oov)`` for each normalised sentence.

        An empty sentence scores ``score_type(0.0, 0, 0)``.
        """
        cdef list scores = [None] * len(sentences)
        cdef string joined
        cdef vector[size_t] ends
        cdef vector[Py_ssize_t] at
        cdef const char *data
        cdef Py_ssize_t length, t
        for t in range(len(sentences)):
            data = PyUnicode_AsUTF8AndSize(<str> sentences[t], &length)
            if length == 0:
                scores[t] = _make(score_type, (0.0, 0, 0))
            else:
                joined.append(data, length)
                ends.push_back(joined.size())
                at.push_back(t)
        self._fill(scores, score_type, joined, ends, at)
        return scores

    cdef list _normalise(self, list texts, string &joined, vector[size_t] &ends,
                         vector[Py_ssize_t] &at, vector[Py_ssize_t] &empty_at):
        """Normalise ``texts`` onto ``joined`` (text ``at[k]`` ends at ``ends[k]``); the
        texts that normalise to nothing go to ``empty_at``. Returns the positions of the texts
        left to the reference (`score_texts`)."""
        cdef list other_at = []
        cdef const char *data
        cdef char *out
        cdef Py_ssize_t length, i, t
        cdef size_t begin, put
        cdef int previous, folded
        cdef bint foldable, ascii
        cdef Py_UCS4 c
        for t in range(len(texts)):
            text = <str> texts[t]
            previous = SPACE
            # normalised straight onto the end of ``joined``: a character makes at most two
            # (a space and itself)
            begin = joined.size()
            ascii = PyUnicode_IS_ASCII(text)
            # a character makes at most a space and itself: one byte in ASCII, three in UTF-8
            joined.resize(begin + (2 if ascii else 4) * <size_t> len(text))
            out = &joined[0] + begin
            put = 0
            if ascii:
                data = PyUnicode_AsUTF8AndSize(text, &length)
                for i in range(length):
                    put = _put_ascii(out, put, <unsigned char> data[i], &previous)
            else:
                foldable = True
                for c in text:
                    if c < 128:
                        put = _put_ascii(out, put, <unsigned char> c, &previous)
                        continue
                    folded = _fold_to_ascii(c)
                    if folded >= 0:
                        put = _put_ascii(out, put, <unsigned char> folded, &previous)
                    elif c < WIDE_LIMIT and _WIDE_KIND[c] >= 0:
                        put = _put_wide(out, put, c, &previous)
                    else:
                        foldable = False
                        break
                if not foldable:
                    joined.resize(begin)
                    other_at.append(t)
                    continue
            joined.resize(begin + put)
            if put == 0:
                empty_at.push_back(t)
            else:
                ends.push_back(joined.size())
                at.push_back(t)
        return other_at

    def score_texts(self, list texts, score_type, normalize_many):
        """`score_many` of ``normalize_many(texts)``, normalising most texts here.

        ASCII is what most sentences are, and its normalisation is simple: lower-case, digits
        to 0, ` to ', every punctuation or control character a token of its own, white space (as
        ``str.split`` sees it) collapsed. A text whose other characters are all typographic
        variants that ``lm._FOLD`` folds to ASCII (’ “ ” – — … and the no-break space: most of
        English's non-ASCII text) is normalised the same way after folding them, which is what
        the reference does to it; so is one whose other characters are Latin letters, symbols
        or punctuation that the reference maps each to one character, a space or a token of
        its own (`_load_wide_table`), written in UTF-8. Other texts go through
        ``normalize_many``, the reference, in one call.
        """
        cdef list scores = [None] * len(texts), other_at
        cdef string joined
        cdef vector[size_t] ends
        cdef vector[Py_ssize_t] at, empty_at
        cdef size_t k
        other_at = self._normalise(texts, joined, ends, at, empty_at)
        for k in range(empty_at.size()):
            scores[empty_at[k]] = _make(score_type, (0.0, 0, 0))
        self._fill(scores, score_type, joined, ends, at)
        if other_at:
            others = [texts[t] for t in other_at]
            for t, score in zip(other_at, self.score_many(normalize_many(others), score_type)):
                scores[t] = score
        return scores

    def score_columns(self, list texts, score_type, normalize_many):
        """`score_texts` as three lists: each text's log10 probability, tokens and OOVs, with
        no record made a sentence (``score_type`` serves the texts left to the reference)."""
        cdef Py_ssize_t n = len(texts)
        cdef list log10_probs = [0.0] * n, n_tokens = [0] * n, n_oovs = [0] * n, other_at
        cdef string joined
        cdef vector[size_t] ends
        cdef vector[Py_ssize_t] at, empty_at
        cdef vector[float] log10_p
        cdef vector[int] tokens, oovs
        cdef size_t k
        cdef Py_ssize_t t
        other_at = self._normalise(texts, joined, ends, at, empty_at)
        with nogil:
            self._score_all(joined, ends, log10_p, tokens, oovs)
        for k in range(ends.size()):
            t = at[k]
            log10_probs[t] = <double> log10_p[k]
            n_tokens[t] = tokens[k]
            n_oovs[t] = oovs[k]
        if other_at:
            others = [texts[t] for t in other_at]
            for t, score in zip(other_at, self.score_many(normalize_many(others), score_type)):
                log10_probs[t], n_tokens[t], n_oovs[t] = score
        return log10_probs, n_tokens, n_oovs


cdef inline size_t _put_ascii(char *out, size_t put, unsigned char c, int *previous) noexcept:
    """Add one ASCII character to a normalised sentence being written at ``out`` (``put``
    characters so far; returns the new count): lower-cased, digits as 0, ` as ', punctuation
    a token of its own, white space (as ``str.split`` sees it) between tokens."""
    cdef int kind = _ASCII_KIND[c]
    if kind == SPACE:
        previous[0] = SPACE
        return put
    if put and (kind == PUNCT or previous[0] != WORD):
        out[put] = b" "  # a new token
        put += 1
    if kind == WORD:
        if b"A" <= c <= b"Z":
            c += 32
        elif b"1" <= c <= b"9":
            c = b"0"
    elif c == b"`":
        c = b"'"  # folded as lm._FOLD does
    previous[0] = kind
    out[put] = <char> c
    return put + 1


# lm._FOLD's entries whose source is not ASCII and whose target is one ASCII character
cdef Py_UCS4 _FOLD_FROM[64]
cdef int _FOLD_TO[64]
cdef int _N_FOLD = 0


cdef inline int _fold_to_ascii(Py_UCS4 c) noexcept:
    """The ASCII character ``lm._FOLD`` folds ``c`` to, or -1."""
    cdef int k
    for k in range(_N_FOLD):
        if _FOLD_FROM[k] == c:
            return _FOLD_TO[k]
    return -1


cdef enum:
    WIDE_LIMIT = 0x2C00  # code points below it may have a `_WIDE_KIND`

# Per code point from 128 (below WIDE_LIMIT): how the reference normalises it on its own,
# SPACE, WORD or PUNCT (`_put_ascii`'s kinds; a word character becomes _WIDE_TO), or -1: left
# to the reference (`_load_wide_table`).
cdef signed char _WIDE_KIND[WIDE_LIMIT]
cdef unsigned int _WIDE_TO[WIDE_LIMIT]
# the ranges looked at: Latin-1 and Latin Extended-A/B, and the general punctuation, symbols,
# arrows, shapes and dingbats blocks
_WIDE_RANGES = ((0x80, 0x250), (0x2000, 0x2C00))


cdef inline size_t _put_wide(char *out, size_t put, Py_UCS4 c, int *previous) noexcept:
    """`_put_ascii` for a code point with a `_WIDE_KIND`: its normalised form in UTF-8."""
    cdef int kind = _WIDE_KIND[c]
    cdef unsigned int to
    if kind == SPACE:
        previous[0] = SPACE
        return put
    if put and (kind == PUNCT or previous[0] != WORD):
        out[put] = b" "
        put += 1
    previous[0] = kind
    to = _WIDE_TO[c]
    if to < 0x80:
        out[put] = <char> to
        return put + 1
    if to < 0x800:
        out[put] = <char> (0xC0 | (to >> 6))
        out[put + 1] = <char> (0x80 | (to & 0x3F))
        return put + 2
    out[put] = <char> (0xE0 | (to >> 12))
    out[put + 1] = <char> (0x80 | ((to >> 6) & 0x3F))
    out[put + 2] = <char> (0x80 | (to & 0x3F))
    return put + 3


def _load_wide_table(normalize_many):
    """Fill `_WIDE_KIND` from the reference itself: each code point of `_WIDE_RANGES` is
    normalised alone, between two letters and after a letter and a space; one that comes out
    as white space (nothing, ``a a``, ``a``), as a word character ``w`` of one code point
    (``w``, ``awa``, ``a w``) or as a token of its own (``c``, ``a c a``, ``a c``) is handled
    that way here; any other answer leaves it to the reference. The reference treats every
    character on its own (lower-casing, folding, spacing), so what it does to one alone is
    what it does to it anywhere."""
    cdef int c
    for c in range(WIDE_LIMIT):
        _WIDE_KIND[c] = -1
        _WIDE_TO[c] = 0
    points = [c for lo, hi in _WIDE_RANGES for c in range(lo, hi)]
    probes = []
    for c in points:
        char = chr(c)
        probes += [char, f"a{char}a", f"a {char}"]
    found = normalize_many(probes)
    cdef Py_ssize_t k
    for k in range(len(points)):
        c = points[k]
        alone, inside, after = found[3 * k], found[3 * k + 1], found[3 * k + 2]
        char = chr(c)
        if (alone, inside, after) == ("", "a a", "a"):
            _WIDE_KIND[c] = SPACE
        elif (alone, inside, after) == (char, f"a {char} a", f"a {char}"):
            _WIDE_KIND[c] = PUNCT
            _WIDE_TO[c] = c
        elif (len(alone) == 1 and not 0xD800 <= ord(alone) < 0xE000
              and (inside, after) == (f"a{alone}a", f"a {alone}")):
            _WIDE_KIND[c] = WORD
            _WIDE_TO[c] = ord(alone)


def _load_fold_table():
    global _N_FOLD
    from stream_cleaner.lm import _FOLD, normalize_many  # the reference's, so they cannot drift

    _load_wide_table(normalize_many)

    _N_FOLD = 0
    for source, target in _FOLD.items():
        if len(source) == 1 and ord(source) >= 128 and len(target) == 1 and ord(target) < 128:
            if _N_FOLD < 64:
                _FOLD_FROM[_N_FOLD] = ord(source)
                _FOLD_TO[_N_FOLD] = ord(target)
                _N_FOLD += 1


cdef inline bint _is_tuple_type(score_type):
    """Whether `_make` builds ``score_type``'s instances as ``tuple.__new__`` does."""
    return type(score_type) is type and issubclass(score_type, tuple)


cdef inline object _make(score_type, tuple values):
    """``score_type(*values)``; a tuple subclass (a named tuple, whose ``__new__`` only packs
    its arguments) is built by ``tuple.__new__``, without a call to a Python function."""
    if _is_tuple_type(score_type):
        return tuple.__new__(score_type, values)
    return score_type(*values)


cdef extern from "Python.h":
    ctypedef struct _TupleType "PyTypeObject":
        PyObject *(*tp_alloc)(_TupleType *, Py_ssize_t)
    void PyTuple_SET_ITEM_raw "PyTuple_SET_ITEM" (PyObject *p, Py_ssize_t pos, PyObject *o)
    PyObject *PyFloat_FromDouble_raw "PyFloat_FromDouble" (double value)
    PyObject *PyLong_FromLong_raw "PyLong_FromLong" (long value)


cdef object _new_tuple3(score_type, double log10_prob, long n_tokens, long n_oov):
    """``tuple.__new__(score_type, (log10_prob, n_tokens, n_oov))`` for a tuple subclass, as
    CPython's ``tuple_subtype_new`` makes it (the type's ``tp_alloc`` for three items, the
    items set), without the call and the argument tuple."""
    cdef PyObject *made = (<_TupleType *> <PyObject *> score_type).tp_alloc(
        <_TupleType *> <PyObject *> score_type, 3
    )
    if made == NULL:
        raise MemoryError()
    record = <object> made  # owns a reference now...
    Py_DECREF(record)  # ...so tp_alloc's goes
    cdef PyObject *item
    item = PyFloat_FromDouble_raw(log10_prob)
    if item == NULL:
        raise MemoryError()
    PyTuple_SET_ITEM_raw(made, 0, item)  # the tuple takes the new reference
    item = PyLong_FromLong_raw(n_tokens)
    if item == NULL:
        raise MemoryError()
    PyTuple_SET_ITEM_raw(made, 1, item)
    item = PyLong_FromLong_raw(n_oov)
    if item == NULL:
        raise MemoryError()
    PyTuple_SET_ITEM_raw(made, 2, item)
    return record


cdef enum:
    SPACE = 0
    WORD = 1
    PUNCT = 2


cdef int _ASCII_KIND[128]


cdef void _fill_kinds():
    cdef int c
    for c in range(128):
        if chr(c).isalnum() or c == ord("_"):
            _ASCII_KIND[c] = WORD
        elif chr(c).isspace():  # str.split's white space, \x1c-\x1f included
            _ASCII_KIND[c] = SPACE
        else:
            _ASCII_KIND[c] = PUNCT


_fill_kinds()
