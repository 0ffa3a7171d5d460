/*
 * pgcommit.c -- PostgreSQL's one-commit ceiling for the benchmark runners
 * (bench/perf/run, bench/connectathon/run): how many durable one-row
 * changes a plain libpq program gets from a cluster, each its own
 * transaction. No durable change of a file system kept in that cluster
 * can cost less than one of these, so the runners report the durable
 * paths (create, remove, rename, setattr, COMMIT) against it as well as
 * against the baselines.
 *
 *   pgcommit CONNINFO [--conns N] [--seconds S] [--table T]
 *       make table T (default pgnfs_commit_ceiling; id int primary key, n
 *       bigint) with one row per connection if it is missing; then N
 *       connections at once, for S seconds (default 2), each repeats
 *       the prepared statement UPDATE T SET n = n + 1 WHERE id = $1 on
 *       its own row, in autocommit: one transaction, one commit, per
 *       call, with the cluster's own settings (synchronous_commit as
 *       configured). Prints commits, connections, seconds, commits_s
 *       (all connections together), mean_us and median_us (one call's
 *       latency, over every call of every connection).
 *
 * The runners point CONNINFO at a database of their own on the embedded
 * cluster of the pgnfs server they measure (the same PostgreSQL, the same
 * WAL, the same disk, the same moment), never at the file system's own
 * database.
 *
 * NOTES
 *   Exit status 0, or 1 after a message on stderr naming the statement and
 *   PostgreSQL's error. Threads: one per connection, each with its own
 *   PGconn, connected before the clock starts. Latencies are kept per call
 *   (the run is short), sorted once at the end for the median.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

/* The most calls one connection records (about 1 M: far more than a
 * second of commits on any disk). */
#define PK_MAX_CALLS (1u << 20)

typedef struct {
    const char *conninfo;
    const char *table;
    unsigned id;
    double seconds;
    pthread_barrier_t *bar;
    float *lat_us; /* per call */
    size_t ncalls;
} pk_conn;

static double pk_now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void pk_die(PGconn *db, const char *fmt, ...)
{
    va_list ap;

    fflush(stdout);
    fputs("pgcommit: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (db)
        fprintf(stderr, ": %s", PQerrorMessage(db));
    fputc('\n', stderr);
    exit(1);
}

static PGconn *pk_connect(const char *conninfo)
{
    PGconn *db = PQconnectdb(conninfo);

    if (PQstatus(db) != CONNECTION_OK)
        pk_die(db, "cannot connect to '%s'", conninfo);
    return db;
}

/* Run sql and check it returns `want`; the result is cleared. */
static void pk_exec(PGconn *db, const char *sql, ExecStatusType want)
{
    PGresult *r = PQexec(db, sql);

    if (PQresultStatus(r) != want) {
        fprintf(stderr, "pgcommit: %s: %s", sql, PQresultErrorMessage(r));
        PQclear(r);
        exit(1);
    }
    PQclear(r);
}

/* The table with rows 1 .. conns. */
static void pk_prepare(const char *conninfo, const char *table, unsigned conns)
{
    PGconn *db = pk_connect(conninfo);
    char *t = PQescapeIdentifier(db, table, strlen(table));
    char sql[512];

    if (!t)
        pk_die(db, "cannot quote the table name %s", table);
    snprintf(sql, sizeof sql, "CREATE TABLE IF NOT EXISTS %s (id int PRIMARY KEY, n bigint)", t);
    pk_exec(db, sql, PGRES_COMMAND_OK);
    snprintf(sql, sizeof sql,
             "INSERT INTO %s SELECT g, 0 FROM generate_series(1, %u) g ON CONFLICT DO NOTHING", t,
             conns);
    pk_exec(db, sql, PGRES_COMMAND_OK);
    PQfreemem(t);
    PQfinish(db);
}

static void *pk_run(void *arg)
{
    pk_conn *c = arg;
    PGconn *db = pk_connect(c->conninfo);
    char *t = PQescapeIdentifier(db, c->table, strlen(c->table));
    char sql[256], id[16];
    const char *params[1] = {id};
    double end;

    if (!t)
        pk_die(db, "cannot quote the table name %s", c->table);
    snprintf(sql, sizeof sql, "UPDATE %s SET n = n + 1 WHERE id = $1", t);
    snprintf(id, sizeof id, "%u", c->id);
    PGresult *r = PQprepare(db, "one", sql, 1, NULL);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        pk_die(db, "PREPARE %s", sql);
    PQclear(r);
    pthread_barrier_wait(c->bar);
    end = pk_now() + c->seconds;
    while (c->ncalls < PK_MAX_CALLS) {
        double t0 = pk_now();

        r = PQexecPrepared(db, "one", 1, params, NULL, NULL, 0);
        if (PQresultStatus(r) != PGRES_COMMAND_OK || strcmp(PQcmdTuples(r), "1") != 0)
            pk_die(db, "%s (id %s)", sql, id);
        PQclear(r);
        double t1 = pk_now();
        c->lat_us[c->ncalls++] = (float)((t1 - t0) * 1e6);
        if (t1 >= end)
            break;
    }
    PQfreemem(t);
    PQfinish(db);
    return NULL;
}

static int pk_cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const char *table = "pgnfs_commit_ceiling";
    unsigned conns = 1;
    double seconds = 2.0;

    if (argc < 2 || argv[1][0] == '-') {
        fputs("usage: pgcommit CONNINFO [--conns N] [--seconds S] [--table T]\n", stderr);
        return 2;
    }
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 >= argc)
            pk_die(NULL, "%s needs a value", argv[i]);
        if (!strcmp(argv[i], "--conns"))
            conns = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--seconds"))
            seconds = strtod(argv[i + 1], NULL);
        else if (!strcmp(argv[i], "--table"))
            table = argv[i + 1];
        else
            pk_die(NULL, "unknown option %s", argv[i]);
    }
    if (conns < 1 || conns > 1024)
        pk_die(NULL, "--conns must be 1 .. 1024");
    if (!(seconds > 0))
        pk_die(NULL, "--seconds must be positive");
    pk_prepare(argv[1], table, conns);

    pk_conn *c = calloc(conns, sizeof *c);
    pthread_t *th = calloc(conns, sizeof *th);
    pthread_barrier_t bar;
    if (!c || !th)
        pk_die(NULL, "out of memory");
    pthread_barrier_init(&bar, NULL, conns + 1);
    for (unsigned i = 0; i < conns; i++) {
        c[i] = (pk_conn){
            .conninfo = argv[1], .table = table, .id = i + 1, .seconds = seconds, .bar = &bar};
        c[i].lat_us = malloc(PK_MAX_CALLS * sizeof *c[i].lat_us);
        if (!c[i].lat_us || pthread_create(&th[i], NULL, pk_run, &c[i]) != 0)
            pk_die(NULL, "cannot start connection %u", i + 1);
    }
    pthread_barrier_wait(&bar);
    double t0 = pk_now();
    for (unsigned i = 0; i < conns; i++)
        pthread_join(th[i], NULL);
    double wall = pk_now() - t0;

    size_t total = 0, at = 0;
    double sum = 0;
    for (unsigned i = 0; i < conns; i++)
        total += c[i].ncalls;
    float *all = malloc((total ? total : 1) * sizeof *all);
    if (!all)
        pk_die(NULL, "out of memory");
    for (unsigned i = 0; i < conns; i++) {
        for (size_t k = 0; k < c[i].ncalls; k++) {
            all[at++] = c[i].lat_us[k];
            sum += c[i].lat_us[k];
        }
        free(c[i].lat_us);
    }
    qsort(all, total, sizeof *all, pk_cmp_float);
    printf("commits %zu\nconnections %u\nseconds %.6f\ncommits_s %.3f\n", total, conns, wall,
           wall > 0 ? (double)total / wall : 0.0);
    printf("mean_us %.3f\nmedian_us %.3f\n", total ? sum / (double)total : 0.0,
           total ? (double)all[total / 2] : 0.0);
    free(all);
    free(th);
    free(c);
    pthread_barrier_destroy(&bar);
    return 0;
}
