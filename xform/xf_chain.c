/*
 * xf_chain.c -- chains: made from their text on first use (xf_parse.c,
 * then each stage's init, a plug-in's probe, the header's layout), kept
 * in the env's table by id, found again by text or by id.
 *
 * Header layout: the fixed part (XF_HDR_FIXED bytes), then per stage in
 * chain order its input length (4 bytes, only for a stage that may
 * change lengths) and its meta_size bytes.
 *
 * A chain is refused when, for a chunk of XF_PLAIN_MAX bytes, its stages'
 * bounds would let an intermediate result pass XF_ROOM_MAX (a stage that
 * may more than double a chunk, or several that may grow it).
 *
 * NOTES
 *   The table: XF_CHAIN_HASH buckets of atomic list heads. Chains are
 *   added under env->mu, at the head, fully built before they are
 *   published (release store); readers walk the lists without a lock
 *   (acquire loads). Nothing is removed before xf_env_free. A chain is
 *   immutable once published.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "xf_int.h"

static xf_chain *xf_table_find(xf_env *env, uint64_t id)
{
    xf_chain *c = atomic_load_explicit(&env->chains[id % XF_CHAIN_HASH], memory_order_acquire);

    for (; c; c = c->next)
        if (c->id == id)
            return c;
    return NULL;
}

static void xf_chain_destroy(xf_chain *c)
{
    for (int i = 0; i < c->nst; i++)
        c->st[i].kind->d->fini(c->st[i].state);
    for (int i = 0; i < c->nsql; i++) {
        free(c->sql_fwd[i]);
        free(c->sql_inv[i]);
    }
    free(c->text);
    free(c);
}

/* Initialise stage i of c from spec (and probe it if a plug-in). */
static int xf_stage_init(xf_env *env, xf_chain *c, const xf_spec_stage *ss, int i, uint32_t *hdr,
                         xf_err *err)
{
    const xf_kind *k = ss->kind;
    xf_stage *st = &c->st[i];
    char msg[256] = "";
    int rc;

    st->kind = k;
    st->flags = k->d->flags;
    st->len_off = 0;
    if (!(st->flags & PGNFS_XFORM_PRESERVES_LENGTH)) {
        st->len_off = *hdr;
        *hdr += 4;
    }
    st->meta_off = *hdr;
    st->meta_size = k->d->meta_size;
    *hdr += st->meta_size;
    rc = k->init_env ? k->init_env(env, ss->opts, &st->state, msg, sizeof msg)
                     : k->d->init(ss->opts, &st->state, msg, sizeof msg);
    msg[sizeof msg - 1] = '\0';
    if (rc != 0) {
        rc = rc < 0 ? rc : -EINVAL;
        xf_errf(err, "stage %d '%s%s%s': %s", i + 1, ss->name, ss->opts[0] ? ":" : "", ss->opts,
                msg[0] ? msg : strerror(-rc));
        return rc;
    }
    if (!k->builtin) {
        rc = xf_plugin_probe(k, st->state, ss->opts, err);
        if (rc < 0) {
            k->d->fini(st->state);
            return rc;
        }
    }
    return 0;
}

/* Build a chain from spec (not yet published). */
static int xf_chain_make(xf_env *env, const xf_spec *spec, xf_chain **out, xf_err *err)
{
    uint32_t hdr = XF_HDR_FIXED;
    size_t b[XF_MAX_STAGES];
    xf_chain *c;
    int rc;

    c = calloc(1, sizeof *c);
    if (!c || !(c->text = strdup(spec->text))) {
        free(c);
        xf_errf(err, "out of memory");
        return -ENOMEM;
    }
    c->env = env;
    c->id = spec->id;
    for (int i = 0; i < spec->nst; i++) {
        rc = xf_stage_init(env, c, &spec->st[i], i, &hdr, err);
        if (rc < 0)
            goto err;
        c->nst = i + 1;
    }
    c->hdr_len = hdr;
    c->header_only = c->nst > 0;
    for (int i = 0; i < c->nst; i++)
        c->header_only &= c->st[i].kind->d == &xf_identity_desc;
    for (int i = 0; i < spec->nsql; i++) {
        c->sql_fwd[i] = strdup(spec->sql_fwd[i]);
        c->sql_inv[i] = strdup(spec->sql_inv[i]);
        c->nsql = i + 1;
        if (!c->sql_fwd[i] || !c->sql_inv[i]) {
            xf_errf(err, "out of memory");
            rc = -ENOMEM;
            goto err;
        }
    }
    if (xf_chain_bounds(c, XF_PLAIN_MAX, b) >= XF_ROOM_MAX) {
        xf_errf(err,
                "the chain may grow a chunk of %u bytes past %u bytes (a stage that may more "
                "than double it, or several that may grow it)",
                XF_PLAIN_MAX, XF_ROOM_MAX);
        rc = -EINVAL;
        goto err;
    }
    *out = c;
    return 0;
err:
    xf_chain_destroy(c);
    return rc;
}

/* xf_chain_get -- see xf.h. */
int xf_chain_get(xf_env *env, const char *text, const xf_chain **out, xf_err *err)
{
    xf_spec *spec = malloc(sizeof *spec);
    xf_chain *c;
    int rc;

    *out = NULL;
    if (!spec) {
        xf_errf(err, "out of memory");
        return -ENOMEM;
    }
    pthread_mutex_lock(&env->mu);
    rc = xf_parse(env, text, spec, err);
    if (rc < 0)
        goto out;
    if (spec->none) {
        *out = &env->none;
        goto out;
    }
    c = xf_table_find(env, spec->id);
    if (c && strcmp(c->text, spec->text) != 0) {
        xf_errf(err, "chains '%s' and '%s' have the same id %016llx", c->text, spec->text,
                (unsigned long long)spec->id);
        rc = -EEXIST;
        goto out;
    }
    if (!c) {
        rc = xf_chain_make(env, spec, &c, err);
        if (rc < 0)
            goto out;
        c->next = atomic_load_explicit(&env->chains[c->id % XF_CHAIN_HASH], memory_order_relaxed);
        atomic_store_explicit(&env->chains[c->id % XF_CHAIN_HASH], c, memory_order_release);
    }
    *out = c;
out:
    pthread_mutex_unlock(&env->mu);
    free(spec);
    return rc;
}

/* xf_chain_find -- see xf.h. */
const xf_chain *xf_chain_find(xf_env *env, uint64_t id)
{
    return id == 0 ? &env->none : xf_table_find(env, id);
}

/* xf_chain_free_all -- see xf_int.h. */
void xf_chain_free_all(xf_env *env)
{
    for (int b = 0; b < XF_CHAIN_HASH; b++) {
        xf_chain *c = atomic_load(&env->chains[b]), *next;

        for (; c; c = next) {
            next = c->next;
            xf_chain_destroy(c);
        }
        atomic_store(&env->chains[b], NULL);
    }
}

/* xf_chain_bounds -- see xf_int.h. */
size_t xf_chain_bounds(const xf_chain *c, size_t n, size_t *b)
{
    size_t cur = n, max = n;

    for (int i = 0; i < c->nst; i++) {
        const xf_stage *st = &c->st[i];

        if (!(st->flags & PGNFS_XFORM_PRESERVES_LENGTH)) {
            cur = st->kind->d->max_expansion(st->state, cur);
            if (cur > XF_ROOM_MAX)
                cur = XF_ROOM_MAX;
        }
        b[i] = cur;
        if (cur > max)
            max = cur;
    }
    return max;
}

/* xf_chain_text -- see xf.h. */
const char *xf_chain_text(const xf_chain *c)
{
    return c->text;
}

/* xf_chain_id -- see xf.h. */
uint64_t xf_chain_id(const xf_chain *c)
{
    return c->id;
}

/* xf_chain_guarded -- see xf.h. */
bool xf_chain_guarded(const xf_chain *c)
{
    return c->id != 0;
}

/* xf_chain_stages -- see xf.h. */
int xf_chain_stages(const xf_chain *c)
{
    return c->nst;
}

/* xf_chain_header_len -- see xf.h. */
size_t xf_chain_header_len(const xf_chain *c)
{
    return c->hdr_len;
}

/* xf_chain_header_only -- see xf.h. */
bool xf_chain_header_only(const xf_chain *c)
{
    return c->header_only;
}

/* xf_chain_sql_count -- see xf.h. */
int xf_chain_sql_count(const xf_chain *c)
{
    return c->nsql;
}

/* xf_chain_sql -- see xf.h. i in [0, xf_chain_sql_count). */
void xf_chain_sql(const xf_chain *c, int i, const char **forward, const char **inverse)
{
    *forward = c->sql_fwd[i];
    *inverse = c->sql_inv[i];
}

/* xf_chain_traits -- see xf.h. */
void xf_chain_traits(const xf_chain *c, xf_traits *t)
{
    t->preserves = true;
    t->nonce = false;
    t->bare = true;
    for (int i = 0; i < c->nst; i++) {
        const xf_stage *st = &c->st[i];

        t->preserves &= (st->flags & PGNFS_XFORM_PRESERVES_LENGTH) != 0;
        t->nonce |= (st->flags & PGNFS_XFORM_NEEDS_NONCE) != 0;
        t->bare &= st->meta_size == 0;
    }
    t->bare &= t->preserves && !t->nonce;
}
