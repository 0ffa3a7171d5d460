/*
 * nfsraw.h -- a small synchronous client for protocol tests: one blocking
 * call per NFSv3 and MOUNTv3 procedure over libnfs's raw RPC API, and a way
 * to send hand-built RPC records over a plain TCP socket.
 *
 * The high-level libnfs API hides statuses, wcc data and verifiers; these
 * wrappers return the decoded reply as the server sent it, so a test can
 * assert every field.
 *
 * NOTES
 *   Return values: every nr_<proc>() call returns the procedure's status
 *   (nfsstat3 or mountstat3, >= 0) when a reply arrived, or NR_RPC_FAILED
 *   (-1) when none did: the RPC was rejected (PROG_UNAVAIL, AUTH_ERROR, ...),
 *   the connection broke, or NR_TIMEOUT_MS passed. nr_error() then says
 *   which. A context whose call timed out or whose connection broke is
 *   broken for good: every later call fails at once (open a new one).
 *
 *   Memory: a result struct is the caller's (often on the stack; it may be
 *   NULL when only the status matters). Whatever it points to -- handles,
 *   names, READ data, READDIR entry lists, MOUNT lists -- is copied into the
 *   context's arena and stays valid until nr_arena_clear() or nr_close().
 *
 *   Threads: a context is used by one thread at a time.
 *
 *   Handles are passed as nr_fh, a value type (length and up to 64 bytes),
 *   so a test can copy, compare, truncate or damage one freely.
 */
#ifndef PGNFS_NFSRAW_H
#define PGNFS_NFSRAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>

#define NR_RPC_FAILED  (-1)
#define NR_TIMEOUT_MS  60000
#define NR_NGROUPS_MAX 16

/* RPC constants (RFC 5531) used by the raw-record helpers. */
enum {
    NR_AUTH_NONE = 0,
    NR_AUTH_SYS = 1,
    NR_MSG_CALL = 0,
    NR_MSG_REPLY = 1,
    NR_MSG_ACCEPTED = 0,
    NR_MSG_DENIED = 1,
    NR_SUCCESS = 0,
    NR_PROG_UNAVAIL = 1,
    NR_PROG_MISMATCH = 2,
    NR_PROC_UNAVAIL = 3,
    NR_GARBAGE_ARGS = 4,
    NR_SYSTEM_ERR = 5,
    NR_RPC_MISMATCH = 0,
    NR_AUTH_ERROR = 1,
    NR_AUTH_BADCRED = 1,
    NR_AUTH_REJECTEDCRED = 2,
    NR_AUTH_BADVERF = 3,
    NR_AUTH_REJECTEDVERF = 4,
    NR_AUTH_TOOWEAK = 5,
};

enum { NR_NFS_PROGRAM = 100003, NR_MOUNT_PROGRAM = 100005 };

/* A file handle by value. */
typedef struct {
    uint32_t len;
    unsigned char data[NFS3_FHSIZE];
} nr_fh;

/* An AUTH_SYS credential. */
typedef struct {
    uint32_t uid, gid;
    uint32_t ngroups;
    uint32_t groups[NR_NGROUPS_MAX];
} nr_cred;

typedef struct nr_ctx nr_ctx;

/* --- contexts ------------------------------------------------------------ */

/*
 * nr_open -- connect to 127.0.0.1:port over TCP (no portmapper) with the
 * AUTH_SYS credential `cred` (NULL = root). Returns the context, or NULL
 * after printing why the connection failed.
 */
nr_ctx *nr_open(unsigned port, const nr_cred *cred);
/* The same to host (numeric address) instead of 127.0.0.1. */
nr_ctx *nr_open_host(const char *host, unsigned port, const nr_cred *cred);
void nr_close(nr_ctx *c);
/* Use `cred` (NULL = root) for the calls made from now on. */
void nr_set_cred(nr_ctx *c, const nr_cred *cred);
/* Why the last call returned NR_RPC_FAILED ("" if it did not). */
const char *nr_error(const nr_ctx *c);
/* Release everything the results returned so far point to. */
void nr_arena_clear(nr_ctx *c);
/* A copy of len bytes at p that lives in c's arena. */
void *nr_arena_dup(nr_ctx *c, const void *p, size_t len);

/* The libnfs context, for tests that queue asynchronous calls themselves. */
struct rpc_context *nr_rpc(nr_ctx *c);
/*
 * nr_service -- run c's event loop until *pending (which the test's
 * callbacks decrement) is at most `until`, or timeout_ms passes. Returns 0,
 * or -1 on timeout or a broken connection (then nr_error() says which, and
 * the context is broken).
 */
int nr_service(nr_ctx *c, const int *pending, int until, int timeout_ms);

/* --- handles and attributes ---------------------------------------------- */

/* An nfs_fh3 that points into fh (valid while fh is). */
nfs_fh3 nr_fh3(const nr_fh *fh);
/* Copy a handle from a reply; aborts the test if it is longer than 64. */
nr_fh nr_fh_from(const nfs_fh3 *fh);
bool nr_fh_equal(const nr_fh *a, const nr_fh *b);

/* sattr3 that sets nothing / only the mode. */
sattr3 nr_sattr_none(void);
sattr3 nr_sattr_mode(uint32_t mode);

/* --- MOUNT v3 (RFC 1813 section 5) ---------------------------------------- */

int nr_mount_null(nr_ctx *c);
/* MNT: on MNT3_OK *root (may be NULL) receives the handle. */
int nr_mnt(nr_ctx *c, const char *path, mountres3 *res, nr_fh *root);
/* DUMP, UMNT, UMNTALL and EXPORT return 0 on a reply (they have no status). */
int nr_dump(nr_ctx *c, mountlist *out);
int nr_umnt(nr_ctx *c, const char *path);
int nr_umntall(nr_ctx *c);
int nr_export(nr_ctx *c, exports *out);

/* --- NFS v3 (RFC 1813 section 3) ------------------------------------------ */

/* NULL returns 0 on a reply. */
int nr_null(nr_ctx *c);
int nr_getattr(nr_ctx *c, const nr_fh *fh, GETATTR3res *res);
/* guard_ctime: NULL for no guard. */
int nr_setattr(nr_ctx *c, const nr_fh *fh, const sattr3 *sa, const nfstime3 *guard_ctime,
               SETATTR3res *res);
int nr_lookup(nr_ctx *c, const nr_fh *dir, const char *name, LOOKUP3res *res);
int nr_access(nr_ctx *c, const nr_fh *fh, uint32_t access, ACCESS3res *res);
int nr_readlink(nr_ctx *c, const nr_fh *fh, READLINK3res *res);
int nr_read(nr_ctx *c, const nr_fh *fh, uint64_t offset, uint32_t count, READ3res *res);
int nr_write(nr_ctx *c, const nr_fh *fh, uint64_t offset, const void *data, uint32_t len,
             stable_how stable, WRITE3res *res);
/* sa is used for UNCHECKED and GUARDED (NULL = set nothing), verf for EXCLUSIVE. */
int nr_create(nr_ctx *c, const nr_fh *dir, const char *name, createmode3 how, const sattr3 *sa,
              const char verf[NFS3_CREATEVERFSIZE], CREATE3res *res);
int nr_mkdir(nr_ctx *c, const nr_fh *dir, const char *name, const sattr3 *sa, MKDIR3res *res);
int nr_symlink(nr_ctx *c, const nr_fh *dir, const char *name, const char *target, const sattr3 *sa,
               SYMLINK3res *res);
/* major/minor only count for NF3CHR and NF3BLK. */
int nr_mknod(nr_ctx *c, const nr_fh *dir, const char *name, ftype3 type, const sattr3 *sa,
             uint32_t major, uint32_t minor, MKNOD3res *res);
int nr_remove(nr_ctx *c, const nr_fh *dir, const char *name, REMOVE3res *res);
int nr_rmdir(nr_ctx *c, const nr_fh *dir, const char *name, RMDIR3res *res);
int nr_rename(nr_ctx *c, const nr_fh *from_dir, const char *from_name, const nr_fh *to_dir,
              const char *to_name, RENAME3res *res);
int nr_link(nr_ctx *c, const nr_fh *file, const nr_fh *dir, const char *name, LINK3res *res);
/* verf: NULL = all zeros. */
int nr_readdir(nr_ctx *c, const nr_fh *dir, uint64_t cookie, const char *verf, uint32_t count,
               READDIR3res *res);
int nr_readdirplus(nr_ctx *c, const nr_fh *dir, uint64_t cookie, const char *verf,
                   uint32_t dircount, uint32_t maxcount, READDIRPLUS3res *res);
int nr_fsstat(nr_ctx *c, const nr_fh *fh, FSSTAT3res *res);
int nr_fsinfo(nr_ctx *c, const nr_fh *fh, FSINFO3res *res);
int nr_pathconf(nr_ctx *c, const nr_fh *fh, PATHCONF3res *res);
int nr_commit(nr_ctx *c, const nr_fh *fh, uint64_t offset, uint32_t count, COMMIT3res *res);

/* --- hand-built RPC records over TCP ---------------------------------------- */

/* XDR encoders appending to b (big-endian, padded to 4 bytes). */
void nr_xdr_u32(GByteArray *b, uint32_t v);
void nr_xdr_u64(GByteArray *b, uint64_t v);
void nr_xdr_opaque(GByteArray *b, const void *p, uint32_t len); /* length + bytes + pad */
void nr_xdr_fixed(GByteArray *b, const void *p, uint32_t len);  /* bytes + pad */
void nr_xdr_string(GByteArray *b, const char *s);
void nr_xdr_fh(GByteArray *b, const nr_fh *fh);

/*
 * nr_xdr_call -- append an RPC call header: xid, CALL, RPC version 2,
 * prog, vers, proc, credential (AUTH_SYS from cred, or AUTH_NONE if cred is
 * NULL) and an AUTH_NONE verifier. Arguments follow.
 */
void nr_xdr_call(GByteArray *b, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                 const nr_cred *cred);

/* A TCP connection to 127.0.0.1:port; -1 (errno set) on failure. */
int nr_raw_connect(unsigned port);
/*
 * nr_raw_connect_from -- the same from local port local_port (as a client
 * reconnecting after a broken connection does, so that the server sees the
 * same address and port). Pair it with nr_raw_abort() on the previous
 * connection, which leaves no TIME_WAIT behind.
 */
int nr_raw_connect_from(unsigned port, unsigned local_port);
/* The local port of a connected socket (0 on error). */
unsigned nr_raw_local_port(int fd);

/* For nr_raw_connect_addr: any free privileged port (below 1024). */
#define NR_PORT_PRIVILEGED 0xffffffffu
/*
 * nr_raw_connect_addr -- a TCP connection to 127.0.0.1:port from local
 * address `local` ("127.0.0.2": any loopback address works on Linux; NULL
 * = 127.0.0.1) and local port local_port (0 = any; NR_PORT_PRIVILEGED = a
 * free port below 1024, which needs root). -1 (errno set) on failure.
 */
int nr_raw_connect_addr(unsigned port, const char *local, unsigned local_port);
/*
 * nr_raw_call -- send rec as one record on fd and receive the reply record
 * (free with g_byte_array_unref); NULL on timeout, end of file or error.
 */
GByteArray *nr_raw_call(int fd, const GByteArray *rec, int timeout_ms);
/* Close with a reset (SO_LINGER 0). */
void nr_raw_abort(int fd);
/* Send rec as one record (one last fragment). Returns 0, or -1 (errno). */
int nr_raw_send(int fd, const void *rec, size_t len);
/*
 * nr_raw_recv -- receive one whole record (all fragments). Returns it (free
 * with g_byte_array_unref), or NULL on timeout, end of file or error.
 */
GByteArray *nr_raw_recv(int fd, int timeout_ms);

/*
 * nr_raw_wait_closed -- true if the peer closes (or resets) the connection
 * within timeout_ms; anything it sends before is discarded.
 */
bool nr_raw_wait_closed(int fd, int timeout_ms);

/* A UDP socket connected to 127.0.0.1:port; -1 (errno set) on failure. */
int nr_udp_connect(unsigned port);
/*
 * nr_udp_connect_addr -- the same from local address `local` (NULL =
 * 127.0.0.1) and local port local_port (0 = any; NR_PORT_PRIVILEGED = a
 * free port below 1024, which needs root). -1 (errno set) on failure.
 */
int nr_udp_connect_addr(unsigned port, const char *local, unsigned local_port);
/* Send one datagram. Returns 0, or -1 (errno). */
int nr_udp_send(int fd, const void *msg, size_t len);
/* Receive one datagram, or NULL on timeout or error. */
GByteArray *nr_udp_recv(int fd, int timeout_ms);

/* A decoded reply header. */
typedef struct {
    uint32_t xid;
    uint32_t msg_type;    /* NR_MSG_REPLY */
    uint32_t reply_stat;  /* NR_MSG_ACCEPTED or NR_MSG_DENIED */
    uint32_t accept_stat; /* when accepted; UINT32_MAX otherwise */
    uint32_t reject_stat; /* when denied: NR_RPC_MISMATCH or NR_AUTH_ERROR */
    uint32_t auth_stat;   /* when denied with NR_AUTH_ERROR */
    uint32_t low, high;   /* PROG_MISMATCH or RPC_MISMATCH versions */
    size_t body;          /* offset of the results (accepted, SUCCESS) */
} nr_reply;

/* nr_reply_parse -- decode a reply header; false if it is malformed. */
bool nr_reply_parse(const GByteArray *rec, nr_reply *out);
/* The big-endian 32-bit word at offset off of rec (0 if out of range). */
uint32_t nr_get_u32(const GByteArray *rec, size_t off);

/* Names for messages. */
const char *nr_stat_name(int nfsstat);

#endif /* PGNFS_NFSRAW_H */
