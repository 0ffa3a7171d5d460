/*
 * xf_plugin.c -- user transformations from shared libraries
 * (pgnfs_xform.h): loading PLUGIN_DIR/NAME.so, checking its descriptor,
 * and probing each instance before any chain uses it.
 *
 * Loading refuses (-ELIBBAD, a message naming the file): a library
 * dlopen rejects, no pgnfs_xform_describe symbol, a NULL descriptor,
 * another ABI version, another name, unknown flags, meta_size over
 * PGNFS_XFORM_META_MAX, a NULL init/fini/forward/inverse, and no
 * max_expansion for a stage that changes lengths. A plug-in directory or
 * file that others may write is refused too (-EACCES): it would let them
 * run code in the server.
 *
 * The probe (xf_plugin_probe) runs the new instance on chunks of 0, 1
 * and 4099 bytes (half compressible, half not), out of place and, when
 * flagged IN_PLACE, in place, and refuses it unless: every call returns
 * 0; forward writes nothing past the room it was given nor into its
 * input; a length-preserving stage keeps the length; forward's output
 * fits max_expansion; inverse gives back exactly the probe's bytes; no
 * per-worker state is left without a worker_fini to free it. The probe's
 * nonce has epoch 0, which no real nonce has (xf_env.c), so a plug-in
 * that encrypts never sees a probe nonce again.
 *
 * NOTES
 *   A plug-in runs in our process: the checks catch a plug-in that is
 *   wrong, not one that is malicious (that is what the directory's
 *   permissions are for). Guard bytes after every buffer it writes catch
 *   overruns into memory we own; a crash inside it is its own.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "xf_int.h"

#define XF_PROBE_GUARD 64
#define XF_PROBE_FILL  0xA5

/* xf_plugin_load -- see xf_int.h. On success k->d, k->dl and k->path are
 * set; on failure nothing is loaded. */
int xf_plugin_load(const char *dir, const char *name, xf_kind *k, xf_err *err)
{
    const pgnfs_xform_desc *d;
    pgnfs_xform_describe_fn fn;
    char path[4096];
    struct stat st;
    void *h, *sym;
    const char *why = NULL;

    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        xf_errf(err,
                "unknown transformation '%s': no built-in of that name, and the plug-in "
                "directory %s is not a directory",
                name, dir);
        return -ENOENT;
    }
    if (st.st_mode & S_IWOTH) {
        xf_errf(err, "plug-in directory %s is writable by others (mode %04o): refused", dir,
                (unsigned)(st.st_mode & 07777));
        return -EACCES;
    }
    if ((size_t)snprintf(path, sizeof path, "%s/%s.so", dir, name) >= sizeof path) {
        xf_errf(err, "plug-in '%s': the path is too long", name);
        return -EINVAL;
    }
    if (stat(path, &st) != 0) {
        xf_errf(err, "unknown transformation '%s': no built-in of that name and no plug-in %s",
                name, path);
        return -ENOENT;
    }
    if (!S_ISREG(st.st_mode)) {
        xf_errf(err, "plug-in %s is not a regular file", path);
        return -ELIBBAD;
    }
    if (st.st_mode & S_IWOTH) {
        xf_errf(err, "plug-in %s is writable by others (mode %04o): refused", path,
                (unsigned)(st.st_mode & 07777));
        return -EACCES;
    }
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();

        xf_errf(err, "plug-in %s cannot be loaded: %s", path, e ? e : "(no reason given)");
        return -ELIBBAD;
    }
    sym = dlsym(h, PGNFS_XFORM_SYMBOL);
    if (!sym) {
        xf_errf(err, "plug-in %s exports no %s() (not a pgnfs transformation?)", path,
                PGNFS_XFORM_SYMBOL);
        goto refuse;
    }
    memcpy(&fn, &sym, sizeof fn);
    d = fn();
    if (!d) {
        xf_errf(err, "plug-in %s: %s() returned no descriptor", path, PGNFS_XFORM_SYMBOL);
        goto refuse;
    }
    if (d->abi_version != PGNFS_XFORM_ABI_VERSION) {
        xf_errf(err,
                "plug-in %s is built for transformation ABI version %u; this pgnfs speaks "
                "version %u: rebuild it against this pgnfs_xform.h",
                path, d->abi_version, PGNFS_XFORM_ABI_VERSION);
        goto refuse;
    }
    if (!d->name || strcmp(d->name, name) != 0) {
        xf_errf(err, "plug-in %s calls itself '%s', not '%s'", path, d->name ? d->name : "(null)",
                name);
        goto refuse;
    }
    if (d->flags & ~PGNFS_XFORM_FLAGS_KNOWN) {
        xf_errf(err, "plug-in %s sets unknown flags 0x%x", path,
                d->flags & ~PGNFS_XFORM_FLAGS_KNOWN);
        goto refuse;
    }
    if (d->meta_size > PGNFS_XFORM_META_MAX) {
        xf_errf(err, "plug-in %s asks for %u header bytes per chunk (at most %d)", path,
                d->meta_size, PGNFS_XFORM_META_MAX);
        goto refuse;
    }
    if (!d->init)
        why = "init";
    else if (!d->fini)
        why = "fini";
    else if (!d->forward)
        why = "forward";
    else if (!d->inverse)
        why = "inverse";
    else if (!(d->flags & PGNFS_XFORM_PRESERVES_LENGTH) && !d->max_expansion)
        why = "max_expansion";
    if (why) {
        xf_errf(err, "plug-in %s has no %s function%s", path, why,
                why[0] == 'm' ? " (it may change lengths)" : "");
        goto refuse;
    }
    k->path = strdup(path);
    if (!k->path) {
        xf_errf(err, "out of memory");
        dlclose(h);
        return -ENOMEM;
    }
    k->d = d;
    k->dl = h;
    k->builtin = false;
    return 0;
refuse:
    dlclose(h);
    return -ELIBBAD;
}

/* xf_plugin_unload -- see xf_int.h. */
void xf_plugin_unload(xf_kind *k)
{
    if (k->dl)
        dlclose(k->dl);
    k->dl = NULL;
    free(k->path);
    k->path = NULL;
}

#define XF_PROBE_MAX 4099

static unsigned char xf_probe_data[XF_PROBE_MAX];
static pthread_once_t xf_probe_once = PTHREAD_ONCE_INIT;

/* The probe's bytes (made once): text-like for the first half, an LCG's
 * for the rest; a probe of n bytes takes the first n / 2 and the last
 * n - n / 2, so it is half of each too. */
static void xf_probe_init(void)
{
    static const char text[] = "pgnfs transformation probe: the quick brown fox. ";
    uint32_t x = 0x9E3779B9u;

    for (size_t i = 0; i < XF_PROBE_MAX; i++) {
        x = x * 1664525u + 1013904223u;
        xf_probe_data[i] = i < XF_PROBE_MAX / 2 ? (unsigned char)text[i % (sizeof text - 1)]
                                                : (unsigned char)(x >> 24);
    }
}

static void xf_probe_fill(unsigned char *p, size_t n)
{
    memcpy(p, xf_probe_data, n / 2);
    memcpy(p + n / 2, xf_probe_data + XF_PROBE_MAX - (n - n / 2), n - n / 2);
}

static bool xf_guard_ok(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != XF_PROBE_FILL)
            return false;
    return true;
}

/* One probe: n bytes forward then inverse, out of place or in place.
 * Returns 0 or -ELIBBAD with *err filled. */
static int xf_probe_one(const xf_kind *k, void *state, const char *opts, size_t n, bool in_place,
                        void **slot, xf_err *err)
{
    const pgnfs_xform_desc *d = k->d;
    bool keep = d->flags & PGNFS_XFORM_PRESERVES_LENGTH;
    size_t room = keep ? n : d->max_expansion(state, n), cap = 2 * n + 65536, olen = 0, back = 0;
    size_t big = room > n ? room : n, lim;
    unsigned char meta[PGNFS_XFORM_META_MAX + XF_PROBE_GUARD], nonce[PGNFS_XFORM_NONCE_LEN] = {0};
    unsigned char aad[XF_AAD_LEN];
    pgnfs_xform_chunk at = {0, 0, 0};
    unsigned char *plain = NULL, *copy = NULL, *mid = NULL, *res = NULL;
    char msg[256] = "";
    pgnfs_xform_call call = {.chunk = &at,
                             .aad = aad,
                             .aad_len = sizeof aad,
                             .meta = meta,
                             .worker = slot,
                             .err = msg,
                             .err_len = sizeof msg};
    const char *how = in_place ? "in place" : "out of place";
    int rc = -ELIBBAD, r;

    if (room > cap || room < (keep ? n : 0)) {
        xf_errf(err, "plug-in %s: max_expansion(%zu) = %zu is not a usable bound", k->path, n,
                room);
        return -ELIBBAD;
    }
    lim = in_place ? big : room; /* where forward's guard bytes start */
    plain = malloc(n + 1);
    copy = malloc(big + 1);
    mid = malloc(big + XF_PROBE_GUARD);
    res = malloc(n + XF_PROBE_GUARD);
    if (!plain || !copy || !mid || !res) {
        xf_errf(err, "out of memory");
        rc = -ENOMEM;
        goto out;
    }
    xf_probe_fill(plain, n);
    memcpy(copy, plain, n);
    memset(aad, 0x5C, sizeof aad);
    memset(meta, 0, d->meta_size);
    memset(meta + d->meta_size, XF_PROBE_FILL, sizeof meta - d->meta_size);
    memset(mid, XF_PROBE_FILL, big + XF_PROBE_GUARD);
    if (d->flags & PGNFS_XFORM_NEEDS_NONCE) {
        nonce[PGNFS_XFORM_NONCE_LEN - 1] = (unsigned char)n; /* epoch 0: never a real one */
        call.nonce = nonce;
    }
    if (in_place)
        memcpy(mid, plain, n);
    r = d->forward(state, &call, in_place ? mid : plain, n, mid, room, &olen);
    msg[sizeof msg - 1] = '\0';
    if (r != 0) {
        xf_errf(err, "plug-in %s (options '%s') fails forward %s on a %zu-byte probe: %d %s",
                k->path, opts, how, n, r, msg);
        goto out;
    }
    if (olen > room || !xf_guard_ok(mid + lim, XF_PROBE_GUARD) ||
        !xf_guard_ok(meta + d->meta_size, XF_PROBE_GUARD)) {
        xf_errf(err,
                "plug-in %s (options '%s'): forward %s writes past its room on a %zu-byte "
                "probe",
                k->path, opts, how, n);
        goto out;
    }
    if (keep && olen != n) {
        xf_errf(err, "plug-in %s says it preserves length, but forward turns %zu bytes into %zu",
                k->path, n, olen);
        goto out;
    }
    if (!in_place && memcmp(plain, copy, n) != 0) {
        xf_errf(err, "plug-in %s (options '%s'): forward writes into its input", k->path, opts);
        goto out;
    }
    call.nonce = NULL;
    memset(res, XF_PROBE_FILL, n + XF_PROBE_GUARD);
    memcpy(copy, mid, olen);
    r = d->inverse(state, &call, mid, olen, in_place ? mid : res, n, &back);
    msg[sizeof msg - 1] = '\0';
    if (r != 0) {
        xf_errf(err, "plug-in %s (options '%s') fails inverse %s on a %zu-byte probe: %d %s",
                k->path, opts, how, n, r, msg);
        goto out;
    }
    if (in_place)
        memcpy(res, mid, back <= n ? back : n);
    if (back != n || !xf_guard_ok(res + n, XF_PROBE_GUARD) ||
        !xf_guard_ok(mid + big, XF_PROBE_GUARD) || (!in_place && memcmp(copy, mid, olen) != 0)) {
        xf_errf(err,
                "plug-in %s (options '%s'): inverse %s of a %zu-byte probe gives %zu bytes "
                "or writes where it may not",
                k->path, opts, how, n, back);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (res[i] != plain[i]) {
            xf_errf(err,
                    "plug-in %s (options '%s') fails its probe: inverse(forward(x)) differs "
                    "from x at byte %zu of a %zu-byte chunk (%s)",
                    k->path, opts, i, n, how);
            goto out;
        }
    }
    rc = 0;
out:
    free(plain);
    free(copy);
    free(mid);
    free(res);
    return rc;
}

/* xf_plugin_probe -- see xf_int.h. Returns 0, -ELIBBAD (refused, *err
 * says why) or -ENOMEM. */
int xf_plugin_probe(const xf_kind *k, void *state, const char *opts, xf_err *err)
{
    static const size_t sizes[] = {0, 1, XF_PROBE_MAX};
    void *slot = NULL;
    int rc = 0;

    pthread_once(&xf_probe_once, xf_probe_init);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0] && rc == 0; i++) {
        rc = xf_probe_one(k, state, opts, sizes[i], false, &slot, err);
        if (rc == 0 && k->d->flags & PGNFS_XFORM_IN_PLACE)
            rc = xf_probe_one(k, state, opts, sizes[i], true, &slot, err);
    }
    if (slot) {
        if (k->d->worker_fini) {
            k->d->worker_fini(slot);
        } else if (rc == 0) {
            xf_errf(err, "plug-in %s keeps per-worker state but has no worker_fini to free it",
                    k->path);
            rc = -ELIBBAD;
        }
    }
    return rc;
}
