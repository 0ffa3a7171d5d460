/*
 * mnt3.c -- the MOUNT version 3 protocol (program 100005, RFC 1813
 * section 5): NULL, MNT, DUMP, UMNT, UMNTALL, EXPORT, and the program as
 * it registers with the RPC runtime (mnt3_program.h). Without a database
 * connection MOUNT calls other than NULL are dropped, and so is an MNT
 * whose walk meets the database away (-EAGAIN: restarting, or the
 * connection just lost): the client retries (MOUNT has no "try again
 * later" status, and MNT3ERR_IO would end a mount that a moment later
 * works).
 *
 * NOTES
 *   MNT accepts an export's path or any directory below it, as Linux
 *   mountd does; the handle it gives out carries the index of the export
 *   that contains the path, so LOOKUP ".." stops at that export's root.
 *   Among the exports that contain the path and admit the client, the
 *   longest (most specific) path wins. A path no export contains, or one
 *   whose exports do not admit the client, is MNT3ERR_ACCES (with a log
 *   line). The empty path means "/" (libnfs sends it for files in the
 *   root; Linux mountd takes it so). Paths are taken apart at '/': empty
 *   and "." components are ignored, ".." is MNT3ERR_INVAL (it could climb
 *   out of an export), a component over 255 bytes is MNT3ERR_NAMETOOLONG.
 *   The path is then
 *   walked from the file-system root as root (uid 0) with dbfs_lookup:
 *   missing is MNT3ERR_NOENT, a non-directory MNT3ERR_NOTDIR.
 *
 *   A dirpath holding a NUL byte is GARBAGE_ARGS for MNT and UMNT: the
 *   path arrives with its byte count (rpc/mount3.x declares it opaque) and
 *   mnt3_args_dirpath() refuses it while decoding, so it cannot pass for
 *   the shorter path before the NUL.
 *
 *   The mount list (DUMP) holds (client address, normalized path) pairs in
 *   srv->mounts, under srv->mounts_lock. Entries, and both their strings,
 *   are allocated with g_malloc (g_new0/g_strdup) and owned by the
 *   srv_ctx; UMNT and UMNTALL free what they remove, and whoever tears
 *   down the srv_ctx frees the rest with g_free. The list is advisory
 *   (RFC 1813 5.2.4) and bounded: beyond MNT3_MOUNTS_MAX entries new mounts
 *   still succeed but are not listed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <string.h>

#include <glib.h>

#include "mnt3_program.h"
#include "mount3.h"
#include "nfs3_proc.h"

#define MNT3_MOUNTS_MAX 4096

/*
 * mnt3_normalize -- `in` as "/a/b" (no empty or "." components, no
 * trailing '/'; "" is "/") into out (MNTPATHLEN + 1 bytes). Returns MNT3_OK,
 * MNT3ERR_INVAL (not absolute, or has ".."), MNT3ERR_NAMETOOLONG.
 */
static mountstat3 mnt3_normalize(const char *in, char out[MNTPATHLEN + 1])
{
    size_t o = 0;

    if (in && in[0] == '\0')
        in = "/"; /* libnfs asks for "" when it means the root, as mountd allows */
    if (!in || in[0] != '/')
        return MNT3ERR_INVAL;
    out[o++] = '/';
    for (const char *p = in; *p;) {
        while (*p == '/')
            p++;
        size_t n = strcspn(p, "/");
        if (n == 0 || (n == 1 && p[0] == '.')) {
            p += n;
            continue;
        }
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return MNT3ERR_INVAL;
        if (n > DBFS_NAME_MAX)
            return MNT3ERR_NAMETOOLONG;
        if (o > 1)
            out[o++] = '/';
        if (o + n > MNTPATHLEN)
            return MNT3ERR_NAMETOOLONG;
        memcpy(out + o, p, n);
        o += n;
        p += n;
    }
    out[o] = '\0';
    return MNT3_OK;
}

/*
 * mnt3_args_dirpath -- the srv_proc.args_xdr of MNT and UMNT: rpcgen's
 * xdr_dirpath, and after a decode FALSE (GARBAGE_ARGS) for a path holding a
 * NUL byte. XDR_FREE goes to xdr_dirpath alone.
 */
static bool_t mnt3_args_dirpath(XDR *x, dirpath *p)
{
    if (!xdr_dirpath(x, p))
        return FALSE;
    return x->x_op != XDR_DECODE || p->dirpath_len == 0 ||
           memchr(p->dirpath_val, '\0', p->dirpath_len) == NULL;
}

/* The decoded path as a C string in request memory (no NUL inside: see
 * mnt3_args_dirpath). */
static const char *mnt3_path_in(srv_req *req, const dirpath *p)
{
    char *s = srv_req_alloc(req, (size_t)p->dirpath_len + 1);

    if (p->dirpath_len)
        memcpy(s, p->dirpath_val, p->dirpath_len);
    return s;
}

/* The C string s as a dirpath, copied into request memory. */
static dirpath mnt3_path_out(srv_req *req, const char *s)
{
    return (dirpath){.dirpath_len = (u_int)strlen(s), .dirpath_val = srv_req_strdup(req, s)};
}

/* Is normalized `path` the export path `exp` or below it? */
static bool mnt3_under(const char *exp, const char *path)
{
    size_t n = strlen(exp);

    if (strcmp(exp, "/") == 0)
        return true;
    return strncmp(exp, path, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int mnt3_resolve(srv_req *req, const char *path, dbfs_attr *out)
{
    const dbfs_cred root = {.uid = 0, .gid = 0, .ngroups = 0};
    dbfs_fh cur = {.ino = DBFS_ROOT_INO, .gen = req->srv->info->root_gen};
    char comp[DBFS_NAME_MAX + 1];
    bool walked = false;

    for (const char *p = path; *p;) {
        while (*p == '/')
            p++;
        size_t n = strcspn(p, "/");
        if (n == 0)
            break;
        if (n > DBFS_NAME_MAX)
            return -ENAMETOOLONG;
        memcpy(comp, p, n);
        comp[n] = '\0';
        p += n;
        dbfs_attr_opt dir_attr;
        int err = dbfs_lookup(req->db, &root, cur, comp, out, &dir_attr);
        if (err != 0)
            return err;
        cur.ino = out->ino;
        cur.gen = out->gen;
        walked = true;
    }
    return walked ? 0 : dbfs_getattr(req->db, cur, out);
}

static mountstat3 mnt3_stat(int err)
{
    switch (-err) {
    case 0:
        return MNT3_OK;
    case ENOENT:
    case ESTALE:
        return MNT3ERR_NOENT;
    case ENOTDIR:
        return MNT3ERR_NOTDIR;
    case EACCES:
        return MNT3ERR_ACCES;
    case EPERM:
        return MNT3ERR_PERM;
    case ENAMETOOLONG:
        return MNT3ERR_NAMETOOLONG;
    case EINVAL:
        return MNT3ERR_INVAL;
    default:
        return MNT3ERR_IO;
    }
}

/* Add (host, path) to the mount list unless it is there (or the list is full). */
static void mnt3_record(srv_ctx *srv, const char *host, const char *path)
{
    unsigned n = 0;
    bool found = false;

    pthread_mutex_lock(&srv->mounts_lock);
    for (const exp_mount *m = srv->mounts; m && !found; m = m->next, n++)
        found = strcmp(m->host, host) == 0 && strcmp(m->path, path) == 0;
    if (!found && n < MNT3_MOUNTS_MAX) {
        exp_mount *m = g_new0(exp_mount, 1);
        m->host = g_strdup(host);
        m->path = g_strdup(path);
        m->next = srv->mounts;
        srv->mounts = m;
    }
    pthread_mutex_unlock(&srv->mounts_lock);
}

/* Remove host's entries for path (every entry of host if path is NULL). */
static void mnt3_forget(srv_ctx *srv, const char *host, const char *path)
{
    pthread_mutex_lock(&srv->mounts_lock);
    for (exp_mount **pp = &srv->mounts; *pp;) {
        exp_mount *m = *pp;
        if (strcmp(m->host, host) == 0 && (!path || strcmp(m->path, path) == 0)) {
            *pp = m->next;
            g_free(m->host);
            g_free(m->path);
            g_free(m);
        } else {
            pp = &m->next;
        }
    }
    pthread_mutex_unlock(&srv->mounts_lock);
}

/* NULL: do nothing (RFC 1813 5.2.0). */
static void mnt3_proc_null(srv_req *req, void *argp, void *resp)
{
    (void)req;
    (void)argp;
    (void)resp;
}

/* MNT: the root handle of an exported directory (RFC 1813 5.2.1). */
static void mnt3_proc_mnt(srv_req *req, void *argp, void *resp)
{
    const char *arg = mnt3_path_in(req, argp);
    mountres3 *res = resp;
    const cfg *conf = req->srv->cfg;
    char path[MNTPATHLEN + 1], host[NI_MAXHOST];
    const cfg_export *best = NULL;
    dbfs_attr attr;
    mountstat3 st;

    srv_peer_host(req, host, sizeof host);
    st = mnt3_normalize(arg, path);
    for (unsigned i = 0; st == MNT3_OK && i < conf->nexports; i++) {
        const cfg_export *e = &conf->exports[i];
        if (!mnt3_under(e->path, path))
            continue;
        const cfg_client *c =
            exp_client_match(e, (const struct sockaddr *)&req->peer, req->peerlen);
        if (!c || (c->secure && srv_peer_port(req) >= 1024))
            continue;
        if (!best || strlen(e->path) > strlen(best->path))
            best = e;
    }
    if (st == MNT3_OK && !best) {
        char *shown = g_strescape(path, NULL);
        g_message("mount: %s refused: no export of %s admits it", host, shown);
        g_free(shown);
        st = MNT3ERR_ACCES;
    }
    if (st == MNT3_OK && best - conf->exports > 0xff) {
        g_warning("mount: export %s is beyond the 256 a file handle can name", best->path);
        st = MNT3ERR_SERVERFAULT;
    }
    if (st == MNT3_OK) {
        int err = mnt3_resolve(req, path, &attr);

        if (err == -EAGAIN) {
            char *shown = g_strescape(path, NULL);
            g_info("mount: %s asked for \"%s\" while the database is away: no answer (the "
                   "client asks again)",
                   host, shown);
            g_free(shown);
            srv_req_drop(req);
            return;
        }
        st = mnt3_stat(err);
    }
    if (st == MNT3_OK && attr.type != DBFS_DIR)
        st = MNT3ERR_NOTDIR;
    res->fhs_status = st;
    if (st != MNT3_OK) {
        char *shown = g_strescape(arg, NULL); /* the client's bytes */
        g_info("mount: %s asked for \"%s\": status %d", host, shown, (int)st);
        g_free(shown);
        return;
    }

    mountres3_ok *ok = &res->mountres3_u.mountinfo;
    unsigned char *fh = srv_req_alloc(req, FH_SIZE);
    fh_encode(req->srv->info, (unsigned)(best - conf->exports),
              (dbfs_fh){.ino = attr.ino, .gen = attr.gen}, fh);
    ok->fhandle.fhandle3_val = (char *)fh;
    ok->fhandle.fhandle3_len = FH_SIZE;
    int *flavors = srv_req_alloc(req, sizeof *flavors);
    flavors[0] = AUTH_SYS;
    ok->auth_flavors.auth_flavors_val = flavors;
    ok->auth_flavors.auth_flavors_len = 1;
    mnt3_record(req->srv, host, path);
    char *shown = g_strescape(path, NULL);
    g_info("mount: %s mounted %s (export %s)", host, shown, best->path);
    g_free(shown);
}

/* DUMP: the mount list (RFC 1813 5.2.2). */
static void mnt3_proc_dump(srv_req *req, void *argp, void *resp)
{
    mountlist *res = resp;
    srv_ctx *srv = req->srv;
    mountlist head = NULL, *tail = &head;

    (void)argp;
    pthread_mutex_lock(&srv->mounts_lock);
    for (const exp_mount *m = srv->mounts; m; m = m->next) {
        mountbody *b = srv_req_alloc(req, sizeof *b);
        b->ml_hostname = srv_req_strdup(req, m->host);
        b->ml_directory = mnt3_path_out(req, m->path);
        *tail = b;
        tail = &b->ml_next;
    }
    pthread_mutex_unlock(&srv->mounts_lock);
    *res = head;
}

/* UMNT: remove one entry of the mount list (RFC 1813 5.2.3). */
static void mnt3_proc_umnt(srv_req *req, void *argp, void *resp)
{
    char path[MNTPATHLEN + 1], host[NI_MAXHOST];

    (void)resp;
    if (mnt3_normalize(mnt3_path_in(req, argp), path) != MNT3_OK)
        return;
    srv_peer_host(req, host, sizeof host);
    mnt3_forget(req->srv, host, path);
}

/* UMNTALL: remove every entry of this client (RFC 1813 5.2.4). */
static void mnt3_proc_umntall(srv_req *req, void *argp, void *resp)
{
    char host[NI_MAXHOST];

    (void)argp;
    (void)resp;
    srv_peer_host(req, host, sizeof host);
    mnt3_forget(req->srv, host, NULL);
}

/* A client pattern as exports(5) would write it. */
static char *mnt3_client_string(srv_req *req, const cfg_client *c)
{
    char addr[INET6_ADDRSTRLEN], buf[INET6_ADDRSTRLEN + 8];

    switch (c->kind) {
    case CFG_CLIENT_ANY:
        return srv_req_strdup(req, "*");
    case CFG_CLIENT_HOST:
        return srv_req_strdup(req, c->host ? c->host : "");
    case CFG_CLIENT_NET:
        if (!inet_ntop(c->family, c->addr, addr, sizeof addr))
            return srv_req_strdup(req, "?");
        if (c->prefix == (c->family == AF_INET ? 32u : 128u))
            return srv_req_strdup(req, addr);
        g_snprintf(buf, sizeof buf, "%s/%u", addr, c->prefix);
        return srv_req_strdup(req, buf);
    }
    return srv_req_strdup(req, "?");
}

/* EXPORT: every export and the clients it admits (RFC 1813 5.2.5). */
static void mnt3_proc_export(srv_req *req, void *argp, void *resp)
{
    exports *res = resp;
    const cfg *conf = req->srv->cfg;
    exports head = NULL, *tail = &head;

    (void)argp;
    for (unsigned i = 0; i < conf->nexports; i++) {
        const cfg_export *e = &conf->exports[i];
        exportnode *x = srv_req_alloc(req, sizeof *x);
        groups *gtail = &x->ex_groups;
        x->ex_dir = mnt3_path_out(req, e->path);
        for (unsigned j = 0; j < e->nclients; j++) {
            groupnode *g = srv_req_alloc(req, sizeof *g);
            g->gr_name = mnt3_client_string(req, &e->clients[j]);
            *gtail = g;
            gtail = &g->gr_next;
        }
        *tail = x;
        tail = &x->ex_next;
    }
    *res = head;
}

static const srv_proc mnt3_procs[] = {
    [MOUNTPROC3_NULL] = {.name = "NULL",
                         .args_xdr = NFS3_XDR_VOID,
                         .res_xdr = NFS3_XDR_VOID,
                         .handler = mnt3_proc_null},
    [MOUNTPROC3_MNT] = {.name = "MNT",
                        .args_xdr = (xdrproc_t)mnt3_args_dirpath,
                        .res_xdr = (xdrproc_t)xdr_mountres3,
                        .args_size = sizeof(dirpath),
                        .res_size = sizeof(mountres3),
                        .handler = mnt3_proc_mnt},
    [MOUNTPROC3_DUMP] = {.name = "DUMP",
                         .args_xdr = NFS3_XDR_VOID,
                         .res_xdr = (xdrproc_t)xdr_mountlist,
                         .res_size = sizeof(mountlist),
                         .handler = mnt3_proc_dump},
    [MOUNTPROC3_UMNT] = {.name = "UMNT",
                         .args_xdr = (xdrproc_t)mnt3_args_dirpath,
                         .res_xdr = NFS3_XDR_VOID,
                         .args_size = sizeof(dirpath),
                         .handler = mnt3_proc_umnt},
    [MOUNTPROC3_UMNTALL] = {.name = "UMNTALL",
                            .args_xdr = NFS3_XDR_VOID,
                            .res_xdr = NFS3_XDR_VOID,
                            .handler = mnt3_proc_umntall},
    [MOUNTPROC3_EXPORT] = {.name = "EXPORT",
                           .args_xdr = NFS3_XDR_VOID,
                           .res_xdr = (xdrproc_t)xdr_exports,
                           .res_size = sizeof(exports),
                           .handler = mnt3_proc_export},
};

const srv_program mnt3_program = {
    .name = "mount3",
    .prog = MOUNT_PROGRAM,
    .vers = MOUNT_V3,
    .procs = mnt3_procs,
    .nprocs = G_N_ELEMENTS(mnt3_procs),
    .auth = SRV_AUTH_SYS,
    .needs_db = true,
};
