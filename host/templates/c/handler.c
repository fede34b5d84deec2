/* The `{{name}}` skill handler (C; bindings generated from wit/ by
 * `skillhost handler build`, compiled with clang against wasi-libc).
 *
 * Strings from the host are (pointer, length) pairs, not NUL-terminated.
 * What the handler returns must be malloc'ed: the generated bindings free it
 * once the host has copied it out. */
#include <stdlib.h>
#include <string.h>

#include "handler.h"

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* The string value of the top-level key `key` in a JSON object, unescaped
 * into a malloc'ed buffer (*out, *out_len); 0 when absent or not a string.
 * A small reader for flat objects such as the task's context: use a JSON
 * library for anything richer. \uXXXX escapes are kept as written. */
static int json_string_field(const char *s, size_t n, const char *key, char **out, size_t *out_len) {
    size_t key_len = strlen(key);
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '{' || c == '[') { depth++; continue; }
        if (c == '}' || c == ']') { depth--; continue; }
        if (c != '"') continue;
        /* A string: find its end. */
        size_t start = ++i;
        while (i < n && s[i] != '"') i += (s[i] == '\\') ? 2 : 1;
        if (i >= n) return 0;
        int is_key = depth == 1 && i - start == key_len && memcmp(s + start, key, key_len) == 0;
        size_t j = i + 1;
        while (j < n && is_space(s[j])) j++;
        if (j >= n || s[j] != ':') continue; /* a value, not a key */
        if (!is_key) continue;
        j++;
        while (j < n && is_space(s[j])) j++;
        if (j >= n || s[j] != '"') return 0;
        char *buf = malloc(n - j);
        if (!buf) abort();
        size_t len = 0;
        for (j++; j < n && s[j] != '"'; j++) {
            if (s[j] == '\\' && j + 1 < n) {
                j++;
                switch (s[j]) {
                case 'n': buf[len++] = '\n'; break;
                case 't': buf[len++] = '\t'; break;
                case 'r': buf[len++] = '\r'; break;
                case 'b': buf[len++] = '\b'; break;
                case 'f': buf[len++] = '\f'; break;
                case 'u': buf[len++] = '\\'; buf[len++] = 'u'; break;
                default: buf[len++] = s[j]; break; /* \" \\ \/ */
                }
            } else {
                buf[len++] = s[j];
            }
        }
        *out = buf;
        *out_len = len;
        return 1;
    }
    return 0;
}

bool exports_handler_handle(handler_task_t *task, handler_output_t *ret, handler_failure_t *err) {
    const char *req = (const char *)task->description.ptr;
    size_t n = task->description.len;
    while (n && is_space(*req)) req++, n--;
    while (n && is_space(req[n - 1])) n--;
    if (n == 0) {
        handler_task_free(task);
        handler_string_dup(&err->class_, "InvalidInput");
        handler_string_dup(&err->message, "the task is empty: say what to do");
        return false;
    }
    /* Who to greet: the context field `name`, trimmed; empty greets the world. */
    char *given = NULL;
    size_t given_len = 0;
    const char *name = "world";
    size_t name_len = strlen(name);
    if (json_string_field((const char *)task->context_json.ptr, task->context_json.len, "name", &given,
                          &given_len)) {
        const char *g = given;
        size_t g_len = given_len;
        while (g_len && is_space(*g)) g++, g_len--;
        while (g_len && is_space(g[g_len - 1])) g_len--;
        if (g_len) name = g, name_len = g_len;
    }
    /* "Hello, NAME! You asked: TASK" */
    const char *hello = "Hello, ", *asked = "! You asked: ";
    size_t hello_len = strlen(hello), asked_len = strlen(asked);
    size_t len = hello_len + name_len + asked_len + n;
    char *body = malloc(len);
    if (!body) abort();
    memcpy(body, hello, hello_len);
    memcpy(body + hello_len, name, name_len);
    memcpy(body + hello_len + name_len, asked, asked_len);
    memcpy(body + hello_len + name_len + asked_len, req, n);
    free(given);
    handler_task_free(task);
    ret->body.ptr = (uint8_t *)body;
    ret->body.len = len;
    handler_string_dup(&ret->content_type, "text/plain");
    ret->flags.ptr = NULL;
    ret->flags.len = 0;
    return true;
}
