/*
 * exp_fh.c -- a file handle as a program receives it (exp_fh_in,
 * exp.h): the handle's MAC and file system checked (fh.c), its
 * export found, the caller admitted by that export, and the caller's
 * credential squashed as the export says. NFS, MOUNT and NLM take their
 * handles through it, so each admits and squashes the same way.
 *
 * NOTES
 *   What the caller did wrong is logged through srv_req_complain (rate
 *   limited per client). No state besides the request's fields it sets.
 */
#include <errno.h>

#include "fh.h"
#include "exp.h"

/*
 * The export of handle d that admits the caller, or NULL with *err set
 * (-ESTALE: the export is gone; -EACCES: not admitted, or a secure export
 * reached from an unprivileged port) and a rate-limited log line.
 */
static const cfg_client *exp_fh_client(srv_req *req, const fh_decoded *d, const cfg_export **e,
                                       int *err)
{
    const cfg *conf = req->srv->cfg;
    const cfg_client *c;

    *err = -ESTALE;
    if (d->export_index >= conf->nexports) {
        srv_req_complain(req, "handle for export %u, which is no longer configured",
                         d->export_index);
        return NULL;
    }
    *e = &conf->exports[d->export_index];
    *err = -EACCES;
    c = exp_client_match(*e, (const struct sockaddr *)&req->peer, req->peerlen);
    if (!c) {
        srv_req_complain(req, "not admitted by export %s", (*e)->path);
        return NULL;
    }
    if (c->secure && srv_peer_port(req) >= 1024) {
        srv_req_complain(req, "unprivileged port %u; export %s is secure", srv_peer_port(req),
                         (*e)->path);
        return NULL;
    }
    return c;
}

/* exp_fh_in -- see exp.h. */
int exp_fh_in(srv_req *req, const void *data, size_t len, dbfs_fh *out)
{
    const cfg_export *e = NULL;
    const cfg_client *c;
    fh_decoded d;
    int err;

    err = fh_decode(req->srv->info, data, len, &d);
    if (err == -ESTALE)
        srv_req_complain(req, "handle of another file system (xid 0x%08x)", req->xid);
    else if (err != 0)
        srv_req_complain(req, "bad file handle (%zu bytes)", len);
    if (err != 0)
        return err;
    c = exp_fh_client(req, &d, &e, &err);
    if (!c)
        return err;
    req->export = e;
    req->client = c;
    exp_cred_squash(&req->auth, c, &req->cred);
    *out = d.fh;
    return 0;
}
