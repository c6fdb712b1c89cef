/* predict's inputs: source listing and preprocessing (predict_input.h). */
#include "modes/predict_input.h"

#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "data/fsutil.h"
#include "data/image.h"

/* The model's input: Ultralytics' LetterBox. The image is scaled to fit
 * imgsz, th x tw (bilinear both ways, cv2.INTER_LINEAR), then padded with grey
 * on both sides: to th x tw (auto=False), or only to the next multiple
 * of the grid stride (auto=True: what Model.predict's rect=True gives a .pt
 * model when the batch's images share one size; a 640x480 photo runs at
 * 640x480, not 640x640). letterbox_size gives the canvas, letterbox_into
 * fills a CHW plane set of that size. */
static void letterbox_fit(const yolo_image *src, int th, int tw, int *nw, int *nh) {
    double r = fmin((double)tw / src->width, (double)th / src->height);
    *nw = (int)lround(src->width * r), *nh = (int)lround(src->height * r);
    if (*nw < 1) *nw = 1;
    if (*nh < 1) *nh = 1;
}

static void letterbox_size(const yolo_image *src, int th, int tw, int stride, int *cw, int *ch) {
    int nw, nh;
    letterbox_fit(src, th, tw, &nw, &nh);
    *cw = stride > 0 ? nw + (tw - nw) % stride : tw;
    *ch = stride > 0 ? nh + (th - nh) % stride : th;
}

static yolo_status letterbox_into(const yolo_image *src, int th, int tw, int cw, int ch, uint8_t *chw,
                                  yolo_image_meta *meta) {
    int nw, nh;
    letterbox_fit(src, th, tw, &nw, &nh);
    int left = (int)lround((cw - nw) / 2.0 - 0.1), top = (int)lround((ch - nh) / 2.0 - 0.1);
    yolo_image resized = {0}, canvas = {0};
    yolo_status st = yolo_image_resize(src, nw, nh, false, &resized);
    if (!st) st = yolo_image_alloc(&canvas, cw, ch);
    if (!st) {
        yolo_image_fill(&canvas, YOLO_PAD_VALUE);
        yolo_image_blit(&resized, 0, 0, &canvas, left, top, nw, nh);
        size_t plane = (size_t)cw * ch;
        for (size_t p = 0; p < plane; p++)
            for (int c = 0; c < 3; c++) chw[c * plane + p] = canvas.data[3 * p + c];
        *meta = (yolo_image_meta){src->width, src->height, (float)nw / src->width, (float)nh / src->height,
                                  (float)left, (float)top};
    }
    yolo_image_free(&resized);
    yolo_image_free(&canvas);
    return st;
}

/* Classification input (Ultralytics' classify transforms at inference):
 * resize the short side to `size`, then crop the centre square. */
static yolo_status center_crop(const yolo_image *src, int size, uint8_t *chw, yolo_image_meta *meta) {
    double r = (double)size / (src->width < src->height ? src->width : src->height);
    int nw = (int)lround(src->width * r), nh = (int)lround(src->height * r);
    if (nw < size) nw = size;
    if (nh < size) nh = size;
    int left = (nw - size) / 2, top = (nh - size) / 2;
    yolo_image resized = {0};
    yolo_status st = yolo_image_resize(src, nw, nh, r < 1.0, &resized);
    if (!st) {
        size_t plane = (size_t)size * size;
        for (int y = 0; y < size; y++)
            for (int x = 0; x < size; x++)
                for (int c = 0; c < 3; c++)
                    chw[c * plane + (size_t)y * size + x] = resized.data[3 * ((size_t)(y + top) * nw + x + left) + c];
        *meta = (yolo_image_meta){src->width, src->height, (float)nw / src->width, (float)nh / src->height,
                                  (float)-left, (float)-top};
    }
    yolo_image_free(&resized);
    return st;
}

static yolo_status video_refused(const char *source) {
    return yolo_error(YOLO_ERR_CONFIG, "source=%s: videos are not built (no video decoder); extract its frames "
                      "(e.g. ffmpeg -i %s frames/%%06d.jpg) and give the folder", source, source);
}

/* One line for what listing the source skipped (links back into the tree, files reached twice). */
static void warn_skips(const char *source, const yolo_walk_skips *skips) {
    char where[1100], line[1600];
    snprintf(where, sizeof where, "source=%s", source);
    if (yolo_walk_skips_describe(where, skips, line, sizeof line)) printf("WARNING: %s\n", line);
}

/* source=images/IMG_*.jpg, a pattern (Ultralytics expands it with glob): the images
 * it matches, in glob's sorted order. */
static yolo_status list_pattern(yolo_predict_sources *p, const char *source) {
    glob_t g;
    int rc = glob(source, 0, NULL, &g);
    if (rc == GLOB_NOMATCH) return yolo_error(YOLO_ERR_IO, "source=%s: the pattern matches no file", source);
    if (rc != 0) return yolo_error(YOLO_ERR_IO, "source=%s: cannot expand the pattern", source);
    yolo_status st = yolo_vfs_open(NULL, &p->vfs);
    p->files = st ? NULL : calloc(g.gl_pathc, sizeof *p->files);
    bool *keep = st ? NULL : malloc(g.gl_pathc);
    if (!st && (!p->files || !keep)) st = yolo_error(YOLO_ERR_NOMEM, "out of memory");
    yolo_walk_skips skips = {0}; /* a pattern may match one file by two paths (a folder and a link to it) */
    if (!st) st = yolo_files_once(g.gl_pathv, (int64_t)g.gl_pathc, keep, &skips);
    if (!st) warn_skips(source, &skips);
    for (size_t i = 0; !st && i < g.gl_pathc; i++) {
        if (!keep[i] || !yolo_path_is_image(g.gl_pathv[i])) continue;
        if (!(p->files[p->n_files] = strdup(g.gl_pathv[i]))) st = yolo_error(YOLO_ERR_NOMEM, "out of memory");
        else p->n_files++;
    }
    globfree(&g);
    free(keep);
    if (!st && p->n_files == 0) st = yolo_error(YOLO_ERR_ARG, "source=%s: the pattern matches no image", source);
    return st;
}

/* What a source that is no file may be meant as: a pattern, or a URL,
 * stream, camera or screen (not built: said so). */
static yolo_status list_missing(yolo_predict_sources *p, const char *source) {
    static const char *const schemes[] = {"http://", "https://", "rtsp://", "rtmp://", "tcp://"};
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
        if (strncasecmp(source, schemes[i], strlen(schemes[i])) == 0)
            return yolo_error(YOLO_ERR_CONFIG, "source=%s: URLs and streams are not built (no network code); "
                              "download the file and give its path", source);
    if (source[0] && strspn(source, "0123456789") == strlen(source))
        return yolo_error(YOLO_ERR_CONFIG, "source=%s: cameras are not built; give image files, a folder, a "
                          "pattern or an archive", source);
    if (strncasecmp(source, "screen", 6) == 0) /* Ultralytics' screenshot source: "screen", "screen 0 10 20 640 480" */
        return yolo_error(YOLO_ERR_CONFIG, "source=%s: screen capture is not built; save a screenshot and give "
                          "its path", source);
    if (strpbrk(source, "*?[")) return list_pattern(p, source);
    return yolo_error(YOLO_ERR_IO, "source=%s: no such file or folder", source);
}

yolo_status yolo_predict_sources_list(yolo_predict_sources *p, const char *source) {
    struct stat sb;
    bool archive = yolo_path_is_archive(source);
    if (stat(source, &sb) != 0) return list_missing(p, source);
    yolo_status st = yolo_vfs_open(archive ? source : NULL, &p->vfs);
    if (st) return st;
    if (!archive && S_ISREG(sb.st_mode)) {
        if (yolo_path_is_video(source)) return video_refused(source);
        p->files = malloc(sizeof *p->files);
        if (!p->files || !(p->files[0] = strdup(source))) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
        p->n_files = 1;
        return YOLO_OK;
    }
    char **all = NULL;
    int64_t n = 0;
    yolo_walk_skips skips;
    st = yolo_vfs_walk(p->vfs, archive ? "" : source, &all, &n, &skips);
    if (st) return st;
    warn_skips(source, &skips);
    p->files = calloc((size_t)(n ? n : 1), sizeof *p->files);
    int64_t videos = 0;
    for (int64_t i = 0; i < n; i++) {
        videos += yolo_path_is_video(all[i]);
        if (p->files && yolo_path_is_image(all[i])) p->files[p->n_files++] = all[i];
        else free(all[i]);
    }
    free(all);
    if (videos && p->n_files)
        printf("WARNING: source=%s: %lld video file%s skipped (videos are not built; extract their frames)\n", source,
               (long long)videos, videos == 1 ? "" : "s");
    if (videos && !p->n_files) return video_refused(source);
    if (!p->files) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
    if (p->n_files == 0) return yolo_error(YOLO_ERR_ARG, "source=%s: no images found", source);
    return YOLO_OK;
}


yolo_status yolo_predict_sources_decode(const yolo_predict_sources *p, int64_t k, yolo_image *out) {
    uint8_t *bytes = NULL;
    size_t len = 0;
    yolo_status st = yolo_vfs_read(p->vfs, p->files[k], &bytes, &len);
    if (!st) st = yolo_image_decode(bytes, len, p->files[k], 0, out, NULL);
    free(bytes);
    return st;
}

void yolo_predict_sources_free(yolo_predict_sources *p) {
    for (int64_t i = 0; p->files && i < p->n_files; i++) free(p->files[i]);
    free(p->files);
    yolo_vfs_free(p->vfs);
    memset(p, 0, sizeof *p);
}

yolo_status yolo_predict_input_fill(yolo_predict_input *in, const yolo_session *s, int stride,
                                    const yolo_image *images, int64_t *which, int n) {
    memset(in, 0, sizeof *in);
    if (n < 1 || n > YOLO_PREDICT_BATCH_MAX)
        return yolo_error(YOLO_ERR_ARG, "predict: %d images in a batch (1 to %d)", n, YOLO_PREDICT_BATCH_MAX);
    bool classify = (s->hooks->data.needs & YOLO_NEED_IMAGE_CLASS) != 0, same = true;
    for (int i = 1; i < n; i++)
        same = same && images[i].width == images[0].width && images[i].height == images[0].height;
    const int size = s->set.run.imgsz, th = s->set.run.imgsz_h, tw = s->set.run.imgsz_w;
    int w = size, h = size;
    if (!classify) letterbox_size(&images[0], th, tw, same ? stride : 0, &w, &h);
    in->batch = (yolo_batch){.n = n, .width = w, .height = h, .sample_index = which, .image_class = in->cls,
                             .aug = in->aug, .meta = in->meta};
    yolo_instances_init(&in->batch.instances, 0, 0);
    size_t per_image = (size_t)3 * w * h;
    in->batch.images = malloc(per_image * (size_t)n);
    yolo_status st = in->batch.images ? YOLO_OK : yolo_error(YOLO_ERR_NOMEM, "out of memory");
    /* image-level tasks see a centre crop, instance tasks the whole image letterboxed */
    for (int i = 0; !st && i < n; i++) {
        in->cls[i] = -1;
        uint8_t *chw = in->batch.images + per_image * (size_t)i;
        st = classify ? center_crop(&images[i], size, chw, &in->meta[i])
                      : letterbox_into(&images[i], th, tw, w, h, chw, &in->meta[i]);
    }
    return st;
}

void yolo_predict_input_free(yolo_predict_input *in) {
    free(in->batch.images);
    in->batch.images = NULL;
}

yolo_status yolo_predict_check_imgsz(const yolo_session *s) {
    const yolo_run_settings *run = &s->set.run;
    if (run->imgsz_h != run->imgsz_w && (s->hooks->data.needs & YOLO_NEED_IMAGE_CLASS))
        return yolo_error(YOLO_ERR_CONFIG, "imgsz=[%d, %d] (%s): classify predicts on a centre-cropped square; give "
                          "one size (e.g. imgsz=%d)", run->imgsz_h, run->imgsz_w, yolo_config_source(s->cfg, "imgsz"),
                          run->imgsz);
    return YOLO_OK;
}
