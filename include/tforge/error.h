/* Errors: functions return 0 or a negative TFORGE_E* code; the details of the last failure on
 * this thread are in tforge_error_last(). */
#ifndef TFORGE_ERROR_H
#define TFORGE_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
    TFORGE_OK = 0,
    TFORGE_ERROR = -1,     /* anything without a code of its own */
    TFORGE_ENOMEM = -2,    /* an allocation failed */
    TFORGE_EINPUT = -3,    /* bad input: a file, a field or an argument is not what was expected */
    TFORGE_ENOTFOUND = -4, /* a named thing (file, plugin, parameter, point) does not exist */
    TFORGE_EIO = -5,       /* reading or writing a file or a database failed */
    TFORGE_EABI = -6       /* a plugin was built for another ABI */
};

typedef struct tforge_error {
    int code;            /* one of the codes above */
    const char *message; /* owned by the library, valid until the next error on this thread */
} tforge_error;

/* The last error set on this thread; code 0 and message "" when there was none. Never NULL. */
const tforge_error *tforge_error_last(void);

/* Records an error for this thread and returns `code`, so that `return tforge_error_set(...)`
 * reads naturally. The message is printf-formatted and truncated at 1023 bytes. */
int tforge_error_set(int code, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Adds context in front of this thread's last error, keeping its code: after a callee failed
 * with "dimension loop0_stages: value 7 is not a level", tforge_error_prefix("transform '%s'",
 * "pipeline") leaves "transform 'pipeline': dimension loop0_stages: value 7 is not a level".
 * The context is printf-formatted, ": " joins it to the message (an empty message leaves the
 * context alone) and the whole is truncated at 1023 bytes. Returns the kept code, so that
 * `return tforge_error_prefix(...)` reads naturally; TFORGE_ERROR, which it also records, when no
 * error was set. */
int tforge_error_prefix(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

void tforge_error_clear(void);

#ifdef __cplusplus
}
#endif
#endif
