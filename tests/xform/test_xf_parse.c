/*
 * test_xf_parse.c -- chain text (xform/xf_parse.c, xf_chain.c): the
 * canonical form and the id, "none", in-database stages, and every kind
 * of refusal with the message it gives.
 */
#include <errno.h>
#include <string.h>

#include "xtest.h"

/* text must be refused with rc and a message containing what. */
static void refused(xf_env *env, const char *text, int rc, const char *what)
{
    const xf_chain *c = (const xf_chain *)&c;
    xf_err err = {""};
    int got = xf_chain_get(env, text, &c, &err);

    if (got != rc || !strstr(err.msg, what))
        g_error("'%s': expected %d with \"%s\", got %d \"%s\"", text, rc, what, got, err.msg);
    g_assert_null(c);
}

static void canon(xf_env *env, const char *text, const char *want)
{
    const xf_chain *c = xt_chain(env, text), *again;

    g_assert_cmpstr(xf_chain_text(c), ==, want);
    /* The canonical text is a fixed point and names the same chain. */
    again = xt_chain(env, xf_chain_text(c));
    g_assert_true(again == c);
    g_assert_true(xf_chain_find(env, xf_chain_id(c)) == c);
}

static void test_canonical(void)
{
    xf_env *env = xt_env(true, true);

    canon(env, "zstd", "zstd:level=3");
    canon(env, " ZSTD : level = 3 ", "zstd:level=3");
    canon(env, "zstd:level=09", "zstd:level=9");
    canon(env, "Zstd:Level=4", "zstd:level=4");
    canon(env, "zstd:level=-5,lz4", "zstd:level=-5,lz4:accel=1");
    canon(env, "lz4:accel=17 , sha256", "lz4:accel=17,sha256");
    canon(env, "zstd,aes-256-gcm", "zstd:level=3,aes-256-gcm");
    canon(env, "identity,increment,identity", "identity,increment,identity");
    canon(env, "uincrement:by=3,uidentity", "uincrement:by=3,uidentity");
    canon(env, "uincrement,sql:inverse=Public.Dec:forward=public.enc",
          "uincrement,sql:forward=public.enc:inverse=public.dec");
    canon(env, "sql:forward=enc:inverse=dec", "sql:forward=enc:inverse=dec");
    /* zstd and zstd:level=3 are one chain: same pointer, same id. */
    g_assert_true(xt_chain(env, "zstd") == xt_chain(env, "zstd:level=3"));
    g_assert_true(xt_chain(env, "zstd:level=4") != xt_chain(env, "zstd:level=3"));
    g_assert_cmpuint(xf_chain_id(xt_chain(env, "zstd,sha256")), !=,
                     xf_chain_id(xt_chain(env, "sha256,zstd")));
    xf_env_free(env);
}

static void test_default_level(void)
{
    xf_env_config cfg = {NULL, NULL, 9, 1};
    xf_env *env = NULL;
    xf_err err;

    g_assert_cmpint(xf_env_new(&cfg, &env, &err), ==, 0);
    canon(env, "zstd", "zstd:level=9");
    xf_env_free(env);
    cfg.zstd_level = 23;
    g_assert_cmpint(xf_env_new(&cfg, &env, &err), ==, -EINVAL);
    g_assert_nonnull(strstr(err.msg, "zstd_level 23"));
}

static void test_ids(void)
{
    xf_env *a = xt_env(true, false), *b = xt_env(false, false);
    const xf_chain *c = xt_chain(a, "zstd:level=5,sha256");

    /* The id depends only on the canonical text: stable across envs. */
    g_assert_cmpuint(xf_chain_id(c), ==, xf_chain_id(xt_chain(b, "zstd:level=5, sha256")));
    g_assert_cmpuint(xf_chain_id(c), !=, 0);
    g_assert_true(xf_chain_guarded(c));
    g_assert_cmpint(xf_chain_stages(c), ==, 2);
    /* fixed 28 + zstd (length 4 + mode 1) + sha256 (32) */
    g_assert_cmpuint(xf_chain_header_len(c), ==, 28 + 5 + 32);
    g_assert_null(xf_chain_find(b, 12345));
    xf_env_free(a);
    xf_env_free(b);
}

static void test_none(void)
{
    xf_env *env = xt_env(false, false);
    const xf_chain *c = xt_chain(env, " None ");
    unsigned char buf[64];
    size_t n;
    xf_err err;
    xf_chunk at = {1, 2, 3};

    g_assert_cmpstr(xf_chain_text(c), ==, "none");
    g_assert_cmpuint(xf_chain_id(c), ==, 0);
    g_assert_false(xf_chain_guarded(c));
    g_assert_true(xf_chain_find(env, 0) == c);
    g_assert_cmpint(xf_encode(c, NULL, &at, buf, 1, buf, sizeof buf, &n, &err), ==, -EINVAL);
    g_assert_cmpint(xf_decode(c, NULL, &at, buf, 1, buf, sizeof buf, &n, &err), ==, -EINVAL);
    refused(env, "none,zstd", -EINVAL, "'none' stands alone");
    refused(env, "zstd,none", -EINVAL, "'none' stands alone");
    refused(env, "none:x=1", -EINVAL, "'none' stands alone");
    xf_env_free(env);
}

static void test_sql(void)
{
    xf_env *env = xt_env(false, true);
    const xf_chain *c = xt_chain(env, "increment,sql:forward=s.enc:inverse=s.dec,"
                                      "sql:forward=f2:inverse=i2");
    const char *f, *i;

    g_assert_cmpint(xf_chain_stages(c), ==, 1);
    g_assert_cmpint(xf_chain_sql_count(c), ==, 2);
    xf_chain_sql(c, 0, &f, &i);
    g_assert_cmpstr(f, ==, "s.enc");
    g_assert_cmpstr(i, ==, "s.dec");
    xf_chain_sql(c, 1, &f, &i);
    g_assert_cmpstr(f, ==, "f2");
    g_assert_cmpstr(i, ==, "i2");
    refused(env, "sql:forward=enc:inverse=dec,zstd", -EINVAL, "sql stages come last");
    refused(env, "sql:forward=enc", -EINVAL, "needs forward=FUNCTION and inverse=FUNCTION");
    refused(env, "sql:forward=a.b.c:inverse=d", -EINVAL, "SQL identifiers");
    refused(env, "sql:forward=1abc:inverse=d", -EINVAL, "SQL identifiers");
    refused(env, "sql:forward=a:inverse=b:level=3", -EINVAL, "unknown option 'level'");
    refused(env, "sql:forward=x;drop:inverse=y", -EINVAL, "bad value");
    xf_env_free(env);
}

/* What a chain's stages are together (xf_chain_traits: which chains a
 * transformation link may read and write through). */
static void test_traits(void)
{
    xf_env *env = xt_env(true, false);
    static const struct {
        const char *text;
        bool preserves, nonce, bare;
    } cases[] = {
        {"none", true, false, true},
        {"identity", true, false, true},
        {"identity,increment,increment", true, false, true},
        {"sha256", true, false, false},
        {"zstd", false, false, false},
        {"increment,lz4", false, false, false},
        {"aes-256-gcm", true, true, false},
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        xf_traits t;

        xf_chain_traits(xt_chain(env, cases[i].text), &t);
        g_test_message("%s", cases[i].text);
        g_assert_cmpint(t.preserves, ==, cases[i].preserves);
        g_assert_cmpint(t.nonce, ==, cases[i].nonce);
        g_assert_cmpint(t.bare, ==, cases[i].bare);
    }
    xf_env_free(env);
}

static void test_refusals(void)
{
    xf_env *env = xt_env(true, true), *nokey = xt_env(false, false);
    GString *many = g_string_new("identity");

    refused(env, "", -EINVAL, "empty chain");
    refused(env, "  ", -EINVAL, "empty chain");
    refused(env, "zstd,", -EINVAL, "stage 2 is empty");
    refused(env, ",zstd", -EINVAL, "stage 1 is empty");
    refused(env, "zstd,,lz4", -EINVAL, "stage 2 is empty");
    refused(env, "zst d", -EINVAL, "bad name");
    refused(env, "zstd/x", -EINVAL, "bad name");
    refused(env, "../evil", -EINVAL, "bad name");
    refused(env, "zstd:level", -EINVAL, "has no '='");
    refused(env, "zstd:levl=3", -EINVAL, "unknown option 'levl' (zstd takes: level)");
    refused(env, "zstd:level=3:level=4", -EINVAL, "given twice");
    refused(env, "zstd:level=99", -EINVAL, "level=99 is outside -7..22");
    refused(env, "zstd:level=x", -EINVAL, "not an integer");
    refused(env, "zstd:level=", -EINVAL, "bad value");
    refused(env, "lz4:accel=0", -EINVAL, "accel=0 is outside 1..65537");
    refused(env, "identity:x=1", -EINVAL, "identity takes no options");
    refused(env, "sha256:bits=128", -EINVAL, "sha256 takes no options");
    refused(env, "frobnicate", -ENOENT, "no built-in of that name and no plug-in");
    refused(env, "frobnicate", -ENOENT, "frobnicate.so");
    refused(nokey, "frobnicate", -ENOENT, "no [xform] plugin_dir");
    refused(nokey, "aes-256-gcm", -ENOKEY, "needs a key: set [xform] key_file");
    refused(env, "zstd,fixedlen", -EINVAL,
            "stage 2 'fixedlen' needs the chunk's plain length, but follows stage 1 'zstd'");
    refused(env, "identity,trailer,sha256,fixedlen", -EINVAL, "follows stage 2 'trailer'");
    xt_chain(env, "fixedlen,zstd");
    xt_chain(env, "sha256,fixedlen,aes-256-gcm");
    for (int i = 1; i < XF_MAX_STAGES; i++)
        g_string_append(many, ",identity");
    xt_chain(env, many->str);
    g_string_append(many, ",identity");
    refused(env, many->str, -EINVAL, "more than 32 stages");
    g_string_free(many, TRUE);
    xf_env_free(env);
    xf_env_free(nokey);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/xform/parse/canonical", test_canonical);
    g_test_add_func("/xform/parse/default-level", test_default_level);
    g_test_add_func("/xform/parse/ids", test_ids);
    g_test_add_func("/xform/parse/none", test_none);
    g_test_add_func("/xform/parse/sql", test_sql);
    g_test_add_func("/xform/parse/refusals", test_refusals);
    g_test_add_func("/xform/parse/traits", test_traits);
    return g_test_run();
}
