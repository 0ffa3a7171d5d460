/*
 * dbfs_locks.h -- the lock manager's state in the database: NLM
 * byte-range locks, share reservations and monitored hosts, as dbfs
 * serves them (dbfs_lock.c, dbfs_lock_watch.c, dbfs_lock_admin.c).
 *
 * NOTES
 *   Part of dbfs's public API beside dbfs.h, which it builds on; the
 *   lock manager (server/nlm), `pgnfs locks` and their tests include it.
 */
#ifndef PGNFS_DBFS_LOCKS_H
#define PGNFS_DBFS_LOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dbfs.h"

/* --- file locks (dbfs_lock.c, dbfs_lock_watch.c) ------------------------
 * The lock manager's state (NLM byte-range locks, DOS share reservations,
 * the hosts NSM monitors) lives in the database (schema/003_locks.sql),
 * so every server on one file system shares it; its rules are the SQL
 * functions of schema/functions/85_lock.sql, which these calls run, one
 * round trip and one transaction each. dbfs knows nothing of NLM: it
 * speaks owners, byte ranges and outcomes.
 *
 * Ranges are bytes [start, end) with end DBFS_LOCK_EOF for "to the end of
 * the file"; no byte past DBFS_LOCK_OFFSET_MAX can be named (a range that
 * reaches it is taken as going to the end). A lock call on a file whose
 * (inode, generation) is gone answers -ESTALE; removing a file drops its
 * locks. Whatever releases a range grants, in the same transaction, the
 * blocked requests it held up: those of the calling server come back in
 * dbfs_lock_result.grants for it to call back; those of other servers are
 * marked and their servers told (dbfs_lock_watch_drain, dbfs_lock_take). */

#define DBFS_LOCK_NAME_MAX   1024 /* a host's name (NLM caller_name) */
#define DBFS_LOCK_OH_MAX     1024 /* an owner handle */
#define DBFS_LOCK_NOTIFY_MAX 8192 /* what a blocked request keeps for its callback */
#define DBFS_LOCK_OFFSET_MAX ((uint64_t)INT64_MAX)
#define DBFS_LOCK_EOF        UINT64_MAX
#define DBFS_LOCK_NO_SVID    (-1) /* a share reservation's owner */
/* Share reservation bits (access wanted, access denied to others). */
#define DBFS_SHARE_READ  1u
#define DBFS_SHARE_WRITE 2u

typedef enum {
    DBFS_LOCK_GRANTED = 0,
    DBFS_LOCK_DENIED = 1,   /* another owner's lock conflicts (holder filled) */
    DBFS_LOCK_BLOCKED = 2,  /* queued: granted later, through grants */
    DBFS_LOCK_GRACE = 3,    /* the server is in its grace period */
    DBFS_LOCK_NOLOCKS = 4,  /* too many blocked requests (the server's limits) */
    DBFS_LOCK_DEADLOCK = 5, /* waiting would close a cycle of waiting owners */
} dbfs_lock_outcome;

/* Who holds or wants a lock: a host by name, a process on it (svid, 0 ..
 * 2^32-1, or DBFS_LOCK_NO_SVID), an owner handle. The bytes are the
 * caller's; nothing is kept after the call. */
typedef struct {
    const void *host;
    size_t host_len; /* 0 .. DBFS_LOCK_NAME_MAX */
    int64_t svid;
    const void *oh;
    size_t oh_len; /* 0 .. DBFS_LOCK_OH_MAX */
} dbfs_lock_owner;

/* Bytes [start, end) (end DBFS_LOCK_EOF: to the end), shared or exclusive. */
typedef struct {
    uint64_t start, end;
    bool excl;
} dbfs_lock_range;

/* The calling server (its id from dbfs_lock_server_start) and its limits
 * on blocked requests: per host and in all. */
typedef struct {
    int32_t srv;
    uint32_t max_waiters_host, max_waiters;
} dbfs_lock_server;

/* How a lock is asked for. */
typedef struct {
    bool block;     /* wait (queue) when it conflicts */
    bool reclaim;   /* a lock held before the server restarted */
    bool monitor;   /* the host is to be told when the server restarts */
    int32_t cstate; /* the caller's NSM state */
    /* The caller's address and the address it reached us on, numeric
     * ("10.0.0.5", "::1"); NULL: unknown. */
    const char *addr, *local;
    /* Kept with a blocked request, handed back when it is granted. */
    const void *notify;
    size_t notify_len; /* 0 .. DBFS_LOCK_NOTIFY_MAX */
} dbfs_lock_how;

/* The lock in the way. */
typedef struct {
    bool excl;
    int64_t svid;
    unsigned char oh[DBFS_LOCK_OH_MAX];
    size_t oh_len;
    uint64_t start, end;
} dbfs_lock_holder;

/* A blocked request now granted: what was kept for it, and its range. */
typedef struct {
    void *notify; /* malloc'd, with the result */
    size_t notify_len;
    dbfs_lock_range range;
} dbfs_lock_grant;

/* What a lock call decided. grants are malloc'd: dbfs_lock_result_free. */
typedef struct {
    dbfs_lock_outcome outcome;
    bool grace; /* the calling server is in its grace period after the call */
    bool have_holder;
    dbfs_lock_holder holder;
    dbfs_lock_grant *grants;
    size_t ngrants;
} dbfs_lock_result;

/* dbfs_lock_result_free -- free res's grants (res itself is the caller's). */
void dbfs_lock_result_free(dbfs_lock_result *res);

/*
 * dbfs_lock -- owner o wants range r of file fh (NLM LOCK), as cred (a
 * shared lock needs read permission, an exclusive one write permission;
 * the file's owner always may). Granted when no other owner's lock
 * conflicts: the owner's own locks are replaced, merged and split as
 * POSIX says. Else queued with how->block (unless it would deadlock, or
 * the server's limits are reached), else denied with the holder. During
 * the server's grace period only reclaims are taken. Returns 0 with *res
 * filled (free it), -ESTALE, -EACCES, -EINVAL (not a regular file, or a
 * bad range), -EAGAIN, -EIO.
 */
int dbfs_lock(dbfs_conn *c, const dbfs_lock_server *s, const dbfs_cred *cred, dbfs_fh fh,
              const dbfs_lock_owner *o, const dbfs_lock_range *r, const dbfs_lock_how *how,
              dbfs_lock_result *res);

/* dbfs_lock_test -- would dbfs_lock grant it (NLM TEST)? Changes nothing.
 * Returns as dbfs_lock (outcome granted, denied with the holder, or grace). */
int dbfs_lock_test(dbfs_conn *c, const dbfs_lock_server *s, const dbfs_cred *cred, dbfs_fh fh,
                   const dbfs_lock_owner *o, const dbfs_lock_range *r, dbfs_lock_result *res);

/* dbfs_unlock -- owner o gives up range r (r->excl ignored) of fh, what it
 * held of it or not (NLM UNLOCK); grants what that frees. Returns 0
 * (outcome granted or grace), -ESTALE, -EINVAL, -EAGAIN, -EIO. */
int dbfs_unlock(dbfs_conn *c, const dbfs_lock_server *s, dbfs_fh fh, const dbfs_lock_owner *o,
                const dbfs_lock_range *r, dbfs_lock_result *res);

/* dbfs_lock_cancel -- owner o no longer waits for range r of fh (NLM
 * CANCEL). Returns as dbfs_unlock. */
int dbfs_lock_cancel(dbfs_conn *c, const dbfs_lock_server *s, dbfs_fh fh, const dbfs_lock_owner *o,
                     const dbfs_lock_range *r, dbfs_lock_result *res);

/* dbfs_share -- owner o (svid ignored) opens fh for `access` denying
 * `deny` to others (DBFS_SHARE_* bits; NLM SHARE): denied when another
 * owner's reservation conflicts. how gives reclaim and the addresses.
 * Returns as dbfs_lock. */
int dbfs_share(dbfs_conn *c, const dbfs_lock_server *s, const dbfs_cred *cred, dbfs_fh fh,
               const dbfs_lock_owner *o, unsigned access, unsigned deny, const dbfs_lock_how *how,
               dbfs_lock_result *res);

/* dbfs_unshare -- drop owner o's reservation on fh (NLM UNSHARE). Returns
 * as dbfs_unlock. */
int dbfs_unshare(dbfs_conn *c, const dbfs_lock_server *s, dbfs_fh fh, const dbfs_lock_owner *o,
                 dbfs_lock_result *res);

/*
 * dbfs_lock_free_host -- the host named name rebooted: free its locks
 * (all, or with `all` false those it took in another NSM state than
 * state), shares and blocked requests, and grant what that frees (NLM
 * FREE_ALL, NSM SM_NOTIFY). An unknown host is no error. Returns 0,
 * -EINVAL (name too long), -EAGAIN, -EIO.
 */
int dbfs_lock_free_host(dbfs_conn *c, const dbfs_lock_server *s, const void *name, size_t len,
                        bool all, int32_t state, dbfs_lock_result *res);

/* A host to tell of the server's restart. */
typedef struct {
    void *name; /* malloc'd */
    size_t name_len;
    char addr[48], local[48]; /* numeric; local may be "" */
} dbfs_lock_host;

/* What dbfs_lock_server_start found. hosts: dbfs_lock_start_free. */
typedef struct {
    int32_t srv;       /* the server's id (dbfs_lock_server.srv) */
    int32_t state;     /* its NSM state from now on */
    uint64_t grace_ms; /* its grace period (0: none) */
    dbfs_lock_host *hosts;
    size_t nhosts;
} dbfs_lock_start_res;

/*
 * dbfs_lock_server_start -- server `name` starts: its next NSM state,
 * its blocked requests forgotten, and with locks of its own kept from
 * before and grace_s > 0 a grace period (else those locks stay as they
 * are); the hosts it monitors. Returns 0 with *out (free it with
 * dbfs_lock_start_free), -EAGAIN, -EIO.
 */
int dbfs_lock_server_start(dbfs_conn *c, const char *name, unsigned grace_s,
                           dbfs_lock_start_res *out);
void dbfs_lock_start_free(dbfs_lock_start_res *out);

/* dbfs_lock_grace_end -- if the grace period of s is over by now, drop
 * the locks nobody reclaimed and grant what that frees; res->grace says
 * whether it is still running. Returns 0, -EAGAIN, -EIO. */
int dbfs_lock_grace_end(dbfs_conn *c, const dbfs_lock_server *s, dbfs_lock_result *res);

/* dbfs_lock_take -- the requests of s that other servers granted, taken
 * (into res->grants). Returns 0, -EAGAIN, -EIO. */
int dbfs_lock_take(dbfs_conn *c, const dbfs_lock_server *s, dbfs_lock_result *res);

/* dbfs_lock_gc -- forget owners and hosts that hold nothing. Returns the
 * number of owners forgotten, -EAGAIN or -EIO. */
int dbfs_lock_gc(dbfs_conn *c);

typedef struct {
    uint64_t held, waiting; /* locks held, requests waiting: every server */
    uint64_t grace_ms;      /* the server's grace period left (0: none) */
    int32_t state;          /* its NSM state */
} dbfs_lock_counts;

/* dbfs_lock_count -- fill *out for server srv. Returns 0, -EAGAIN, -EIO. */
int dbfs_lock_count(dbfs_conn *c, int32_t srv, dbfs_lock_counts *out);

/*
 * A dbfs_lock_watch is a connection of its own that listens for the
 * grants other servers make for this one, and runs the server-wide calls
 * above (dbfs_lock_watch_conn) for one thread at a time.
 */
typedef struct dbfs_lock_watch dbfs_lock_watch;

/* dbfs_lock_watch_open -- connect and listen. Returns 0 and *out
 * (dbfs_lock_watch_close it), -EAGAIN (logged) or -ENOMEM. */
int dbfs_lock_watch_open(dbfs *fs, dbfs_lock_watch **out);
void dbfs_lock_watch_close(dbfs_lock_watch *w);

/* The connection for the server-wide calls (dbfs_lock_server_start, ...). */
dbfs_conn *dbfs_lock_watch_conn(dbfs_lock_watch *w);

/* The socket to poll for readability (-1 while the connection is broken). */
int dbfs_lock_watch_fd(const dbfs_lock_watch *w);

/*
 * dbfs_lock_watch_drain -- read what arrived; *mine is true when a
 * notification was for server srv, or when the connection had to be made
 * again (then something may have been missed). Returns 0, or -EAGAIN
 * while the database is away (try again later).
 */
int dbfs_lock_watch_drain(dbfs_lock_watch *w, int32_t srv, bool *mine);

/* One lock, blocked request or share of a listing (valid during the
 * callback only; byte strings are not NUL-terminated). */
typedef struct {
    const char *state; /* "granted", "old", "waiting", "granting", "share" */
    uint64_t ino;
    const char *path; /* NULL: no name leads to the file */
    size_t path_len;
    uint64_t start, end; /* locks; end DBFS_LOCK_EOF: to the end */
    bool excl;
    unsigned access, deny; /* shares */
    const char *host;
    size_t host_len;
    int64_t svid; /* DBFS_LOCK_NO_SVID for shares */
    const unsigned char *oh;
    size_t oh_len;
    const char *server;
    int64_t since_us; /* Unix time in microseconds; 0 for shares */
} dbfs_lock_entry;

/*
 * dbfs_admin_locks -- every lock, blocked request and share reservation,
 * by file and start, to cb (a nonzero return stops and is returned). One
 * query. Returns 0, cb's value, -EAGAIN, -ENOSPC, -EIO.
 */
int dbfs_admin_locks(dbfs_admin *a, int (*cb)(const dbfs_lock_entry *e, void *arg), void *arg);

#endif /* PGNFS_DBFS_LOCKS_H */
