/* SPDX-License-Identifier: MIT */
/* Fuzz target: the CSV/TSV reader of `parosim plot`. The first byte picks the separator
 * (even: ',' CSV with header, odd: '\t' TSV), the rest is written to a file and read;
 * a table read is then probed as the plot code does (columns by name, numbers), and a CSV
 * is read as plans by the plan-scaling plot (repeated headers, flags, GPU counts). */
#include "fuzz-common.h"
#include "plot/plot.h"
#include "plot/table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_init();
    if (size < 1)
        return 0;
    char separator = data[0] % 2 ? '\t' : ',';
    g_autofree char *path = fuzz_tmp_path(separator == ',' ? "table.csv" : "table.tsv");
    fuzz_write(path, data + 1, size - 1);
    GError *error = NULL;
    ParoTable *t = paro_table_read(path, separator, &error);
    if (t != NULL) {
        int column = paro_table_column(t, "time", &error);
        g_clear_error(&error);
        if (column < 0 && t->header != NULL && t->header[0] != NULL)
            column = paro_table_column(t, t->header[0], &error);
        g_clear_error(&error);
        if (column < 0 && t->rows->len > 0 && ((char **)g_ptr_array_index(t->rows, 0))[0])
            column = 0;
        for (guint r = 0; column >= 0 && r < t->rows->len && r < 1000; r++) {
            double v;
            /* A headerless row may be short: the plot code checks, so do we. */
            if ((guint)column >= g_strv_length(g_ptr_array_index(t->rows, r)))
                continue;
            (void)paro_table_field(t, r, column);
            paro_table_number(t, r, column, &v, &error);
            g_clear_error(&error);
        }
        paro_table_free(t);
    }
    g_clear_error(&error);
    if (separator == ',') {
        GString *tsv = g_string_new(NULL);
        char *names = NULL;
        if (paro_plot_plan_scaling(path, NULL, tsv, &names, &error))
            g_free(names);
        g_clear_error(&error);
        g_string_free(tsv, TRUE);
    }
    return 0;
}
