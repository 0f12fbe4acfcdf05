/* SPDX-License-Identifier: MIT */
/* Fault injection for the tests, compiled only into tests' parosim-faults
 * (PARO_FAULT_INJECTION): PAROSIM_FAULT=SITE:N:SIGNAL[,...] raises SIGNAL (INT, TERM or
 * HUP) the Nth time the library reaches SITE (core/fault.h), so that a test lands a signal
 * exactly between two steps of the program instead of guessing when to send it. raise(),
 * not kill(getpid()): the signal goes to the thread that reached the site and its handler
 * has run when raise returns, where a process-wide signal may be taken later by another
 * thread (a sweep's worker would start one more point). */
#include "cli/cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fault.h"

typedef struct {
    char site[32];
    int nth, signo;
    gint reached;
} Fault;

static Fault faults[8];
static guint n_faults;

static void on_fault_point(const char *site)
{
    for (guint i = 0; i < n_faults; i++)
        if (strcmp(faults[i].site, site) == 0 &&
            g_atomic_int_add(&faults[i].reached, 1) + 1 == faults[i].nth)
            raise(faults[i].signo);
}

static int signal_named(const char *name)
{
    return strcmp(name, "INT") == 0    ? SIGINT
           : strcmp(name, "TERM") == 0 ? SIGTERM
           : strcmp(name, "HUP") == 0  ? SIGHUP
                                       : 0;
}

gboolean paro_cli_arm_faults(void)
{
    const char *text = g_getenv("PAROSIM_FAULT");
    if (text == NULL || text[0] == '\0')
        return TRUE;
    g_auto(GStrv) specs = g_strsplit(text, ",", -1);
    for (guint i = 0; specs[i]; i++) {
        g_auto(GStrv) f = g_strsplit(specs[i], ":", -1);
        char *end = NULL;
        long nth = f[0] && f[1] ? strtol(f[1], &end, 10) : 0;
        int signo = f[0] && f[1] && f[2] && !f[3] ? signal_named(f[2]) : 0;
        if (n_faults == G_N_ELEMENTS(faults) || signo == 0 || end == f[1] || *end != '\0' ||
            nth < 1 || strlen(f[0]) >= sizeof faults[0].site) {
            fprintf(stderr, "parosim: PAROSIM_FAULT='%s': want SITE:N:INT|TERM|HUP[,...]\n",
                    specs[i]);
            return FALSE;
        }
        Fault *fault = &faults[n_faults++];
        g_strlcpy(fault->site, f[0], sizeof fault->site);
        fault->nth = (int)nth;
        fault->signo = signo;
    }
    paro_fault_set_hook(on_fault_point);
    return TRUE;
}
