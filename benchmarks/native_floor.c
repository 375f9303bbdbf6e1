/* The floor of a compiled build of the top-level graph as arrays (not CI, not shipped).
 *
 * benchmarks/native_build_floor.py compiles this file as a CPython extension module and
 * runs it beside benchmarks/array_build_floor.py, whose Python floor it mirrors: the
 * binary GraphDef's nodes read straight from the wire format (name, op, device, inputs;
 * every other field skipped), the names' positions in a hash table of byte spans (the
 * last of a repeated name wins, as dict(zip(names, range(n))) does), ops and devices as
 * codes in order of first appearance, and each input as (source position or -1, output
 * slot, -1 for a control input) in node order. No Python object is made per node unless
 * the caller asks for the names. Like the Python floor it does no attrs, typing,
 * validation or function expansion; unlike protobuf it does not check that strings are
 * UTF-8. It is a measurement for the decision in issue 20, not a part of placelint.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const uint8_t *p;
    Py_ssize_t n;
} Span;

typedef struct {
    void *data;
    Py_ssize_t len, cap, item;
} Vec;

static int vec_push(Vec *v, const void *x) {
    if (v->len == v->cap) {
        Py_ssize_t cap = v->cap ? 2 * v->cap : 1024;
        void *data = realloc(v->data, (size_t)(cap * v->item));
        if (!data) return -1;
        v->data = data;
        v->cap = cap;
    }
    memcpy((char *)v->data + v->len * v->item, x, (size_t)v->item);
    v->len++;
    return 0;
}

static int read_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out) {
    const uint8_t *p = *pp;
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (p >= end) return -1;
        uint8_t b = *p++;
        value |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *pp = p;
            *out = value;
            return 0;
        }
    }
    return -1;
}

/* Skip a field of wire type wt whose tag was read; -1 when malformed. */
static int skip_field(const uint8_t **pp, const uint8_t *end, unsigned wt) {
    uint64_t n;
    switch (wt) {
    case 0: return read_varint(pp, end, &n);
    case 1: if (end - *pp < 8) return -1; *pp += 8; return 0;
    case 2:
        if (read_varint(pp, end, &n) || n > (uint64_t)(end - *pp)) return -1;
        *pp += n;
        return 0;
    case 5: if (end - *pp < 4) return -1; *pp += 4; return 0;
    default: return -1;     /* groups: not in a GraphDef */
    }
}

static inline uint64_t hash_span(const uint8_t *p, Py_ssize_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
        p += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, p, (size_t)n);
    h = (h ^ w) * 0x94D049BB133111EBull;
    return h ^ (h >> 29);
}

/* Open addressing over spans: slot -> index into `keys` + 1 (0: empty). */
typedef struct {
    int64_t *slots;
    uint64_t *hashes;
    uint64_t mask;
    const Span *keys;
} Table;

static int table_init(Table *t, Py_ssize_t n, const Span *keys) {
    uint64_t cap = 16;
    while (cap < (uint64_t)n * 2) cap <<= 1;
    t->slots = calloc(cap, sizeof(int64_t));
    t->hashes = malloc(cap * sizeof(uint64_t));
    t->mask = cap - 1;
    t->keys = keys;
    return (t->slots && t->hashes) ? 0 : -1;
}

static void table_free(Table *t) {
    free(t->slots);
    free(t->hashes);
}

/* The slot of span (p, n): its entry, or the empty slot where it would go. */
static inline uint64_t table_find(const Table *t, const uint8_t *p, Py_ssize_t n, uint64_t h) {
    uint64_t i = h & t->mask;
    for (;;) {
        int64_t k = t->slots[i];
        if (k == 0) return i;
        if (t->hashes[i] == h) {
            const Span *s = &t->keys[k - 1];
            if (s->n == n && memcmp(s->p, p, (size_t)n) == 0) return i;
        }
        i = (i + 1) & t->mask;
    }
}

static int64_t table_get(const Table *t, const uint8_t *p, Py_ssize_t n) {
    uint64_t h = hash_span(p, n);
    int64_t k = t->slots[table_find(t, p, n, h)];
    return k - 1;   /* -1: absent */
}

/* Codes in order of first appearance of spans[0..n) (ops, devices): the codes, and the
 * distinct spans as a list of str. */
static PyObject *intern(const Span *spans, Py_ssize_t n, int32_t *codes) {
    Vec distinct = {NULL, 0, 0, sizeof(Span)};
    Table t;
    PyObject *out = NULL;
    if (table_init(&t, 64, NULL)) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        const Span *s = &spans[i];
        uint64_t h = hash_span(s->p, s->n);
        t.keys = distinct.data;
        uint64_t at = table_find(&t, s->p, s->n, h);
        if (t.slots[at]) {
            codes[i] = (int32_t)(t.slots[at] - 1);
            continue;
        }
        if (vec_push(&distinct, s)) goto done;
        codes[i] = (int32_t)(distinct.len - 1);
        t.slots[at] = distinct.len;
        t.hashes[at] = h;
        if ((uint64_t)distinct.len * 2 > t.mask) {     /* grow: insert again */
            Table bigger;
            if (table_init(&bigger, distinct.len * 2, distinct.data)) goto done;
            const Span *keys = distinct.data;
            for (Py_ssize_t k = 0; k < distinct.len; k++) {
                uint64_t hk = hash_span(keys[k].p, keys[k].n);
                uint64_t j = table_find(&bigger, keys[k].p, keys[k].n, hk);
                bigger.slots[j] = k + 1;
                bigger.hashes[j] = hk;
            }
            table_free(&t);
            t = bigger;
        }
    }
    out = PyList_New(distinct.len);
    if (!out) goto done;
    const Span *keys = distinct.data;
    for (Py_ssize_t k = 0; k < distinct.len; k++) {
        PyObject *s = PyUnicode_DecodeUTF8((const char *)keys[k].p, keys[k].n, "strict");
        if (!s) { Py_CLEAR(out); goto done; }
        PyList_SET_ITEM(out, k, s);
    }
done:
    table_free(&t);
    free(distinct.data);
    return out;
}

static PyObject *bytes_of(const void *data, Py_ssize_t n) {
    return PyBytes_FromStringAndSize((const char *)data, n);
}

/* build(data, names=False) -> dict of the arrays as bytes (see the module's comment). */
static PyObject *build(PyObject *self, PyObject *args) {
    Py_buffer buf;
    int want_names = 0;
    if (!PyArg_ParseTuple(args, "y*|p", &buf, &want_names)) return NULL;
    const uint8_t *p = buf.buf, *end = p + buf.len;
    Vec names = {NULL, 0, 0, sizeof(Span)}, ops = {NULL, 0, 0, sizeof(Span)};
    Vec devices = {NULL, 0, 0, sizeof(Span)}, inputs = {NULL, 0, 0, sizeof(Span)};
    Vec counts = {NULL, 0, 0, sizeof(int64_t)};
    Table table = {NULL, NULL, 0, NULL};
    int32_t *op = NULL, *device = NULL;
    int64_t *src = NULL, *dst = NULL, *slot = NULL;
    PyObject *result = NULL;
    const char *error = NULL;

    /* the GraphDef's nodes (field 1), each NodeDef's fields 1-4 */
    while (p < end) {
        uint64_t tag, len;
        if (read_varint(&p, end, &tag)) { error = "truncated tag"; goto done; }
        if (tag != ((1 << 3) | 2)) {
            if ((tag >> 3) == 0 || skip_field(&p, end, tag & 7)) { error = "bad field"; goto done; }
            continue;
        }
        if (read_varint(&p, end, &len) || len > (uint64_t)(end - p)) {
            error = "truncated node"; goto done;
        }
        const uint8_t *q = p, *node_end = p + len;
        Span name = {q, 0}, op_s = {q, 0}, device_s = {q, 0};
        int64_t n_inputs = 0;
        while (q < node_end) {
            uint64_t t, n;
            if (read_varint(&q, node_end, &t)) { error = "truncated node tag"; goto done; }
            uint64_t field = t >> 3;
            if ((t & 7) == 2 && field >= 1 && field <= 4) {
                if (read_varint(&q, node_end, &n) || n > (uint64_t)(node_end - q)) {
                    error = "truncated string"; goto done;
                }
                Span s = {q, (Py_ssize_t)n};
                q += n;
                if (field == 1) name = s;
                else if (field == 2) op_s = s;
                else if (field == 4) device_s = s;
                else {
                    if (vec_push(&inputs, &s)) goto nomem;
                    n_inputs++;
                }
            } else if (field == 0 || skip_field(&q, node_end, t & 7)) {
                error = "bad node field"; goto done;
            }
        }
        p = node_end;
        if (vec_push(&names, &name) || vec_push(&ops, &op_s) || vec_push(&devices, &device_s)
                || vec_push(&counts, &n_inputs)) goto nomem;
    }

    Py_ssize_t n = names.len, m = inputs.len;
    const Span *name_spans = names.data, *input_spans = inputs.data;
    if (table_init(&table, n, name_spans)) goto nomem;
    for (Py_ssize_t i = 0; i < n; i++) {    /* the last of a repeated name wins */
        uint64_t h = hash_span(name_spans[i].p, name_spans[i].n);
        uint64_t at = table_find(&table, name_spans[i].p, name_spans[i].n, h);
        table.slots[at] = i + 1;
        table.hashes[at] = h;
    }
    op = malloc(sizeof(int32_t) * (n ? n : 1));
    device = malloc(sizeof(int32_t) * (n ? n : 1));
    src = malloc(sizeof(int64_t) * (m ? m : 1));
    dst = malloc(sizeof(int64_t) * (m ? m : 1));
    slot = malloc(sizeof(int64_t) * (m ? m : 1));
    if (!op || !device || !src || !dst || !slot) goto nomem;
    PyObject *op_list = intern(ops.data, n, op);
    if (!op_list) goto done;
    PyObject *device_list = intern(devices.data, n, device);
    if (!device_list) { Py_DECREF(op_list); goto done; }

    const int64_t *count = counts.data;
    for (Py_ssize_t i = 0, k = 0; i < n; i++)
        for (int64_t j = 0; j < count[i]; j++) dst[k++] = i;
    for (Py_ssize_t k = 0; k < m; k++) {
        const uint8_t *r = input_spans[k].p;
        Py_ssize_t rn = input_spans[k].n;
        if (rn > 0 && r[0] == '^') {
            src[k] = table_get(&table, r + 1, rn - 1);
            slot[k] = -1;
            continue;
        }
        Py_ssize_t colon = rn - 1;
        while (colon >= 0 && r[colon] != ':') colon--;
        if (colon < 0) {
            src[k] = table_get(&table, r, rn);
            slot[k] = 0;
            continue;
        }
        /* rpartition(':'): a slot of ASCII digits (int() of str.isdigit), else -1 */
        Py_ssize_t digits = rn - colon - 1;
        int64_t value = digits > 0 && digits < 19 ? 0 : -1;
        for (Py_ssize_t d = colon + 1; d < rn && value >= 0; d++)
            value = (r[d] >= '0' && r[d] <= '9') ? value * 10 + (r[d] - '0') : -1;
        src[k] = table_get(&table, r, colon);
        slot[k] = value;
    }

    PyObject *names_list = Py_None;
    Py_INCREF(Py_None);
    if (want_names) {
        Py_DECREF(Py_None);
        names_list = PyList_New(n);
        for (Py_ssize_t i = 0; names_list && i < n; i++) {
            PyObject *s = PyUnicode_DecodeUTF8((const char *)name_spans[i].p, name_spans[i].n,
                                               "strict");
            if (!s) Py_CLEAR(names_list);
            else PyList_SET_ITEM(names_list, i, s);
        }
        if (!names_list) { Py_DECREF(op_list); Py_DECREF(device_list); goto done; }
    }
    result = Py_BuildValue(
        "{s:n,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N}", "nodes", n,
        "op", bytes_of(op, n * 4), "device", bytes_of(device, n * 4),
        "src", bytes_of(src, m * 8), "dst", bytes_of(dst, m * 8), "slot", bytes_of(slot, m * 8),
        "ops", op_list, "devices", device_list, "names", names_list);
    goto done;
nomem:
    PyErr_NoMemory();
done:
    if (error && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, error);
    table_free(&table);
    free(names.data); free(ops.data); free(devices.data); free(inputs.data); free(counts.data);
    free(op); free(device); free(src); free(dst); free(slot);
    PyBuffer_Release(&buf);
    return result;
}

static PyMethodDef methods[] = {
    {"build", build, METH_VARARGS, "The top-level graph of a binary GraphDef as arrays."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native_floor", NULL, -1, methods};

PyMODINIT_FUNC PyInit__native_floor(void) { return PyModule_Create(&module); }
