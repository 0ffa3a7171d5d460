/*
 * fuzz_dispatch.c -- the libFuzzer target over pgnfsd's request path: one
 * input is one RPC record (as the transport hands it to a worker, record
 * marks removed), given to srv_dispatch_record() exactly as a worker does:
 * call header, credentials, program/version/procedure lookup, the
 * duplicate request cache, the rpcgen argument decoders, the handler and
 * the reply encoders. The programs registered are those pgnfsd serves:
 * NFS v3, MOUNT v3, NLM v1/v3/v4, NSM v1, and the built-in portmapper's
 * PORTMAP v2 and rpcbind v3/v4 (with a mapping table like the daemon's),
 * all served where the
 * fuzzer's calls "arrive" (127.0.0.1:2049 over TCP, from 127.0.0.1:700).
 *
 * Two modes (decided once, in LLVMFuzzerInitialize):
 *
 *   no database (default)   the worker has no connection, as while the
 *                           database is down: every argument decoder runs,
 *                           NFS procedures answer NFS3ERR_JUKEBOX, MOUNT
 *                           calls are dropped. Fast (tens of thousands of
 *                           executions per second): this is the mode for
 *                           long runs over the XDR and RPC layers.
 *   PGNFS_FUZZ_CONNINFO     a real database (made a fresh file system at
 *                           start) and a real dbfs connection: handlers run
 *                           all their checks and their database calls, the
 *                           file system changes as the inputs say. Slower
 *                           (one or more round trips per input) but it
 *                           covers handle checks, name and count checks,
 *                           the errno mapping and the dbfs layer too.
 *
 * In both modes the exports are "/" for 127.0.0.1 (rw,no_root_squash) and
 * "/fz_dir" for 127.0.0.1 (ro,all_squash,secure), so squashing, read-only
 * and secure-port paths are reachable.
 *
 * NOTES
 *   State: the server context, environment, configuration and database
 *   connection are process-wide (a libFuzzer target is a process-wide
 *   function) and set up once; the reply buffer is reused. GLib criticals
 *   and warnings abort (PGNFS_FUZZ_WARNINGS=ok lets warnings through):
 *   the server warns only about its own bugs (a result it cannot encode,
 *   an errno the table does not know) and about database failures, which
 *   a client's bytes must never cause.
 */
#include "fuzz_harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "cfg.h"
#include "dbfs.h"
#include "fh.h"
#include "mnt3_program.h"
#include "nfs3_program.h"
#include "nlm4_svc.h"
#include "nsm_program.h"
#include "srv_dispatch.h"
#include "exp.h"
#include "pmap_int.h"

#define FUZZ_DATA_LEN 10000

static srv_ctx fuzz_ctx;
static pmap_table fuzz_pmap; /* the built-in portmapper's table */
static srv_program fuzz_pmap_progs[PMAP_NPROGS];
static srv_stats fuzz_stats;
static srv_env fuzz_env;
static srv_buf fuzz_out;
static cfg *fuzz_cfg;
static dbfs *fuzz_fs;
static dbfs_conn *fuzz_db;
static dbfs_info fuzz_info; /* no-database mode: a made-up file system */
static fuzz_handles fuzz_fhs;
static srv_origin fuzz_from;
static nlm4_svc *fuzz_nlm; /* NLM versions 1, 3, 4 */
static srv_program fuzz_nsm;

static void fuzz_die(const char *what, int err)
{
    fprintf(stderr, "fuzz_dispatch: %s: %s\n", what, err ? g_strerror(-err) : "failed");
    exit(1);
}

static void fuzz_handle(const dbfs_info *info, unsigned export_index, dbfs_fh fh, fuzz_fh *out)
{
    fh_encode(info, export_index, fh, out->data);
    out->len = FH_SIZE;
}

/* A fresh file system in conninfo with fz_dir, fz_file (with data), fz_link. */
static void fuzz_setup_db(const char *conninfo)
{
    dbfs_mkfs_opts mo = {.root_mode = 0777, .force = true};
    dbfs_config dc = {.conninfo = conninfo, .relatime = true};
    dbfs_cred root = {0};
    dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0777};
    dbfs_attr dir, file, link;
    dbfs_wcc wcc;
    dbfs_stable committed;
    unsigned char data[FUZZ_DATA_LEN];
    int rc;

    if ((rc = dbfs_mkfs(conninfo, &mo)) != 0)
        fuzz_die("mkfs", rc);
    if ((rc = dbfs_open(&dc, &fuzz_fs)) != 0)
        fuzz_die("open", rc);
    if ((rc = dbfs_conn_open(fuzz_fs, &fuzz_db)) != 0)
        fuzz_die("connect", rc);
    const dbfs_info *info = dbfs_get_info(fuzz_fs);
    dbfs_fh rootfh = {.ino = DBFS_ROOT_INO, .gen = info->root_gen};
    if ((rc = dbfs_mkdir(fuzz_db, &root, rootfh, "fz_dir", &sa, &dir, &wcc)) != 0)
        fuzz_die("mkdir fz_dir", rc);
    sa.mode = 0666;
    if ((rc = dbfs_create(fuzz_db, &root, rootfh, "fz_file", DBFS_CREATE_GUARDED, &sa, 0, &file,
                          &wcc)) != 0)
        fuzz_die("create fz_file", rc);
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 13 + 1);
    dbfs_fh filefh = {.ino = file.ino, .gen = file.gen};
    if ((rc = dbfs_write(fuzz_db, &root, filefh, 0, data, sizeof data, DBFS_FILE_SYNC, &committed,
                         &wcc)) != 0)
        fuzz_die("write fz_file", rc);
    if ((rc = dbfs_symlink(fuzz_db, &root, rootfh, "fz_link", "fz_file", &sa, &link, &wcc)) != 0)
        fuzz_die("symlink fz_link", rc);

    fuzz_ctx.fs = fuzz_fs;
    fuzz_ctx.info = info;
    fuzz_handle(info, 0, rootfh, &fuzz_fhs.root);
    fuzz_handle(info, 0, (dbfs_fh){dir.ino, dir.gen, 0}, &fuzz_fhs.dir);
    fuzz_handle(info, 0, filefh, &fuzz_fhs.file);
    fuzz_handle(info, 0, (dbfs_fh){link.ino, link.gen, 0}, &fuzz_fhs.link);
}

/* No database: a made-up file system, handles signed with its secret. */
static void fuzz_setup_nodb(void)
{
    fuzz_info.fsid = 0x70676e6673ull;
    fuzz_info.chunk_size = 8192;
    fuzz_info.schema_version = 1;
    fuzz_info.root_gen = 1;
    for (unsigned i = 0; i < DBFS_SECRET_LEN; i++)
        fuzz_info.secret[i] = (unsigned char)(0xa5 ^ i);
    fuzz_ctx.info = &fuzz_info;
    fuzz_handle(&fuzz_info, 0, (dbfs_fh){DBFS_ROOT_INO, 1, 0}, &fuzz_fhs.root);
    fuzz_handle(&fuzz_info, 0, (dbfs_fh){2, 7, 0}, &fuzz_fhs.dir);
    fuzz_handle(&fuzz_info, 0, (dbfs_fh){3, 7, 0}, &fuzz_fhs.file);
    fuzz_handle(&fuzz_info, 0, (dbfs_fh){4, 7, 0}, &fuzz_fhs.link);
}

/* Add a mapping to the portmapper's table (the runtime does it from its
 * listeners; here there are none). */
static void fuzz_pmap_add(uint32_t prog, uint32_t vers, uint32_t prot, unsigned port)
{
    fuzz_pmap.maps[fuzz_pmap.nmaps++] = (pmap_map){prog, vers, prot, port};
}

/* NLM (versions 1, 3, 4) and NSM, as the daemon registers them; with a
 * database the lock service is started as a server of its own. */
static void fuzz_register_locks(void)
{
    const srv_program *progs;

    fuzz_nlm = nlm4_new(fuzz_cfg, fuzz_fs);
    if (!fuzz_nlm)
        fuzz_die("the lock service", -ENOMEM);
    if (fuzz_fs && nlm4_start(fuzz_nlm, 2049) != 0)
        fuzz_die("starting the lock service", -EAGAIN);
    progs = nlm4_programs_of(fuzz_nlm);
    nsm_program(fuzz_nlm, &fuzz_nsm);
    for (int i = 0; i < 3; i++)
        if (srv_env_register(&fuzz_env, &progs[i]) < 0)
            fuzz_die("register NLM", -EINVAL);
    if (srv_env_register(&fuzz_env, &fuzz_nsm) < 0)
        fuzz_die("register NSM", -EINVAL);
}

/* NFS v3, MOUNT v3 and the portmapper's three versions, every one served
 * where the fuzzer's calls arrive: each input reaches any of them. */
static void fuzz_register_programs(void)
{
    if (pmap_init(&fuzz_pmap, "0.0.0.0") != 0)
        fuzz_die("portmapper table", -EINVAL);
    const uint32_t prots[] = {PGNFS_PMAP_IPPROTO_TCP, PGNFS_PMAP_IPPROTO_UDP};
    for (size_t i = 0; i < G_N_ELEMENTS(prots); i++) {
        uint32_t prot = prots[i];
        fuzz_pmap_add(nfs3_program.prog, nfs3_program.vers, prot, 2049);
        fuzz_pmap_add(mnt3_program.prog, mnt3_program.vers, prot, 2049);
        for (uint32_t v = PGNFS_PMAP_VERS; v <= PGNFS_RPCB_VERS4; v++)
            fuzz_pmap_add(PGNFS_PMAP_PROG, v, prot, PGNFS_PMAP_PORT);
    }
    pmap_programs(&fuzz_pmap, fuzz_pmap_progs);
    const srv_program *all[2 + PMAP_NPROGS] = {&nfs3_program, &mnt3_program};
    for (unsigned i = 0; i < PMAP_NPROGS; i++)
        all[2 + i] = &fuzz_pmap_progs[i];
    for (size_t i = 0; i < G_N_ELEMENTS(all); i++)
        if (srv_env_register(&fuzz_env, all[i]) < 0)
            fuzz_die("register a program", -EINVAL);
    fuzz_register_locks();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *overrides[] = {
        "exports./=127.0.0.1(rw,no_root_squash)",
        "exports./fz_dir=127.0.0.1(ro,all_squash,anonuid=3000,anongid=3000,secure)",
        "log.level=error",
        NULL,
    };
    const char *conninfo = getenv("PGNFS_FUZZ_CONNINFO");
    const char *warnings = getenv("PGNFS_FUZZ_WARNINGS");
    const char *seeds = getenv("PGNFS_FUZZ_SEEDS");
    char *err = NULL;

    (void)argc;
    (void)argv;
    fuzz_cfg = cfg_load(NULL, overrides, &err);
    if (!fuzz_cfg) {
        fprintf(stderr, "fuzz_dispatch: configuration: %s\n", err);
        exit(1);
    }
    log_setup(getenv("PGNFS_FUZZ_LOG") ? getenv("PGNFS_FUZZ_LOG") : "error");
    GLogLevelFlags fatal = G_LOG_LEVEL_CRITICAL;
    if (!warnings || strcmp(warnings, "ok") != 0)
        fatal |= G_LOG_LEVEL_WARNING;
    g_log_set_always_fatal(fatal);

    fuzz_ctx.cfg = fuzz_cfg;
    memcpy(fuzz_ctx.write_verf, "fuzzverf", 8);
    pthread_mutex_init(&fuzz_ctx.mounts_lock, NULL);
    if (conninfo && *conninfo)
        fuzz_setup_db(conninfo);
    else
        fuzz_setup_nodb();

    srv_stats_init(&fuzz_stats);
    fuzz_env = (srv_env){
        .ctx = &fuzz_ctx,
        .drc = srv_drc_new(256),
        .stats = &fuzz_stats,
        .rl = log_ratelimit_new(1),
    };
    fuzz_register_programs();
    struct sockaddr_in peer = {.sin_family = AF_INET, .sin_port = htons(700)};
    struct sockaddr_in local = {.sin_family = AF_INET, .sin_port = htons(2049)};
    peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    srv_origin_set(&fuzz_from, (struct sockaddr *)&peer, sizeof peer, (struct sockaddr *)&local,
                   sizeof local, true, SRV_PROGS_ALL);

    if (seeds && *seeds) {
        int n = fuzz_seeds_write_dir(&fuzz_fhs, seeds);
        if (n < 0)
            exit(1);
        fprintf(stderr, "fuzz_dispatch: %d seeds written to %s\n", n, seeds);
    }
    return 0;
}

static uint32_t fuzz_word(const unsigned char *p)
{
    uint32_t v;

    memcpy(&v, p, 4);
    return ntohl(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    srv_dispatch_result r =
        srv_dispatch_record(&fuzz_env, fuzz_db, data, size, &fuzz_from, &fuzz_out);

    if (r == SRV_DISPATCH_REPLY) {
        /* Every reply: xid, REPLY, reply_stat and at least two words more
         * (the shortest is AUTH_ERROR: reject_stat, auth_stat). */
        if (size < 8 || fuzz_out.len < 20 || fuzz_out.len % 4 != 0 || fuzz_out.len > SRV_RECORD_MAX)
            abort();
        if (fuzz_word(fuzz_out.data) != fuzz_word(data) || fuzz_word(fuzz_out.data + 4) != 1)
            abort();
    } else if (r != SRV_DISPATCH_DROP) {
        abort();
    }
    if (fuzz_out.cap > 4u * 1024u * 1024u)
        srv_buf_clear(&fuzz_out);
    return 0;
}

const fuzz_handles *fuzz_harness_handles(void)
{
    return &fuzz_fhs;
}

int fuzz_harness_has_db(void)
{
    return fuzz_db != NULL;
}
