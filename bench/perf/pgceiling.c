/*
 * pgceiling.c -- the raw PostgreSQL ceiling of the performance benchmarks
 * (bench/perf/run): how fast a plain libpq program moves the bytes of the
 * sequential workload into and out of a table shaped like pgnfs's
 * allfiles (schema/001_base.sql: inode, chunk, data bytea), with no NFS
 * and no file-system logic in between.
 *
 *   pgceiling CONNINFO write SIZE [--table T] [--inode N] [--chunk N] [--batch N]
 *                                 [--conns N]
 *       delete the rows of inode N, then time: BEGIN; COPY T (inode, chunk,
 *       data) FROM STDIN (FORMAT binary) with SIZE bytes in chunks of
 *       --chunk bytes; COMMIT (a new transaction every --batch bytes if
 *       given). With --conns N, N connections at once, each copying an
 *       equal run of the chunks in transactions of its own. Prints rows,
 *       chunk, connections, transactions, seconds, mb_s.
 *   pgceiling CONNINFO read [--table T] [--inode N] [--conns N] [--statement N]
 *       time SELECT chunk, data FROM T WHERE inode = N AND chunk in a range
 *       ORDER BY chunk, the result in binary, row by row (single-row mode),
 *       checking the bytes; with --conns N, N connections at once, each
 *       reading an equal run of the chunks; with --statement N, each run
 *       in statements of N chunks. Prints bytes, rows, connections,
 *       statements, seconds, mb_s, and backend_cpu_s: the CPU time
 *       (user + system) of the connections' backends over the reads, when
 *       they run on this machine (/proc/PID/stat readable; else -).
 *   pgceiling CONNINFO drop [--table T] [--inode N]
 *       delete the rows of inode N.
 *
 * The table defaults to allfiles itself (the runner points CONNINFO at a
 * private cluster made by `pgnfs mkfs`, so the table, its storage settings
 * and the cluster's configuration are pgnfs's own); a table that does not
 * exist is created LIKE allfiles, or with allfiles's columns if there is
 * no allfiles. The chunk size defaults to the file system's
 * (pgnfs_fs.chunk_size), the inode to 2^40 (far above any pgnfs inode).
 * The bytes are pattern.h's with seed PAT_SEED_SEQ: byte for byte what
 * `pload seqwrite` writes. MB = 10^6 bytes.
 *
 * NOTES
 *   Exit status 0, or 1 after a message on stderr naming the statement and
 *   PostgreSQL's error. Every PGresult is cleared where it is obtained.
 *   Threads: one per connection of a write or read, each with its own
 *   PGconn, connected before the clock starts and closed by the thread.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "pattern.h"

#define PC_COPY_BUF (1u << 20) /* bytes handed to PQputCopyData at a time */
#define PC_SAMPLES  64         /* bytes checked per chunk read */

typedef struct {
    const char *table;
    uint64_t inode;
    uint32_t chunk;
    uint64_t batch;
    unsigned conns;
    uint64_t statement; /* read: chunks per statement (0: the whole run) */
} pc_opts;

static double pc_now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void pc_die(PGconn *db, const char *fmt, ...)
{
    va_list ap;

    fflush(stdout);
    fputs("pgceiling: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (db)
        fprintf(stderr, ": %s", PQerrorMessage(db));
    fputc('\n', stderr);
    exit(1);
}

/* Run sql (no parameters) and check it returns `want`; the result is cleared. */
static void pc_exec(PGconn *db, const char *sql, ExecStatusType want)
{
    PGresult *r = PQexec(db, sql);

    if (PQresultStatus(r) != want) {
        fprintf(stderr, "pgceiling: %s: %s", sql, PQresultErrorMessage(r));
        PQclear(r);
        exit(1);
    }
    PQclear(r);
}

/* The table's name, quoted as an identifier (caller frees with PQfreemem). */
static char *pc_ident(PGconn *db, const char *table)
{
    char *q = PQescapeIdentifier(db, table, strlen(table));

    if (!q)
        pc_die(db, "cannot quote the table name %s", table);
    return q;
}

/* One text value of a one-row query with one text parameter; NULL if no row. */
static char *pc_value(PGconn *db, const char *sql, const char *param)
{
    const char *params[1] = {param};
    PGresult *r = PQexecParams(db, sql, param ? 1 : 0, NULL, params, NULL, NULL, 0);
    char *v = NULL;

    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        fprintf(stderr, "pgceiling: %s: %s", sql, PQresultErrorMessage(r));
        PQclear(r);
        exit(1);
    }
    if (PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
        v = strdup(PQgetvalue(r, 0, 0));
    PQclear(r);
    return v;
}

/* Make the table if it is missing; settle the chunk size. */
static void pc_prepare(PGconn *db, pc_opts *o)
{
    char *t = pc_ident(db, o->table);
    char *exists = pc_value(db, "SELECT to_regclass($1)::text", o->table);
    char *allfiles = pc_value(db, "SELECT to_regclass('allfiles')::text", NULL);
    char sql[1024];

    if (!exists) {
        if (allfiles)
            snprintf(sql, sizeof sql, "CREATE TABLE %s (LIKE allfiles INCLUDING ALL)", t);
        else
            snprintf(sql, sizeof sql,
                     "CREATE TABLE %s (inode bigint NOT NULL, chunk bigint NOT NULL CHECK "
                     "(chunk >= 0), data bytea NOT NULL, PRIMARY KEY (inode, chunk)); "
                     "ALTER TABLE %s ALTER COLUMN data SET STORAGE EXTERNAL",
                     t, t);
        pc_exec(db, sql, PGRES_COMMAND_OK);
    }
    if (o->chunk == 0) {
        char *fs = pc_value(db, "SELECT to_regclass('pgnfs_fs')::text", NULL);
        char *cs = fs ? pc_value(db, "SELECT chunk_size::text FROM pgnfs_fs", NULL) : NULL;
        if (!cs)
            pc_die(NULL, "no pgnfs file system in this database: give --chunk");
        o->chunk = (uint32_t)strtoul(cs, NULL, 10);
        free(cs);
        free(fs);
    }
    free(allfiles);
    free(exists);
    PQfreemem(t);
}

static void pc_delete(PGconn *db, const pc_opts *o)
{
    char *t = pc_ident(db, o->table);
    char sql[512], inode[32];
    const char *params[1] = {inode};
    PGresult *r;

    snprintf(sql, sizeof sql, "DELETE FROM %s WHERE inode = $1", t);
    snprintf(inode, sizeof inode, "%" PRIu64, o->inode);
    r = PQexecParams(db, sql, 1, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        fprintf(stderr, "pgceiling: %s: %s", sql, PQresultErrorMessage(r));
        PQclear(r);
        exit(1);
    }
    PQclear(r);
    PQfreemem(t);
}

static void pc_be16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}

static void pc_be32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (24 - 8 * i));
}

static void pc_be64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (56 - 8 * i));
}

static uint64_t pc_get64(const unsigned char *p)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

/* Hand buf[0 .. *len) to the COPY and empty it. */
static void pc_put(PGconn *db, unsigned char *buf, size_t *len)
{
    if (*len && PQputCopyData(db, (const char *)buf, (int)*len) != 1)
        pc_die(db, "PQputCopyData");
    *len = 0;
}

/* BEGIN; COPY t (quoted) ... FROM STDIN (FORMAT binary). */
static void pc_copy_start(PGconn *db, const char *t)
{
    char sql[512];

    pc_exec(db, "BEGIN", PGRES_COMMAND_OK);
    snprintf(sql, sizeof sql, "COPY %s (inode, chunk, data) FROM STDIN (FORMAT binary)", t);
    pc_exec(db, sql, PGRES_COPY_IN);
}

/* End the COPY in progress and COMMIT. */
static void pc_copy_end(PGconn *db)
{
    PGresult *r;

    if (PQputCopyEnd(db, NULL) != 1)
        pc_die(db, "PQputCopyEnd");
    while ((r = PQgetResult(db)) != NULL) {
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            fprintf(stderr, "pgceiling: COPY: %s", PQresultErrorMessage(r));
            PQclear(r);
            exit(1);
        }
        PQclear(r);
    }
    pc_exec(db, "COMMIT", PGRES_COMMAND_OK);
}

/* One connection's share of a write or a read: chunks [first, last). */
typedef struct {
    const pc_opts *o;
    const char *conninfo;
    uint64_t size; /* of the whole file */
    uint64_t first, last;
    pthread_barrier_t *bar;
    uint64_t rows, bytes, txns, statements;
    double end;
    double cpu; /* read: the backend's CPU seconds; < 0: unknown */
} pc_part;

static PGconn *pc_connect(const char *conninfo)
{
    PGconn *db = PQconnectdb(conninfo);

    if (PQstatus(db) != CONNECTION_OK)
        pc_die(db, "cannot connect to '%s'", conninfo);
    return db;
}

/* A thread: COPY the part's chunks in, one transaction per --batch bytes. */
static void *pc_write_part(void *arg)
{
    static const unsigned char sig[11] = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0377, '\r', '\n', 0};
    pc_part *pt = arg;
    const pc_opts *o = pt->o;
    PGconn *db = pc_connect(pt->conninfo);
    char *t = pc_ident(db, o->table);
    size_t cap = PC_COPY_BUF + o->chunk + 64, len = 0;
    unsigned char *buf = malloc(cap);
    uint64_t in_batch = 0;

    if (!buf)
        pc_die(NULL, "out of memory");
    pthread_barrier_wait(pt->bar);
    pc_copy_start(db, t);
    pt->txns = 1;
    for (uint64_t c = pt->first; c < pt->last; c++) {
        uint64_t off = c * o->chunk;
        uint32_t n = (uint32_t)(pt->size - off < o->chunk ? pt->size - off : o->chunk);
        if (len == 0 && in_batch == 0) { /* a new COPY: its header */
            memcpy(buf, sig, sizeof sig);
            pc_be32(buf + 11, 0); /* flags */
            pc_be32(buf + 15, 0); /* header extension length */
            len = 19;
        }
        unsigned char *p = buf + len;
        pc_be16(p, 3);
        pc_be32(p + 2, 8);
        pc_be64(p + 6, o->inode);
        pc_be32(p + 14, 8);
        pc_be64(p + 18, c);
        pc_be32(p + 26, n);
        pat_fill(p + 30, off, n, PAT_SEED_SEQ);
        len += 30 + (size_t)n;
        in_batch += n;
        pt->rows++;
        pt->bytes += n;
        if (len >= PC_COPY_BUF)
            pc_put(db, buf, &len);
        if (o->batch && in_batch >= o->batch && c + 1 < pt->last) {
            pc_be16(buf + len, 0xffff); /* trailer */
            len += 2;
            pc_put(db, buf, &len);
            pc_copy_end(db);
            pc_copy_start(db, t);
            in_batch = 0;
            pt->txns++;
        }
    }
    pc_be16(buf + len, 0xffff);
    len += 2;
    pc_put(db, buf, &len);
    pc_copy_end(db);
    pt->end = pc_now();
    free(buf);
    PQfreemem(t);
    PQfinish(db);
    return NULL;
}

/* The CPU seconds (user + system) process pid has used, or -1 when its
 * /proc entry cannot be read (a server on another machine). */
static double pc_cpu_of(int pid)
{
    char path[64], buf[1024], *p;
    unsigned long long ut, st;
    FILE *f;
    size_t n;

    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    if (!(f = fopen(path, "r")))
        return -1;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* After the command name's closing parenthesis: state, then fields 4
     * to 13, then utime and stime (proc(5)). */
    if (!(p = strrchr(buf, ')')) ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* One statement of a read: its rows, checked, counted into pt. */
static void pc_read_run(PGconn *db, const pc_opts *o, const char *sql, const char *const *params,
                        pc_part *pt)
{
    PGresult *r;

    if (!PQsendQueryParams(db, sql, 3, NULL, params, NULL, NULL, 1))
        pc_die(db, "%s", sql);
    if (!PQsetSingleRowMode(db))
        pc_die(db, "PQsetSingleRowMode");
    while ((r = PQgetResult(db)) != NULL) {
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_SINGLE_TUPLE) {
            uint64_t chunk = pc_get64((const unsigned char *)PQgetvalue(r, 0, 0));
            const unsigned char *data = (const unsigned char *)PQgetvalue(r, 0, 1);
            size_t n = (size_t)PQgetlength(r, 0, 1);
            uint64_t off = chunk * o->chunk;
            long long bad = pat_check(data, off, n, PAT_SEED_SEQ, PC_SAMPLES);
            if (bad >= 0) {
                PQclear(r);
                pc_die(NULL, "chunk %" PRIu64 ": wrong data at offset %" PRIu64, chunk,
                       off + (uint64_t)bad);
            }
            pt->bytes += n;
            pt->rows++;
        } else if (st != PGRES_TUPLES_OK) {
            fprintf(stderr, "pgceiling: %s: %s", sql, PQresultErrorMessage(r));
            PQclear(r);
            exit(1);
        }
        PQclear(r);
    }
}

/* A thread: SELECT the part's chunks in order (binary, row by row), checking them. */
static void *pc_read_part(void *arg)
{
    pc_part *pt = arg;
    const pc_opts *o = pt->o;
    PGconn *db = pc_connect(pt->conninfo);
    char *t = pc_ident(db, o->table);
    char sql[512], inode[32], first[32], last[32];
    const char *params[3] = {inode, first, last};
    double cpu0, cpu1;
    uint64_t to;

    snprintf(sql, sizeof sql,
             "SELECT chunk, data FROM %s WHERE inode = $1 AND chunk >= $2 AND chunk < $3 "
             "ORDER BY chunk",
             t);
    snprintf(inode, sizeof inode, "%" PRIu64, o->inode);
    pthread_barrier_wait(pt->bar);
    cpu0 = pc_cpu_of(PQbackendPID(db));
    for (uint64_t from = pt->first; from < pt->last; from = to) {
        to = o->statement && pt->last - from > o->statement ? from + o->statement : pt->last;
        snprintf(first, sizeof first, "%" PRIu64, from);
        snprintf(last, sizeof last, "%" PRIu64, to);
        pc_read_run(db, o, sql, params, pt);
        pt->statements++;
    }
    cpu1 = pc_cpu_of(PQbackendPID(db));
    pt->cpu = cpu0 < 0 || cpu1 < 0 ? -1 : cpu1 - cpu0;
    pt->end = pc_now();
    PQfreemem(t);
    PQfinish(db);
    return NULL;
}

/*
 * pc_parts -- run fn on o->conns connections at once, each on an equal
 * share of the file's chunks (size bytes); prints the totals and MB/s from
 * the moment all are connected to the moment the last is done.
 */
static void pc_parts(const char *conninfo, const pc_opts *o, uint64_t size, void *(*fn)(void *))
{
    uint64_t nchunks = (size + o->chunk - 1) / o->chunk;
    pc_part *pt = calloc(o->conns, sizeof *pt);
    pthread_t *th = calloc(o->conns, sizeof *th);
    pthread_barrier_t bar;
    uint64_t rows = 0, bytes = 0, txns = 0, statements = 0;
    double t0, t1 = 0, cpu = 0;

    if (!pt || !th)
        pc_die(NULL, "out of memory");
    pthread_barrier_init(&bar, NULL, o->conns + 1);
    for (unsigned i = 0; i < o->conns; i++) {
        pt[i] = (pc_part){.o = o,
                          .conninfo = conninfo,
                          .size = size,
                          .first = nchunks * i / o->conns,
                          .last = nchunks * (i + 1) / o->conns,
                          .bar = &bar};
        if (pthread_create(&th[i], NULL, fn, &pt[i]) != 0)
            pc_die(NULL, "pthread_create failed");
    }
    pthread_barrier_wait(&bar);
    t0 = pc_now();
    for (unsigned i = 0; i < o->conns; i++) {
        pthread_join(th[i], NULL);
        rows += pt[i].rows;
        bytes += pt[i].bytes;
        txns += pt[i].txns;
        statements += pt[i].statements;
        cpu = cpu < 0 || pt[i].cpu < 0 ? -1 : cpu + pt[i].cpu;
        t1 = pt[i].end > t1 ? pt[i].end : t1;
    }
    pthread_barrier_destroy(&bar);
    printf("bytes %" PRIu64 "\nchunk %u\nrows %" PRIu64 "\nconnections %u\n", bytes, o->chunk, rows,
           o->conns);
    if (fn == pc_write_part)
        printf("transactions %" PRIu64 "\n", txns);
    if (fn == pc_read_part)
        printf("statements %" PRIu64 "\n", statements);
    printf("seconds %.6f\nmb_s %.3f\n", t1 - t0, (double)bytes / 1e6 / (t1 - t0));
    if (fn == pc_read_part && cpu >= 0)
        printf("backend_cpu_s %.2f\n", cpu);
    else if (fn == pc_read_part)
        printf("backend_cpu_s -\n");
    free(th);
    free(pt);
}

/* The size of what is stored for the inode (for read): its last chunk's
 * end, found through the primary key (one row; the data is not read). */
static uint64_t pc_stored(PGconn *db, const pc_opts *o)
{
    char *t = pc_ident(db, o->table);
    char sql[512], inode[32];
    char *v;
    uint64_t size;

    snprintf(sql, sizeof sql,
             "SELECT (chunk * %u + length(data))::text FROM %s WHERE inode = $1 "
             "ORDER BY chunk DESC LIMIT 1",
             o->chunk, t);
    snprintf(inode, sizeof inode, "%" PRIu64, o->inode);
    v = pc_value(db, sql, inode);
    size = v ? strtoull(v, NULL, 10) : 0;
    free(v);
    PQfreemem(t);
    return size;
}

static uint64_t pc_size_arg(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);

    switch (*end) {
    case 'k':
    case 'K':
        v <<= 10, end++;
        break;
    case 'm':
    case 'M':
        v <<= 20, end++;
        break;
    case 'g':
    case 'G':
        v <<= 30, end++;
        break;
    default:
        break;
    }
    if (end == s || *end)
        pc_die(NULL, "'%s' is not a size", s);
    return v;
}

int main(int argc, char **argv)
{
    pc_opts o = {.table = "allfiles", .inode = 1ull << 40, .conns = 1};
    const char *cmd;
    uint64_t size = 0;
    int first = 3, rc;
    PGconn *db;

    if (argc < 3) {
        fputs("usage: pgceiling CONNINFO write SIZE|read|drop [--table T] [--inode N] "
              "[--chunk N] [--batch N] [--conns N] [--statement N]\n",
              stderr);
        return 2;
    }
    cmd = argv[2];
    if (!strcmp(cmd, "write")) {
        if (argc < 4)
            pc_die(NULL, "write needs a size");
        size = pc_size_arg(argv[3]);
        first = 4;
    }
    for (int i = first; i < argc; i += 2) {
        if (i + 1 >= argc)
            pc_die(NULL, "%s needs a value", argv[i]);
        if (!strcmp(argv[i], "--table"))
            o.table = argv[i + 1];
        else if (!strcmp(argv[i], "--inode"))
            o.inode = pc_size_arg(argv[i + 1]);
        else if (!strcmp(argv[i], "--chunk"))
            o.chunk = (uint32_t)pc_size_arg(argv[i + 1]);
        else if (!strcmp(argv[i], "--batch"))
            o.batch = pc_size_arg(argv[i + 1]);
        else if (!strcmp(argv[i], "--conns"))
            o.conns = (unsigned)pc_size_arg(argv[i + 1]);
        else if (!strcmp(argv[i], "--statement"))
            o.statement = pc_size_arg(argv[i + 1]);
        else
            pc_die(NULL, "unknown option %s", argv[i]);
    }
    db = PQconnectdb(argv[1]);
    if (PQstatus(db) != CONNECTION_OK)
        pc_die(db, "cannot connect to '%s'", argv[1]);
    pc_prepare(db, &o);
    if (o.chunk == 0)
        pc_die(NULL, "chunk size 0");
    if (o.conns < 1)
        pc_die(NULL, "--conns must be at least 1");
    if (!strcmp(cmd, "write")) {
        pc_delete(db, &o);
        pc_parts(argv[1], &o, size, pc_write_part);
        rc = 0;
    } else if (!strcmp(cmd, "read")) {
        size = pc_stored(db, &o);
        if (size == 0)
            pc_die(NULL, "no rows for inode %" PRIu64 " in %s: write first", o.inode, o.table);
        pc_parts(argv[1], &o, size, pc_read_part);
        rc = 0;
    } else if (!strcmp(cmd, "drop")) {
        pc_delete(db, &o);
        rc = 0;
    } else {
        pc_die(NULL, "unknown command %s (write, read, drop)", cmd);
        rc = 2;
    }
    PQfinish(db);
    return rc;
}
