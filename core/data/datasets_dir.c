/* The datasets folder (datasets_dir.h). */
#include "data/datasets_dir.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/fsutil.h"

bool yolo_ultralytics_settings_path(char *buf, size_t size) {
    const char *config = getenv("YOLO_CONFIG_DIR"), *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    char candidates[3][1024];
    int n = 0;
    if (config && config[0]) {
        snprintf(candidates[n++], sizeof candidates[0], "%s/settings.json", config);
        snprintf(candidates[n++], sizeof candidates[0], "%s/Ultralytics/settings.json", config);
    }
    if (xdg && xdg[0]) snprintf(candidates[n++], sizeof candidates[0], "%s/Ultralytics/settings.json", xdg);
    else if (home && home[0]) snprintf(candidates[n++], sizeof candidates[0], "%s/.config/Ultralytics/settings.json", home);
    for (int i = 0; i < n; i++)
        if (yolo_is_file(candidates[i])) {
            snprintf(buf, size, "%s", candidates[i]);
            return true;
        }
    return false;
}

static const char *skip_space(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* Appends code point c as UTF-8. */
static size_t put_utf8(char *out, uint32_t c) {
    if (c < 0x80) return out[0] = (char)c, 1;
    if (c < 0x800) return out[0] = (char)(0xC0 | c >> 6), out[1] = (char)(0x80 | (c & 63)), 2;
    if (c < 0x10000)
        return out[0] = (char)(0xE0 | c >> 12), out[1] = (char)(0x80 | (c >> 6 & 63)), out[2] = (char)(0x80 | (c & 63)), 3;
    out[0] = (char)(0xF0 | c >> 18), out[1] = (char)(0x80 | (c >> 12 & 63));
    out[2] = (char)(0x80 | (c >> 6 & 63)), out[3] = (char)(0x80 | (c & 63));
    return 4;
}

static bool hex4(const char *p, uint32_t *v) {
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return false;
        *v = *v << 4 | (uint32_t)d;
    }
    return true;
}

/* The JSON string at p (just past its opening quote), decoded; NULL if malformed. */
static char *decode_string(const char *p) {
    char *out = malloc(strlen(p) * 2 + 1); /* \uXXXX (6 bytes) never grows past 4 */
    size_t n = 0;
    while (out && *p && *p != '"') {
        if (*p != '\\') {
            out[n++] = *p++;
            continue;
        }
        char e = p[1];
        uint32_t c;
        switch (e) {
        case '"': case '\\': case '/': out[n++] = e; p += 2; break;
        case 'b': out[n++] = '\b'; p += 2; break;
        case 'f': out[n++] = '\f'; p += 2; break;
        case 'n': out[n++] = '\n'; p += 2; break;
        case 'r': out[n++] = '\r'; p += 2; break;
        case 't': out[n++] = '\t'; p += 2; break;
        case 'u':
            if (!hex4(p + 2, &c)) goto bad;
            p += 6;
            if (c >= 0xD800 && c < 0xDC00) { /* a surrogate pair */
                uint32_t lo;
                if (p[0] != '\\' || p[1] != 'u' || !hex4(p + 2, &lo) || lo < 0xDC00 || lo >= 0xE000) goto bad;
                c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
                p += 6;
            }
            if (c == 0) goto bad;
            n += put_utf8(out + n, c);
            break;
        default: goto bad;
        }
    }
    if (!out || *p != '"') goto bad;
    out[n] = '\0';
    return out;
bad:
    free(out);
    return NULL;
}

char *yolo_json_string_value(const char *json, const char *key) {
    size_t klen = strlen(key);
    for (const char *p = strchr(json, '"'); p; p = strchr(p + 1, '"')) {
        if (strncmp(p + 1, key, klen) != 0 || p[1 + klen] != '"') continue;
        const char *v = skip_space(p + 2 + klen);
        if (*v != ':') continue; /* the key's text inside a value */
        v = skip_space(v + 1);
        return *v == '"' ? decode_string(v + 1) : NULL;
    }
    return NULL;
}

char *yolo_datasets_dir(const char **from) {
    static char settings[1024];
    const char *env = getenv("YOLO_DATASETS_DIR");
    if (env && env[0]) {
        if (from) *from = "YOLO_DATASETS_DIR";
        return strdup(env);
    }
    if (!yolo_ultralytics_settings_path(settings, sizeof settings)) return NULL;
    uint8_t *text = NULL;
    size_t len = 0;
    if (yolo_read_file(settings, &text, &len) != YOLO_OK) return NULL; /* unreadable: as if absent */
    char *z = realloc(text, len + 1);
    if (!z) {
        free(text);
        return NULL;
    }
    z[len] = '\0';
    char *dir = yolo_json_string_value(z, "datasets_dir");
    free(z);
    if (dir && !dir[0]) {
        free(dir);
        dir = NULL;
    }
    if (dir && from) *from = settings;
    return dir;
}
