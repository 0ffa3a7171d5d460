/*
 * cfg_mem.c -- the sizes of the data caches when the configuration says
 * "auto" ([cache] buffer_size, small_files, [embedded] shared_buffers): a
 * share of the memory this process may use, bounded (cfg.h: cfg_mem_total,
 * cfg_buffer_auto, cfg_small_auto, cfg_pg_buffers_auto).
 *
 * The memory is the machine's (MemTotal of /proc/meminfo), or less when
 * the process runs in a cgroup with a lower memory limit (a container):
 * cgroup v2's memory.max of the process's own cgroup, else cgroup v1's
 * memory.limit_in_bytes.
 *
 * NOTES
 *   Reads /proc and /sys once per call; nothing is cached. An unreadable
 *   file counts as "no limit there".
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "cfg.h"

/* The first number after `key` in a file, or 0. */
static uint64_t cfg_mem_read(const char *path, const char *key)
{
    char *text = NULL;
    uint64_t v = 0;

    if (!g_file_get_contents(path, &text, NULL, NULL))
        return 0;
    const char *p = key ? strstr(text, key) : text;
    if (p) {
        p += key ? strlen(key) : 0;
        while (*p == ' ' || *p == '\t' || *p == ':')
            p++;
        if (sscanf(p, "%" SCNu64, &v) != 1)
            v = 0;
    }
    g_free(text);
    return v;
}

/* The memory limit of this process's cgroup, or 0 (none, or unknown). */
static uint64_t cfg_mem_cgroup(void)
{
    char *text = NULL, *path;
    uint64_t v = 0;

    /* cgroup v2: "0::/the/path" in /proc/self/cgroup. */
    if (g_file_get_contents("/proc/self/cgroup", &text, NULL, NULL)) {
        char *p = strstr(text, "0::");
        if (p) {
            p += 3;
            p[strcspn(p, "\n")] = '\0';
            path = g_strdup_printf("/sys/fs/cgroup%s/memory.max", strcmp(p, "/") ? p : "");
            v = cfg_mem_read(path, NULL); /* "max" reads as 0: no limit */
            g_free(path);
        }
        g_free(text);
    }
    if (v == 0)
        v = cfg_mem_read("/sys/fs/cgroup/memory/memory.limit_in_bytes", NULL);
    /* v1 says "no limit" with a number near 2^63. */
    return v >= (UINT64_C(1) << 60) ? 0 : v;
}

/* cfg_mem_total -- see cfg.h. */
uint64_t cfg_mem_total(void)
{
    uint64_t mem = cfg_mem_read("/proc/meminfo", "MemTotal") * 1024, lim = cfg_mem_cgroup();

    return lim && (mem == 0 || lim < mem) ? lim : mem;
}

static uint64_t cfg_mem_share(uint64_t mem, uint64_t div, uint64_t lo, uint64_t hi)
{
    uint64_t v = mem / div;

    return v < lo ? lo : v > hi ? hi : v;
}

/* cfg_buffer_auto -- see cfg.h. */
uint64_t cfg_buffer_auto(uint64_t mem)
{
    return cfg_mem_share(mem, CFG_BUFFER_AUTO_DIV, CFG_BUFFER_AUTO_MIN, CFG_BUFFER_AUTO_MAX);
}

/* cfg_pg_buffers_auto -- see cfg.h. */
uint64_t cfg_pg_buffers_auto(uint64_t mem)
{
    return cfg_mem_share(mem, CFG_PG_BUFFERS_AUTO_DIV, CFG_PG_BUFFERS_AUTO_MIN,
                         CFG_PG_BUFFERS_AUTO_MAX);
}

/* cfg_small_auto -- see cfg.h. */
uint64_t cfg_small_auto(uint64_t mem)
{
    return cfg_mem_share(mem, CFG_SMALL_AUTO_DIV, CFG_SMALL_AUTO_MIN, CFG_SMALL_AUTO_MAX);
}
