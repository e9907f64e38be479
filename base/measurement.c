#include "tforge/measurement.h"

#include "tforge/error.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const status_names[TFORGE_STATUS_COUNT] = TFORGE_STATUS_NAMES;

void tforge_measurement_init(tforge_measurement *m)
{
    memset(m, 0, sizeof *m);
    m->status = TFORGE_STATUS_OK;
    m->value = m->median_ms = m->min_ms = m->compile_ms = m->wall_ms = NAN;
}

void tforge_measurement_fail(tforge_measurement *m, tforge_status status, const char *format, ...)
{
    m->status = status;
    va_list ap;
    va_start(ap, format);
    vsnprintf(m->message, sizeof m->message, format, ap);
    va_end(ap);
}

static int is_identifier(const char *s)
{
    if (!*s || (*s >= '0' && *s <= '9'))
        return 0;
    for (; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9')))
            return 0;
    return 1;
}

int tforge_metric_name_ok(const char *name)
{
    return is_identifier(name) && strlen(name) < TFORGE_METRIC_NAME_SIZE;
}

int tforge_metrics_set(tforge_metric *table, uint32_t *n, uint32_t cap, const char *holder,
                       const char *name, double value)
{
    if (!tforge_metric_name_ok(name))
        return tforge_error_set(TFORGE_EINPUT, "metric name '%s': expected an identifier of at "
                                "most %d characters", name, TFORGE_METRIC_NAME_SIZE - 1);
    if (isnan(value))
        return 0;
    for (uint32_t i = 0; i < *n; i++)
        if (strcmp(table[i].name, name) == 0) {
            table[i].value = value;
            return 0;
        }
    if (*n == cap)
        return tforge_error_set(TFORGE_ERROR, "metric %s: a %s holds at most %u metrics", name,
                                holder, cap);
    tforge_metric *slot = &table[(*n)++];
    snprintf(slot->name, sizeof slot->name, "%s", name);
    slot->value = value;
    return 0;
}

double tforge_metrics_get(const tforge_metric *table, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(table[i].name, name) == 0)
            return table[i].value;
    return NAN;
}

int tforge_measurement_set_metric(tforge_measurement *m, const char *name, double value)
{
    return tforge_metrics_set(m->metrics, &m->n_metrics, TFORGE_MEASUREMENT_METRICS,
                              "measurement", name, value);
}

double tforge_measurement_metric(const tforge_measurement *m, const char *name)
{
    return tforge_metrics_get(m->metrics, m->n_metrics, name);
}

size_t tforge_measurement_metrics_json(const tforge_measurement *m, char *buf, size_t size)
{
    size_t used = 0;
    if (size)
        buf[0] = '\0';
    for (uint32_t i = 0; i < m->n_metrics && i < TFORGE_MEASUREMENT_METRICS; i++) {
        double v = m->metrics[i].value;
        if (!isfinite(v)) /* JSON has no infinities */
            continue;
        int n = snprintf(buf + used, size - used, "%s\"%s\": %.17g", used ? ", " : "{",
                         m->metrics[i].name, v);
        if (n < 0 || (size_t)n >= size - used) {
            buf[0] = '\0';
            return 0;
        }
        used += (size_t)n;
    }
    if (used == 0)
        return 0;
    if (used + 2 > size) {
        buf[0] = '\0';
        return 0;
    }
    buf[used++] = '}';
    buf[used] = '\0';
    return used;
}

const char *tforge_status_name(uint32_t status)
{
    return status < TFORGE_STATUS_COUNT ? status_names[status] : "?";
}

int tforge_status_parse(uint32_t *out, const char *name)
{
    for (uint32_t i = 0; i < TFORGE_STATUS_COUNT; i++)
        if (strcmp(name, status_names[i]) == 0) {
            *out = i;
            return 0;
        }
    return TFORGE_ENOTFOUND;
}
