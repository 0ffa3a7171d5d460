/*
 * nlm4_args.c -- NLM arguments as dbfs's lock calls take them, and their
 * outcomes as NLM statuses (nlm4_int.h): the file handle (our NFS handle,
 * checked, admitted and squashed by exp_fh_in as NFS does), the owner
 * (caller_name, svid, oh), the 64-bit range, the addresses, the holder in
 * a denied reply.
 *
 * NOTES
 *   Statuses follow Linux's lockd (fs/lockd/svc4proc.c, fs/nfsd/lockd.c):
 *   a stale handle is NLM4_STALE_FH; a handle that is not ours, a caller
 *   the export does not admit, a missing permission, something that is
 *   not a regular file and an exclusive lock on a read-only export are
 *   NLM4_FAILED; a range past 2^63 - 1 is NLM4_FBIG; a database that is
 *   away drops the call so that the client sends it again.
 *
 *   Memory: what points into the arguments stays valid until the reply is
 *   encoded; copies go to request memory.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <string.h>

#include "nlm4_int.h"
#include "exp.h"

/* nlm4_file_in -- see nlm4_int.h. */
nlm4_stats nlm4_file_in(srv_req *req, const nlm_netobj *fh, dbfs_fh *out)
{
    int err = exp_fh_in(req, fh->nlm_netobj_val, fh->nlm_netobj_len, out);

    /* A snapshot's file is read-only and nobody can change it: no locks. */
    if (err == 0 && out->snap != 0)
        return NLM4_ROFS;
    if (err == 0)
        return NLM4_GRANTED;
    return err == -ESTALE ? NLM4_STALE_FH : NLM4_FAILED;
}

/* nlm4_range_in -- see nlm4_int.h. */
nlm4_stats nlm4_range_in(uint64_t l_offset, uint64_t l_len, bool excl, dbfs_lock_range *out)
{
    uint64_t last;

    if (l_offset > DBFS_LOCK_OFFSET_MAX)
        return NLM4_FBIG;
    out->start = l_offset;
    out->excl = excl;
    if (l_len == 0) {
        out->end = DBFS_LOCK_EOF;
        return NLM4_GRANTED;
    }
    if (l_len - 1 > DBFS_LOCK_OFFSET_MAX - l_offset)
        return NLM4_FBIG;
    last = l_offset + (l_len - 1);
    out->end = last == DBFS_LOCK_OFFSET_MAX ? DBFS_LOCK_EOF : last + 1;
    return NLM4_GRANTED;
}

/* nlm4_unmap -- see nlm4_int.h. */
void nlm4_unmap(struct sockaddr_storage *sa, socklen_t *len)
{
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
    struct sockaddr_in s4 = {.sin_family = AF_INET};

    if (sa->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
        return;
    s4.sin_port = s6->sin6_port;
    memcpy(&s4.sin_addr, &s6->sin6_addr.s6_addr[12], 4);
    memset(sa, 0, sizeof *sa);
    memcpy(sa, &s4, sizeof s4);
    *len = sizeof s4;
}

/* nlm4_addr_text -- see nlm4_int.h. */
void nlm4_addr_text(const struct sockaddr *sa, socklen_t len, char *buf, size_t size)
{
    struct sockaddr_storage ss;

    buf[0] = 0;
    if (len == 0 || len > sizeof ss || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
        return;
    memcpy(&ss, sa, len);
    nlm4_unmap(&ss, &len);
    if (getnameinfo((const struct sockaddr *)&ss, len, buf, (socklen_t)size, NULL, 0,
                    NI_NUMERICHOST) != 0)
        buf[0] = 0;
}

/* nlm4_lock_in -- see nlm4_int.h. */
nlm4_stats nlm4_lock_in(srv_req *req, const nlm4_lock *l, bool excl, nlm4_call *c)
{
    nlm4_stats st;

    memset(c, 0, sizeof *c);
    st = nlm4_range_in(l->l_offset, l->l_len, excl, &c->range);
    if (st == NLM4_GRANTED)
        st = nlm4_file_in(req, &l->fh, &c->fh);
    if (st != NLM4_GRANTED)
        return st;
    c->owner.host = l->caller_name.nlm_name_val;
    c->owner.host_len = l->caller_name.nlm_name_len;
    c->owner.svid = (int64_t)(uint32_t)l->svid;
    c->owner.oh = l->oh.nlm_netobj_val;
    c->owner.oh_len = l->oh.nlm_netobj_len;
    nlm4_addr_text((const struct sockaddr *)&req->peer, req->peerlen, c->addr, sizeof c->addr);
    nlm4_addr_text((const struct sockaddr *)&req->local, req->locallen, c->local, sizeof c->local);
    return NLM4_GRANTED;
}

/* nlm4_stat_of -- see nlm4_int.h. */
nlm4_stats nlm4_stat_of(dbfs_lock_outcome o)
{
    switch (o) {
    case DBFS_LOCK_GRANTED:
        return NLM4_GRANTED;
    case DBFS_LOCK_DENIED:
        return NLM4_DENIED;
    case DBFS_LOCK_BLOCKED:
        return NLM4_BLOCKED;
    case DBFS_LOCK_GRACE:
        return NLM4_DENIED_GRACE_PERIOD;
    case DBFS_LOCK_NOLOCKS:
        return NLM4_DENIED_NOLOCKS;
    case DBFS_LOCK_DEADLOCK:
        return NLM4_DEADLCK;
    }
    return NLM4_FAILED;
}

/* nlm4_stat_err -- see nlm4_int.h. */
nlm4_stats nlm4_stat_err(srv_req *req, int err)
{
    switch (err) {
    case -ESTALE:
        return NLM4_STALE_FH;
    case -EACCES:
    case -EINVAL:
        return NLM4_FAILED;
    case -ENOMEM:
        return NLM4_DENIED_NOLOCKS;
    case -EAGAIN:
        srv_req_drop(req);
        return NLM4_DENIED_NOLOCKS;
    default:
        g_warning("nlm: %s: %s", req->prog->procs[req->proc].name, g_strerror(-err));
        return NLM4_FAILED;
    }
}

/* nlm4_holder_out -- see nlm4_int.h. A lock to the end of the file has
 * length 0, as one that reaches the last byte. */
void nlm4_holder_out(srv_req *req, const dbfs_lock_holder *h, nlm4_holder *out)
{
    out->exclusive = h->excl;
    out->svid = (int)(uint32_t)h->svid;
    out->oh.nlm_netobj_len = (u_int)h->oh_len;
    out->oh.nlm_netobj_val = srv_req_alloc(req, h->oh_len ? h->oh_len : 1);
    memcpy(out->oh.nlm_netobj_val, h->oh, h->oh_len);
    out->l_offset = h->start;
    out->l_len = h->end == DBFS_LOCK_EOF ? 0 : h->end - h->start;
}
