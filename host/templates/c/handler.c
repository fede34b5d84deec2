/* The `{{name}}` skill handler (C, with wit-bindgen c and wasi-libc).
 *
 * Strings from the host are (pointer, length) pairs, not NUL-terminated.
 * What the handler returns must be malloc'ed: the generated bindings free it
 * once the host has copied it out. */
#include <stdlib.h>
#include <string.h>

#include "handler.h"

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

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
    /* A real handler would parse task->context_json; this one greets the world. */
    const char *head = "Hello, world! You asked: ";
    size_t head_len = strlen(head);
    char *body = malloc(head_len + n);
    if (!body) abort();
    memcpy(body, head, head_len);
    memcpy(body + head_len, req, n);
    handler_task_free(task);
    ret->body.ptr = (uint8_t *)body;
    ret->body.len = head_len + n;
    handler_string_dup(&ret->content_type, "text/plain");
    ret->flags.ptr = NULL;
    ret->flags.len = 0;
    return true;
}
