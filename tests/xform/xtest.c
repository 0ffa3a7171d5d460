/*
 * xtest.c -- the transformation tests' shared helpers (xtest.h).
 *
 * NOTES
 *   The private directory is made under g_get_tmp_dir() and removed by an
 *   atexit handler; plug-ins are copied from the build tree
 *   (XF_TEST_PLUGIN_DIR, XF_EXAMPLE_PLUGIN_DIR, set by CMake).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "xtest.h"

static char *xt_tmp, *xt_plugins, *xt_key;

static void xt_rm_tree(const char *path)
{
    GDir *d = g_dir_open(path, 0, NULL);
    const char *name;

    if (d) {
        while ((name = g_dir_read_name(d))) {
            char *p = g_build_filename(path, name, NULL);

            if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
                xt_rm_tree(p);
            else
                g_unlink(p);
            g_free(p);
        }
        g_dir_close(d);
    }
    g_rmdir(path);
}

static void xt_cleanup(void)
{
    if (xt_tmp)
        xt_rm_tree(xt_tmp);
    g_free(xt_tmp);
    g_free(xt_plugins);
    g_free(xt_key);
}

/* Copy every *.so of dir into xt_plugins. */
static void xt_copy_plugins(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *name;

    g_assert_nonnull(d);
    while ((name = g_dir_read_name(d))) {
        char *src, *dst, *data;
        gsize n;

        if (!g_str_has_suffix(name, ".so"))
            continue;
        src = g_build_filename(dir, name, NULL);
        dst = g_build_filename(xt_plugins, name, NULL);
        g_assert_true(g_file_get_contents(src, &data, &n, NULL));
        g_assert_true(g_file_set_contents(dst, data, (gssize)n, NULL));
        g_assert_cmpint(chmod(dst, 0755), ==, 0);
        g_free(data);
        g_free(src);
        g_free(dst);
    }
    g_dir_close(d);
}

/* xt_dir -- see xtest.h. */
const char *xt_dir(void)
{
    static const char hex[] = "00112233445566778899aabbccddeeff"
                              "0123456789abcdef0123456789ABCDEF\n";
    if (xt_tmp)
        return xt_tmp;
    xt_tmp = g_dir_make_tmp("pgnfs-xform-XXXXXX", NULL);
    g_assert_nonnull(xt_tmp);
    atexit(xt_cleanup);
    xt_plugins = g_build_filename(xt_tmp, "plugins", NULL);
    g_assert_cmpint(g_mkdir(xt_plugins, 0755), ==, 0);
    g_assert_cmpint(chmod(xt_plugins, 0755), ==, 0);
    xt_copy_plugins(XF_TEST_PLUGIN_DIR);
    xt_copy_plugins(XF_EXAMPLE_PLUGIN_DIR);
    xt_key = xt_file("key", hex, sizeof hex - 1, 0600);
    return xt_tmp;
}

/* xt_plugin_dir -- see xtest.h. */
const char *xt_plugin_dir(void)
{
    xt_dir();
    return xt_plugins;
}

/* xt_key_file -- see xtest.h. */
const char *xt_key_file(void)
{
    xt_dir();
    return xt_key;
}

/* xt_file -- see xtest.h. */
char *xt_file(const char *name, const void *data, size_t n, unsigned mode)
{
    char *p = g_build_filename(xt_dir(), name, NULL);

    g_unlink(p);
    g_assert_true(g_file_set_contents(p, data, (gssize)n, NULL));
    g_assert_cmpint(chmod(p, mode), ==, 0);
    return p;
}

/* xt_env -- see xtest.h. */
xf_env *xt_env(bool key, bool plugins)
{
    xf_env_config cfg = {key ? xt_key_file() : NULL, plugins ? xt_plugin_dir() : NULL, 0, 7};
    xf_env *env = NULL;
    xf_err err = {""};
    int rc = xf_env_new(&cfg, &env, &err);

    if (rc != 0)
        g_error("xf_env_new: %d %s", rc, err.msg);
    return env;
}

/* xt_chain -- see xtest.h. */
const xf_chain *xt_chain(xf_env *env, const char *text)
{
    const xf_chain *c = NULL;
    xf_err err = {""};
    int rc = xf_chain_get(env, text, &c, &err);

    if (rc != 0)
        g_error("chain '%s': %d %s", text, rc, err.msg);
    return c;
}

/* xt_fill -- see xtest.h. */
void xt_fill(GRand *r, xt_kind k, unsigned char *p, size_t n)
{
    static const char *words[] = {"the ",        "file ",  "system ", "chunk ",  "database ",
                                  "of ",         "and ",   "pgnfs ",  "stores ", "in ",
                                  "PostgreSQL ", "with\n", "data ",   "a ",      "transform "};
    size_t i = 0;

    switch (k) {
    case XT_ZEROS:
        memset(p, 0, n);
        return;
    case XT_RANDOM:
        for (; i < n; i++)
            p[i] = (unsigned char)g_rand_int(r);
        return;
    case XT_TEXT:
        while (i < n) {
            const char *w = words[g_rand_int_range(r, 0, G_N_ELEMENTS(words))];

            for (; *w && i < n; w++)
                p[i++] = (unsigned char)*w;
        }
        return;
    default:
        while (i < n) {
            size_t run = (size_t)g_rand_int_range(r, 1, 600);

            if (run > n - i)
                run = n - i;
            xt_fill(r, (xt_kind)g_rand_int_range(r, 0, XT_MIXED), p + i, run);
            i += run;
        }
    }
}

/* xt_roundtrip -- see xtest.h. */
size_t xt_roundtrip(const xf_chain *c, xf_work *w, uint64_t file, uint64_t chunk,
                    const unsigned char *plain, size_t n)
{
    enum { GUARD = 32 };
    size_t room = xf_encode_room(c, n), stored = 0, back = 0, droom;
    unsigned char *enc = g_malloc(room + GUARD), *dec;
    xf_chunk at = {file, chunk, 1};
    xf_err err = {""};
    int rc;

    memset(enc + room, 0x5A, GUARD);
    rc = xf_encode(c, w, &at, plain, n, enc, room, &stored, &err);
    if (rc != 0)
        g_error("encode '%s' %zu bytes: %d %s", xf_chain_text(c), n, rc, err.msg);
    g_assert_cmpuint(stored, <=, room);
    g_assert_cmpuint(stored, >=, xf_chain_header_len(c));
    for (int i = 0; i < GUARD; i++)
        g_assert_cmpint(enc[room + i], ==, 0x5A);
    droom = n;
    dec = g_malloc(droom + GUARD);
    memset(dec + droom, 0x5A, GUARD);
    rc = xf_decode(c, w, &at, enc, stored, dec, droom, &back, &err);
    if (rc == -ENOBUFS) {
        g_free(dec);
        droom = xf_decode_room(c, n);
        dec = g_malloc(droom + GUARD);
        memset(dec + droom, 0x5A, GUARD);
        rc = xf_decode(c, w, &at, enc, stored, dec, droom, &back, &err);
    }
    if (rc != 0)
        g_error("decode '%s' %zu bytes: %d %s", xf_chain_text(c), n, rc, err.msg);
    g_assert_cmpuint(back, ==, n);
    for (int i = 0; i < GUARD; i++)
        g_assert_cmpint(dec[droom + i], ==, 0x5A);
    if (n && memcmp(dec, plain, n) != 0)
        g_error("'%s': %zu bytes do not round-trip", xf_chain_text(c), n);
    g_free(enc);
    g_free(dec);
    return stored;
}
