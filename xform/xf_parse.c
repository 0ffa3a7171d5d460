/*
 * xf_parse.c -- a chain's text into its parts (xf_spec): syntax, names,
 * options, order, and the canonical text and id (grammar in xf.h).
 *
 * Checks, each refused with -EINVAL (or the kind lookup's error) and a
 * message naming the stage by position and name:
 *   - empty text, an empty stage, "none" with anything else, more than
 *     XF_MAX_STAGES in-server or XF_MAX_SQL in-database stages;
 *   - a name or option key or value with characters outside the grammar,
 *     an option without '=', a key given twice;
 *   - an unknown name (no built-in, no plug-in: -ENOENT), a plug-in
 *     refused at load (-ELIBBAD, -EACCES);
 *   - built-ins: an option they do not take, a value that is not an
 *     integer in range (zstd level -7..22, lz4 accel 1..65537);
 *   - sql: forward and inverse both given, identifiers only
 *     ([a-z_][a-z0-9_]*, optionally schema.name), and after every
 *     in-server stage (dbfs applies them in SQL, around what this
 *     library encodes);
 *   - a stage flagged PGNFS_XFORM_NEEDS_PLAIN_LENGTH after a stage that
 *     may change lengths.
 * Names and sql identifiers are folded to lower case (as PostgreSQL
 * folds unquoted identifiers); plug-in option values are kept as given.
 *
 * Canonical text: stages joined by ",", blanks dropped, a built-in's
 * options all spelt out in its own order with defaults filled in (so
 * "zstd" and "zstd:level=3" are one chain, and a later change of
 * [xform] zstd_level does not change what an existing file's chain
 * says), a plug-in's options in the order given.
 *
 * NOTES
 *   Runs with env->mu held (xf_kind_find may load a plug-in).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "xf_int.h"

/* Trim blanks at both ends of [*s, *e). */
static void xf_trim(const char **s, const char **e)
{
    while (*s < *e && (**s == ' ' || **s == '\t' || **s == '\n' || **s == '\r'))
        (*s)++;
    while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\n' || (*e)[-1] == '\r'))
        (*e)--;
}

static bool xf_is_name(const char *s)
{
    if (!(islower((unsigned char)s[0]) || isdigit((unsigned char)s[0])))
        return false;
    for (; *s; s++)
        if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_' || *s == '-'))
            return false;
    return true;
}

static bool xf_is_key(const char *s)
{
    if (!islower((unsigned char)s[0]))
        return false;
    for (; *s; s++)
        if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_'))
            return false;
    return true;
}

static bool xf_is_value(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '.' || *s == '+' || *s == '-'))
            return false;
    return true;
}

/* An SQL identifier, optionally schema-qualified, lower case. */
static bool xf_is_ident(const char *s)
{
    int dots = 0;
    bool start = true;

    for (; *s; s++) {
        if (*s == '.') {
            if (start || ++dots > 1)
                return false;
            start = true;
            continue;
        }
        if (!(islower((unsigned char)*s) || *s == '_' || (!start && isdigit((unsigned char)*s))))
            return false;
        start = false;
    }
    return !start;
}

/* Copy [s, e) into dst (size n), folded to lower case if fold. false when
 * it does not fit. */
static bool xf_copy(char *dst, size_t n, const char *s, const char *e, bool fold)
{
    size_t len = (size_t)(e - s);

    if (len >= n)
        return false;
    for (size_t i = 0; i < len; i++)
        dst[i] = fold ? (char)tolower((unsigned char)s[i]) : s[i];
    dst[len] = '\0';
    return true;
}

/* One stage's options, split: keys and values. */
typedef struct xf_opts {
    int n;
    char key[16][32];
    char val[16][XF_OPTS_MAX];
} xf_opts;

/* Parse "k=v:k=v" in [s, e) into o. */
static int xf_parse_opts(const char *s, const char *e, bool fold, xf_opts *o, char *why,
                         size_t why_len)
{
    o->n = 0;
    while (s < e) {
        const char *t = memchr(s, ':', (size_t)(e - s)), *te = t ? t : e, *eq, *ks = s, *ke, *vs,
                   *ve = te;

        eq = memchr(s, '=', (size_t)(te - s));
        if (!eq) {
            ke = te;
            xf_trim(&ks, &ke);
            snprintf(why, why_len, "option '%.*s' has no '=' (write key=value)", (int)(ke - ks),
                     ks);
            return -EINVAL;
        }
        if (o->n == 16) {
            snprintf(why, why_len, "more than 16 options");
            return -EINVAL;
        }
        ke = eq;
        vs = eq + 1;
        xf_trim(&ks, &ke);
        xf_trim(&vs, &ve);
        if (!xf_copy(o->key[o->n], sizeof o->key[0], ks, ke, true) || !xf_is_key(o->key[o->n])) {
            snprintf(why, why_len, "bad option name '%.*s'", (int)(ke - ks), ks);
            return -EINVAL;
        }
        if (!xf_copy(o->val[o->n], sizeof o->val[0], vs, ve, fold) || !xf_is_value(o->val[o->n])) {
            snprintf(why, why_len,
                     "bad value '%.*s' for option '%s' (letters, digits, '_', '.', '+', '-')",
                     (int)(ve - vs), vs, o->key[o->n]);
            return -EINVAL;
        }
        for (int i = 0; i < o->n; i++) {
            if (strcmp(o->key[i], o->key[o->n]) == 0) {
                snprintf(why, why_len, "option '%s' given twice", o->key[i]);
                return -EINVAL;
            }
        }
        o->n++;
        s = t ? t + 1 : e;
    }
    return 0;
}

/* A built-in's canonical options from what was given. */
static int xf_builtin_opts(const xf_env *env, const xf_kind *k, const xf_opts *o, char *out,
                           size_t out_len, char *why, size_t why_len)
{
    size_t at = 0;

    for (int i = 0; i < o->n; i++) {
        bool known = false;

        for (int j = 0; j < k->nopts; j++)
            known |= strcmp(k->opts[j].key, o->key[i]) == 0;
        if (!known && k->nopts == 0) {
            snprintf(why, why_len, "%s takes no options", k->d->name);
            return -EINVAL;
        }
        if (!known) {
            snprintf(why, why_len, "unknown option '%s' (%s takes: %s)", o->key[i], k->d->name,
                     k->opts[0].key);
            return -EINVAL;
        }
    }
    out[0] = '\0';
    for (int j = 0; j < k->nopts; j++) {
        const xf_optspec *sp = &k->opts[j];
        long v = sp->def == XF_OPT_DEF_ZSTD ? env->zstd_level : sp->def;

        for (int i = 0; i < o->n; i++) {
            char *end;

            if (strcmp(o->key[i], sp->key) != 0)
                continue;
            errno = 0;
            v = strtol(o->val[i], &end, 10);
            if (*end || errno) {
                snprintf(why, why_len, "%s=%s is not an integer", sp->key, o->val[i]);
                return -EINVAL;
            }
            if (v < sp->min || v > sp->max) {
                snprintf(why, why_len, "%s=%ld is outside %ld..%ld", sp->key, v, sp->min, sp->max);
                return -EINVAL;
            }
        }
        at += (size_t)snprintf(out + at, out_len - at, "%s%s=%ld", j ? ":" : "", sp->key, v);
    }
    return 0;
}

/* A plug-in's canonical options: as given, in order. */
static int xf_plugin_opts(const xf_opts *o, char *out, size_t out_len, char *why, size_t why_len)
{
    size_t at = 0;

    out[0] = '\0';
    for (int i = 0; i < o->n; i++) {
        int n = snprintf(out + at, out_len - at, "%s%s=%s", i ? ":" : "", o->key[i], o->val[i]);

        if (n < 0 || (size_t)n >= out_len - at) {
            snprintf(why, why_len, "options longer than %d bytes", XF_OPTS_MAX - 1);
            return -EINVAL;
        }
        at += (size_t)n;
    }
    return 0;
}

static int xf_parse_sql(xf_spec *spec, const xf_opts *o, char *why, size_t why_len)
{
    const char *fwd = NULL, *inv = NULL;

    for (int i = 0; i < o->n; i++) {
        if (strcmp(o->key[i], "forward") == 0)
            fwd = o->val[i];
        else if (strcmp(o->key[i], "inverse") == 0)
            inv = o->val[i];
        else {
            snprintf(why, why_len, "unknown option '%s' (sql takes: forward, inverse)", o->key[i]);
            return -EINVAL;
        }
    }
    if (!fwd || !inv) {
        snprintf(why, why_len, "needs forward=FUNCTION and inverse=FUNCTION");
        return -EINVAL;
    }
    if (!xf_is_ident(fwd) || !xf_is_ident(inv) || strlen(fwd) >= sizeof spec->sql_fwd[0] ||
        strlen(inv) >= sizeof spec->sql_inv[0]) {
        snprintf(why, why_len, "function names must be SQL identifiers (name or schema.name)");
        return -EINVAL;
    }
    if (spec->nsql == XF_MAX_SQL) {
        snprintf(why, why_len, "more than %d in-database stages", XF_MAX_SQL);
        return -EINVAL;
    }
    strcpy(spec->sql_fwd[spec->nsql], fwd);
    strcpy(spec->sql_inv[spec->nsql], inv);
    spec->nsql++;
    return 0;
}

/* Add "name[:opts]" to the canonical text (by hand: snprintf was most of
 * the time a chain of many stages took to learn). */
static int xf_canon_add(xf_spec *spec, size_t *at, const char *name, const char *opts)
{
    const size_t nl = strlen(name), ol = strlen(opts);
    const size_t n = (*at ? 1 : 0) + nl + (ol ? 1 + ol : 0);
    char *p = spec->text + *at;

    if (n >= sizeof spec->text - *at)
        return -EINVAL;
    if (*at)
        *p++ = ',';
    memcpy(p, name, nl);
    p += nl;
    if (ol) {
        *p++ = ':';
        memcpy(p, opts, ol);
        p += ol;
    }
    *p = '\0';
    *at += n;
    return 0;
}

/* One stage [s, e), the index-th (from 1). */
static int xf_parse_stage(xf_env *env, xf_spec *spec, int index, const char *s, const char *e,
                          size_t *at, xf_err *err)
{
    const char *colon = memchr(s, ':', (size_t)(e - s)), *ns = s, *ne = colon ? colon : e;
    char name[XF_NAME_MAX], why[256] = "";
    xf_opts o;
    xf_err kerr;
    int rc;

    xf_trim(&ns, &ne);
    if (!xf_copy(name, sizeof name, ns, ne, true) || !xf_is_name(name)) {
        xf_errf(err, "stage %d: bad name '%.*s' (letters, digits, '_', '-')", index, (int)(ne - ns),
                ns);
        return -EINVAL;
    }
    if (strcmp(name, "none") == 0) {
        xf_errf(err, "stage %d: 'none' stands alone (no stages, no options)", index);
        return -EINVAL;
    }
    rc = xf_parse_opts(colon ? colon + 1 : e, e, strcmp(name, "sql") == 0, &o, why, sizeof why);
    if (rc < 0)
        goto bad;
    if (strcmp(name, "sql") == 0) {
        rc = xf_parse_sql(spec, &o, why, sizeof why);
        if (rc < 0)
            goto bad;
        snprintf(why, sizeof why, "forward=%s:inverse=%s", spec->sql_fwd[spec->nsql - 1],
                 spec->sql_inv[spec->nsql - 1]);
        if (xf_canon_add(spec, at, name, why) < 0) {
            xf_errf(err, "chain text too long");
            return -EINVAL;
        }
        return 0;
    }
    if (spec->nsql > 0) {
        snprintf(why, sizeof why, "follows an in-database stage: sql stages come last");
        rc = -EINVAL;
        goto bad;
    }
    if (spec->nst == XF_MAX_STAGES) {
        snprintf(why, sizeof why, "more than %d stages", XF_MAX_STAGES);
        rc = -EINVAL;
        goto bad;
    }
    rc = xf_kind_find(env, name, &spec->st[spec->nst].kind, &kerr);
    if (rc < 0) {
        xf_errf(err, "stage %d: %s", index, kerr.msg);
        return rc;
    }
    if (spec->st[spec->nst].kind->builtin)
        rc = xf_builtin_opts(env, spec->st[spec->nst].kind, &o, spec->st[spec->nst].opts,
                             sizeof spec->st[0].opts, why, sizeof why);
    else
        rc = xf_plugin_opts(&o, spec->st[spec->nst].opts, sizeof spec->st[0].opts, why, sizeof why);
    if (rc < 0)
        goto bad;
    strcpy(spec->st[spec->nst].name, name);
    if (xf_canon_add(spec, at, name, spec->st[spec->nst].opts) < 0) {
        xf_errf(err, "chain text too long");
        return -EINVAL;
    }
    spec->nst++;
    return 0;
bad:
    xf_errf(err, "stage %d '%s': %s", index, name, why);
    return rc;
}

/* The order rule: no NEEDS_PLAIN_LENGTH stage after a length changer. */
static int xf_check_order(const xf_spec *spec, xf_err *err)
{
    int changer = -1;

    for (int i = 0; i < spec->nst; i++) {
        uint32_t f = spec->st[i].kind->d->flags;

        if (f & PGNFS_XFORM_NEEDS_PLAIN_LENGTH && changer >= 0) {
            xf_errf(err,
                    "stage %d '%s' needs the chunk's plain length, but follows stage %d '%s', "
                    "which may change lengths",
                    i + 1, spec->st[i].name, changer + 1, spec->st[changer].name);
            return -EINVAL;
        }
        if (!(f & PGNFS_XFORM_PRESERVES_LENGTH) && changer < 0)
            changer = i;
    }
    return 0;
}

/* xf_parse -- see xf_int.h. Returns 0 with *spec filled, or an error
 * (see the file's comment) with *err filled. */
int xf_parse(xf_env *env, const char *text, xf_spec *spec, xf_err *err)
{
    const char *s = text, *e = text + strlen(text);
    size_t at = 0;
    int index = 1, rc;

    memset(spec, 0, sizeof *spec);
    xf_trim(&s, &e);
    if (s == e) {
        xf_errf(err, "empty chain (write 'none' for no transformation)");
        return -EINVAL;
    }
    if ((size_t)(e - s) >= XF_TEXT_MAX) {
        xf_errf(err, "chain text too long (at most %d bytes)", XF_TEXT_MAX - 1);
        return -EINVAL;
    }
    {
        const char *ns = s, *ne = e;
        char word[8];

        if (xf_copy(word, sizeof word, ns, ne, true) && strcmp(word, "none") == 0) {
            spec->none = true;
            strcpy(spec->text, "none");
            spec->id = 0;
            return 0;
        }
    }
    while (s <= e) {
        const char *c = memchr(s, ',', (size_t)(e - s)), *ss = s, *se = c ? c : e;

        xf_trim(&ss, &se);
        if (ss == se) {
            xf_errf(err, "stage %d is empty", index);
            return -EINVAL;
        }
        rc = xf_parse_stage(env, spec, index, ss, se, &at, err);
        if (rc < 0)
            return rc;
        index++;
        if (!c)
            break;
        s = c + 1;
    }
    rc = xf_check_order(spec, err);
    if (rc < 0)
        return rc;
    rc = xf_text_id(spec->text, &spec->id);
    if (rc < 0)
        xf_errf(err, "cannot compute the chain's id (libcrypto)");
    return rc;
}
