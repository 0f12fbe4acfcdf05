/* SPDX-License-Identifier: MIT */
/* Safe file input and output (core/files.h). POSIX calls, since GLib's helpers
 * (g_file_get_contents, g_file_set_contents) read devices whole and rename over device
 * nodes. */
#include "core/files.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fault.h"

/* What a non-regular file is, for messages. */
static const char *kind_of(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory, not a file";
    if (S_ISCHR(mode))
        return "a character device, not a regular file";
    if (S_ISBLK(mode))
        return "a block device, not a regular file";
    if (S_ISFIFO(mode))
        return "a FIFO (named pipe), not a regular file";
    if (S_ISSOCK(mode))
        return "a socket, not a regular file";
    return "not a regular file";
}

static const char *errno_reason(int err)
{
    switch (err) {
    case ENOENT:
        return "does not exist";
    case ELOOP:
        return "is a loop of symbolic links";
    case EACCES:
        return "cannot be read: permission denied";
    case ENOTDIR:
        return "does not exist (a folder on its path is a file)";
    default:
        return g_strerror(err);
    }
}

/* "16 MiB", "4.25 GiB": binary prefixes, plain spaces (g_format_size's are no-break). */
static char *size_text(double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    guint u = 0;
    while (bytes >= 1024 && u + 1 < G_N_ELEMENTS(units)) {
        bytes /= 1024;
        u++;
    }
    return g_strdup_printf("%.3g %s", bytes, units[u]);
}

/* The reason @st (of a file opened for reading) is refused, or NULL. */
static char *refuse_input(const struct stat *st, const ParoLimit *limit)
{
    if (!S_ISREG(st->st_mode))
        return g_strdup_printf("is %s", kind_of(st->st_mode));
    if (limit != NULL && !paro_limit_check(limit, (double)st->st_size)) {
        g_autofree char *size = size_text((double)st->st_size);
        g_autofree char *max = size_text(limit->max);
        return g_strdup_printf("is %s, above the limit of %s for %s: %s", size, max, limit->name,
                               limit->why);
    }
    return NULL;
}

gboolean paro_file_check_input(const char *path, const ParoLimit *limit, GError **error)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        int err = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s", errno_reason(err));
        return FALSE;
    }
    g_autofree char *why = refuse_input(&st, limit);
    if (why != NULL) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s", why);
        return FALSE;
    }
    return TRUE;
}

gboolean paro_file_read(const char *path, const ParoLimit *limit, char **out_contents,
                        gsize *out_length, GError **error)
{
    g_return_val_if_fail(path != NULL && out_contents != NULL, FALSE);
    /* O_NONBLOCK: opening a FIFO for reading must not wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int err = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s: %s", path,
                    errno_reason(err));
        return FALSE;
    }
    struct stat st;
    g_autofree char *why = NULL;
    if (fstat(fd, &st) != 0)
        why = g_strdup(g_strerror(errno));
    else
        why = refuse_input(&st, limit);
    if (why != NULL) {
        close(fd);
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: %s", path, why);
        return FALSE;
    }
    /* The size may change while we read: read to the end, within the limit. */
    gsize cap = limit ? (gsize)limit->max : G_MAXSIZE - 1, size = (gsize)st.st_size + 1;
    GString *text = g_string_sized_new(MIN(size, cap) + 1);
    char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int err = errno;
            close(fd);
            g_string_free(text, TRUE);
            g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s: %s", path,
                        g_strerror(err));
            return FALSE;
        }
        if (n == 0)
            break;
        if (text->len + (gsize)n > cap) {
            close(fd);
            g_string_free(text, TRUE);
            g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOSPC,
                        "%s: grew beyond the limit of %.0f bytes for %s while being read", path,
                        (double)cap, limit ? limit->name : "a file");
            return FALSE;
        }
        g_string_append_len(text, buf, n);
    }
    close(fd);
    if (out_length)
        *out_length = text->len;
    *out_contents = g_string_free(text, FALSE);
    return TRUE;
}

/* ---- output ---- */

static gboolean set_errno_error(GError **error, const char *path, const char *what, int err)
{
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s: %s%s%s", path,
                what ? what : "", what ? ": " : "", g_strerror(err));
    return FALSE;
}

static gboolean write_all(int fd, const char *data, gsize length, const char *path, GError **error)
{
    while (length > 0) {
        ssize_t n = write(fd, data, MIN(length, (gsize)1 << 30));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return set_errno_error(error, path, "cannot write", n < 0 ? errno : ENOSPC);
        data += n;
        length -= (gsize)n;
    }
    return TRUE;
}

static gboolean write_parts(int fd, const ParoFilePart *parts, gsize n, const char *path,
                            GError **error)
{
    for (gsize i = 0; i < n; i++)
        if (!write_all(fd, parts[i].data ? parts[i].data : "", parts[i].length, path, error))
            return FALSE;
    return TRUE;
}

/* The descriptor @path names when it is /dev/stdout, /dev/stderr, /dev/fd/N or
 * /proc/self/fd/N (written through our own descriptor, so that the shell's redirection,
 * its offset and O_APPEND, is respected), else -1. */
static int own_descriptor(const char *path)
{
    if (strcmp(path, "/dev/stdout") == 0)
        return STDOUT_FILENO;
    if (strcmp(path, "/dev/stderr") == 0)
        return STDERR_FILENO;
    const char *prefixes[] = {"/dev/fd/", "/proc/self/fd/"};
    for (guint i = 0; i < G_N_ELEMENTS(prefixes); i++)
        if (g_str_has_prefix(path, prefixes[i])) {
            const char *digits = path + strlen(prefixes[i]);
            char *end = NULL;
            long fd = strtol(digits, &end, 10);
            if (end != digits && *end == '\0' && fd >= 0 && fd < 1 << 20)
                return (int)fd;
        }
    return -1;
}

static gboolean write_direct(int fd, gboolean owned, const char *path, const ParoFilePart *parts,
                             gsize n, GError **error)
{
    gboolean ok = write_parts(fd, parts, n, path, error);
    /* A regular file behind the descriptor may report a full disk only now; pipes, ttys
     * and devices say EINVAL, which is no error. */
    if (ok && fsync(fd) != 0 && errno != EINVAL && errno != EROFS && errno != ENOTSUP)
        ok = set_errno_error(error, path, "cannot flush", errno);
    if (owned && close(fd) != 0 && ok)
        ok = set_errno_error(error, path, "cannot close", errno);
    if (ok)
        paro_fault_point("write-done");
    return ok;
}

static gboolean is_input(const struct stat *st, const char *const *inputs)
{
    for (int i = 0; inputs && inputs[i]; i++) {
        struct stat in;
        if (stat(inputs[i], &in) == 0 && in.st_dev == st->st_dev && in.st_ino == st->st_ino)
            return TRUE;
    }
    return FALSE;
}

/* The temporary file being written, for paro_file_abort_pending (called from signal
 * handlers): only async-signal-safe state. One at a time: the commands write their
 * outputs from one thread, one after another. */
static struct {
    volatile sig_atomic_t armed; /* path below is complete and the file may exist */
    char path[4096];
} pending;

void paro_file_abort_pending(void)
{
    if (pending.armed)
        unlink(pending.path);
}

/* Temporary file beside @target, written, given @mode, renamed over @target. */
static gboolean replace(const char *target, const ParoFilePart *parts, gsize n, int mode,
                        GError **error)
{
    g_autofree char *dir = g_path_get_dirname(target), *base = g_path_get_basename(target);
    g_autofree char *tmpl = g_strdup_printf("%s/.%s.XXXXXX", dir, base);
    if (strlen(tmpl) >= sizeof pending.path) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NAMETOOLONG, "%s: %s", target,
                    g_strerror(ENAMETOOLONG));
        return FALSE;
    }
    /* The name is armed before the file exists: a signal between mkstemp and the arming
     * would otherwise leave it behind (unlinking a name not yet created does nothing). */
    memcpy(pending.path, tmpl, strlen(tmpl) + 1);
    pending.armed = 1;
    int fd = g_mkstemp_full(pending.path, O_WRONLY | O_CLOEXEC, 0666);
    pending.armed = fd >= 0;
    if (fd < 0)
        return set_errno_error(error, target, "cannot create a temporary file beside it", errno);
    paro_fault_point("write-open");
    gboolean ok = write_parts(fd, parts, n, target, error);
    if (ok && mode >= 0 && fchmod(fd, (mode_t)mode) != 0)
        ok = set_errno_error(error, target, "cannot keep its mode", errno);
    if (ok && fsync(fd) != 0)
        ok = set_errno_error(error, target, "cannot flush", errno);
    if (close(fd) != 0 && ok)
        ok = set_errno_error(error, target, "cannot close", errno);
    if (ok)
        paro_fault_point("write-temp");
    if (ok && rename(pending.path, target) != 0)
        ok = set_errno_error(error, target, "cannot rename the temporary file onto it", errno);
    if (!ok)
        unlink(pending.path);
    pending.armed = 0;
    if (ok)
        paro_fault_point("write-done");
    return ok;
}

gboolean paro_file_check_output(const char *path, const char *const *inputs, GError **error)
{
    struct stat st;
    int own = own_descriptor(path);
    if ((own >= 0 && fstat(own, &st) != 0) || (own < 0 && stat(path, &st) != 0)) {
        struct stat lst;
        if (own < 0 && errno == ENOENT && lstat(path, &lst) == 0) {
            g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                        "%s: is a symbolic link to a file that does not exist", path);
            return FALSE;
        }
        return errno == ENOENT || set_errno_error(error, path, NULL, errno);
    }
    if (is_input(&st, inputs)) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
                    "%s: is one of this command's inputs; refusing to overwrite it", path);
        return FALSE;
    }
    if (S_ISDIR(st.st_mode) || S_ISSOCK(st.st_mode)) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_ISDIR, "%s: is %s", path,
                    kind_of(st.st_mode));
        return FALSE;
    }
    return TRUE;
}

gboolean paro_file_write(const char *path, const char *data, gsize length,
                         const char *const *inputs, GError **error)
{
    g_return_val_if_fail(data != NULL || length == 0, FALSE);
    ParoFilePart part = {data, length};
    return paro_file_write_parts(path, &part, 1, inputs, error);
}

gboolean paro_file_write_parts(const char *path, const ParoFilePart *parts, gsize n_parts,
                               const char *const *inputs, GError **error)
{
    g_return_val_if_fail(path != NULL && (parts != NULL || n_parts == 0), FALSE);
    struct stat st;
    int own = own_descriptor(path);
    if (own >= 0) {
        if (fstat(own, &st) != 0)
            return set_errno_error(error, path, NULL, errno);
        if (is_input(&st, inputs)) {
            g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
                        "%s: is one of this command's inputs; refusing to overwrite it", path);
            return FALSE;
        }
        return write_direct(own, FALSE, path, parts, n_parts, error);
    }
    if (stat(path, &st) != 0) {
        if (errno != ENOENT)
            return set_errno_error(error, path, NULL, errno);
        /* A new file; a dangling symbolic link is refused rather than followed. */
        struct stat lst;
        if (lstat(path, &lst) == 0) {
            g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                        "%s: is a symbolic link to a file that does not exist", path);
            return FALSE;
        }
        return replace(path, parts, n_parts, -1, error);
    }
    if (is_input(&st, inputs)) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
                    "%s: is one of this command's inputs; refusing to overwrite it", path);
        return FALSE;
    }
    if (S_ISDIR(st.st_mode) || S_ISSOCK(st.st_mode)) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_ISDIR, "%s: is %s", path,
                    kind_of(st.st_mode));
        return FALSE;
    }
    if (!S_ISREG(st.st_mode)) {
        /* A device or a FIFO: written in place (a FIFO waits for its reader, as a shell
         * redirection would). */
        int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
            return set_errno_error(error, path, NULL, errno);
        return write_direct(fd, TRUE, path, parts, n_parts, error);
    }
    if (st.st_nlink > 1) {
        /* Hard links: a rename would leave the other names on the old content, so the
         * file is rewritten in place (every name sees the output; not atomic). */
        int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
            return set_errno_error(error, path, NULL, errno);
        return write_direct(fd, TRUE, path, parts, n_parts, error);
    }
    /* A regular file, perhaps through symbolic links: the link stays, its target is
     * replaced. */
    g_autofree char *target = realpath(path, NULL);
    if (target == NULL)
        return set_errno_error(error, path, NULL, errno);
    return replace(target, parts, n_parts, (int)(st.st_mode & 07777), error);
}
