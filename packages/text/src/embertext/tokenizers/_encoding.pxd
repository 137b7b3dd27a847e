from libc.stdint cimport int32_t
from libcpp.vector cimport vector


cdef class Source:
    # What the encodings of one compiled batch share (NOTE [ Lazy encodings ]).
    cdef list vocab  # id -> token
    cdef object wrap  # None, or the ((token, id), (token, id)) put around each text
    cdef object sequence_id


cdef class Encoding:
    cdef list _fields  # the fields as Python objects, once read or set (bit f of _made)
    cdef unsigned int _made
    cdef public bint _trimmed
    # No post-processor set its sequences' ranges (NOTE [ Unranged encodings ]).
    cdef public bint _unranged
    # The compiled form (NOTE [ Lazy encodings ] in _encoding.pyx).
    cdef vector[int32_t] _records
    cdef Source _source
    cdef object _text, _segments  # when the text has added tokens
    cdef Py_ssize_t _pad_left, _pad_right
    cdef tuple _pad  # (id, type id, token)

    cdef Py_ssize_t _length(self)
    cdef object _field(self, int field)
    cdef void _store(self, int field, object value)
    cdef list _build(self, int field)


cdef Source batch_source(list vocab, object wrap, object sequence_id)
cdef Encoding compiled_encoding(vector[int32_t] &records, Source source, object text,
                                object segments, bint trimmed)
