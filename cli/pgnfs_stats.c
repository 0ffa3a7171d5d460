/*
 * pgnfs_stats.c -- `pgnfs stats`: live figures of a running server, read
 * from its metrics endpoint (GET /metrics, Prometheus text format; the
 * server needs [metrics] enable = true).
 *
 *   pgnfs stats [--url URL] [--interval SECONDS] [--watch] [--once]
 *
 * Two samples --interval apart (default 1 s) give, for the calls in
 * between: per procedure, operations per second, the mean and the 50th,
 * 90th and 99th latency percentiles (estimated from the histogram
 * buckets, interpolated linearly inside a bucket), database round trips
 * per call and RPC-level error replies; then the database (round trips
 * per second, connected or not), the workers, the NFS error statuses and
 * RPC events (PROG_UNAVAIL, bad calls ...) that occurred, each cache's
 * hit rate and fill, and the write-back buffer (backlog held now: bytes,
 * files, oldest; writes buffered, flushes and bytes stored per second).
 * Caches and write-back say "not reported" for a server without them.
 * Locks: held and waiting (every server of the file system), this
 * server's NSM state and grace period, grants and calls to clients.
 * Frontends: this server's coherence mode and invalidations; when the
 * database is reachable from here (--conninfo, or the embedded cluster
 * running), every server of the file system and the database's place in
 * its replication topology (pgnfs_front_stats).
 * --once prints one sample's totals since the server started. --watch
 * repeats until interrupted, clearing the terminal between screens when
 * stdout is one (bench/results/stats-sample.txt shows the screens).
 *
 * The URL defaults to http://[metrics] listen:[metrics] port/metrics of
 * the configuration (0.0.0.0 and :: become the loopback address).
 *
 * NOTES
 *   A sample is a GHashTable of "name{labels}" -> value (both owned by the
 *   table) and the keys in page order (so screens list things in the
 *   server's order, not the hash's). The HTTP client is a plain blocking GET over one socket with a
 *   5 s timeout: the endpoint is ours and answers HTTP/1.1 with a body
 *   ended by closing the connection (we send "Connection: close").
 */
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <glib.h>

#include "pgnfs_cmd.h"

#define PGNFS_STATS_TIMEOUT_S 5
#define PGNFS_STATS_BODY_MAX  (16u * 1024u * 1024u)

typedef struct {
    GHashTable *v;    /* char *key -> double * */
    GPtrArray *order; /* the keys in page order (owned by v) */
    double when;      /* monotonic seconds */
} pgnfs_sample;

/* ---- HTTP ---------------------------------------------------------------------- */

/* Split "http://HOST[:PORT]/PATH" into its parts (g_free them). Returns 0 or -1. */
static int pgnfs_url_split(const char *url, char **host, char **port, char **path)
{
    const char *p = url, *h, *end;

    if (strncmp(p, "http://", 7) != 0)
        return -1;
    p += 7;
    if (*p == '[') {
        end = strchr(p, ']');
        if (!end)
            return -1;
        *host = g_strndup(p + 1, (size_t)(end - p - 1));
        p = end + 1;
    } else {
        h = p;
        while (*p && *p != ':' && *p != '/')
            p++;
        *host = g_strndup(h, (size_t)(p - h));
    }
    if (*p == ':') {
        h = ++p;
        while (*p && *p != '/')
            p++;
        *port = g_strndup(h, (size_t)(p - h));
    } else {
        *port = g_strdup("80");
    }
    *path = g_strdup(*p ? p : "/");
    if (!**host || !**port) {
        g_free(*host);
        g_free(*port);
        g_free(*path);
        return -1;
    }
    return 0;
}

/* GET url; returns the body (g_free) or NULL with *why set (g_free). */
static char *pgnfs_http_get(const char *url, char **why)
{
    char *host = NULL, *port = NULL, *path = NULL;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    struct timeval tv = {.tv_sec = PGNFS_STATS_TIMEOUT_S};
    GString *in = NULL;
    char *body = NULL;
    int fd = -1, rc;

    if (pgnfs_url_split(url, &host, &port, &path) != 0) {
        *why = g_strdup_printf("'%s' is not an http://HOST:PORT/PATH URL", url);
        return NULL;
    }
    rc = getaddrinfo(host, port, &hints, &ai);
    if (rc != 0) {
        *why = g_strdup_printf("%s: %s", host, gai_strerror(rc));
        goto out;
    }
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
        *why = g_strdup_printf("socket: %s", g_strerror(errno));
        goto out;
    }
    /* On Linux the send timeout bounds connect() too. */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        *why = g_strdup_printf("cannot connect to %s port %s: %s (is the server running with "
                               "[metrics] enable = true? serve.sh turns it on; pgnfs serve needs "
                               "--set metrics.enable=true)",
                               host, port, g_strerror(errno));
        goto out;
    }
    char *req = g_strdup_printf("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n"
                                "Accept: text/plain\r\n\r\n",
                                path, host);
    size_t len = strlen(req), off = 0;
    while (off < len) {
        ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    g_free(req);
    if (off < len) {
        *why = g_strdup_printf("sending the request: %s", g_strerror(errno));
        goto out;
    }
    in = g_string_sized_new(65536);
    for (;;) {
        char buf[16384];
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *why = g_strdup_printf("reading the answer: %s", g_strerror(errno));
            goto out;
        }
        if (n == 0)
            break;
        if (in->len + (size_t)n > PGNFS_STATS_BODY_MAX) {
            *why = g_strdup("the answer is too large for a metrics page");
            goto out;
        }
        g_string_append_len(in, buf, n);
    }
    char *sep = strstr(in->str, "\r\n\r\n");
    if (strncmp(in->str, "HTTP/1.", 7) != 0 || !sep) {
        *why = g_strdup("the answer is not HTTP");
        goto out;
    }
    if (strncmp(in->str + 8, " 200", 4) != 0) {
        *why =
            g_strdup_printf("the server answered '%.*s'", (int)strcspn(in->str, "\r\n"), in->str);
        goto out;
    }
    body = g_strdup(sep + 4);
out:
    if (in)
        g_string_free(in, TRUE);
    if (ai)
        freeaddrinfo(ai);
    if (fd >= 0)
        close(fd);
    g_free(host);
    g_free(port);
    g_free(path);
    return body;
}

/* ---- samples ------------------------------------------------------------------------ */

/* Parse a page into s. Lines that do not parse are skipped. */
static void pgnfs_sample_parse(pgnfs_sample *s, const char *text)
{
    char **lines = g_strsplit(text, "\n", -1);

    s->v = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    s->order = g_ptr_array_new();
    s->when = (double)g_get_monotonic_time() / G_USEC_PER_SEC;
    for (char **l = lines; *l; l++) {
        char *sp = strrchr(*l, ' ');
        if (**l == '#' || !**l || !sp)
            continue;
        char *end = NULL;
        double v = g_ascii_strtod(sp + 1, &end);
        if (end == sp + 1)
            continue;
        char *key = g_strndup(*l, (size_t)(sp - *l));
        double *pv = g_hash_table_lookup(s->v, key);
        if (pv) { /* a repeated line: the last one counts */
            *pv = v;
            g_free(key);
            continue;
        }
        pv = g_new(double, 1);
        *pv = v;
        g_hash_table_insert(s->v, key, pv);
        g_ptr_array_add(s->order, key);
    }
    g_strfreev(lines);
}

static void pgnfs_sample_clear(pgnfs_sample *s)
{
    if (s->order)
        g_ptr_array_free(s->order, TRUE);
    if (s->v)
        g_hash_table_destroy(s->v);
    s->order = NULL;
    s->v = NULL;
}

/* The value of key in s (0 when absent; *found says which). */
static double pgnfs_get(const pgnfs_sample *s, const char *key, bool *found)
{
    const double *v = s && s->v ? g_hash_table_lookup(s->v, key) : NULL;

    if (found)
        *found = v != NULL;
    return v ? *v : 0;
}

/* The value of label `label` in key ("name{a="x",b="y"}") into buf. */
static bool pgnfs_label(const char *key, const char *label, char *buf, size_t size)
{
    char *pat = g_strdup_printf("%s=\"", label);
    const char *p = strstr(key, pat);
    bool ok = false;

    if (p) {
        p += strlen(pat);
        size_t n = strcspn(p, "\"");
        if (n < size) {
            memcpy(buf, p, n);
            buf[n] = '\0';
            ok = true;
        }
    }
    g_free(pat);
    return ok;
}

/* ---- figures ---------------------------------------------------------------------------- */

typedef struct {
    char prog[32], proc[32];
    double calls, rate, round_trips, errors;
    double p50, p90, p99, avg;
} pgnfs_proc_row;

/* Percentile q of a histogram: bounds[i] seconds, cum[i] cumulative counts. */
static double pgnfs_percentile(const double *bounds, const double *cum, unsigned n, double q)
{
    double total = n ? cum[n - 1] : 0, rank = q * total, lo = 0, below = 0;

    if (total <= 0)
        return NAN;
    for (unsigned i = 0; i < n; i++) {
        if (cum[i] >= rank) {
            if (isinf(bounds[i]))
                return lo; /* beyond the last bound: say the bound */
            double in = cum[i] - below;
            return in > 0 ? lo + (bounds[i] - lo) * (rank - below) / in : bounds[i];
        }
        lo = isinf(bounds[i]) ? lo : bounds[i];
        below = cum[i];
    }
    return lo;
}

/* Histogram of (prog, proc) in cur minus prev (prev may be NULL). */
static unsigned pgnfs_histogram(const pgnfs_sample *cur, const pgnfs_sample *prev, const char *prog,
                                const char *proc, double bounds[32], double cum[32])
{
    GHashTableIter it;
    gpointer k, v;
    char *prefix = g_strdup_printf(
        "pgnfs_rpc_duration_seconds_bucket{prog=\"%s\",proc=\"%s\",le=", prog, proc);
    unsigned n = 0;

    g_hash_table_iter_init(&it, cur->v);
    while (g_hash_table_iter_next(&it, &k, &v) && n < 32) {
        char le[32];
        if (!g_str_has_prefix(k, prefix) || !pgnfs_label(k, "le", le, sizeof le))
            continue;
        bounds[n] = strcmp(le, "+Inf") == 0 ? INFINITY : g_ascii_strtod(le, NULL);
        cum[n] = *(double *)v - pgnfs_get(prev, k, NULL);
        n++;
    }
    g_free(prefix);
    /* Sort by bound (insertion sort: about twenty buckets). */
    for (unsigned i = 1; i < n; i++) {
        for (unsigned j = i; j > 0 && bounds[j - 1] > bounds[j]; j--) {
            double t = bounds[j];
            bounds[j] = bounds[j - 1];
            bounds[j - 1] = t;
            t = cum[j];
            cum[j] = cum[j - 1];
            cum[j - 1] = t;
        }
    }
    return n;
}

static gint pgnfs_row_cmp(gconstpointer a, gconstpointer b)
{
    const pgnfs_proc_row *x = a, *y = b;

    if (x->calls != y->calls)
        return x->calls < y->calls ? 1 : -1;
    return strcmp(x->proc, y->proc);
}

/* "12.345" ms, or "-" when unknown. */
static void pgnfs_ms(char *buf, size_t size, double seconds)
{
    if (isnan(seconds))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.3f", seconds * 1000);
}

/* "1.5 MiB", "512 B". */
static void pgnfs_bytes(char *buf, size_t size, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    unsigned u = 0;

    while (bytes >= 1024 && u + 1 < G_N_ELEMENTS(units)) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

/* cur minus prev of key (prev NULL: cur's value). */
static double pgnfs_delta(const pgnfs_sample *cur, const pgnfs_sample *prev, const char *key)
{
    return pgnfs_get(cur, key, NULL) - pgnfs_get(prev, key, NULL);
}

/* The per-procedure table; returns the calls and round trips of all rows. */
static void pgnfs_stats_procs(const pgnfs_sample *cur, const pgnfs_sample *prev, double dt,
                              double *calls, double *round_trips)
{
    GArray *rows = g_array_new(FALSE, TRUE, sizeof(pgnfs_proc_row));
    double total_sum = 0;

    *calls = *round_trips = 0;
    for (unsigned i = 0; i < cur->order->len; i++) {
        const char *k = g_ptr_array_index(cur->order, i);
        pgnfs_proc_row r = {0};
        if (!g_str_has_prefix(k, "pgnfs_rpc_calls_total{") ||
            !pgnfs_label(k, "prog", r.prog, sizeof r.prog) ||
            !pgnfs_label(k, "proc", r.proc, sizeof r.proc))
            continue;
        r.calls = pgnfs_delta(cur, prev, k);
        if (r.calls <= 0)
            continue;
        r.rate = r.calls / dt;
        char *key = g_strdup_printf("{prog=\"%s\",proc=\"%s\"}", r.prog, r.proc);
        char *rt = g_strconcat("pgnfs_db_round_trips_total", key, NULL);
        char *er = g_strconcat("pgnfs_rpc_errors_total", key, NULL);
        char *sum = g_strconcat("pgnfs_rpc_duration_seconds_sum", key, NULL);
        r.round_trips = pgnfs_delta(cur, prev, rt);
        r.errors = pgnfs_delta(cur, prev, er);
        double s = pgnfs_delta(cur, prev, sum);
        r.avg = s / r.calls;
        double bounds[32], cum[32];
        unsigned n = pgnfs_histogram(cur, prev, r.prog, r.proc, bounds, cum);
        r.p50 = pgnfs_percentile(bounds, cum, n, 0.50);
        r.p90 = pgnfs_percentile(bounds, cum, n, 0.90);
        r.p99 = pgnfs_percentile(bounds, cum, n, 0.99);
        g_free(key);
        g_free(rt);
        g_free(er);
        g_free(sum);
        g_array_append_val(rows, r);
        *calls += r.calls;
        *round_trips += r.round_trips;
        total_sum += s;
    }
    g_array_sort(rows, pgnfs_row_cmp);

    printf("%-6s %-12s %9s %9s %8s %8s %8s %8s %7s %7s\n", "prog", "procedure", "ops/s", "calls",
           "avg_ms", "p50_ms", "p90_ms", "p99_ms", "rt/call", "rpc_err");
    for (unsigned i = 0; i < rows->len; i++) {
        const pgnfs_proc_row *r = &g_array_index(rows, pgnfs_proc_row, i);
        char avg[32], p50[32], p90[32], p99[32];
        pgnfs_ms(avg, sizeof avg, r->avg);
        pgnfs_ms(p50, sizeof p50, r->p50);
        pgnfs_ms(p90, sizeof p90, r->p90);
        pgnfs_ms(p99, sizeof p99, r->p99);
        printf("%-6s %-12s %9.1f %9.0f %8s %8s %8s %8s %7.2f %7.0f\n", r->prog, r->proc, r->rate,
               r->calls, avg, p50, p90, p99, r->round_trips / r->calls, r->errors);
    }
    if (rows->len == 0) {
        printf("(no calls %s)\n", prev ? "in this interval" : "yet");
    } else {
        char avg[32];
        pgnfs_ms(avg, sizeof avg, total_sum / *calls);
        printf("%-19s %9.1f %9.0f %8s %35.2f\n", "all", *calls / dt, *calls, avg,
               *round_trips / *calls);
    }
    g_array_free(rows, TRUE);
}

/* "NAME=N NAME=N" of the series prefix{label="NAME"} that moved, skipping `skip`. */
static void pgnfs_stats_moved(const pgnfs_sample *cur, const pgnfs_sample *prev, const char *prefix,
                              const char *label, const char *skip, GString *out)
{
    for (unsigned i = 0; i < cur->order->len; i++) {
        const char *k = g_ptr_array_index(cur->order, i);
        char name[64];
        if (!g_str_has_prefix(k, prefix) || !pgnfs_label(k, label, name, sizeof name) ||
            (skip && strcmp(name, skip) == 0))
            continue;
        double d = pgnfs_delta(cur, prev, k);
        if (d > 0)
            g_string_append_printf(out, "%s%s=%.0f", out->len ? " " : "", name, d);
    }
}

/* The caches: hit rate of the lookups in the period, how many of them
 * waited for another request's fetch, how full. */
static void pgnfs_stats_caches(const pgnfs_sample *cur, const pgnfs_sample *prev, GString *out)
{
    for (unsigned i = 0; i < cur->order->len; i++) {
        const char *k = g_ptr_array_index(cur->order, i);
        char name[64];
        if (!g_str_has_prefix(k, "pgnfs_cache_enabled{") ||
            !pgnfs_label(k, "cache", name, sizeof name))
            continue;
        if (out->len)
            g_string_append(out, "; ");
        if (pgnfs_get(cur, k, NULL) <= 0) {
            g_string_append_printf(out, "%s off", name);
            continue;
        }
        char *hit = g_strdup_printf("pgnfs_cache_hits_total{cache=\"%s\"}", name);
        char *miss = g_strdup_printf("pgnfs_cache_misses_total{cache=\"%s\"}", name);
        char *ent = g_strdup_printf("pgnfs_cache_entries{cache=\"%s\"}", name);
        char *cap = g_strdup_printf("pgnfs_cache_capacity{cache=\"%s\"}", name);
        char *wait = g_strdup_printf("pgnfs_cache_waits_total{cache=\"%s\"}", name);
        double h = pgnfs_delta(cur, prev, hit), m = pgnfs_delta(cur, prev, miss);
        double w = pgnfs_delta(cur, prev, wait);
        double e = pgnfs_get(cur, ent, NULL), c = pgnfs_get(cur, cap, NULL);
        if (h + m > 0)
            g_string_append_printf(out, "%s %.1f%% hits of %.0f lookups", name, 100.0 * h / (h + m),
                                   h + m);
        else
            g_string_append_printf(out, "%s no lookups", name);
        if (w > 0)
            g_string_append_printf(out, " (%.0f waited for another's fetch)", w);
        if (c > 0)
            g_string_append_printf(out, ", %.0f%% full", 100.0 * e / c);
        g_free(wait);
        g_free(hit);
        g_free(miss);
        g_free(ent);
        g_free(cap);
    }
}

/* The write-back buffer: the backlog now, and what moved in the period. */
static void pgnfs_stats_writeback(const pgnfs_sample *cur, const pgnfs_sample *prev, double dt)
{
    bool found;
    double on = pgnfs_get(cur, "pgnfs_writeback_enabled", &found);
    char held[32], limit[32], rate[32];

    if (!found) {
        printf("write-back   not reported by this server (it stores every WRITE before the "
               "reply)\n");
        return;
    }
    if (on <= 0) {
        printf("write-back   off: every WRITE is stored before the reply\n");
        return;
    }
    double bytes = pgnfs_get(cur, "pgnfs_writeback_bytes", NULL);
    double lim = pgnfs_get(cur, "pgnfs_writeback_limit_bytes", NULL);
    double files = pgnfs_get(cur, "pgnfs_writeback_files", NULL);
    pgnfs_bytes(held, sizeof held, bytes);
    pgnfs_bytes(limit, sizeof limit, lim);
    pgnfs_bytes(rate, sizeof rate,
                pgnfs_delta(cur, prev, "pgnfs_writeback_flushed_bytes_total") / dt);
    if (bytes > 0)
        printf("write-back   backlog %s in %.0f file%s (%.1f%% of %s), oldest %.1f s\n", held,
               files, files == 1 ? "" : "s", lim > 0 ? 100.0 * bytes / lim : 0, limit,
               pgnfs_get(cur, "pgnfs_writeback_oldest_age_seconds", NULL));
    else
        printf("write-back   backlog empty (holds up to %s)\n", limit);
    printf("             %.1f writes/s buffered, %.1f flushes/s storing %s/s, %.0f refused, "
           "%.0f failed\n",
           pgnfs_delta(cur, prev, "pgnfs_writeback_writes_total") / dt,
           pgnfs_delta(cur, prev, "pgnfs_writeback_flushes_total") / dt, rate,
           pgnfs_delta(cur, prev, "pgnfs_writeback_refused_total"),
           pgnfs_delta(cur, prev, "pgnfs_writeback_errors_total"));
}

/* File locking: locks held and waiting (every server of the file system),
 * this server's grace period, and its calls to clients in the period. */
static void pgnfs_stats_locks(const pgnfs_sample *cur, const pgnfs_sample *prev, double dt)
{
    bool found;
    double held = pgnfs_get(cur, "pgnfs_nlm_locks{state=\"held\"}", &found);
    double grace = pgnfs_get(cur, "pgnfs_nlm_grace_seconds", NULL);
    char g[64];

    if (!found) {
        printf("locks        not served by this server ([nlm] enable = false)\n");
        return;
    }
    if (pgnfs_get(cur, "pgnfs_nlm_grace_active", NULL) > 0)
        snprintf(g, sizeof g, "grace period, %.0f s left at most", grace);
    else
        snprintf(g, sizeof g, "no grace period");
    printf("locks        %.0f held, %.0f waiting; NSM state %.0f, %s\n", held,
           pgnfs_get(cur, "pgnfs_nlm_locks{state=\"waiting\"}", NULL),
           pgnfs_get(cur, "pgnfs_nlm_nsm_state", NULL), g);
    printf("             %.1f grants/s, callbacks %.1f/s sent, %.0f failed, %.0f retried, "
           "%.0f not made (to ourselves), %.0f refused\n",
           pgnfs_delta(cur, prev, "pgnfs_nlm_grants_total") / dt,
           pgnfs_delta(cur, prev, "pgnfs_nlm_callbacks_total{result=\"sent\"}") / dt,
           pgnfs_delta(cur, prev, "pgnfs_nlm_callbacks_total{result=\"failed\"}"),
           pgnfs_delta(cur, prev, "pgnfs_nlm_callbacks_total{result=\"retried\"}"),
           pgnfs_delta(cur, prev, "pgnfs_nlm_callbacks_total{result=\"self\"}"),
           pgnfs_delta(cur, prev, "pgnfs_nlm_callbacks_total{result=\"refused\"}"));
}

/* The exports: each client entry with its access and mode, sync (changes
 * on disk before the reply) or async (exports(5): the reply may come
 * first). line is scratch space. */
static void pgnfs_stats_exports(const pgnfs_sample *cur, GString *line)
{
    char path[1024], client[300], access[8], mode[8];

    g_string_truncate(line, 0);
    for (unsigned i = 0; i < cur->order->len; i++) {
        const char *k = g_ptr_array_index(cur->order, i);
        if (!g_str_has_prefix(k, "pgnfs_export_info{") ||
            !pgnfs_label(k, "path", path, sizeof path) ||
            !pgnfs_label(k, "client", client, sizeof client) ||
            !pgnfs_label(k, "access", access, sizeof access) ||
            !pgnfs_label(k, "mode", mode, sizeof mode))
            continue;
        g_string_append_printf(line, "%s%s %s(%s,%s)", line->len ? "; " : "", path, client, access,
                               mode);
    }
    printf("exports      %s\n", line->len ? line->str : "not reported by this server");
}

/* This server among the file system's servers (pgnfs_frontend_*). */
static void pgnfs_stats_frontend(const pgnfs_sample *cur, const pgnfs_sample *prev, double dt)
{
    char id[32] = "", coh[16] = "";
    bool found = false;

    for (guint i = 0; i < cur->order->len && !found; i++) {
        const char *key = g_ptr_array_index(cur->order, i);
        found = g_str_has_prefix(key, "pgnfs_frontend_info{") &&
                pgnfs_label(key, "id", id, sizeof id) &&
                pgnfs_label(key, "coherence", coh, sizeof coh);
    }
    if (!found) {
        printf("frontend     not reported by this server\n");
        return;
    }
    if (strcmp(coh, "shared") == 0 && pgnfs_get(cur, "pgnfs_frontend_solo", NULL) > 0)
        printf("frontend     #%s, coherence shared, alone so far (caches as in single mode)\n", id);
    else if (strcmp(coh, "shared") == 0)
        printf("frontend     #%s, coherence shared (%s), %.1f invalidations/s, %.1f barriers/s\n",
               id,
               pgnfs_get(cur, "pgnfs_frontend_listening", NULL) > 0
                   ? "reading invalidations"
                   : "NOT reading invalidations: caches bypassed",
               pgnfs_delta(cur, prev, "pgnfs_frontend_invalidations_total") / dt,
               pgnfs_delta(cur, prev, "pgnfs_frontend_barriers_total") / dt);
    else
        printf("frontend     #%s, coherence single (the file system's only server)\n", id);
}

/* Print one screen: cur against prev (NULL: totals since the server started). */
static void pgnfs_stats_print(const cfg *c, const char *url, const pgnfs_sample *cur,
                              const pgnfs_sample *prev)
{
    double up = pgnfs_get(cur, "pgnfs_uptime_seconds", NULL);
    double dt = prev ? cur->when - prev->when : up;
    double calls, rt, connected;
    bool found;
    GString *line = g_string_new(NULL);

    if (dt <= 0)
        dt = 1e-9;
    if (prev)
        printf("pgnfsd %s, up %.0f s: the last %.1f s\n\n", url, up, dt);
    else
        printf("pgnfsd %s, up %.0f s: totals since it started\n\n", url, up);
    pgnfs_stats_procs(cur, prev, dt, &calls, &rt);
    printf("(latencies as the server measured them; percentiles estimated from its histogram "
           "buckets)\n\n");

    connected = pgnfs_get(cur, "pgnfs_db_connected", &found);
    printf("database     %s, %.1f round trips/s (%.2f per call), calls without a connection "
           "%.0f\n",
           !found          ? "state unknown"
           : connected > 0 ? "connected"
                           : "NOT CONNECTED",
           rt / dt, calls > 0 ? rt / calls : 0,
           pgnfs_delta(cur, prev, "pgnfs_rpc_events_total{event=\"no_db\"}"));
    printf("server       %.0f workers, calls in progress %.0f, duplicate request cache %.0f "
           "replies\n",
           pgnfs_get(cur, "pgnfs_workers", NULL), pgnfs_get(cur, "pgnfs_calls_in_progress", NULL),
           pgnfs_get(cur, "pgnfs_drc_entries", NULL));
    pgnfs_stats_moved(cur, prev, "pgnfs_nfs3_replies_total{", "status", "NFS3_OK", line);
    printf("nfs errors   %s\n", line->len ? line->str : "none");
    g_string_truncate(line, 0);
    pgnfs_stats_moved(cur, prev, "pgnfs_rpc_events_total{", "event", "no_db", line);
    printf("rpc events   %s\n", line->len ? line->str : "none");
    g_string_truncate(line, 0);
    pgnfs_stats_caches(cur, prev, line);
    printf("caches       %s\n", line->len ? line->str : "not reported by this server");
    pgnfs_stats_writeback(cur, prev, dt);
    pgnfs_stats_locks(cur, prev, dt);
    pgnfs_stats_exports(cur, line);
    pgnfs_stats_frontend(cur, prev, dt);
    pgnfs_front_stats(c);
    g_string_free(line, TRUE);
}

/* One sample from url into s; false after printing why. */
static bool pgnfs_sample_take(const char *url, pgnfs_sample *s)
{
    char *why = NULL;
    char *body = pgnfs_http_get(url, &why);

    if (!body) {
        g_printerr("pgnfs stats: %s: %s\n", url, why);
        g_free(why);
        return false;
    }
    pgnfs_sample_parse(s, body);
    g_free(body);
    if (!g_hash_table_contains(s->v, "pgnfs_uptime_seconds")) {
        g_printerr("pgnfs stats: %s does not look like a pgnfsd metrics page\n", url);
        pgnfs_sample_clear(s);
        return false;
    }
    return true;
}

const char pgnfs_help_stats[] =
    "usage: pgnfs stats [--watch] [--once] [--interval S] [--url URL] [options]\n"
    "\n"
    "Live figures of a running server, from its metrics endpoint ([metrics]\n"
    "enable = true; serve.sh turns it on): per procedure, calls per second,\n"
    "latency percentiles, database round trips; NFS error statuses, the caches'\n"
    "hit rates, the write-back backlog.\n"
    "\n"
    "  --interval S   the figures of the S seconds between two samples (default 1)\n"
    "  --watch        repeat until interrupted\n"
    "  --once         one sample: totals since the server started\n"
    "  --url URL      the endpoint (default: http://[metrics] listen:port/metrics of\n"
    "                 the configuration, http://127.0.0.1:9466/metrics)\n"
    "\n"
    "examples:\n"
    "  pgnfs stats --watch\n"
    "  pgnfs stats --once --url http://10.0.0.5:9466/metrics\n";

/* pgnfs stats: see the header. */
int pgnfs_cmd_stats(const cfg *c, int argc, char **argv)
{
    char *url = NULL;
    double interval = 1.0;
    bool watch = false, once = false;
    int rc = PGNFS_EXIT_FAIL;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--watch") == 0) {
            watch = true;
        } else if (strcmp(argv[i], "--once") == 0) {
            once = true;
        } else if (strcmp(argv[i], "--url") == 0 && i + 1 < argc) {
            g_free(url);
            url = g_strdup(argv[++i]);
        } else if (strcmp(argv[i], "--interval") == 0 && i + 1 < argc) {
            char *end = NULL;
            interval = g_ascii_strtod(argv[++i], &end);
            if (!end || *end || !(interval >= 0.1 && interval <= 3600)) {
                g_printerr("pgnfs stats: --interval '%s' is not a number of seconds from 0.1 to "
                           "3600 (see pgnfs stats --help)\n",
                           argv[i]);
                g_free(url);
                return PGNFS_EXIT_USAGE;
            }
        } else if (strcmp(argv[i], "--url") == 0 || strcmp(argv[i], "--interval") == 0) {
            g_printerr("pgnfs stats: %s needs a value (see pgnfs stats --help)\n", argv[i]);
            g_free(url);
            return PGNFS_EXIT_USAGE;
        } else {
            g_printerr("pgnfs stats: unknown argument '%s' (see pgnfs stats --help)\n", argv[i]);
            g_free(url);
            return PGNFS_EXIT_USAGE;
        }
    }
    if (!url) {
        const char *host = c->metrics_listen;
        if (strcmp(host, "0.0.0.0") == 0)
            host = "127.0.0.1";
        else if (strcmp(host, "::") == 0)
            host = "::1";
        url = g_strdup_printf(strchr(host, ':') ? "http://[%s]:%u/metrics" : "http://%s:%u/metrics",
                              host, c->metrics_port);
    }

    pgnfs_sample prev = {0}, cur = {0};
    bool tty = isatty(STDOUT_FILENO);
    if (!pgnfs_sample_take(url, &cur))
        goto out;
    if (once) {
        pgnfs_stats_print(c, url, &cur, NULL);
        rc = PGNFS_EXIT_OK;
        goto out;
    }
    for (;;) {
        prev = cur;
        cur.v = NULL;
        cur.order = NULL;
        g_usleep((gulong)(interval * G_USEC_PER_SEC));
        if (!pgnfs_sample_take(url, &cur))
            goto out;
        if (watch && tty)
            fputs("\033[H\033[2J", stdout);
        /* A server that restarted in between: its counters began again. */
        bool restarted = pgnfs_get(&cur, "pgnfs_uptime_seconds", NULL) <
                         pgnfs_get(&prev, "pgnfs_uptime_seconds", NULL);
        if (restarted)
            printf("(the server restarted since the last sample)\n");
        pgnfs_stats_print(c, url, &cur, restarted ? NULL : &prev);
        fflush(stdout);
        pgnfs_sample_clear(&prev);
        if (!watch)
            break;
        if (!tty)
            printf("\n");
    }
    rc = PGNFS_EXIT_OK;
out:
    pgnfs_sample_clear(&prev);
    pgnfs_sample_clear(&cur);
    g_free(url);
    return rc;
}
