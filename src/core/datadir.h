/* SPDX-License-Identifier: MIT */
/* Where parosim's own data lives (models/, topologies/, scenarios/, plots/), so that an
 * installed tool finds it from any directory and a moved installation still works:
 * $PAROSIM_DATA_DIR, else share/parosim beside the running binary's folder (the path from
 * bindir to datadir, fixed at configure time), else the source tree it was built from. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * paro_data_dir:
 * Returns: (transfer full) (nullable): the first of the folders above that holds
 * the regular file @probe (a path relative to it, e.g. "plots/common.gp"), or NULL.
 */
char *paro_data_dir(const char *probe);

/**
 * paro_data_find:
 * @folder: "scenarios", "models" or "topologies"
 * Returns: (transfer full): @name itself when it is an existing file or has a folder
 * part; else the data folder's @folder/@name or @folder/@name.yaml when one exists; else
 * @name.
 */
char *paro_data_find(const char *folder, const char *name);

/**
 * paro_data_find_shipped:
 * @folder: "scenarios", "models" or "topologies"
 * Returns: (transfer full) (nullable): the data folder's @folder/@name or
 * @folder/@name.yaml when @name is a bare name (no folder part) and one exists, else
 * NULL. Never looks in the current directory: a reference inside a file names a file
 * beside that file or a shipped one, wherever parosim runs.
 */
char *paro_data_find_shipped(const char *folder, const char *name);

/**
 * paro_data_find_scenario:
 * @name: what the user wrote
 * Returns: (transfer full): @name itself when it is an existing file or has a folder
 * part; else the data folder's scenarios/@name or scenarios/@name.yaml when one exists;
 * else @name (so that the error names what was written).
 */
char *paro_data_find_scenario(const char *name);

G_END_DECLS
