/*
 * test_xf_plugin.c -- user transformations (xform/xf_plugin.c): every
 * kind of broken plug-in is refused with a message naming the file and
 * the fault, at load or at the probe; permissions; options; a plug-in
 * failing on one chunk fails that chunk only (-EIO, nothing to store,
 * nothing unverified returned); per-worker state and nonces.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <glib/gstdio.h>

#include "xtest.h"

static void refused(xf_env *env, const char *text, int rc, const char *what)
{
    const xf_chain *c = (const xf_chain *)&c;
    xf_err err = {""};
    int got;

    /* Twice: a refused plug-in is not remembered as good. */
    for (int i = 0; i < 2; i++) {
        got = xf_chain_get(env, text, &c, &err);
        if (got != rc || !strstr(err.msg, what))
            g_error("'%s': expected %d \"%s\", got %d \"%s\"", text, rc, what, got, err.msg);
        g_assert_null(c);
    }
}

static void test_refused_at_load(void)
{
    static const struct {
        const char *name, *what;
    } cases[] = {
        {"nosym", "nosym.so exports no pgnfs_xform_describe() (not a pgnfs transformation?)"},
        {"nulldesc", "nulldesc.so: pgnfs_xform_describe() returned no descriptor"},
        {"badabi", "badabi.so is built for transformation ABI version 999; this pgnfs speaks "
                   "version 1"},
        {"wrongname", "wrongname.so calls itself 'somethingelse', not 'wrongname'"},
        {"nullfn", "nullfn.so has no forward function"},
        {"nobound", "nobound.so has no max_expansion function"},
        {"badflags", "badflags.so sets unknown flags 0x100"},
        {"bigmeta", "bigmeta.so asks for 65 header bytes per chunk"},
        {"garbage", "garbage.so cannot be loaded"},
    };
    static const char junk[] = "this is not a shared library\n";
    char *garbage = g_build_filename(xt_plugin_dir(), "garbage.so", NULL);
    xf_env *env;

    g_assert_true(g_file_set_contents(garbage, junk, sizeof junk - 1, NULL));
    g_assert_cmpint(chmod(garbage, 0644), ==, 0);
    env = xt_env(true, true);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        GString *text = g_string_new(NULL);

        g_string_printf(text, "zstd,%s", cases[i].name);
        refused(env, text->str, -ELIBBAD, cases[i].what);
        refused(env, text->str, -ELIBBAD, "stage 2: plug-in ");
        g_string_free(text, TRUE);
    }
    /* The env still works. */
    xt_chain(env, "zstd,uidentity");
    xf_env_free(env);
    g_unlink(garbage);
    g_free(garbage);
}

static void test_refused_at_probe(void)
{
    static const struct {
        const char *name, *what;
    } cases[] = {
        {"liar", "fails its probe: inverse(forward(x)) differs from x at byte 0"},
        {"overrun", "forward out of place writes past its room"},
        {"badlen", "badlen.so says it preserves length, but forward turns 1 bytes into 0"},
        {"inputwriter", "forward writes into its input"},
        {"leaky", "leaky.so keeps per-worker state but has no worker_fini"},
    };
    xf_env *env = xt_env(true, true);

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
        refused(env, cases[i].name, -ELIBBAD, cases[i].what);
    xf_env_free(env);
}

static void test_missing(void)
{
    xf_env *env = xt_env(false, true);

    refused(env, "identity,nosuchplug", -ENOENT,
            "stage 2: unknown transformation 'nosuchplug': no built-in of that name and no "
            "plug-in ");
    refused(env, "nosuchplug", -ENOENT, "/plugins/nosuchplug.so");
    xf_env_free(env);
}

static void test_permissions(void)
{
    char *dir = g_build_filename(xt_dir(), "open-plugins", NULL), *src, *dst, *data;
    xf_env_config cfg = {NULL, dir, 0, 1};
    gsize n;
    xf_env *env;
    xf_err err;

    g_assert_cmpint(g_mkdir(dir, 0755), ==, 0);
    src = g_build_filename(xt_plugin_dir(), "uidentity.so", NULL);
    dst = g_build_filename(dir, "uidentity.so", NULL);
    g_assert_true(g_file_get_contents(src, &data, &n, NULL));
    g_assert_true(g_file_set_contents(dst, data, (gssize)n, NULL));
    g_assert_cmpint(chmod(dst, 0755), ==, 0);
    g_assert_cmpint(chmod(dir, 0755), ==, 0);
    g_assert_cmpint(xf_env_new(&cfg, &env, &err), ==, 0);
    xt_chain(env, "uidentity");
    xf_env_free(env);
    g_assert_cmpint(chmod(dst, 0757), ==, 0);
    g_assert_cmpint(xf_env_new(&cfg, &env, &err), ==, 0);
    refused(env, "uidentity", -EACCES, "uidentity.so is writable by others (mode 0757): refused");
    xf_env_free(env);
    g_assert_cmpint(chmod(dst, 0755), ==, 0);
    g_assert_cmpint(chmod(dir, 01777), ==, 0);
    g_assert_cmpint(xf_env_new(&cfg, &env, &err), ==, 0);
    refused(env, "uidentity", -EACCES, "open-plugins is writable by others (mode 1777)");
    xf_env_free(env);
    g_assert_cmpint(chmod(dir, 0755), ==, 0);
    g_unlink(dst);
    g_rmdir(dir);
    g_free(data);
    g_free(src);
    g_free(dst);
    g_free(dir);
}

static void test_options(void)
{
    xf_env *env = xt_env(false, true);
    unsigned char plain[300];

    refused(env, "uincrement:by=0", -EINVAL,
            "stage 1 'uincrement:by=0': by=0: expected an integer in 1..255");
    refused(env, "uidentity:x=1", -EINVAL, "uidentity takes no options");
    g_assert_true(xt_chain(env, "uincrement:by=2") != xt_chain(env, "uincrement"));
    g_assert_true(xt_chain(env, "uincrement:by=2") == xt_chain(env, " uincrement : by=2 "));
    {
        xf_work *w;
        xf_chunk at = {1, 1, 1};
        unsigned char out[400];
        size_t n;

        g_assert_cmpint(xf_work_new(env, &w), ==, 0);
        memset(plain, 10, sizeof plain);
        g_assert_cmpint(xf_encode(xt_chain(env, "uincrement:by=2"), w, &at, plain, sizeof plain,
                                  out, sizeof out, &n, NULL),
                        ==, 0);
        g_assert_cmpint(out[XF_HDR_FIXED], ==, 12);
        xt_roundtrip(xt_chain(env, "uincrement:by=255,increment"), w, 1, 1, plain, sizeof plain);
        xf_work_free(w);
    }
    xf_env_free(env);
}

static void test_runtime_failure(void)
{
    xf_env *env = xt_env(true, true);
    const xf_chain *c = xt_chain(env, "zstd,failer:fail=13:failread=14,sha256");
    unsigned char plain[1000], out[2000], dec[1000];
    xf_chunk c13 = {9, 13, 0}, c14 = {9, 14, 0};
    size_t n = 0, back;
    xf_work *w;
    xf_err err;

    g_assert_cmpint(xf_work_new(env, &w), ==, 0);
    memset(plain, 'f', sizeof plain);
    g_assert_cmpint(xf_encode(c, w, &c13, plain, sizeof plain, out, sizeof out, &n, &err), ==,
                    -EIO);
    g_assert_cmpstr(
        err.msg, ==,
        "file 9 chunk 13: stage 2 'failer' failed to encode: failer: refusing chunk 13");
    g_assert_cmpint(xf_encode(c, w, &c14, plain, sizeof plain, out, sizeof out, &n, &err), ==, 0);
    memset(dec, 0xEE, sizeof dec);
    g_assert_cmpint(xf_decode(c, w, &c14, out, n, dec, sizeof dec, &back, &err), ==, -EIO);
    g_assert_cmpstr(err.msg, ==,
                    "file 9 chunk 14: stage 2 'failer' failed to decode: failer: cannot read "
                    "chunk 14");
    for (size_t i = 0; i < sizeof dec; i++)
        g_assert_cmpint(dec[i], ==, 0);
    /* Other chunks are fine. */
    xt_roundtrip(c, w, 9, 15, plain, sizeof plain);
    xf_work_free(w);
    xf_env_free(env);
}

static void test_nonce_and_state(void)
{
    xf_env *env = xt_env(false, true);
    const xf_chain *c = xt_chain(env, "noncexor,trailer");
    unsigned char plain[100] = {0}, a[300], b[300];
    xf_chunk at = {2, 2, 2};
    size_t na, nb;
    xf_work *w;

    g_assert_cmpint(xf_work_new(env, &w), ==, 0);
    g_assert_cmpint(xf_encode(c, w, &at, plain, sizeof plain, a, sizeof a, &na, NULL), ==, 0);
    g_assert_cmpint(xf_encode(c, w, &at, plain, sizeof plain, b, sizeof b, &nb, NULL), ==, 0);
    g_assert_cmpuint(na, ==, nb);
    /* header 28 + noncexor's 12 + trailer's length 4 */
    g_assert_cmpuint(na, ==, 28 + 12 + 4 + sizeof plain + 2);
    g_assert_true(memcmp(a + 28, b + 28, 12) != 0);
    xt_roundtrip(c, w, 2, 2, plain, sizeof plain);
    xf_work_free(w); /* trailer's per-worker counter is freed here */
    xf_env_free(env);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/xform/plugin/refused-at-load", test_refused_at_load);
    g_test_add_func("/xform/plugin/refused-at-probe", test_refused_at_probe);
    g_test_add_func("/xform/plugin/missing", test_missing);
    g_test_add_func("/xform/plugin/permissions", test_permissions);
    g_test_add_func("/xform/plugin/options", test_options);
    g_test_add_func("/xform/plugin/runtime-failure", test_runtime_failure);
    g_test_add_func("/xform/plugin/nonce-and-state", test_nonce_and_state);
    return g_test_run();
}
