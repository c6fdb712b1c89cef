/* Block sub-allocator for device memory (see vk_memory.h). */
#include "backend/vulkan/vk_memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BLOCK_BYTES ((VkDeviceSize)64 << 20)

static int find_type(const VkPhysicalDeviceMemoryProperties *mp, uint32_t allowed, VkMemoryPropertyFlags want) {
    for (uint32_t i = 0; i < mp->memoryTypeCount; i++)
        if ((allowed & (1u << i)) && (mp->memoryTypes[i].propertyFlags & want) == want) return (int)i;
    return -1;
}

/* The memory types a storage buffer may use, from a probe buffer. */
static uint32_t buffer_type_bits(yolo_vk_memory *m) {
    VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                               .size = 4096,
                               .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                        VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                               .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkBuffer probe;
    if (m->fn->CreateBuffer(m->device, &info, NULL, &probe) != VK_SUCCESS) return ~0u;
    VkMemoryRequirements req;
    m->fn->GetBufferMemoryRequirements(m->device, probe, &req);
    m->fn->DestroyBuffer(m->device, probe, NULL);
    return req.memoryTypeBits;
}

yolo_status yolo_vk_memory_init(yolo_vk_memory *m, const yolo_vk_fns *fn, VkDevice device, const yolo_vk_caps *caps,
                                const char *label) {
    memset(m, 0, sizeof *m);
    m->fn = fn;
    m->device = device;
    m->caps = caps;
    snprintf(m->label, sizeof m->label, "%s", label);
    const VkPhysicalDeviceMemoryProperties *mp = &caps->memory;
    const uint32_t bits = buffer_type_bits(m);
    const VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    const bool uma = caps->type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU || caps->type == VK_PHYSICAL_DEVICE_TYPE_CPU;
    int type = -1;
    if (uma && !yolo_vk_env_flag("YOLO_VK_FORCE_STAGING")) type = find_type(mp, bits, local | host);
    m->host_mapped = type >= 0;
    if (type < 0) type = find_type(mp, bits, local);
    if (type < 0) type = find_type(mp, bits, 0);
    if (type < 0) return yolo_error(YOLO_ERR_BACKEND, "%s: no memory type for storage buffers", label);
    m->type_index = (uint32_t)type;
    m->heap_index = mp->memoryTypes[type].heapIndex;
    /* Staging: cached host memory reads back fast; coherent avoids flushes. */
    int staging = find_type(mp, bits, host | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (staging < 0) staging = find_type(mp, bits, host);
    if (staging < 0 && !m->host_mapped)
        return yolo_error(YOLO_ERR_BACKEND, "%s: no host-visible coherent memory type for staging", label);
    m->staging_type = staging < 0 ? 0 : (uint32_t)staging;
    m->align = 256; /* >= every minStorageBufferOffsetAlignment and nonCoherentAtomSize the spec allows */
    VkDeviceSize block = DEFAULT_BLOCK_BYTES;
    const uint64_t largest = yolo_vk_largest_buffer(caps);
    if (largest && block > largest) block = largest;
    VkDeviceSize heap = mp->memoryHeaps[m->heap_index].size;
    if (heap && block > heap / 4) block = heap / 4 & ~(m->align - 1);
    m->block_size = block < (1 << 20) ? (1 << 20) : block;
    m->next_serial = 1;
    return YOLO_OK;
}

static void block_destroy(yolo_vk_memory *m, yolo_vk_block *b) {
    if (b->buffer) m->fn->DestroyBuffer(m->device, b->buffer, NULL);
    if (b->mapped) m->fn->UnmapMemory(m->device, b->memory);
    if (b->memory) m->fn->FreeMemory(m->device, b->memory, NULL);
    m->device_bytes -= b->memory ? b->size : 0;
    free(b->free_list);
    free(b);
}

void yolo_vk_memory_destroy(yolo_vk_memory *m) {
    yolo_vk_block *b = m->blocks;
    while (b) {
        yolo_vk_block *next = b->next;
        block_destroy(m, b);
        b = next;
    }
    m->blocks = NULL;
}

static yolo_status nomem(yolo_vk_memory *m, VkDeviceSize bytes, const char *why) {
    const VkDeviceSize heap = m->caps->memory.memoryHeaps[m->heap_index].size;
    return yolo_error(YOLO_ERR_NOMEM,
                      "%s: out of device memory allocating %.1f MiB (%s; heap %u holds %.1f MiB, %.1f MiB allocated "
                      "by this backend)",
                      m->label, (double)bytes / 1048576.0, why, m->heap_index, (double)heap / 1048576.0,
                      (double)m->device_bytes / 1048576.0);
}

static yolo_status block_create(yolo_vk_memory *m, VkDeviceSize size, bool dedicated, yolo_vk_block **out) {
    const VkDeviceSize heap = m->caps->memory.memoryHeaps[m->heap_index].size;
    const uint64_t largest = yolo_vk_largest_buffer(m->caps);
    if (largest && size > largest)
        return nomem(m, size, "larger than the device's largest buffer, maxMemoryAllocationSize or maxBufferSize");
    if (size > heap) return nomem(m, size, "larger than the heap");
    if (m->device_bytes + size > heap) return nomem(m, size, "not enough left in the heap");
    yolo_vk_block *b = calloc(1, sizeof *b);
    if (!b) return yolo_error(YOLO_ERR_NOMEM, "%s: out of host memory", m->label);
    b->size = size;
    b->dedicated = dedicated;
    VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                               .size = size,
                               .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                        VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                               .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult r = m->fn->CreateBuffer(m->device, &info, NULL, &b->buffer);
    if (r != VK_SUCCESS) {
        free(b);
        return r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY
                   ? nomem(m, size, yolo_vk_result_name(r))
                   : yolo_error(YOLO_ERR_BACKEND, "%s: vkCreateBuffer of %llu bytes failed (%s)", m->label,
                                (unsigned long long)size, yolo_vk_result_name(r));
    }
    VkMemoryRequirements req;
    m->fn->GetBufferMemoryRequirements(m->device, b->buffer, &req);
    VkMemoryAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                  .allocationSize = req.size,
                                  .memoryTypeIndex = m->type_index};
    r = m->fn->AllocateMemory(m->device, &alloc, NULL, &b->memory);
    if (r != VK_SUCCESS) {
        m->fn->DestroyBuffer(m->device, b->buffer, NULL);
        free(b);
        return nomem(m, size, yolo_vk_result_name(r));
    }
    m->device_bytes += size;
    r = m->fn->BindBufferMemory(m->device, b->buffer, b->memory, 0);
    if (r == VK_SUCCESS && m->host_mapped) r = m->fn->MapMemory(m->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped);
    if (r != VK_SUCCESS) {
        block_destroy(m, b);
        return yolo_error(YOLO_ERR_BACKEND, "%s: binding/mapping device memory failed (%s)", m->label,
                          yolo_vk_result_name(r));
    }
    b->free_list = malloc(4 * sizeof *b->free_list);
    if (!b->free_list) {
        block_destroy(m, b);
        return yolo_error(YOLO_ERR_NOMEM, "%s: out of host memory", m->label);
    }
    b->cap_free = 4;
    b->free_list[0] = (yolo_vk_range){0, size};
    b->n_free = 1;
    b->id = m->next_block_id++;
    b->next = m->blocks;
    m->blocks = b;
    *out = b;
    return YOLO_OK;
}

/* First fit inside one block; false when nothing fits. */
static bool block_take(yolo_vk_block *b, VkDeviceSize size, VkDeviceSize *offset) {
    for (int i = 0; i < b->n_free; i++) {
        if (b->free_list[i].size < size) continue;
        *offset = b->free_list[i].offset;
        b->free_list[i].offset += size;
        b->free_list[i].size -= size;
        if (b->free_list[i].size == 0) {
            memmove(&b->free_list[i], &b->free_list[i + 1], (size_t)(b->n_free - i - 1) * sizeof *b->free_list);
            b->n_free--;
        }
        b->used += size;
        return true;
    }
    return false;
}

static bool block_give_back(yolo_vk_block *b, VkDeviceSize offset, VkDeviceSize size) {
    int i = 0;
    while (i < b->n_free && b->free_list[i].offset < offset) i++;
    bool prev = i > 0 && b->free_list[i - 1].offset + b->free_list[i - 1].size == offset;
    bool next = i < b->n_free && offset + size == b->free_list[i].offset;
    b->used -= size;
    if (prev && next) {
        b->free_list[i - 1].size += size + b->free_list[i].size;
        memmove(&b->free_list[i], &b->free_list[i + 1], (size_t)(b->n_free - i - 1) * sizeof *b->free_list);
        b->n_free--;
        return true;
    }
    if (prev) {
        b->free_list[i - 1].size += size;
        return true;
    }
    if (next) {
        b->free_list[i].offset = offset;
        b->free_list[i].size += size;
        return true;
    }
    if (b->n_free == b->cap_free) {
        int cap = b->cap_free * 2;
        yolo_vk_range *fl = realloc(b->free_list, (size_t)cap * sizeof *fl);
        if (!fl) return false; /* the range leaks inside the block until it is destroyed */
        b->free_list = fl;
        b->cap_free = cap;
    }
    memmove(&b->free_list[i + 1], &b->free_list[i], (size_t)(b->n_free - i) * sizeof *b->free_list);
    b->free_list[i] = (yolo_vk_range){offset, size};
    b->n_free++;
    return true;
}

yolo_status yolo_vk_memory_alloc(yolo_vk_memory *m, size_t bytes, yolo_buffer **out) {
    *out = NULL;
    VkDeviceSize size = ((VkDeviceSize)(bytes ? bytes : 1) + m->align - 1) & ~(m->align - 1);
    yolo_buffer *buf = calloc(1, sizeof *buf);
    if (!buf) return yolo_error(YOLO_ERR_NOMEM, "%s: out of host memory", m->label);
    yolo_vk_block *block = NULL;
    VkDeviceSize offset = 0;
    if (size > m->block_size / 2) {
        yolo_status st = block_create(m, size, true, &block);
        if (st != YOLO_OK) {
            free(buf);
            return st;
        }
        block_take(block, size, &offset);
    } else {
        for (yolo_vk_block *b = m->blocks; b && !block; b = b->next)
            if (!b->dedicated && block_take(b, size, &offset)) block = b;
        if (!block) {
            yolo_status st = block_create(m, m->block_size, false, &block);
            if (st != YOLO_OK) {
                free(buf);
                return st;
            }
            block_take(block, size, &offset);
        }
    }
    buf->block = block;
    buf->offset = offset;
    buf->size = bytes;
    buf->alloc_size = size;
    buf->serial = m->next_serial++;
    *out = buf;
    return YOLO_OK;
}

void yolo_vk_memory_free(yolo_vk_memory *m, yolo_buffer *buf) {
    if (!buf) return;
    yolo_vk_block *b = buf->block;
    block_give_back(b, buf->offset, buf->alloc_size);
    free(buf);
    if (b->used > 0) return;
    /* An empty block goes back to the driver, except one shared block kept
     * for the next small tensors. */
    if (!b->dedicated) {
        int empty_shared = 0;
        for (yolo_vk_block *o = m->blocks; o; o = o->next)
            if (!o->dedicated && o->used == 0) empty_shared++;
        if (empty_shared <= 1) return;
    }
    for (yolo_vk_block **p = &m->blocks; *p; p = &(*p)->next) {
        if (*p == b) {
            *p = b->next;
            break;
        }
    }
    block_destroy(m, b);
}

yolo_status yolo_vk_host_buffer_create(yolo_vk_memory *m, VkDeviceSize size, yolo_vk_host_buffer *out) {
    memset(out, 0, sizeof *out);
    VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                               .size = size,
                               .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                               .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult r = m->fn->CreateBuffer(m->device, &info, NULL, &out->buffer);
    if (r == VK_SUCCESS) {
        VkMemoryRequirements req;
        m->fn->GetBufferMemoryRequirements(m->device, out->buffer, &req);
        VkMemoryAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                      .allocationSize = req.size,
                                      .memoryTypeIndex = m->staging_type};
        r = m->fn->AllocateMemory(m->device, &alloc, NULL, &out->memory);
    }
    if (r == VK_SUCCESS) r = m->fn->BindBufferMemory(m->device, out->buffer, out->memory, 0);
    if (r == VK_SUCCESS) r = m->fn->MapMemory(m->device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped);
    if (r != VK_SUCCESS) {
        yolo_vk_host_buffer_destroy(m, out);
        return yolo_error(YOLO_ERR_NOMEM, "%s: cannot create a %.1f MiB staging buffer (%s)", m->label,
                          (double)size / 1048576.0, yolo_vk_result_name(r));
    }
    out->size = size;
    return YOLO_OK;
}

void yolo_vk_host_buffer_destroy(yolo_vk_memory *m, yolo_vk_host_buffer *hb) {
    if (hb->buffer) m->fn->DestroyBuffer(m->device, hb->buffer, NULL);
    if (hb->mapped) m->fn->UnmapMemory(m->device, hb->memory);
    if (hb->memory) m->fn->FreeMemory(m->device, hb->memory, NULL);
    memset(hb, 0, sizeof *hb);
}
