/* SPDX-License-Identifier: MIT */
/* Simulated time: integer picoseconds (about 106 simulated days of range), so event
 * order is exact and runs are bit-reproducible. Durations computed in double are rounded
 * up once, where they enter the clock. */
#pragma once

#include <glib.h>
#include <math.h>

typedef gint64 ParoTime;

#define PARO_TIME_MAX G_MAXINT64
#define PARO_PS_PER_S 1e12

/* Seconds to picoseconds, rounded up; saturates instead of overflowing. */
static inline ParoTime paro_time_from_s(double seconds)
{
    double ps = ceil(seconds * PARO_PS_PER_S);
    if (!(ps < 9.2e18))
        return PARO_TIME_MAX;
    return ps < 0 ? 0 : (ParoTime)ps;
}

/* a + b, saturating at PARO_TIME_MAX (a, b >= 0). */
static inline ParoTime paro_time_add(ParoTime a, ParoTime b)
{
    return b > PARO_TIME_MAX - a ? PARO_TIME_MAX : a + b;
}

static inline double paro_time_to_s(ParoTime t)
{
    return (double)t / PARO_PS_PER_S;
}
