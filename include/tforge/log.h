/* Logging: one sink for the whole process, messages below the level are dropped. */
#ifndef TFORGE_LOG_H
#define TFORGE_LOG_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tforge_log_level {
    TFORGE_LOG_ERROR = 0,
    TFORGE_LOG_WARN = 1,
    TFORGE_LOG_INFO = 2,
    TFORGE_LOG_DEBUG = 3,
    TFORGE_LOG_TRACE = 4
} tforge_log_level;

/* Receives every message at or above the level; `message` is valid only during the call. The
 * sink may be called from any thread, one call at a time. */
typedef void (*tforge_log_sink)(void *context, tforge_log_level level, const char *message);

/* Replaces the sink (NULL restores the default, standard error) and returns nothing. */
void tforge_log_set_sink(tforge_log_sink sink, void *context);
void tforge_log_set_level(tforge_log_level level);
tforge_log_level tforge_log_get_level(void);

void tforge_log(tforge_log_level level, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
