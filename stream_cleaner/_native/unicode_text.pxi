# The modules that read a str's characters in place include this: one home for CPython's
# declarations (a compact str holds 1, 2 or 4 bytes a character, `_char` each of them).


cdef extern from "Python.h":
    int PyUnicode_KIND(object text)
    bint PyUnicode_IS_ASCII(object text)
    void *PyUnicode_DATA(object text)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    object PyUnicode_FromKindAndData(int kind, const void *buffer, Py_ssize_t size)
    bint Py_UNICODE_ISSPACE(Py_UCS4 c) nogil
    bint Py_UNICODE_ISALNUM(Py_UCS4 c) nogil
    Py_UCS4 Py_UNICODE_TOLOWER(Py_UCS4 c) nogil
    ctypedef unsigned char Py_UCS1
    ctypedef unsigned short Py_UCS2


ctypedef fused _char:
    Py_UCS1
    Py_UCS2
    Py_UCS4
