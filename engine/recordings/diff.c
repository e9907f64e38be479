/* Two recordings compared field by field. */
#include "recording_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int same_number(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static int same_string(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int differ(char *why, size_t size, const char *format, ...)
{
    if (why && size > 0) {
        va_list args;
        va_start(args, format);
        vsnprintf(why, size, format, args);
        va_end(args);
    }
    return 1;
}

static int diff_entry(char *why, size_t size, const tforge_recording *rec, size_t i,
                      const tforge_recording_entry *x, const tforge_recording_entry *y)
{
    for (uint32_t p = 0; p < rec->n_params; p++)
        if (x->levels[p] != y->levels[p])
            return differ(why, size, "entry %zu: %s: level %u != %u", i, rec->params[p].name,
                          (unsigned)x->levels[p], (unsigned)y->levels[p]);
    if (x->status != y->status)
        return differ(why, size, "entry %zu: status %d != %d", i, (int)x->status,
                      (int)y->status);
    if (!same_number(x->time, y->time))
        return differ(why, size, "entry %zu: time %.17g != %.17g", i, x->time, y->time);
    if (x->n_times != y->n_times)
        return differ(why, size, "entry %zu: %u times != %u", i, x->n_times, y->n_times);
    for (uint32_t t = 0; t < x->n_times; t++)
        if (!same_number(x->times[t], y->times[t]))
            return differ(why, size, "entry %zu: times[%u] %.17g != %.17g", i, t, x->times[t],
                          y->times[t]);
    if (!same_number(x->spread, y->spread))
        return differ(why, size, "entry %zu: spread %.17g != %.17g", i, x->spread, y->spread);
    for (size_t t = 0; t < N_TIMING; t++)
        if (!same_number(timing_of(x, t), timing_of(y, t)))
            return differ(why, size, "entry %zu: %s %.17g != %.17g", i,
                          recording_timing_fields[t].kt,
                          timing_of(x, t), timing_of(y, t));
    for (uint32_t m = 0; m < rec->n_metrics; m++)
        if (!same_number(x->metrics[m], y->metrics[m]))
            return differ(why, size, "entry %zu: %s %.17g != %.17g", i, rec->metric_names[m],
                          x->metrics[m], y->metrics[m]);
    if (!same_string(x->timestamp, y->timestamp))
        return differ(why, size, "entry %zu: timestamp %s != %s", i,
                      x->timestamp ? x->timestamp : "(none)",
                      y->timestamp ? y->timestamp : "(none)");
    return 0;
}

int tforge_recording_diff(char *why, size_t why_size, const tforge_recording *a,
                          const tforge_recording *b)
{
    const char *names[] = {"device_name", "kernel_name", "problem_size", "objective"};
    const char *as[] = {a->device_name, a->kernel_name, a->problem_size, a->objective};
    const char *bs[] = {b->device_name, b->kernel_name, b->problem_size, b->objective};
    for (size_t i = 0; i < 4; i++)
        if (!same_string(as[i], bs[i]))
            return differ(why, why_size, "%s: %s != %s", names[i], as[i] ? as[i] : "(none)",
                          bs[i] ? bs[i] : "(none)");
    if (a->n_params != b->n_params)
        return differ(why, why_size, "%u parameters != %u", a->n_params, b->n_params);
    for (uint32_t p = 0; p < a->n_params; p++) {
        const tforge_recording_param *x = &a->params[p], *y = &b->params[p];
        if (strcmp(x->name, y->name) != 0 || x->n_values != y->n_values ||
            x->all_numeric != y->all_numeric)
            return differ(why, why_size, "parameter %u: %s (%u values) != %s (%u values)", p,
                          x->name, x->n_values, y->name, y->n_values);
        for (uint32_t l = 0; l < x->n_values; l++)
            if (strcmp(x->texts[l], y->texts[l]) != 0 || !same_number(x->numbers[l], y->numbers[l]))
                return differ(why, why_size, "parameter %s: value %u: %s != %s", x->name, l,
                              x->texts[l], y->texts[l]);
    }
    if (a->n_metrics != b->n_metrics)
        return differ(why, why_size, "%u metrics != %u", a->n_metrics, b->n_metrics);
    for (uint32_t m = 0; m < a->n_metrics; m++)
        if (strcmp(a->metric_names[m], b->metric_names[m]) != 0)
            return differ(why, why_size, "metric %u: %s != %s", m, a->metric_names[m],
                          b->metric_names[m]);
    if (a->n_entries != b->n_entries)
        return differ(why, why_size, "%zu entries != %zu", a->n_entries, b->n_entries);
    for (size_t i = 0; i < a->n_entries; i++)
        if (diff_entry(why, why_size, a, i, &a->entries[i], &b->entries[i]))
            return 1;
    return 0;
}
