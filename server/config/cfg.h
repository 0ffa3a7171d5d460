/*
 * cfg.h -- pgnfs configuration: one GKeyFile (pgnfs.conf), every key also
 * settable on the command line (--set group.key=value, plus shortcuts) and
 * by environment (PGNFS_GROUP_KEY=value, e.g. PGNFS_DATABASE_CONNINFO).
 *
 * Precedence, lowest to highest: built-in defaults, the file, environment,
 * command line. Unknown groups or keys, and values that do not parse, are
 * errors that name the key and what is wrong.
 *
 * Exports: group [exports], one key per exported path, the value in
 * /etc/exports syntax: `/ = 127.0.0.1(rw,no_root_squash) 10.0.0.0/8(ro) *(ro)`.
 * Environment: PGNFS_EXPORTS="PATH SPEC; PATH SPEC"; command line:
 * --set exports.PATH=SPEC or --export "PATH SPEC". A later layer replaces
 * an export of the same path. With no export configured anywhere the
 * default is `/ = 127.0.0.1(rw) ::1(rw)` (local clients, root squashed).
 * cfg.exports is sorted by path (a file handle stores the index).
 *
 * NOTES
 *   A cfg is immutable once loaded; all strings are owned by it and freed
 *   by cfg_free().
 */
#ifndef PGNFS_CFG_H
#define PGNFS_CFG_H

#include <stdbool.h>
#include <stdint.h>

#include "dbfs.h"

/* One client pattern of an export line: "10.0.0.0/8(rw,no_root_squash)". */
typedef enum { CFG_CLIENT_ANY, CFG_CLIENT_NET, CFG_CLIENT_HOST } cfg_client_kind;

typedef struct {
    cfg_client_kind kind;
    int family; /* AF_INET or AF_INET6 (CFG_CLIENT_NET) */
    unsigned char addr[16];
    unsigned prefix;  /* prefix length in bits */
    char *host;       /* CFG_CLIENT_HOST: a host name, resolved per check */
    bool rw;          /* default false (ro) */
    bool root_squash; /* default true */
    bool all_squash;  /* default false */
    bool secure;      /* default false: privileged source port required if true */
    /* exports(5) `async`: replies may precede durability (the client's
     * changes commit with synchronous_commit off); default false (`sync`). */
    bool async;
    uint32_t anonuid, anongid; /* default 65534 */
} cfg_client;

typedef struct {
    char *path; /* "/" or an absolute path inside the file system */
    cfg_client *clients;
    unsigned nclients;
} cfg_export;

typedef struct {
    /* [database] */
    char *conninfo; /* "" = the embedded private cluster */
    /* [embedded] */
    char *data_dir;  /* never empty: "" in every layer = cfg_default_data_dir() */
    char *pg_bindir; /* "" = find initdb/pg_ctl */
    char *pg_user;   /* OS user the cluster runs as when started by root; default "postgres" */
    bool pg_restart; /* `restart`: restart the cluster when it stops while serving; default true */
    /* shared_buffers: PostgreSQL's buffer pool, bytes; 0 = auto (default:
     * cfg_pg_buffers_auto of cfg_mem_total) */
    unsigned pg_buffers;
    /* [server] */
    char *listen;                         /* address; default "0.0.0.0" */
    unsigned port;                        /* NFS and MOUNT, TCP and UDP; default 2049 */
    unsigned threads;                     /* worker threads = database connections; default 16 */
    bool udp;                             /* default true */
    bool rpcbind;                         /* register with a running rpcbind; default true */
    unsigned max_connections;             /* TCP clients at once; default 1024 */
    unsigned max_connections_per_address; /* from one client address; 0 = no cap; default 128 */
    unsigned drc_entries;                 /* duplicate request cache size; default 4096 */
    char *portmap;                        /* built-in portmapper: auto, on, off; default auto */
    unsigned portmap_port;                /* its port, TCP and UDP; default 111 */
    /* [metrics] (Prometheus text format over HTTP, met.c) */
    bool metrics_enable;   /* default false */
    char *metrics_listen;  /* address; default "127.0.0.1" */
    unsigned metrics_port; /* default 9466; 0 = a free port (logged) */
    /* [log] slow operations */
    unsigned slow_ms; /* log calls that take longer; 0 = off; default 1000 */
    /* [log] */
    char *log_level; /* error, warning, info, debug; default info */
    /* [storage] (used by mkfs; checked against the database at start) */
    char *storage;       /* single, inversion, hybrid; default single */
    unsigned chunk_size; /* default 8192 */
    char *encoding;      /* binary, base64; default binary */
    bool relatime;       /* default true */
    /* hybrid: bytes past which a file gets its own table; default 65536 */
    unsigned hybrid_threshold;
    /* The space guard: the directory whose file system holds the
     * database ("" = the embedded cluster's data_dir, none for a
     * [database] conninfo; "none" = no guard), and the MiB kept free there
     * for PostgreSQL (0 = derived from the disk: emb_reserve_for_disk) */
    char *space_path;
    unsigned reserve_mb;
    /* The new file system's root directory (mkfs): owner, group, mode;
     * default 0, 0, 01777 (like /tmp: root-squashed clients, the default,
     * can create files in a new file system at once, each keeping its own) */
    unsigned root_uid, root_gid, root_mode;
    /* [cache] The metadata caches (stat: inode -> attributes; naming:
     * (directory, name) -> inode, negative entries too) and the chunk
     * buffer cache (file data). All on by default; all exact as long as
     * this server is the database's only writer (see pgnfs.conf.example). */
    bool stat_cache;      /* [cache] stat; default true */
    unsigned stat_size;   /* [cache] stat_size, entries; default 65536 */
    bool name_cache;      /* [cache] naming; default true */
    unsigned naming_size; /* [cache] naming_size, entries; default 65536 */
    bool buffer_cache;    /* [cache] buffer; default true */
    unsigned buffer_size; /* [cache] buffer_size, bytes; 0 = auto (default:
                           * cfg_buffer_auto of cfg_mem_total) */
    /* [cache] small_file_size: files up to this many bytes are kept whole
     * in the small-file cache (0: off; default 64 KiB); small_files: its
     * bound in bytes, 0 = auto (default: cfg_small_auto) */
    unsigned small_file_size;
    unsigned small_files;
    /* [cache] coherence: single (the only server of its file system,
     * checked at start) or shared (several servers, caches kept coherent
     * through the database); default single */
    char *coherence;
    /* [writeback] UNSTABLE writes held in memory until COMMIT (dbfs_wb.c) */
    bool wb_enable;        /* enable; default true */
    unsigned wb_size;      /* buffer_size: bytes held at most; default 256 MiB */
    unsigned wb_file_size; /* file_flush_size: a file holding this much is
                            * flushed; default 8 MiB */
    unsigned wb_age_ms;    /* max_age_ms: data older is flushed; default 2000 */
    /* [nlm] file locking (NLM v4 and NSM, server/nlm, server/nsm) */
    bool nlm_enable;               /* enable; default true */
    unsigned nlm_grace;            /* grace: seconds after a restart; 0 = none; default 45 */
    char *nlm_server_name;         /* server_name: "" = the host's name */
    unsigned nlm_max_waiters_host; /* max_waiters_per_host: blocked requests; default 1024 */
    unsigned nlm_max_waiters;      /* max_waiters: blocked requests in all; default 16384 */
    /* [xform] transformation chains on file data (xform/xf.h) */
    char *xform_root_chain;    /* root_chain: the root's chain; "" = keep the file system's */
    char *xform_key_file;      /* key_file: aes-256-gcm's key; "" = none */
    char *xform_plugin_dir;    /* plugin_dir: NAME.so plug-ins; "" = none */
    unsigned xform_zstd_level; /* zstd_level: "zstd" without level=; default 3 */
    /* [snapshot] snapshots (dbfs_snap.h) */
    unsigned snap_every; /* every: seconds between scheduled snapshots; 0 = none */
    unsigned snap_keep;  /* keep: scheduled snapshots kept; 0 = all */
    char *snap_prefix;   /* prefix: of their names, then the UTC time; default "auto-" */
    bool snap_visible;   /* visible: .snapshots listed in an export's root; default false */
    /* [exports] */
    cfg_export *exports;
    unsigned nexports;
    /* The cfg_origin of every key, one byte per key of cfg_keys.c's
     * table (cfg_key_origin). */
    unsigned char *explicit_keys;
} cfg;

/*
 * cfg_load -- build a configuration from defaults, `path` (may be NULL: no
 * file), the environment and `overrides` (NULL-terminated "group.key=value"
 * strings, may be NULL). Returns the cfg, or NULL with *err set to a
 * malloc'd message naming the file, key and problem (caller frees).
 */
cfg *cfg_load(const char *path, const char *const *overrides, char **err);
/* cfg_free -- free c and everything in it (NULL is fine). */
void cfg_free(cfg *c);

/*
 * cfg_default_data_dir -- the embedded cluster's directory when no layer
 * sets [embedded] data_dir (or sets it empty): /var/lib/pgnfs for root
 * (the cluster then runs as an unprivileged user, who must reach it),
 * else $XDG_DATA_HOME/pgnfs, or ~/.local/share/pgnfs when XDG_DATA_HOME
 * is unset or not absolute (home from $HOME, else the passwd entry).
 * The same for every command and every working directory, so the admin
 * commands find what `pgnfs serve` (and serve.sh) made. Returns a
 * g_malloc'd path; falls back to "./pgnfs-data" only for a user with no
 * home at all. Reads the environment on every call.
 */
char *cfg_default_data_dir(void);

/* cfg_key_at -- the i-th key of the configuration (every group but
 * [exports], whose keys are paths): true and *group, *key (static
 * strings), or false past the last. Cannot fail. */
bool cfg_key_at(unsigned i, const char **group, const char **key);

/* Where a key's value came from: the layer that set it last. */
typedef enum {
    CFG_ORIGIN_DEFAULT = 0, /* built in */
    CFG_ORIGIN_FILE,        /* the configuration file */
    CFG_ORIGIN_ENV,         /* PGNFS_GROUP_KEY */
    CFG_ORIGIN_CMDLINE,     /* --set group.key=value or a shortcut */
} cfg_origin;

/* cfg_key_origin -- the layer that set [group] key last; DEFAULT for an
 * unknown key. Cannot fail. */
cfg_origin cfg_key_origin(const cfg *c, const char *group, const char *key);

/* cfg_is_explicit -- was [group] key set by the file, the environment or
 * the command line (rather than left at its default)? False for an
 * unknown key. Cannot fail. */
bool cfg_is_explicit(const cfg *c, const char *group, const char *key);

/*
 * cfg_check_storage -- does the configuration agree with the file system
 * `info` describes? Only [storage] keys set explicitly count (schema,
 * chunk_size, encoding, and hybrid_threshold for a hybrid file system): a
 * server started with one that contradicts the database must refuse to
 * start. Returns 0, or -1 with *err (malloc'd; caller frees) naming the
 * key, where it was set, the configured value, the file system's, and
 * what to do (cfg_check.c).
 */
int cfg_check_storage(const cfg *c, const dbfs_info *info, char **err);

/*
 * cfg_check_root -- does the configuration agree with the existing root
 * directory, whose attributes are *root? [storage] root_mode, root_uid
 * and root_gid shape a new file system's root only; one set explicitly to
 * something the root does not have is refused (a root_mode of 0 means
 * 0755, as for mkfs). Returns 0, or -1 with *err (malloc'd; caller frees)
 * naming the key, where it was set, both values and what to do.
 */
int cfg_check_root(const cfg *c, const dbfs_attr *root, char **err);

/*
 * cfg_check_fs -- cfg_check_storage and cfg_check_root for the open file
 * system fs (reads its root directory's attributes over a connection of
 * its own). Returns 0 when the configuration agrees; -EINVAL when it
 * contradicts the file system; another negative errno when the root
 * cannot be read (-EAGAIN: the database is unreachable). On failure *err
 * (malloc'd; caller frees) says why (cfg_dbfs.c).
 */
int cfg_check_fs(const cfg *c, dbfs *fs, char **err);

/*
 * cfg_dbfs_config -- the dbfs_config that c asks for, to serve the
 * database at `conninfo` (c's own, or the embedded cluster's): time
 * policy, the space figures' directory (c's data_dir when c names no
 * database, i.e. the embedded cluster; none otherwise), the three
 * caches' bounds and the write-back buffer's (0 for one switched off).
 * *out points into c and conninfo, which must outlive its use (dbfs_open
 * copies what it keeps). Cannot fail (cfg_dbfs.c).
 */
void cfg_dbfs_config(const cfg *c, const char *conninfo, dbfs_config *out);

/*
 * The data caches' sizes when the configuration says "auto" (cfg_mem.c):
 * cfg_mem_total -- the bytes of memory this process may use: the
 * machine's MemTotal, or its cgroup's memory limit if lower; 0 if
 * unknown. cfg_buffer_auto -- the chunk buffer cache's bound for mem
 * bytes of memory: an eighth, within 64 MiB .. 4 GiB (64 MiB for mem 0).
 * cfg_small_auto -- the small-file cache's: a sixty-fourth, within
 * 16 MiB .. 1 GiB. Cannot fail.
 */
#define CFG_BUFFER_AUTO_DIV 8
#define CFG_BUFFER_AUTO_MIN (64ull << 20)
#define CFG_BUFFER_AUTO_MAX (4ull << 30)
#define CFG_SMALL_AUTO_DIV  64
#define CFG_SMALL_AUTO_MIN  (16ull << 20)
#define CFG_SMALL_AUTO_MAX  (1ull << 30)
/* cfg_pg_buffers_auto -- the embedded cluster's shared_buffers: a
 * thirty-second, within 128 MiB (PostgreSQL's default) .. 1 GiB. */
#define CFG_PG_BUFFERS_AUTO_DIV 32
#define CFG_PG_BUFFERS_AUTO_MIN (128ull << 20)
#define CFG_PG_BUFFERS_AUTO_MAX (1ull << 30)
uint64_t cfg_mem_total(void);
uint64_t cfg_buffer_auto(uint64_t mem);
uint64_t cfg_small_auto(uint64_t mem);
uint64_t cfg_pg_buffers_auto(uint64_t mem);

/*
 * cfg_from_cmdline -- the configuration a program's command line asks for:
 * removes the options it knows from *argc and *argv (--config FILE, --set
 * GROUP.KEY=VALUE, and the shortcuts --port N, --listen ADDR, --data DIR,
 * --conninfo STR, --threads N, --log-level LEVEL, --export "PATH SPEC")
 * and calls cfg_load(). Returns the cfg, or NULL with *err set (caller
 * frees) for an unknown value or a file that does not load. Options it does
 * not know are left in argv for the caller.
 */
cfg *cfg_from_cmdline(int *argc, char ***argv, char **err);

/*
 * cfg_parse_export -- parse the export of `path` whose clients are `spec`
 * ("CLIENT(OPTS) CLIENT(OPTS) ...") into *out (caller frees with
 * cfg_export_clear). Returns 0, or -1 with *err set (caller frees) and
 * *out empty.
 */
int cfg_parse_export(const char *path, const char *spec, cfg_export *out, char **err);
/* cfg_export_clear -- free what e holds and zero it (e itself stays). */
void cfg_export_clear(cfg_export *e);

#endif /* PGNFS_CFG_H */
