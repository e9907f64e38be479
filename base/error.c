#include "tforge/error.h"

#include <stdarg.h>
#include <stdio.h>

/* One slot per thread: a message stays valid until the next error on the same thread. */
static _Thread_local char last_message[1024];
static _Thread_local tforge_error last_error = {0, ""};

const tforge_error *tforge_error_last(void)
{
    return &last_error;
}

int tforge_error_set(int code, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(last_message, sizeof last_message, format, args);
    va_end(args);
    last_error.code = code;
    last_error.message = last_message;
    return code;
}

void tforge_error_clear(void)
{
    last_message[0] = '\0';
    last_error.code = 0;
    last_error.message = last_message;
}
