/* SPDX-License-Identifier: MIT */
/* Fuzz target: the unit parser. The first byte picks the call: paro_units_parse for each
 * ParoQuantity (0-3, and the parsed value goes back through paro_units_format), or
 * paro_units_parse_number without (4) or with (5) "a/b" ratios; the rest is the text. */
#include "core/units.h"
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_init();
    if (size < 1)
        return 0;
    int which = data[0] % 6;
    char *text = fuzz_string(data + 1, size - 1);
    GError *error = NULL;
    double value = 0;
    if (which < 4) {
        if (paro_units_parse(text, (ParoQuantity)which, &value, &error))
            g_free(paro_units_format(value, (ParoQuantity)which));
        (void)paro_units_quantity_name((ParoQuantity)which);
    } else {
        paro_units_parse_number(text, which == 5, &value, &error);
    }
    g_clear_error(&error);
    g_free(text);
    return 0;
}
