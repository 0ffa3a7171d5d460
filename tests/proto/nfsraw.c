/*
 * nfsraw.c -- synchronous wrappers over libnfs's raw NFSv3/MOUNTv3 calls,
 * and hand-built RPC records over TCP, for the protocol tests.
 *
 * NOTES
 *   Each wrapper queues one asynchronous libnfs call whose private data is a
 *   heap-allocated nr_call, then runs the context's poll loop until the
 *   callback marks the call done. The callback copies the decoded result
 *   into the caller's struct and deep-copies what it points to into the
 *   context's arena (libnfs frees its decode buffer when the callback
 *   returns). If the deadline passes first, the call is abandoned: the
 *   callback, whenever libnfs runs it (at the latest when the context is
 *   destroyed), only frees the nr_call; the context is marked broken.
 */
#include "nfsraw.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct nr_ctx {
    struct rpc_context *rpc;
    GPtrArray *arena; /* g_malloc'd blocks results point to */
    char *error;      /* why the last call failed; "" if it did not */
    bool broken;
};

typedef void (*nr_copy_fn)(nr_ctx *c, void *res);

typedef struct {
    nr_ctx *c;
    bool done;
    bool abandoned;
    int status; /* RPC_STATUS_* */
    void *res;  /* caller's result struct, or NULL */
    size_t res_size;
    nr_copy_fn copy;
} nr_call;

/* --- contexts ------------------------------------------------------------ */

static void nr_set_error(nr_ctx *c, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static void nr_set_error(nr_ctx *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_free(c->error);
    c->error = msg;
}

void *nr_arena_dup(nr_ctx *c, const void *p, size_t len)
{
    /* One spare NUL byte, so copied strings stay terminated. */
    char *copy = g_malloc0(len + 1);

    if (len)
        memcpy(copy, p, len);
    g_ptr_array_add(c->arena, copy);
    return copy;
}

static char *nr_arena_strdup(nr_ctx *c, const char *s)
{
    return s ? nr_arena_dup(c, s, strlen(s)) : NULL;
}

void nr_arena_clear(nr_ctx *c)
{
    g_ptr_array_set_size(c->arena, 0);
}

const char *nr_error(const nr_ctx *c)
{
    return c->error;
}

struct rpc_context *nr_rpc(nr_ctx *c)
{
    return c->rpc;
}

void nr_set_cred(nr_ctx *c, const nr_cred *cred)
{
    nr_cred root = {0};
    uint32_t groups[NR_NGROUPS_MAX];

    if (!cred)
        cred = &root;
    g_assert(cred->ngroups <= NR_NGROUPS_MAX);
    memcpy(groups, cred->groups, sizeof groups);
    rpc_set_auth(c->rpc,
                 libnfs_authunix_create("pgnfs-test", cred->uid, cred->gid, cred->ngroups, groups));
}

int nr_service(nr_ctx *c, const int *pending, int until, int timeout_ms)
{
    gint64 deadline = g_get_monotonic_time() + (gint64)timeout_ms * 1000;

    while (*pending > until) {
        if (c->broken)
            return -1;
        gint64 left = (deadline - g_get_monotonic_time()) / 1000;
        if (left <= 0) {
            nr_set_error(c, "no reply within %d ms", timeout_ms);
            c->broken = true;
            return -1;
        }
        struct pollfd p = {.fd = rpc_get_fd(c->rpc), .events = rpc_which_events(c->rpc)};
        int n = poll(&p, 1, left > 100 ? 100 : (int)left);
        if (n < 0 && errno != EINTR) {
            nr_set_error(c, "poll: %s", g_strerror(errno));
            c->broken = true;
            return -1;
        }
        if (rpc_service(c->rpc, n > 0 ? p.revents : 0) < 0) {
            nr_set_error(c, "connection failed: %s", rpc_get_error(c->rpc));
            c->broken = true;
            return -1;
        }
    }
    return 0;
}

static nr_call *nr_call_new(nr_ctx *c, void *res, size_t res_size, nr_copy_fn copy);
/* nr_cb and nr_finish are defined with the call machinery below. */
static void nr_cb(struct rpc_context *rpc, int status, void *data, void *private_data);
static int nr_finish(nr_ctx *c, nr_call *call, int rc, const char *what);

nr_ctx *nr_open(unsigned port, const nr_cred *cred)
{
    return nr_open_host("127.0.0.1", port, cred);
}

nr_ctx *nr_open_host(const char *host, unsigned port, const nr_cred *cred)
{
    nr_ctx *c = g_new0(nr_ctx, 1);

    c->rpc = rpc_init_context();
    c->arena = g_ptr_array_new_with_free_func(g_free);
    c->error = g_strdup("");
    if (!c->rpc) {
        g_printerr("nr_open: rpc_init_context failed\n");
        g_ptr_array_unref(c->arena);
        g_free(c->error);
        g_free(c);
        return NULL;
    }
    nr_set_cred(c, cred);
    nr_call *call = nr_call_new(c, NULL, 0, NULL);
    int rc = rpc_connect_async(c->rpc, host, (int)port, nr_cb, call);
    if (nr_finish(c, call, rc, "connect") != 0) {
        g_printerr("nr_open: %s:%u: %s\n", host, port, c->error);
        nr_close(c);
        return NULL;
    }
    return c;
}

void nr_close(nr_ctx *c)
{
    if (!c)
        return;
    rpc_destroy_context(c->rpc);
    g_ptr_array_unref(c->arena);
    g_free(c->error);
    g_free(c);
}

/* --- the call machinery --------------------------------------------------- */

static void nr_cb(struct rpc_context *rpc, int status, void *data, void *private_data)
{
    nr_call *call = private_data;

    (void)rpc;
    if (call->abandoned) {
        g_free(call);
        return;
    }
    call->status = status;
    if (status == RPC_STATUS_SUCCESS) {
        if (call->res && data) {
            memcpy(call->res, data, call->res_size);
            if (call->copy)
                call->copy(call->c, call->res);
        }
    } else if (status == RPC_STATUS_ERROR) {
        nr_set_error(call->c, "RPC failed: %s", data ? (const char *)data : "?");
    } else {
        nr_set_error(call->c, "RPC cancelled (status %d)", status);
    }
    call->done = true;
}

static nr_call *nr_call_new(nr_ctx *c, void *res, size_t res_size, nr_copy_fn copy)
{
    nr_call *call = g_new0(nr_call, 1);

    call->c = c;
    call->res = res;
    call->res_size = res_size;
    call->copy = copy;
    nr_set_error(c, "%s", "");
    return call;
}

/*
 * nr_finish -- wait for call (queued with rc = the *_async return value).
 * Returns 0 on a successful RPC, NR_RPC_FAILED otherwise. Frees call
 * unless it had to be abandoned.
 */
static int nr_finish(nr_ctx *c, nr_call *call, int rc, const char *what)
{
    if (rc != 0) {
        nr_set_error(c, "%s: cannot queue the call: %s", what, rpc_get_error(c->rpc));
        g_free(call);
        return NR_RPC_FAILED;
    }
    gint64 deadline = g_get_monotonic_time() + (gint64)NR_TIMEOUT_MS * 1000;
    while (!call->done) {
        if (c->broken || g_get_monotonic_time() >= deadline) {
            if (!c->broken)
                nr_set_error(c, "%s: no reply within %d ms", what, NR_TIMEOUT_MS);
            c->broken = true;
            call->abandoned = true;
            return NR_RPC_FAILED;
        }
        struct pollfd p = {.fd = rpc_get_fd(c->rpc), .events = rpc_which_events(c->rpc)};
        int n = poll(&p, 1, 100);
        if (n < 0 && errno != EINTR) {
            nr_set_error(c, "%s: poll: %s", what, g_strerror(errno));
            c->broken = true;
            continue;
        }
        if (rpc_service(c->rpc, n > 0 ? p.revents : 0) < 0 && !call->done) {
            nr_set_error(c, "%s: connection failed: %s", what, rpc_get_error(c->rpc));
            c->broken = true;
        }
    }
    int ok = call->status == RPC_STATUS_SUCCESS;
    if (!ok) {
        nr_set_error(c, "%s: %s", what, c->error);
    }
    g_free(call);
    return ok ? 0 : NR_RPC_FAILED;
}

static bool nr_usable(nr_ctx *c, const char *what)
{
    if (c->broken) {
        nr_set_error(c, "%s: context broken earlier (%s)", what, c->error);
        return false;
    }
    return true;
}

/* --- deep copies ----------------------------------------------------------- */

static void nr_copy_nfs_fh3(nr_ctx *c, nfs_fh3 *fh)
{
    fh->data.data_val = nr_arena_dup(c, fh->data.data_val, fh->data.data_len);
}

static void nr_copy_post_op_fh3(nr_ctx *c, post_op_fh3 *p)
{
    if (p->handle_follows)
        nr_copy_nfs_fh3(c, &p->post_op_fh3_u.handle);
}

static void nr_copy_lookup(nr_ctx *c, void *res)
{
    LOOKUP3res *r = res;
    if (r->status == NFS3_OK)
        nr_copy_nfs_fh3(c, &r->LOOKUP3res_u.resok.object);
}

static void nr_copy_readlink(nr_ctx *c, void *res)
{
    READLINK3res *r = res;
    if (r->status == NFS3_OK)
        r->READLINK3res_u.resok.data = nr_arena_strdup(c, r->READLINK3res_u.resok.data);
}

static void nr_copy_read(nr_ctx *c, void *res)
{
    READ3res *r = res;
    if (r->status == NFS3_OK)
        r->READ3res_u.resok.data.data_val =
            nr_arena_dup(c, r->READ3res_u.resok.data.data_val, r->READ3res_u.resok.data.data_len);
}

static void nr_copy_create(nr_ctx *c, void *res)
{
    CREATE3res *r = res;
    if (r->status == NFS3_OK)
        nr_copy_post_op_fh3(c, &r->CREATE3res_u.resok.obj);
}

static void nr_copy_mkdir(nr_ctx *c, void *res)
{
    MKDIR3res *r = res;
    if (r->status == NFS3_OK)
        nr_copy_post_op_fh3(c, &r->MKDIR3res_u.resok.obj);
}

static void nr_copy_symlink(nr_ctx *c, void *res)
{
    SYMLINK3res *r = res;
    if (r->status == NFS3_OK)
        nr_copy_post_op_fh3(c, &r->SYMLINK3res_u.resok.obj);
}

static void nr_copy_mknod(nr_ctx *c, void *res)
{
    MKNOD3res *r = res;
    if (r->status == NFS3_OK)
        nr_copy_post_op_fh3(c, &r->MKNOD3res_u.resok.obj);
}

static void nr_copy_readdir(nr_ctx *c, void *res)
{
    READDIR3res *r = res;
    if (r->status != NFS3_OK)
        return;
    entry3 **link = &r->READDIR3res_u.resok.reply.entries;
    /* libnfs's decoded entries may be misaligned: read them only from the
     * (aligned) copies. */
    for (const entry3 *e = *link, *next; e; e = next) {
        entry3 *copy = nr_arena_dup(c, e, sizeof *e);
        next = copy->nextentry;
        copy->name = nr_arena_strdup(c, copy->name);
        copy->nextentry = NULL;
        *link = copy;
        link = &copy->nextentry;
    }
}

static void nr_copy_readdirplus(nr_ctx *c, void *res)
{
    READDIRPLUS3res *r = res;
    if (r->status != NFS3_OK)
        return;
    entryplus3 **link = &r->READDIRPLUS3res_u.resok.reply.entries;
    for (const entryplus3 *e = *link, *next; e; e = next) {
        entryplus3 *copy = nr_arena_dup(c, e, sizeof *e);
        next = copy->nextentry;
        copy->name = nr_arena_strdup(c, copy->name);
        nr_copy_post_op_fh3(c, &copy->name_handle);
        copy->nextentry = NULL;
        *link = copy;
        link = &copy->nextentry;
    }
}

static void nr_copy_mnt(nr_ctx *c, void *res)
{
    mountres3 *r = res;
    if (r->fhs_status != MNT3_OK)
        return;
    mountres3_ok *ok = &r->mountres3_u.mountinfo;
    ok->fhandle.fhandle3_val = nr_arena_dup(c, ok->fhandle.fhandle3_val, ok->fhandle.fhandle3_len);
    ok->auth_flavors.auth_flavors_val = nr_arena_dup(
        c, ok->auth_flavors.auth_flavors_val, ok->auth_flavors.auth_flavors_len * sizeof(int));
}

static void nr_copy_mountlist(nr_ctx *c, void *res)
{
    mountlist *link = res;
    for (const struct mountbody *m = *link, *next; m; m = next) {
        struct mountbody *copy = nr_arena_dup(c, m, sizeof *m);
        next = copy->ml_next;
        copy->ml_hostname = nr_arena_strdup(c, copy->ml_hostname);
        copy->ml_directory = nr_arena_strdup(c, copy->ml_directory);
        copy->ml_next = NULL;
        *link = copy;
        link = &copy->ml_next;
    }
}

static void nr_copy_exports(nr_ctx *c, void *res)
{
    exports *link = res;
    for (const struct exportnode *e = *link, *next; e; e = next) {
        struct exportnode *copy = nr_arena_dup(c, e, sizeof *e);
        next = copy->ex_next;
        copy->ex_dir = nr_arena_strdup(c, copy->ex_dir);
        copy->ex_next = NULL;
        groups *glink = &copy->ex_groups;
        for (const struct groupnode *g = copy->ex_groups, *gnext; g; g = gnext) {
            struct groupnode *gcopy = nr_arena_dup(c, g, sizeof *g);
            gnext = gcopy->gr_next;
            gcopy->gr_name = nr_arena_strdup(c, gcopy->gr_name);
            gcopy->gr_next = NULL;
            *glink = gcopy;
            glink = &gcopy->gr_next;
        }
        *link = copy;
        link = &copy->ex_next;
    }
}

/* --- handles and attributes ------------------------------------------------ */

nfs_fh3 nr_fh3(const nr_fh *fh)
{
    nfs_fh3 out;

    out.data.data_len = fh->len;
    out.data.data_val = (char *)fh->data;
    return out;
}

nr_fh nr_fh_from(const nfs_fh3 *fh)
{
    nr_fh out = {0};

    g_assert_cmpuint(fh->data.data_len, <=, sizeof out.data);
    out.len = fh->data.data_len;
    memcpy(out.data, fh->data.data_val, out.len);
    return out;
}

bool nr_fh_equal(const nr_fh *a, const nr_fh *b)
{
    return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

sattr3 nr_sattr_none(void)
{
    sattr3 sa;

    memset(&sa, 0, sizeof sa);
    return sa;
}

sattr3 nr_sattr_mode(uint32_t mode)
{
    sattr3 sa = nr_sattr_none();

    sa.mode.set_it = 1;
    sa.mode.set_mode3_u.mode = mode;
    return sa;
}

/* --- MOUNT ------------------------------------------------------------------ */

int nr_mount_null(nr_ctx *c)
{
    if (!nr_usable(c, "MOUNT NULL"))
        return NR_RPC_FAILED;
    nr_call *call = nr_call_new(c, NULL, 0, NULL);
    return nr_finish(c, call, rpc_mount3_null_async(c->rpc, nr_cb, call), "MOUNT NULL");
}

int nr_mnt(nr_ctx *c, const char *path, mountres3 *res, nr_fh *root)
{
    mountres3 local;
    mountres3 *r = res ? res : &local;

    memset(r, 0, sizeof *r);
    if (!nr_usable(c, "MOUNT MNT"))
        return NR_RPC_FAILED;
    nr_call *call = nr_call_new(c, r, sizeof *r, nr_copy_mnt);
    if (nr_finish(c, call, rpc_mount3_mnt_async(c->rpc, nr_cb, (char *)path, call), "MOUNT MNT"))
        return NR_RPC_FAILED;
    if (r->fhs_status == MNT3_OK && root) {
        const fhandle3 *h = &r->mountres3_u.mountinfo.fhandle;
        g_assert_cmpuint(h->fhandle3_len, <=, NFS3_FHSIZE);
        root->len = h->fhandle3_len;
        memcpy(root->data, h->fhandle3_val, h->fhandle3_len);
    }
    return r->fhs_status;
}

int nr_dump(nr_ctx *c, mountlist *out)
{
    mountlist local = NULL;
    mountlist *r = out ? out : &local;

    *r = NULL;
    if (!nr_usable(c, "MOUNT DUMP"))
        return NR_RPC_FAILED;
    nr_call *call = nr_call_new(c, r, sizeof *r, nr_copy_mountlist);
    return nr_finish(c, call, rpc_mount3_dump_async(c->rpc, nr_cb, call), "MOUNT DUMP");
}

int nr_umnt(nr_ctx *c, const char *path)
{
    if (!nr_usable(c, "MOUNT UMNT"))
        return NR_RPC_FAILED;
    nr_call *call = nr_call_new(c, NULL, 0, NULL);
    return nr_finish(c, call, rpc_mount3_umnt_async(c->rpc, nr_cb, (char *)path, call),
                     "MOUNT UMNT");
}

int nr_umntall(nr_ctx *c)
{
    if (!nr_usable(c, "MOUNT UMNTALL"))
        return NR_RPC_FAILED;
    nr_call *call = nr_call_new(c, NULL, 0, NULL);
    return nr_finish(c, call, rpc_mount3_umntall_async(c->rpc, nr_cb, call), "MOUNT UMNTALL");
}

int nr_export(nr_ctx *c, exports *out)
{
    exports local = NULL;
    exports *r = out ? out : &local;

    *r = NULL;
    if (!nr_usable(c, "MOUNT EXPORT"))
        return NR_RPC_FAILED;
    nr_call *call = nr_call_new(c, r, sizeof *r, nr_copy_exports);
    return nr_finish(c, call, rpc_mount3_export_async(c->rpc, nr_cb, call), "MOUNT EXPORT");
}

/* --- NFS ------------------------------------------------------------------- */

/*
 * nr_begin -- start a call whose result goes to r (size bytes, zeroed here).
 * Returns the call to pass to the *_async function and nr_finish(), or NULL
 * if the context is broken.
 */
static nr_call *nr_begin(nr_ctx *c, const char *name, void *r, size_t size, nr_copy_fn copy)
{
    if (r)
        memset(r, 0, size);
    if (!nr_usable(c, name))
        return NULL;
    return nr_call_new(c, r, size, copy);
}

int nr_null(nr_ctx *c)
{
    if (!nr_usable(c, "NULL"))
        return NR_RPC_FAILED;
    nr_call *call = nr_call_new(c, NULL, 0, NULL);
    return nr_finish(c, call, rpc_nfs3_null_async(c->rpc, nr_cb, call), "NULL");
}

int nr_getattr(nr_ctx *c, const nr_fh *fh, GETATTR3res *res)
{
    GETATTR3res local;
    GETATTR3res *r = res ? res : &local;
    GETATTR3args a = {.object = nr_fh3(fh)};
    nr_call *call = nr_begin(c, "GETATTR", r, sizeof *r, NULL);
    if (!call || nr_finish(c, call, rpc_nfs3_getattr_async(c->rpc, nr_cb, &a, call), "GETATTR"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_setattr(nr_ctx *c, const nr_fh *fh, const sattr3 *sa, const nfstime3 *guard_ctime,
               SETATTR3res *res)
{
    SETATTR3res local;
    SETATTR3res *r = res ? res : &local;
    SETATTR3args a;

    memset(&a, 0, sizeof a);
    a.object = nr_fh3(fh);
    a.new_attributes = *sa;
    if (guard_ctime) {
        a.guard.check = 1;
        a.guard.sattrguard3_u.obj_ctime = *guard_ctime;
    }
    nr_call *call = nr_begin(c, "SETATTR", r, sizeof *r, NULL);
    if (!call || nr_finish(c, call, rpc_nfs3_setattr_async(c->rpc, nr_cb, &a, call), "SETATTR"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_lookup(nr_ctx *c, const nr_fh *dir, const char *name, LOOKUP3res *res)
{
    LOOKUP3res local;
    LOOKUP3res *r = res ? res : &local;
    LOOKUP3args a = {.what = {.dir = nr_fh3(dir), .name = (char *)name}};
    nr_call *call = nr_begin(c, "LOOKUP", r, sizeof *r, nr_copy_lookup);
    if (!call || nr_finish(c, call, rpc_nfs3_lookup_async(c->rpc, nr_cb, &a, call), "LOOKUP"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_access(nr_ctx *c, const nr_fh *fh, uint32_t access, ACCESS3res *res)
{
    ACCESS3res local;
    ACCESS3res *r = res ? res : &local;
    ACCESS3args a = {.object = nr_fh3(fh), .access = access};
    nr_call *call = nr_begin(c, "ACCESS", r, sizeof *r, NULL);
    if (!call || nr_finish(c, call, rpc_nfs3_access_async(c->rpc, nr_cb, &a, call), "ACCESS"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_readlink(nr_ctx *c, const nr_fh *fh, READLINK3res *res)
{
    READLINK3res local;
    READLINK3res *r = res ? res : &local;
    READLINK3args a = {.symlink = nr_fh3(fh)};
    nr_call *call = nr_begin(c, "READLINK", r, sizeof *r, nr_copy_readlink);
    if (!call || nr_finish(c, call, rpc_nfs3_readlink_async(c->rpc, nr_cb, &a, call), "READLINK"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_read(nr_ctx *c, const nr_fh *fh, uint64_t offset, uint32_t count, READ3res *res)
{
    READ3res local;
    READ3res *r = res ? res : &local;
    READ3args a = {.file = nr_fh3(fh), .offset = offset, .count = count};
    nr_call *call = nr_begin(c, "READ", r, sizeof *r, nr_copy_read);
    if (!call || nr_finish(c, call, rpc_nfs3_read_async(c->rpc, nr_cb, &a, call), "READ"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_write(nr_ctx *c, const nr_fh *fh, uint64_t offset, const void *data, uint32_t len,
             stable_how stable, WRITE3res *res)
{
    WRITE3res local;
    WRITE3res *r = res ? res : &local;
    WRITE3args a;

    memset(&a, 0, sizeof a);
    a.file = nr_fh3(fh);
    a.offset = offset;
    a.count = len;
    a.stable = stable;
    a.data.data_len = len;
    a.data.data_val = (char *)data;
    nr_call *call = nr_begin(c, "WRITE", r, sizeof *r, NULL);
    if (!call || nr_finish(c, call, rpc_nfs3_write_async(c->rpc, nr_cb, &a, call), "WRITE"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_create(nr_ctx *c, const nr_fh *dir, const char *name, createmode3 how, const sattr3 *sa,
              const char verf[NFS3_CREATEVERFSIZE], CREATE3res *res)
{
    CREATE3res local;
    CREATE3res *r = res ? res : &local;
    CREATE3args a;

    memset(&a, 0, sizeof a);
    a.where.dir = nr_fh3(dir);
    a.where.name = (char *)name;
    a.how.mode = how;
    if (how == EXCLUSIVE) {
        if (verf)
            memcpy(a.how.createhow3_u.verf, verf, NFS3_CREATEVERFSIZE);
    } else if (sa) {
        a.how.createhow3_u.obj_attributes = *sa;
    }
    nr_call *call = nr_begin(c, "CREATE", r, sizeof *r, nr_copy_create);
    if (!call || nr_finish(c, call, rpc_nfs3_create_async(c->rpc, nr_cb, &a, call), "CREATE"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_mkdir(nr_ctx *c, const nr_fh *dir, const char *name, const sattr3 *sa, MKDIR3res *res)
{
    MKDIR3res local;
    MKDIR3res *r = res ? res : &local;
    MKDIR3args a;

    memset(&a, 0, sizeof a);
    a.where.dir = nr_fh3(dir);
    a.where.name = (char *)name;
    if (sa)
        a.attributes = *sa;
    nr_call *call = nr_begin(c, "MKDIR", r, sizeof *r, nr_copy_mkdir);
    if (!call || nr_finish(c, call, rpc_nfs3_mkdir_async(c->rpc, nr_cb, &a, call), "MKDIR"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_symlink(nr_ctx *c, const nr_fh *dir, const char *name, const char *target, const sattr3 *sa,
               SYMLINK3res *res)
{
    SYMLINK3res local;
    SYMLINK3res *r = res ? res : &local;
    SYMLINK3args a;

    memset(&a, 0, sizeof a);
    a.where.dir = nr_fh3(dir);
    a.where.name = (char *)name;
    if (sa)
        a.symlink.symlink_attributes = *sa;
    a.symlink.symlink_data = (char *)target;
    nr_call *call = nr_begin(c, "SYMLINK", r, sizeof *r, nr_copy_symlink);
    if (!call || nr_finish(c, call, rpc_nfs3_symlink_async(c->rpc, nr_cb, &a, call), "SYMLINK"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_mknod(nr_ctx *c, const nr_fh *dir, const char *name, ftype3 type, const sattr3 *sa,
             uint32_t major, uint32_t minor, MKNOD3res *res)
{
    MKNOD3res local;
    MKNOD3res *r = res ? res : &local;
    MKNOD3args a;
    sattr3 none = nr_sattr_none();

    memset(&a, 0, sizeof a);
    a.where.dir = nr_fh3(dir);
    a.where.name = (char *)name;
    a.what.type = type;
    if (!sa)
        sa = &none;
    switch (type) {
    case NF3CHR:
        a.what.mknoddata3_u.chr_device.dev_attributes = *sa;
        a.what.mknoddata3_u.chr_device.spec.specdata1 = major;
        a.what.mknoddata3_u.chr_device.spec.specdata2 = minor;
        break;
    case NF3BLK:
        a.what.mknoddata3_u.blk_device.dev_attributes = *sa;
        a.what.mknoddata3_u.blk_device.spec.specdata1 = major;
        a.what.mknoddata3_u.blk_device.spec.specdata2 = minor;
        break;
    case NF3SOCK:
        a.what.mknoddata3_u.sock_attributes = *sa;
        break;
    case NF3FIFO:
        a.what.mknoddata3_u.pipe_attributes = *sa;
        break;
    default:
        break; /* the other types carry no data */
    }
    nr_call *call = nr_begin(c, "MKNOD", r, sizeof *r, nr_copy_mknod);
    if (!call || nr_finish(c, call, rpc_nfs3_mknod_async(c->rpc, nr_cb, &a, call), "MKNOD"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_remove(nr_ctx *c, const nr_fh *dir, const char *name, REMOVE3res *res)
{
    REMOVE3res local;
    REMOVE3res *r = res ? res : &local;
    REMOVE3args a = {.object = {.dir = nr_fh3(dir), .name = (char *)name}};
    nr_call *call = nr_begin(c, "REMOVE", r, sizeof *r, NULL);
    if (!call || nr_finish(c, call, rpc_nfs3_remove_async(c->rpc, nr_cb, &a, call), "REMOVE"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_rmdir(nr_ctx *c, const nr_fh *dir, const char *name, RMDIR3res *res)
{
    RMDIR3res local;
    RMDIR3res *r = res ? res : &local;
    RMDIR3args a = {.object = {.dir = nr_fh3(dir), .name = (char *)name}};
    nr_call *call = nr_begin(c, "RMDIR", r, sizeof *r, NULL);
    if (!call || nr_finish(c, call, rpc_nfs3_rmdir_async(c->rpc, nr_cb, &a, call), "RMDIR"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_rename(nr_ctx *c, const nr_fh *from_dir, const char *from_name, const nr_fh *to_dir,
              const char *to_name, RENAME3res *res)
{
    RENAME3res local;
    RENAME3res *r = res ? res : &local;
    RENAME3args a = {.from = {.dir = nr_fh3(from_dir), .name = (char *)from_name},
                     .to = {.dir = nr_fh3(to_dir), .name = (char *)to_name}};
    nr_call *call = nr_begin(c, "RENAME", r, sizeof *r, NULL);
    if (!call || nr_finish(c, call, rpc_nfs3_rename_async(c->rpc, nr_cb, &a, call), "RENAME"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_link(nr_ctx *c, const nr_fh *file, const nr_fh *dir, const char *name, LINK3res *res)
{
    LINK3res local;
    LINK3res *r = res ? res : &local;
    LINK3args a = {.file = nr_fh3(file), .link = {.dir = nr_fh3(dir), .name = (char *)name}};
    nr_call *call = nr_begin(c, "LINK", r, sizeof *r, NULL);
    if (!call || nr_finish(c, call, rpc_nfs3_link_async(c->rpc, nr_cb, &a, call), "LINK"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_readdir(nr_ctx *c, const nr_fh *dir, uint64_t cookie, const char *verf, uint32_t count,
               READDIR3res *res)
{
    READDIR3res local;
    READDIR3res *r = res ? res : &local;
    READDIR3args a;

    memset(&a, 0, sizeof a);
    a.dir = nr_fh3(dir);
    a.cookie = cookie;
    if (verf)
        memcpy(a.cookieverf, verf, NFS3_COOKIEVERFSIZE);
    a.count = count;
    nr_call *call = nr_begin(c, "READDIR", r, sizeof *r, nr_copy_readdir);
    if (!call || nr_finish(c, call, rpc_nfs3_readdir_async(c->rpc, nr_cb, &a, call), "READDIR"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_readdirplus(nr_ctx *c, const nr_fh *dir, uint64_t cookie, const char *verf,
                   uint32_t dircount, uint32_t maxcount, READDIRPLUS3res *res)
{
    READDIRPLUS3res local;
    READDIRPLUS3res *r = res ? res : &local;
    READDIRPLUS3args a;

    memset(&a, 0, sizeof a);
    a.dir = nr_fh3(dir);
    a.cookie = cookie;
    if (verf)
        memcpy(a.cookieverf, verf, NFS3_COOKIEVERFSIZE);
    a.dircount = dircount;
    a.maxcount = maxcount;
    nr_call *call = nr_begin(c, "READDIRPLUS", r, sizeof *r, nr_copy_readdirplus);
    if (!call ||
        nr_finish(c, call, rpc_nfs3_readdirplus_async(c->rpc, nr_cb, &a, call), "READDIRPLUS"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_fsstat(nr_ctx *c, const nr_fh *fh, FSSTAT3res *res)
{
    FSSTAT3res local;
    FSSTAT3res *r = res ? res : &local;
    FSSTAT3args a = {.fsroot = nr_fh3(fh)};
    nr_call *call = nr_begin(c, "FSSTAT", r, sizeof *r, NULL);
    if (!call || nr_finish(c, call, rpc_nfs3_fsstat_async(c->rpc, nr_cb, &a, call), "FSSTAT"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_fsinfo(nr_ctx *c, const nr_fh *fh, FSINFO3res *res)
{
    FSINFO3res local;
    FSINFO3res *r = res ? res : &local;
    FSINFO3args a = {.fsroot = nr_fh3(fh)};
    nr_call *call = nr_begin(c, "FSINFO", r, sizeof *r, NULL);
    if (!call || nr_finish(c, call, rpc_nfs3_fsinfo_async(c->rpc, nr_cb, &a, call), "FSINFO"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_pathconf(nr_ctx *c, const nr_fh *fh, PATHCONF3res *res)
{
    PATHCONF3res local;
    PATHCONF3res *r = res ? res : &local;
    PATHCONF3args a = {.object = nr_fh3(fh)};
    nr_call *call = nr_begin(c, "PATHCONF", r, sizeof *r, NULL);
    if (!call || nr_finish(c, call, rpc_nfs3_pathconf_async(c->rpc, nr_cb, &a, call), "PATHCONF"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

int nr_commit(nr_ctx *c, const nr_fh *fh, uint64_t offset, uint32_t count, COMMIT3res *res)
{
    COMMIT3res local;
    COMMIT3res *r = res ? res : &local;
    COMMIT3args a = {.file = nr_fh3(fh), .offset = offset, .count = count};
    nr_call *call = nr_begin(c, "COMMIT", r, sizeof *r, NULL);
    if (!call || nr_finish(c, call, rpc_nfs3_commit_async(c->rpc, nr_cb, &a, call), "COMMIT"))
        return NR_RPC_FAILED;
    return (int)r->status;
}

/* --- raw records ------------------------------------------------------------ */

void nr_xdr_u32(GByteArray *b, uint32_t v)
{
    uint32_t be = htonl(v);

    g_byte_array_append(b, (const guint8 *)&be, 4);
}

void nr_xdr_u64(GByteArray *b, uint64_t v)
{
    nr_xdr_u32(b, (uint32_t)(v >> 32));
    nr_xdr_u32(b, (uint32_t)v);
}

void nr_xdr_fixed(GByteArray *b, const void *p, uint32_t len)
{
    static const guint8 zeros[4];

    g_byte_array_append(b, p, len);
    if (len % 4)
        g_byte_array_append(b, zeros, 4 - len % 4);
}

void nr_xdr_opaque(GByteArray *b, const void *p, uint32_t len)
{
    nr_xdr_u32(b, len);
    nr_xdr_fixed(b, p, len);
}

void nr_xdr_string(GByteArray *b, const char *s)
{
    nr_xdr_opaque(b, s, (uint32_t)strlen(s));
}

void nr_xdr_fh(GByteArray *b, const nr_fh *fh)
{
    nr_xdr_opaque(b, fh->data, fh->len);
}

void nr_xdr_call(GByteArray *b, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                 const nr_cred *cred)
{
    nr_xdr_u32(b, xid);
    nr_xdr_u32(b, NR_MSG_CALL);
    nr_xdr_u32(b, 2);
    nr_xdr_u32(b, prog);
    nr_xdr_u32(b, vers);
    nr_xdr_u32(b, proc);
    if (cred) {
        GByteArray *body = g_byte_array_new();
        nr_xdr_u32(body, 0); /* stamp */
        nr_xdr_string(body, "pgnfs-test");
        nr_xdr_u32(body, cred->uid);
        nr_xdr_u32(body, cred->gid);
        nr_xdr_u32(body, cred->ngroups);
        for (uint32_t i = 0; i < cred->ngroups; i++)
            nr_xdr_u32(body, cred->groups[i]);
        nr_xdr_u32(b, NR_AUTH_SYS);
        nr_xdr_opaque(b, body->data, body->len);
        g_byte_array_unref(body);
    } else {
        nr_xdr_u32(b, NR_AUTH_NONE);
        nr_xdr_u32(b, 0);
    }
    nr_xdr_u32(b, NR_AUTH_NONE); /* verifier */
    nr_xdr_u32(b, 0);
}

int nr_raw_connect(unsigned port)
{
    return nr_raw_connect_from(port, 0);
}

int nr_raw_connect_from(unsigned port, unsigned local_port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;

    if (fd < 0)
        return -1;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (local_port) {
        struct sockaddr_in l = {.sin_family = AF_INET, .sin_port = htons((uint16_t)local_port)};
        l.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, (struct sockaddr *)&l, sizeof l) != 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
    }
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int nr_raw_connect_addr(unsigned port, const char *local, unsigned local_port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct sockaddr_in l = {.sin_family = AF_INET};
    int one = 1;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (inet_pton(AF_INET, local ? local : "127.0.0.1", &l.sin_addr) != 1) {
        errno = EINVAL;
        return -1;
    }
    /* Privileged: try ports downwards from 1023 until one is free. */
    unsigned first = local_port == NR_PORT_PRIVILEGED ? 1023 : local_port;
    unsigned last = local_port == NR_PORT_PRIVILEGED ? 512 : local_port;
    for (unsigned p = first;; p--) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        l.sin_port = htons((uint16_t)p);
        if (bind(fd, (struct sockaddr *)&l, sizeof l) == 0 &&
            connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
            return fd;
        int e = errno;
        close(fd);
        errno = e;
        if (local_port != NR_PORT_PRIVILEGED || (e != EADDRINUSE && e != EADDRNOTAVAIL))
            return -1;
        if (p == last)
            break;
    }
    return -1;
}

GByteArray *nr_raw_call(int fd, const GByteArray *rec, int timeout_ms)
{
    if (nr_raw_send(fd, rec->data, rec->len) != 0)
        return NULL;
    return nr_raw_recv(fd, timeout_ms);
}

unsigned nr_raw_local_port(int fd)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;

    if (getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        return 0;
    return ntohs(a.sin_port);
}

void nr_raw_abort(int fd)
{
    struct linger l = {.l_onoff = 1, .l_linger = 0};

    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close(fd);
}

static int nr_write_all(int fd, const void *p, size_t len)
{
    const char *q = p;

    while (len > 0) {
        ssize_t n = send(fd, q, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        q += n;
        len -= (size_t)n;
    }
    return 0;
}

int nr_raw_send(int fd, const void *rec, size_t len)
{
    uint32_t mark = htonl(0x80000000u | (uint32_t)len);

    if (nr_write_all(fd, &mark, 4) != 0)
        return -1;
    return nr_write_all(fd, rec, len);
}

/* Read exactly len bytes before the deadline; 0, or -1 on EOF/timeout/error. */
static int nr_read_all(int fd, void *p, size_t len, gint64 deadline)
{
    char *q = p;

    while (len > 0) {
        gint64 left = (deadline - g_get_monotonic_time()) / 1000;
        if (left <= 0)
            return -1;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int n = poll(&pfd, 1, (int)left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        ssize_t got = recv(fd, q, len, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        q += got;
        len -= (size_t)got;
    }
    return 0;
}

GByteArray *nr_raw_recv(int fd, int timeout_ms)
{
    gint64 deadline = g_get_monotonic_time() + (gint64)timeout_ms * 1000;
    GByteArray *rec = g_byte_array_new();

    for (;;) {
        uint32_t mark;
        if (nr_read_all(fd, &mark, 4, deadline) != 0)
            goto err;
        mark = ntohl(mark);
        uint32_t len = mark & 0x7fffffffu;
        if (len > 64u * 1024 * 1024)
            goto err;
        guint old = rec->len;
        g_byte_array_set_size(rec, old + len);
        if (nr_read_all(fd, rec->data + old, len, deadline) != 0)
            goto err;
        if (mark & 0x80000000u)
            return rec;
    }
err:
    g_byte_array_unref(rec);
    return NULL;
}

bool nr_raw_wait_closed(int fd, int timeout_ms)
{
    gint64 deadline = g_get_monotonic_time() + (gint64)timeout_ms * 1000;
    char buf[4096];

    for (;;) {
        gint64 left = (deadline - g_get_monotonic_time()) / 1000;
        if (left <= 0)
            return false;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int n = poll(&pfd, 1, (int)left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        ssize_t got = recv(fd, buf, sizeof buf, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return true;
    }
}

int nr_udp_connect(unsigned port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -1;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int nr_udp_connect_addr(unsigned port, const char *local, unsigned local_port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct sockaddr_in l = {.sin_family = AF_INET};

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (inet_pton(AF_INET, local ? local : "127.0.0.1", &l.sin_addr) != 1) {
        errno = EINVAL;
        return -1;
    }
    /* Privileged: try ports downwards from 1023 until one is free. */
    unsigned first = local_port == NR_PORT_PRIVILEGED ? 1023 : local_port;
    unsigned last = local_port == NR_PORT_PRIVILEGED ? 512 : local_port;
    for (unsigned p = first;; p--) {
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        l.sin_port = htons((uint16_t)p);
        if (bind(fd, (struct sockaddr *)&l, sizeof l) == 0 &&
            connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
            return fd;
        int e = errno;
        close(fd);
        errno = e;
        if (local_port != NR_PORT_PRIVILEGED || (e != EADDRINUSE && e != EADDRNOTAVAIL))
            return -1;
        if (p == last)
            break;
    }
    return -1;
}

int nr_udp_send(int fd, const void *msg, size_t len)
{
    return send(fd, msg, len, 0) == (ssize_t)len ? 0 : -1;
}

GByteArray *nr_udp_recv(int fd, int timeout_ms)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    GByteArray *msg;

    if (poll(&pfd, 1, timeout_ms) <= 0)
        return NULL;
    msg = g_byte_array_sized_new(65536);
    g_byte_array_set_size(msg, 65536);
    ssize_t n = recv(fd, msg->data, msg->len, 0);
    if (n < 0) {
        g_byte_array_unref(msg);
        return NULL;
    }
    g_byte_array_set_size(msg, (guint)n);
    return msg;
}

uint32_t nr_get_u32(const GByteArray *rec, size_t off)
{
    uint32_t v;

    if (off + 4 > rec->len)
        return 0;
    memcpy(&v, rec->data + off, 4);
    return ntohl(v);
}

bool nr_reply_parse(const GByteArray *rec, nr_reply *out)
{
    size_t off = 0;

    memset(out, 0, sizeof *out);
    if (rec->len < 12)
        return false;
    /* Not accepted until the reply says so: no accidental SUCCESS. */
    out->accept_stat = UINT32_MAX;
    out->xid = nr_get_u32(rec, 0);
    out->msg_type = nr_get_u32(rec, 4);
    out->reply_stat = nr_get_u32(rec, 8);
    off = 12;
    if (out->msg_type != NR_MSG_REPLY)
        return false;
    if (out->reply_stat == NR_MSG_DENIED) {
        if (rec->len < off + 8)
            return false;
        out->reject_stat = nr_get_u32(rec, off);
        if (out->reject_stat == NR_RPC_MISMATCH) {
            out->low = nr_get_u32(rec, off + 4);
            out->high = nr_get_u32(rec, off + 8);
        } else {
            out->auth_stat = nr_get_u32(rec, off + 4);
        }
        return true;
    }
    if (out->reply_stat != NR_MSG_ACCEPTED)
        return false;
    /* verifier: flavor, opaque body */
    uint32_t vlen = nr_get_u32(rec, off + 4);
    off += 8 + ((vlen + 3) & ~3u);
    if (rec->len < off + 4)
        return false;
    out->accept_stat = nr_get_u32(rec, off);
    off += 4;
    if (out->accept_stat == NR_PROG_MISMATCH) {
        if (rec->len < off + 8)
            return false;
        out->low = nr_get_u32(rec, off);
        out->high = nr_get_u32(rec, off + 4);
    }
    out->body = off;
    return true;
}

const char *nr_stat_name(int nfsstat)
{
    if (nfsstat == NR_RPC_FAILED)
        return "RPC_FAILED";
    return nfsstat3_to_str(nfsstat);
}
