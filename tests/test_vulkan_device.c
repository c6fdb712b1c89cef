/* Vulkan backend basics: the device report, opening a device, buffers
 * (upload, download, zero, ranges at odd offsets, many small tensors
 * sub-allocated), and clear errors for a bad device index and for a request
 * larger than device memory; the drivers an instance opened stay loaded
 * after it is destroyed. */
#include <link.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_loader.h"
#include "vulkan_test_common.h"

/* The names of the shared objects mapped now, one string "\n"-separated. */
static int append_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    char *list = data;
    if (info->dlpi_name && *info->dlpi_name && strlen(list) + strlen(info->dlpi_name) + 2 < 65536) {
        strcat(list, info->dlpi_name);
        strcat(list, "\n");
    }
    return 0;
}

static bool listed(const char *list, const char *name, size_t len) {
    for (const char *p = list; (p = strstr(p, name)) != NULL; p++)
        if ((p == list || p[-1] == '\n') && !strncmp(p, name, len) && p[len] == '\n') return true;
    return false;
}

/* The loader unloads drivers and layers with the instance (and its
 * preloaded drivers when it is unloaded itself); their process-lifetime
 * allocations then read as leaks of an unknown module under LeakSanitizer,
 * and the next instance loads them again. Each one that instance creation
 * opened must still be mapped after the instance is gone. Run first, before
 * any other instance has loaded them. */
static void test_drivers_stay_loaded(void) {
    static char before[65536], during[65536], after[65536];
    dl_iterate_phdr(append_object, before);
    yolo_vk_instance inst;
    if (yolo_vk_instance_create(false, &inst) != YOLO_OK) return; /* no Vulkan: main skips the test */
    dl_iterate_phdr(append_object, during);
    yolo_vk_instance_destroy(&inst);
    dl_iterate_phdr(append_object, after);
    int opened = 0;
    for (const char *p = during, *end; *p; p = end + 1) {
        end = strchr(p, '\n');
        size_t len = (size_t)(end - p);
        char name[4096];
        snprintf(name, sizeof name, "%.*s", (int)len, p);
        if (listed(before, name, len)) continue;
        opened++;
        CHECK_MSG(listed(after, name, len), "%s, opened by vkCreateInstance, was unloaded with the instance", name);
    }
    CHECK_MSG(opened > 0, "vkCreateInstance opened no library (a Vulkan driver is expected there)");
}

static void test_report(void) {
    char buf[4096];
    yolo_vulkan_report(buf, sizeof buf);
    printf("%s", buf);
    CHECK(strncmp(buf, "vulkan", 6) == 0);
    CHECK(strchr(buf, '\n') != NULL);
    /* a usable device says whether amp's GEMMs can use cooperative matrices, and if not, why */
    CHECK_MSG(strstr(buf, "unusable") || strstr(buf, "cooperative matrix NV 16x16x16 fp16") ||
                  strstr(buf, "cooperative matrix no ("),
              "the report names the cooperative-matrix capability: %s", buf);
}

static void test_bad_index(void) {
    yolo_backend *b = NULL;
    yolo_status st = yolo_backend_create("vulkan:999", 0, &b);
    CHECK(st == YOLO_ERR_ARG);
    CHECK(b == NULL);
    CHECK_MSG(test_error_mentions("no such Vulkan device"), "message: %s", yolo_last_error());
    st = yolo_backend_create("vulkan:x", 0, &b);
    CHECK(st == YOLO_ERR_ARG);
}

static void test_buffers(yolo_backend *vk) {
    /* many small tensors share blocks; contents stay apart */
    enum { N = 300 };
    yolo_tensor *ts[N];
    for (int i = 0; i < N; i++) {
        int64_t shape[1] = {1 + i % 37};
        ts[i] = yolo_tensor_new(vk, "t", YOLO_F32, 1, shape, false);
        CHECK(ts[i] != NULL);
        float v[37];
        for (int k = 0; k < shape[0]; k++) v[k] = (float)(i * 100 + k);
        CHECK(yolo_tensor_upload_f32(ts[i], v, shape[0]) == YOLO_OK);
    }
    for (int i = 0; i < N; i += 7) {
        float v[37];
        CHECK(yolo_tensor_download_f32(ts[i], v, ts[i]->shape[0]) == YOLO_OK);
        for (int k = 0; k < ts[i]->shape[0]; k++) CHECK(v[k] == (float)(i * 100 + k));
    }
    for (int i = 0; i < N; i += 2) yolo_tensor_free(ts[i]);
    for (int i = 1; i < N; i += 2) {
        float v[37];
        CHECK(yolo_tensor_download_f32(ts[i], v, ts[i]->shape[0]) == YOLO_OK);
        CHECK(v[0] == (float)(i * 100));
        yolo_tensor_free(ts[i]);
    }
    CHECK(yolo_backend_allocated_bytes(vk) == 0);

    /* a fresh tensor reads back as zeros; odd byte ranges of u8 and f16 */
    int64_t s[1] = {1001};
    yolo_tensor *u8 = yolo_tensor_new(vk, "u8", YOLO_U8, 1, s, false);
    unsigned char bytes[1001], back[1001];
    CHECK(yolo_tensor_download(u8, back, sizeof back) == YOLO_OK);
    int nonzero = 0;
    for (int i = 0; i < 1001; i++) nonzero += back[i] != 0;
    CHECK(nonzero == 0);
    for (int i = 0; i < 1001; i++) bytes[i] = (unsigned char)(i * 7);
    CHECK(yolo_tensor_upload(u8, bytes, sizeof bytes) == YOLO_OK);
    CHECK(vk->ops->zero(vk, u8->buffer, 3, 990) == YOLO_OK);
    CHECK(yolo_tensor_download(u8, back, sizeof back) == YOLO_OK);
    int bad = 0;
    for (int i = 0; i < 1001; i++) bad += back[i] != ((i >= 3 && i < 993) ? 0 : bytes[i]);
    CHECK_MSG(bad == 0, "%d bytes wrong after a partial zero", bad);
    CHECK(vk->ops->download(vk, u8->buffer, 990, back, 20) == YOLO_ERR_ARG); /* past the end */
    yolo_tensor_free(u8);

    /* a large tensor crosses the staging buffer's size when staging is used */
    int64_t big[1] = {3 << 20};
    yolo_tensor *t = yolo_tensor_new(vk, "big", YOLO_F32, 1, big, false);
    CHECK(t != NULL);
    float *data = malloc(sizeof(float) * (size_t)big[0]), *out = malloc(sizeof(float) * (size_t)big[0]);
    for (int64_t i = 0; i < big[0]; i++) data[i] = (float)i * 0.5f;
    CHECK(yolo_tensor_upload_f32(t, data, big[0]) == YOLO_OK);
    CHECK(yolo_tensor_download_f32(t, out, big[0]) == YOLO_OK);
    CHECK(memcmp(data, out, sizeof(float) * (size_t)big[0]) == 0);
    free(data);
    free(out);
    yolo_tensor_free(t);
}

static void test_out_of_memory(yolo_backend *vk) {
    int64_t huge[2] = {1 << 20, 1 << 20}; /* 4 TiB of f32 */
    yolo_tensor *t = yolo_tensor_new(vk, "huge", YOLO_F32, 2, huge, false);
    CHECK(t == NULL);
    CHECK_MSG(test_error_mentions("out of device memory"), "message: %s", yolo_last_error());
    printf("expected error: %s\n", yolo_last_error());
    /* two buffers that each fit, but not together: the second is refused
     * before the driver is asked (nothing is touched, so this costs no RAM) */
    yolo_buffer *a = NULL, *b = NULL;
    const size_t heap_share = (size_t)3 << 29; /* 1.5 GiB */
    if (vk->ops->buffer_alloc(vk, heap_share, &a) == YOLO_OK) {
        yolo_status st = vk->ops->buffer_alloc(vk, heap_share, &b);
        if (st == YOLO_OK) {
            printf("note: two 1.5 GiB buffers fit in this device's memory\n");
            vk->ops->buffer_free(vk, b);
        } else {
            CHECK(st == YOLO_ERR_NOMEM);
            CHECK_MSG(test_error_mentions("out of device memory"), "message: %s", yolo_last_error());
            printf("expected error: %s\n", yolo_last_error());
        }
        vk->ops->buffer_free(vk, a);
    }
    /* the backend still works */
    int64_t s[1] = {16};
    yolo_tensor *ok = yolo_tensor_new(vk, "ok", YOLO_F32, 1, s, false);
    CHECK(ok != NULL);
    yolo_tensor_free(ok);
}

int main(void) {
    test_drivers_stay_loaded();
    test_report();
    yolo_backend *vk;
    int rc = vk_test_open("vulkan", &vk);
    if (rc) return rc;
    test_bad_index();
    test_buffers(vk);
    test_out_of_memory(vk);
    yolo_backend_free(vk);
    /* the staging path of discrete GPUs, forced on unified memory */
    setenv("YOLO_VK_FORCE_STAGING", "1", 1);
    if (vk_test_open("vulkan", &vk) == 0) {
        test_buffers(vk);
        yolo_vulkan_stats stats;
        CHECK(yolo_vulkan_get_stats(vk, &stats) == YOLO_OK);
        CHECK(stats.transfer_recordings > 0);
        yolo_backend_free(vk);
    }
    return vk_test_finish("test_vulkan_device");
}
