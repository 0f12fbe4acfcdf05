/* SPDX-License-Identifier: MIT */
/* Reading inputs and writing outputs safely: the only two ways parosim touches a file.
 * Inputs are regular files of bounded size (a FIFO would block, /dev/zero would fill the
 * memory). Outputs replace a regular file (or create one) through a temporary file and a
 * rename, keeping its mode, so an interrupted command never leaves a truncated file; a
 * device, FIFO or /dev/stdout is written directly (a rename would replace the device node
 * itself); every write and close error is reported, and an output that is one of the
 * command's inputs is refused before anything is written. */
#pragma once

#include <glib.h>

#include "core/limits.h"

G_BEGIN_DECLS

/**
 * paro_file_check_input:
 * @limit: (nullable): the size bound; NULL for none
 * TRUE when @path names (through symbolic links) a regular file within @limit. Errors
 * (G_FILE_ERROR): the reason alone, without the path, so that callers can place it:
 * "does not exist", "is a directory, not a file", "is a character device, not a regular
 * file", "is a loop of symbolic links", "is 4.3 GB, above the limit of ...".
 */
gboolean paro_file_check_input(const char *path, const ParoLimit *limit, GError **error);

/**
 * paro_file_read:
 * Reads the regular file @path of at most @limit bytes into @out_contents (NUL-terminated,
 * transfer full) and @out_length (optional). Never blocks on a FIFO or reads a device.
 * Errors (G_FILE_ERROR): "PATH: <reason>" as for paro_file_check_input, or the read error.
 */
gboolean paro_file_read(const char *path, const ParoLimit *limit, char **out_contents,
                        gsize *out_length, GError **error);

/**
 * paro_file_write:
 * @path: the output
 * @inputs: (nullable): NULL-terminated paths the command read; NULL entries are skipped
 *   only at the end, so pass what exists
 *
 * Writes @length bytes of @data to @path: onto a regular file or a new path through a
 * temporary file in the same folder and a rename (the mode of a replaced file is kept;
 * a symbolic link is followed, so the link stays and its target is replaced; a file with
 * several hard links is rewritten in place, so that every name sees the output); onto a
 * device, FIFO, /dev/stdout or /dev/fd/N directly. Refuses @path when it is one of
 * @inputs (same device and inode), a directory or a socket. Errors (G_FILE_ERROR): "PATH:
 * <reason>", including write, close and rename errors (no space left on /dev/full).
 */
gboolean paro_file_write(const char *path, const char *data, gsize length,
                         const char *const *inputs, GError **error);

/* One piece of an output written in pieces. */
typedef struct {
    const char *data;
    gsize length;
} ParoFilePart;

/**
 * paro_file_write_parts:
 * paro_file_write of the concatenation of @n_parts pieces, without making it: a large
 * output assembled from pieces already in memory (a sweep's rows) is not copied again.
 */
gboolean paro_file_write_parts(const char *path, const ParoFilePart *parts, gsize n_parts,
                               const char *const *inputs, GError **error);

/**
 * paro_file_check_output:
 * What paro_file_write would refuse before anything is computed: @path is one of @inputs,
 * a directory, a socket or a dangling symbolic link. A long command checks its output
 * first, so that it does not fail only once its work is done.
 */
gboolean paro_file_check_output(const char *path, const char *const *inputs, GError **error);

/**
 * paro_file_abort_pending:
 * Removes the temporary file of the output being written, if any. Async-signal-safe: the
 * CLI's handlers of SIGINT, SIGTERM and SIGHUP call it before dying of the signal, so that
 * a command stopped at any moment leaves its output as it was, never a `.NAME.XXXXXX`.
 */
void paro_file_abort_pending(void);

G_END_DECLS
