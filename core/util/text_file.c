/* The bounded reader of yaml and cfg files (text_file.h). */
#include "util/text_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static yolo_status too_large(const char *path, const char *what) {
    return yolo_error(YOLO_ERR_FORMAT, "%s: %s is larger than " YOLO_TEXT_MAX_TEXT " (yaml and cfg files are read "
                      "whole, and a real one is a few KiB)", path, what);
}

yolo_status yolo_read_text_file(const char *path, const char *what, char **text, size_t *len) {
    *text = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return yolo_error(YOLO_ERR_IO, "%s: cannot open %s: %s", path, what, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) sb.st_mode = 0;
    bool regular = S_ISREG(sb.st_mode);
    if (S_ISDIR(sb.st_mode) || (regular && (uint64_t)sb.st_size > YOLO_TEXT_MAX)) {
        close(fd);
        return S_ISDIR(sb.st_mode) ? yolo_error(YOLO_ERR_IO, "%s: %s is a folder, not a file", path, what)
                                   : too_large(path, what);
    }
    /* one more byte than the limit tells a file at the limit from a longer one */
    size_t cap = regular ? (size_t)sb.st_size + 1 : 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    yolo_status st = buf ? YOLO_OK : yolo_error(YOLO_ERR_NOMEM, "%s: out of memory reading %s", path, what);
    while (!st) {
        if (n == cap) {
            if (cap > YOLO_TEXT_MAX) break; /* YOLO_TEXT_MAX + 1 bytes read: too large */
            size_t bigger = cap * 2 > YOLO_TEXT_MAX + 1 ? YOLO_TEXT_MAX + 1 : cap * 2;
            char *grown = realloc(buf, bigger + 1);
            if (!grown) {
                st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory reading %s", path, what);
                break;
            }
            buf = grown;
            cap = bigger;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) st = yolo_error(YOLO_ERR_IO, "%s: cannot read %s: %s", path, what, strerror(errno));
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (!st && n > YOLO_TEXT_MAX) st = too_large(path, what);
    if (st) {
        free(buf);
        return st;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return YOLO_OK;
}
