#include "tforge/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

static void stderr_sink(void *context, tforge_log_level level, const char *message)
{
    (void)context;
    fprintf(stderr, "tforge: %s: %s\n", level_names[level], message);
}

static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static tforge_log_sink current_sink = stderr_sink;
static void *current_context;
static _Atomic int current_level = TFORGE_LOG_WARN;

void tforge_log_set_sink(tforge_log_sink sink, void *context)
{
    pthread_mutex_lock(&sink_lock);
    current_sink = sink ? sink : stderr_sink;
    current_context = sink ? context : NULL;
    pthread_mutex_unlock(&sink_lock);
}

void tforge_log_set_level(tforge_log_level level)
{
    if (level > TFORGE_LOG_TRACE)
        level = TFORGE_LOG_TRACE;
    current_level = level;
}

tforge_log_level tforge_log_get_level(void)
{
    return (tforge_log_level)current_level;
}

void tforge_log(tforge_log_level level, const char *format, ...)
{
    if ((int)level > current_level)
        return;
    char message[2048];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    pthread_mutex_lock(&sink_lock);
    current_sink(current_context, level, message);
    pthread_mutex_unlock(&sink_lock);
}
