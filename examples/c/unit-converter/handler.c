/*
 * The `unit-converter` example handler, in C (wit-bindgen c + wasi-libc).
 *
 * `convert 5 km to mi` -> `5 km = 3.1069 mi`. The same handler exists in
 * Rust, JavaScript and Python under examples/; all four must give
 * byte-identical answers and failures for the same input, so tokenising,
 * number syntax, arithmetic order, rounding and messages follow the same
 * steps in each (see examples/README.md).
 *
 * Strings from the host are (pointer, length) pairs, not NUL-terminated, and
 * may contain any UTF-8 (even NUL), so this file works on slices throughout.
 * What it returns is malloc'ed: the generated bindings free it after the
 * host has copied it out (the component model's post-return).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handler.h"

/* A borrowed run of bytes. */
typedef struct {
    const char *p;
    size_t n;
} slice;

/* A growable, malloc'ed byte buffer for building answers and messages. */
typedef struct {
    char *p;
    size_t n, cap;
} buf;

static void buf_add(buf *b, const char *p, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (b->n + n + 1 > cap) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) abort(); /* out of memory: trap, the host reports it */
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = 0;
}
static void buf_str(buf *b, const char *s) { buf_add(b, s, strlen(s)); }
static void buf_slice(buf *b, slice s) { buf_add(b, s.p, s.n); }

typedef enum { LENGTH, MASS, TEMPERATURE } kind;
static const char *KIND_NAMES[] = {"length", "mass", "temperature"};

typedef struct {
    const char *symbol;
    kind kind;
    double factor; /* size in the kind's base unit (metre, gram) */
    const char *names[6];
} unit;

/* Every unit, in the order the "valid units" message lists them. */
static const unit UNITS[] = {
    {"m", LENGTH, 1.0, {"m", "meter", "meters", "metre", "metres"}},
    {"km", LENGTH, 1000.0, {"km", "kilometer", "kilometers", "kilometre", "kilometres"}},
    {"cm", LENGTH, 0.01, {"cm", "centimeter", "centimeters", "centimetre", "centimetres"}},
    {"mi", LENGTH, 1609.344, {"mi", "mile", "miles"}},
    {"yd", LENGTH, 0.9144, {"yd", "yard", "yards"}},
    {"ft", LENGTH, 0.3048, {"ft", "foot", "feet"}},
    {"in", LENGTH, 0.0254, {"in", "inch", "inches"}},
    {"kg", MASS, 1000.0, {"kg", "kilogram", "kilograms"}},
    {"g", MASS, 1.0, {"g", "gram", "grams"}},
    {"lb", MASS, 453.59237, {"lb", "lbs", "pound", "pounds"}},
    {"oz", MASS, 28.349523125, {"oz", "ounce", "ounces"}},
    {"C", TEMPERATURE, 1.0, {"c", "celsius"}},
    {"F", TEMPERATURE, 1.0, {"f", "fahrenheit"}},
    {"K", TEMPERATURE, 1.0, {"k", "kelvin"}},
};
#define UNIT_COUNT (sizeof UNITS / sizeof UNITS[0])

/* Beyond this, results scaled by 10^4 would stop being exact integers. */
#define MAX_ABS_VALUE 1000000.0

/* A classified failure being returned; `class` is static, `message` owned. */
typedef struct {
    const char *class;
    buf message;
} fail;

static bool failed(fail *f, const char *class, const char *message) {
    f->class = class;
    buf_str(&f->message, message);
    return false;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* ASCII-only, case-insensitive equality with a lowercase literal. */
static bool eq_lower(slice s, const char *lower) {
    size_t n = strlen(lower);
    if (s.n != n) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s.p[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
        if (c != lower[i]) return false;
    }
    return true;
}

static slice trim(slice s) {
    while (s.n && is_space(s.p[0])) s.p++, s.n--;
    while (s.n && is_space(s.p[s.n - 1])) s.n--;
    return s;
}

static const unit *lookup(slice name, fail *f) {
    for (size_t i = 0; i < UNIT_COUNT; i++)
        for (size_t j = 0; UNITS[i].names[j]; j++)
            if (eq_lower(name, UNITS[i].names[j])) return &UNITS[i];
    f->class = "UnknownUnit";
    buf_str(&f->message, "unknown unit \"");
    buf_slice(&f->message, name);
    buf_str(&f->message, "\"; valid units: ");
    for (size_t i = 0; i < UNIT_COUNT; i++) {
        if (i) buf_str(&f->message, ", ");
        buf_str(&f->message, UNITS[i].symbol);
    }
    return NULL;
}

/* `[+-]digits[.digits]` or `[+-].digits`, ASCII only, then strtod (which
 * rounds correctly, as the other languages' parsers do). */
static bool parse_number(slice text, double *out, fail *f) {
    size_t i = 0, int_digits = 0, frac_digits = 0;
    if (i < text.n && (text.p[i] == '+' || text.p[i] == '-')) i++;
    while (i < text.n && text.p[i] >= '0' && text.p[i] <= '9') i++, int_digits++;
    if (i < text.n && text.p[i] == '.') {
        i++;
        while (i < text.n && text.p[i] >= '0' && text.p[i] <= '9') i++, frac_digits++;
    }
    if (i != text.n || int_digits + frac_digits == 0) {
        f->class = "InvalidInput";
        buf_str(&f->message, "\"");
        buf_slice(&f->message, text);
        buf_str(&f->message, "\" is not a number");
        return false;
    }
    buf tmp = {0};
    buf_slice(&tmp, text);
    *out = strtod(tmp.p, NULL);
    free(tmp.p);
    return true;
}

/* ---- just enough JSON to read three top-level fields of the context ---- */

typedef enum { J_ABSENT, J_NULL, J_STRING, J_NUMBER, J_OTHER } jtype;

/* One top-level field: its type, and for strings the decoded text (owned),
 * for numbers the parsed value. */
typedef struct {
    jtype type;
    buf text;
    double number;
} jfield;

typedef struct {
    const char *p, *end;
} cursor;

static void skip_ws(cursor *c) {
    while (c->p < c->end && is_space(*c->p)) c->p++;
}

static void add_utf8(buf *b, uint32_t cp) {
    char u[4];
    size_t n;
    if (cp < 0x80) u[0] = (char)cp, n = 1;
    else if (cp < 0x800) u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    else if (cp < 0x10000)
        u[0] = (char)(0xE0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F)),
        u[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    else
        u[0] = (char)(0xF0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F)),
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    buf_add(b, u, n);
}

static bool hex4(cursor *c, uint32_t *out) {
    if (c->end - c->p < 4) return false;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char h = *c->p++;
        v <<= 4;
        if (h >= '0' && h <= '9') v |= (uint32_t)(h - '0');
        else if (h >= 'a' && h <= 'f') v |= (uint32_t)(h - 'a' + 10);
        else if (h >= 'A' && h <= 'F') v |= (uint32_t)(h - 'A' + 10);
        else return false;
    }
    *out = v;
    return true;
}

/* A string at the cursor (which is on its opening quote), decoded into `out`
 * when it is non-NULL. */
static bool json_string(cursor *c, buf *out) {
    buf scratch = {0};
    buf *b = out ? out : &scratch;
    if (c->p >= c->end || *c->p != '"') return false;
    c->p++;
    for (;;) {
        if (c->p >= c->end) break;
        char ch = *c->p++;
        if (ch == '"') {
            free(scratch.p);
            if (!b->p) buf_add(b, "", 0); /* an empty string is still a string */
            return true;
        }
        if (ch != '\\') {
            buf_add(b, &ch, 1);
            continue;
        }
        if (c->p >= c->end) break;
        char e = *c->p++;
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            const char *to = "\"\\/\b\f\n\r\t";
            buf_add(b, &to[simple - "\"\\/bfnrt"], 1);
        } else if (e == 'u') {
            uint32_t cp, lo;
            if (!hex4(c, &cp)) break;
            if (cp >= 0xD800 && cp < 0xDC00 && c->end - c->p >= 6 && c->p[0] == '\\' &&
                c->p[1] == 'u') {
                cursor save = *c;
                c->p += 2;
                if (hex4(c, &lo) && lo >= 0xDC00 && lo < 0xE000)
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                else
                    *c = save;
            }
            add_utf8(b, cp);
        } else {
            break;
        }
    }
    free(scratch.p);
    return false;
}

static bool json_skip(cursor *c, int depth);

static bool json_number(cursor *c, double *out) {
    const char *start = c->p;
    while (c->p < c->end && strchr("+-0123456789.eE", *c->p) && *c->p) c->p++;
    if (c->p == start) return false;
    buf tmp = {0};
    buf_add(&tmp, start, (size_t)(c->p - start));
    char *endp;
    *out = strtod(tmp.p, &endp);
    bool ok = *endp == 0;
    free(tmp.p);
    return ok;
}

static bool json_literal(cursor *c, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return false;
    c->p += n;
    return true;
}

/* Skips one value of any type; `depth` bounds nesting. */
static bool json_skip(cursor *c, int depth) {
    double d;
    skip_ws(c);
    if (c->p >= c->end || depth > 64) return false;
    char open = *c->p;
    if (open == '"') return json_string(c, NULL);
    if (open == '{' || open == '[') {
        char close = open == '{' ? '}' : ']';
        c->p++;
        skip_ws(c);
        if (c->p < c->end && *c->p == close) return c->p++, true;
        for (;;) {
            if (open == '{') {
                skip_ws(c);
                if (!json_string(c, NULL)) return false;
                skip_ws(c);
                if (c->p >= c->end || *c->p++ != ':') return false;
            }
            if (!json_skip(c, depth + 1)) return false;
            skip_ws(c);
            if (c->p >= c->end) return false;
            char sep = *c->p++;
            if (sep == close) return true;
            if (sep != ',') return false;
        }
    }
    if (json_literal(c, "true") || json_literal(c, "false") || json_literal(c, "null")) return true;
    return json_number(c, &d);
}

/* Reads the top-level fields `value`, `from` and `to` of a JSON object (the
 * last occurrence wins, as in the other languages' JSON parsers). */
static bool read_context(slice json, jfield fields[3], fail *f) {
    static const char *NAMES[3] = {"value", "from", "to"};
    cursor c = {json.p, json.p + json.n};
    skip_ws(&c);
    if (json_literal(&c, "null")) {
        skip_ws(&c);
        if (c.p == c.end) return true;
        return failed(f, "InvalidInput", "context is not valid JSON");
    }
    if (c.p >= c.end || *c.p != '{') {
        cursor probe = c;
        if (json_skip(&probe, 0)) return failed(f, "InvalidInput", "context must be a JSON object");
        return failed(f, "InvalidInput", "context is not valid JSON");
    }
    c.p++;
    skip_ws(&c);
    bool empty = c.p < c.end && *c.p == '}';
    if (empty) c.p++;
    while (!empty) {
        buf key = {0};
        skip_ws(&c);
        if (!json_string(&c, &key)) return free(key.p), failed(f, "InvalidInput", "context is not valid JSON");
        skip_ws(&c);
        if (c.p >= c.end || *c.p++ != ':') return free(key.p), failed(f, "InvalidInput", "context is not valid JSON");
        skip_ws(&c);
        jfield *field = NULL;
        for (int i = 0; i < 3; i++)
            if (strlen(NAMES[i]) == key.n && memcmp(key.p, NAMES[i], key.n) == 0) field = &fields[i];
        free(key.p);
        bool ok;
        if (!field) {
            ok = json_skip(&c, 1);
        } else {
            field->text.n = 0;
            if (c.p < c.end && *c.p == '"') {
                field->type = J_STRING;
                ok = json_string(&c, &field->text);
            } else if (json_literal(&c, "null")) {
                field->type = J_NULL, ok = true;
            } else if (c.p < c.end && (*c.p == '-' || (*c.p >= '0' && *c.p <= '9'))) {
                field->type = J_NUMBER;
                ok = json_number(&c, &field->number);
            } else {
                field->type = J_OTHER;
                ok = json_skip(&c, 1);
            }
        }
        if (!ok) return failed(f, "InvalidInput", "context is not valid JSON");
        skip_ws(&c);
        if (c.p >= c.end) return failed(f, "InvalidInput", "context is not valid JSON");
        char sep = *c.p++;
        if (sep == '}') break;
        if (sep != ',') return failed(f, "InvalidInput", "context is not valid JSON");
    }
    skip_ws(&c);
    if (c.p != c.end) return failed(f, "InvalidInput", "context is not valid JSON");
    return true;
}

/* A context string field, trimmed; `present` is false when absent, null or
 * blank. */
static bool context_str(jfield *field, const char *name, slice *out, bool *present, fail *f) {
    *present = false;
    if (field->type == J_ABSENT || field->type == J_NULL) return true;
    if (field->type != J_STRING) {
        f->class = "InvalidInput";
        buf_str(&f->message, "context field ");
        buf_str(&f->message, name);
        buf_str(&f->message, " must be a string");
        return false;
    }
    slice s = trim((slice){field->text.p, field->text.n});
    if (s.n == 0) return true;
    *out = s;
    *present = true;
    return true;
}

/* 4 decimals, half away from zero on |x| * 10^4, no trailing zeros. */
static void format_number(buf *b, double x) {
    bool negative = x < 0;
    double scaled = floor((negative ? -x : x) * 10000.0 + 0.5);
    if (scaled == 0) negative = false;
    double whole = floor(scaled / 10000.0);
    long long frac = (long long)(scaled - whole * 10000.0);
    char tmp[40];
    snprintf(tmp, sizeof tmp, "%s%lld", negative ? "-" : "", (long long)whole);
    buf_str(b, tmp);
    if (frac > 0) {
        snprintf(tmp, sizeof tmp, ".%04lld", frac);
        size_t n = strlen(tmp);
        while (tmp[n - 1] == '0') n--;
        buf_add(b, tmp, n);
    }
}

static double to_kelvin(const char *symbol, double v) {
    if (!strcmp(symbol, "C")) return v + 273.15;
    if (!strcmp(symbol, "F")) return (v - 32.0) * 5.0 / 9.0 + 273.15;
    return v;
}

static double from_kelvin(const char *symbol, double k) {
    if (!strcmp(symbol, "C")) return k - 273.15;
    if (!strcmp(symbol, "F")) return (k - 273.15) * 9.0 / 5.0 + 32.0;
    return k;
}

/* The conversion itself: appends the answer to `out`, or fills `f`. */
static bool convert(slice description, slice context, buf *out, fail *f) {
    jfield fields[3];
    memset(fields, 0, sizeof fields); /* all J_ABSENT, empty text */
    bool ok = false;
    if (!read_context(context, fields, f)) goto done;

    /* The task text: [convert] VALUE FROM (to|in|into) TO */
    slice tokens[5];
    size_t count = 0;
    bool extra = false;
    for (size_t i = 0; i < description.n;) {
        while (i < description.n && is_space(description.p[i])) i++;
        if (i == description.n) break;
        size_t start = i;
        while (i < description.n && !is_space(description.p[i])) i++;
        if (count < 5) tokens[count++] = (slice){description.p + start, i - start};
        else extra = true;
    }
    slice *t = tokens;
    if (count > 0 && eq_lower(t[0], "convert")) t++, count--;
    bool parsed = !extra && count == 4 &&
                  (eq_lower(t[2], "to") || eq_lower(t[2], "in") || eq_lower(t[2], "into"));

    double value = 0;
    bool have_value = false, have_from, have_to;
    slice from = {0}, to = {0}, text;
    if (fields[0].type == J_NUMBER) {
        value = fields[0].number, have_value = true;
    } else if (fields[0].type == J_ABSENT || fields[0].type == J_NULL || fields[0].type == J_STRING) {
        if (!context_str(&fields[0], "value", &text, &have_value, f)) goto done;
        if (have_value && !parse_number(text, &value, f)) goto done;
    } else {
        failed(f, "InvalidInput", "context field value must be a number or a numeric string");
        goto done;
    }
    if (!context_str(&fields[1], "from", &from, &have_from, f)) goto done;
    if (!context_str(&fields[2], "to", &to, &have_to, f)) goto done;
    if (parsed) {
        if (!have_value) {
            if (!parse_number(t[0], &value, f)) goto done;
            have_value = true;
        }
        if (!have_from) from = t[1], have_from = true;
        if (!have_to) to = t[3], have_to = true;
    }
    if (!have_value || !have_from || !have_to) {
        failed(f, "InvalidInput",
               "write the task as \"convert 5 km to mi\", or set the context fields value, from and to");
        goto done;
    }
    if (!(value >= -MAX_ABS_VALUE && value <= MAX_ABS_VALUE)) {
        failed(f, "InvalidInput", "value must be between -1000000 and 1000000");
        goto done;
    }
    const unit *u_from = lookup(from, f);
    if (!u_from) goto done;
    const unit *u_to = lookup(to, f);
    if (!u_to) goto done;
    if (u_from->kind != u_to->kind) {
        f->class = "IncompatibleUnits";
        buf_str(&f->message, "cannot convert ");
        buf_str(&f->message, u_from->symbol);
        buf_str(&f->message, " (");
        buf_str(&f->message, KIND_NAMES[u_from->kind]);
        buf_str(&f->message, ") to ");
        buf_str(&f->message, u_to->symbol);
        buf_str(&f->message, " (");
        buf_str(&f->message, KIND_NAMES[u_to->kind]);
        buf_str(&f->message, ")");
        goto done;
    }
    double result = u_from->kind == TEMPERATURE
                        ? from_kelvin(u_to->symbol, to_kelvin(u_from->symbol, value))
                        : value * u_from->factor / u_to->factor;
    format_number(out, value);
    buf_str(out, " ");
    buf_str(out, u_from->symbol);
    buf_str(out, " = ");
    format_number(out, result);
    buf_str(out, " ");
    buf_str(out, u_to->symbol);
    ok = true;
done:
    for (int i = 0; i < 3; i++) free(fields[i].text.p);
    return ok;
}

/* Hands a malloc'ed buffer to the bindings, which free it after the call. */
static void give(handler_string_t *s, buf *b) {
    if (!b->p) buf_add(b, "", 0);
    s->ptr = (uint8_t *)b->p;
    s->len = b->n;
}

/* The WIT export `handle`. */
bool exports_handler_handle(handler_task_t *task, handler_output_t *ret, handler_failure_t *err) {
    slice description = {(const char *)task->description.ptr, task->description.len};
    slice context = {(const char *)task->context_json.ptr, task->context_json.len};
    buf answer = {0};
    fail f = {0};
    bool ok = convert(description, context, &answer, &f);
    handler_task_free(task);
    if (ok) {
        give(&ret->body, &answer);
        handler_string_dup(&ret->content_type, "text/plain");
        ret->flags.ptr = NULL;
        ret->flags.len = 0;
        return true;
    }
    free(answer.p);
    handler_string_dup(&err->class_, f.class);
    give(&err->message, &f.message);
    return false;
}
