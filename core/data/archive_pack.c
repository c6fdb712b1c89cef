/* Writing a folder into a zip or tar archive (tests, exports). */
#include <archive.h>
#include <archive_entry.h>
#include <stdlib.h>
#include <string.h>

#include "data/archive.h"
#include "data/fsutil.h"

yolo_status yolo_archive_pack(const char *dir, const char *out_path, const char *prefix) {
    struct archive *ar = archive_write_new();
    if (yolo_path_has_ext(out_path, ".zip")) {
        archive_write_set_format_zip(ar);
    } else if (yolo_path_has_ext(out_path, ".tar")) {
        archive_write_set_format_pax_restricted(ar);
    } else if (yolo_path_has_ext(out_path, ".tar.gz") || yolo_path_has_ext(out_path, ".tgz")) {
        archive_write_set_format_pax_restricted(ar);
        archive_write_add_filter_gzip(ar);
    } else {
        archive_write_free(ar);
        return yolo_error(YOLO_ERR_ARG, "%s: unknown archive type (use .zip, .tar or .tar.gz)", out_path);
    }
    if (archive_write_open_filename(ar, out_path) != ARCHIVE_OK) {
        yolo_status st = yolo_error(YOLO_ERR_IO, "%s: %s", out_path, archive_error_string(ar));
        archive_write_free(ar);
        return st;
    }
    char **files = NULL;
    int64_t n = 0;
    yolo_status st = yolo_list_files(dir, &files, &n);
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    for (int64_t i = 0; st == YOLO_OK && i < n; i++) {
        uint8_t *data;
        size_t len;
        st = yolo_read_file(files[i], &data, &len);
        if (st != YOLO_OK)
            break;
        const char *rel = files[i] + dl + 1;
        char *name = prefix && prefix[0] ? yolo_path_join(prefix, rel) : strdup(rel);
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, name);
        archive_entry_set_size(e, (la_int64_t)len);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_mtime(e, 1700000000, 0);
        if (archive_write_header(ar, e) != ARCHIVE_OK ||
            (len && archive_write_data(ar, data, len) != (la_ssize_t)len))
            st = yolo_error(YOLO_ERR_IO, "%s: writing %s: %s", out_path, name, archive_error_string(ar));
        archive_entry_free(e);
        free(name);
        free(data);
    }
    yolo_free_strings(files, n);
    if (archive_write_close(ar) != ARCHIVE_OK && st == YOLO_OK)
        st = yolo_error(YOLO_ERR_IO, "%s: %s", out_path, archive_error_string(ar));
    archive_write_free(ar);
    return st;
}
