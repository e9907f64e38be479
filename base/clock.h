/* The one monotonic clock the engine times phases with. */
#ifndef TFORGE_BASE_CLOCK_H
#define TFORGE_BASE_CLOCK_H

/* Seconds since an arbitrary fixed point (CLOCK_MONOTONIC): only differences mean anything. */
double tforge_clock_s(void);

#endif
