# cython: language_level=3, boundscheck=False, wraparound=False
# distutils: language = c++
"""A page's normalised sentences scored in one call: log10 probability, tokens and OOVs.

The kenlm module scores one sentence per call and cannot count out-of-vocabulary words
without a Python object per token; here every token is looked up once, in C++, through the
model the ``kenlm.Model`` object already holds (its struct is read directly: kenlm's class has
no cdef methods, so its layout is the object header, the model pointer, the path and the
vocabulary pointer). The result is exactly what ``Model.score(s, bos=True, eos=True)`` gives.
"""

from cpython.ref cimport PyObject
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libcpp.string cimport string


cdef extern from "lm/word_index.hh" namespace "lm":
    ctypedef unsigned WordIndex

cdef extern from "lm/state.hh" namespace "lm::ngram":
    cdef cppclass State:
        pass

cdef extern from "util/string_piece.hh":
    cdef cppclass StringPiece:
        StringPiece(const char *data, size_t length)

cdef extern from "lm/virtual_interface.hh" namespace "lm::base":
    cdef cppclass Vocabulary:
        WordIndex Index(const StringPiece &word) const
        WordIndex EndSentence() const
        WordIndex NotFound() const

    cdef cppclass Model:
        void BeginSentenceWrite(void *to) const
        float BaseScore(const void *in_state, WordIndex new_word, void *out_state) const
        const Vocabulary &BaseVocabulary() const


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


cdef class PageScorer:
    """Scores lists of normalised sentences with one ``kenlm.Model``."""

    cdef object kenlm_model  # keeps the model, and so the C++ object, alive
    cdef const Model *model
    cdef const Vocabulary *vocab

    def __init__(self, kenlm_model):
        import kenlm

        if type(kenlm_model) is not kenlm.Model:
            raise TypeError(f"expected a kenlm.Model, not {type(kenlm_model).__name__}")
        self.kenlm_model = kenlm_model
        self.model = (<sc_KenlmModelObject *> <PyObject *> kenlm_model).model
        self.vocab = &self.model.BaseVocabulary()

    cdef tuple _score(self, const char *data, size_t length):
        """(log10 p, tokens, OOVs) of one normalised sentence: tokens separated by one space."""
        cdef State state, out_state
        cdef State *current = &state
        cdef State *following = &out_state
        cdef State *swap
        cdef size_t start = 0, i = 0
        cdef float total = 0.0
        cdef int n_tokens = 0, n_oov = 0
        cdef WordIndex word, not_found = self.vocab.NotFound()
        self.model.BeginSentenceWrite(current)
        while i <= length:
            if i == length or data[i] == b" ":
                if i > start:
                    word = self.vocab.Index(StringPiece(data + start, i - start))
                    n_tokens += 1
                    if word == not_found:
                        n_oov += 1
                    total += self.model.BaseScore(current, word, following)
                    swap = current
                    current = following
                    following = swap
                start = i + 1
            i += 1
        total += self.model.BaseScore(current, self.vocab.EndSentence(), following)
        return total, n_tokens, n_oov

    def score_many(self, list sentences, score_type):
        """``score_type(log10_prob, n_tokens, n_oov)`` for each normalised sentence.

        An empty sentence scores ``score_type(0.0, 0, 0)``.
        """
        cdef list scores = []
        cdef string utf8
        for sentence in sentences:
            utf8 = (<str> sentence).encode("utf-8")
            if utf8.size() == 0:
                scores.append(score_type(0.0, 0, 0))
            else:
                scores.append(score_type(*self._score(utf8.c_str(), utf8.size())))
        return scores

    def score_texts(self, list texts, score_type, normalize_many):
        """`score_many` of ``normalize_many(texts)``, normalising ASCII texts here.

        ASCII is what most sentences are, and its normalisation is simple: lower-case, digits
        to 0, ` to ', every punctuation or control character a token of its own, white space (as
        ``str.split`` sees it) collapsed. Other texts go through ``normalize_many``, the
        reference, in one call.
        """
        cdef list scores = [None] * len(texts), others = [], other_at = []
        cdef string buffer
        cdef const char *data
        cdef Py_ssize_t length, i, t
        cdef unsigned char c
        cdef int kind, previous
        for t in range(len(texts)):
            text = <str> texts[t]
            if not text.isascii():
                others.append(text)
                other_at.append(t)
                continue
            data = PyUnicode_AsUTF8AndSize(text, &length)
            buffer.clear()
            previous = SPACE
            for i in range(length):
                c = <unsigned char> data[i]
                kind = _ASCII_KIND[c]
                if kind == SPACE:
                    previous = SPACE
                    continue
                if buffer.size() and (kind == PUNCT or previous != WORD):
                    buffer.push_back(b" ")  # a new token
                if kind == WORD:
                    if b"A" <= c <= b"Z":
                        c += 32
                    elif b"1" <= c <= b"9":
                        c = b"0"
                elif c == b"`":
                    c = b"'"  # folded as lm._FOLD does
                previous = kind
                buffer.push_back(<char> c)
            if buffer.size() == 0:
                scores[t] = score_type(0.0, 0, 0)
            else:
                scores[t] = score_type(*self._score(buffer.c_str(), buffer.size()))
        if others:
            for t, score in zip(other_at, self.score_many(normalize_many(others), score_type)):
                scores[t] = score
        return scores


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
