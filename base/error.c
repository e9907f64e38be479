#include "tforge/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* One slot per thread: a message stays valid until the next error on the same thread. */
static _Thread_local char last_message[1024];
static _Thread_local tforge_error last_error = {0, ""};

const tforge_error *tforge_error_last(void)
{
    return &last_error;
}

/* Formats into fresh memory, then copies: an argument may be the current message itself, and
 * vsnprintf into the buffer it reads from garbles it. */
static int set_formatted(int code, const char *format, va_list args)
{
    char fresh[sizeof last_message];
    vsnprintf(fresh, sizeof fresh, format, args);
    memcpy(last_message, fresh, strlen(fresh) + 1);
    last_error.code = code;
    last_error.message = last_message;
    return code;
}

int tforge_error_set(int code, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    set_formatted(code, format, args);
    va_end(args);
    return code;
}

int tforge_error_prefix(const char *format, ...)
{
    char context[sizeof last_message];
    va_list args;
    va_start(args, format);
    vsnprintf(context, sizeof context, format, args);
    va_end(args);
    /* A failure nobody recorded still reads as one to the caller that returns this. */
    int code = last_error.code ? last_error.code : TFORGE_ERROR;
    if (!last_error.message[0])
        return tforge_error_set(code, "%s", context);
    return tforge_error_set(code, "%s: %s", context, last_error.message);
}

void tforge_error_clear(void)
{
    last_message[0] = '\0';
    last_error.code = 0;
    last_error.message = last_message;
}
