/*
 * pmap_procs.c -- the built-in portmapper's procedures (RFC 1833,
 * rpc/pmap.x), one handler each, and its three program versions as they
 * register with the RPC runtime (pmap_programs, pmap_table.h):
 *
 *   PORTMAP v2  NULL, SET, UNSET, GETPORT, DUMP; CALLIT is PROC_UNAVAIL
 *   rpcbind v3  NULL, SET, UNSET, GETADDR, DUMP, GETTIME; the rest is
 *               PROC_UNAVAIL
 *   rpcbind v4  the same, and GETVERSADDR
 *
 * SET and UNSET answer false: the portmapper knows pgnfsd's own programs
 * only and refuses registrations from anyone else. DUMP is answered over
 * TCP only (over UDP the runtime answers PROC_UNAVAIL, srv_proc.tcp_only):
 * its reply is many times the size of the call, which would make an open
 * UDP port 111 a traffic amplifier for spoofed requests (the classic
 * rpcbind abuse). No other reply is larger than its call by more than a
 * few words.
 *
 * NOTES
 *   Handlers read the mapping table (req->prog->ctx), which is immutable
 *   while the runtime serves; results live in request memory.
 */
#include <string.h>
#include <time.h>

#include <glib.h>

#include "pmap_int.h"

/* Room for a universal address. */
#define PMAP_ADDR_LEN 64

static const pmap_table *pmap_of(const srv_req *req)
{
    return req->prog->ctx;
}

/* NULL (every version): do nothing. */
static void pmap_proc_null(srv_req *req, void *args, void *res)
{
    (void)req;
    (void)args;
    (void)res;
}

/* PMAPPROC_SET, PMAPPROC_UNSET: refused (the result stays FALSE). */
static void pmap_proc_set2(srv_req *req, void *args, void *res)
{
    const pgnfs_pmap_mapping *m = args;

    (void)res;
    g_debug("portmapper: refused %s of program %u version %u (only pgnfsd's own programs are "
            "served)",
            req->proc == PGNFS_PMAPPROC_SET ? "SET" : "UNSET", m->prog, m->vers);
}

/* PMAPPROC_GETPORT: the port of (prog, vers, prot), 0 if not served. */
static void pmap_proc_getport(srv_req *req, void *args, void *res)
{
    const pgnfs_pmap_mapping *m = args;
    const pmap_map *found = pmap_find(pmap_of(req), m->prog, m->vers, m->prot, false);

    *(u_int *)res = found ? found->port : 0;
}

/* PMAPPROC_DUMP: every mapping. */
static void pmap_proc_dump2(srv_req *req, void *args, void *res)
{
    (void)args;
    *(pgnfs_pmap_dump_res *)res = pmap_dump_v2(pmap_of(req), req);
}

/* RPCBPROC_SET, RPCBPROC_UNSET: refused (the result stays FALSE). */
static void pmap_proc_set34(srv_req *req, void *args, void *res)
{
    const pgnfs_rpcb *q = args;

    (void)res;
    g_debug("portmapper: refused rpcbind %s of program %u version %u",
            req->proc == PGNFS_RPCBPROC_SET ? "SET" : "UNSET", q->r_prog, q->r_vers);
}

/* RPCBPROC_GETADDR and (v4) RPCBPROC_GETVERSADDR: a universal address. */
static void pmap_proc_getaddr34(srv_req *req, void *args, void *res)
{
    const pgnfs_rpcb *q = args;
    char *addr = srv_req_alloc(req, PMAP_ADDR_LEN);
    bool exact = req->prog->vers == PGNFS_RPCB_VERS4;

    pmap_getaddr(pmap_of(req), q, exact,
                 req->locallen ? (const struct sockaddr *)&req->local : NULL, req->locallen,
                 req->tcp, addr, PMAP_ADDR_LEN);
    *(pgnfs_rpcb_addr *)res = addr;
}

/* RPCBPROC_DUMP: every mapping for every family we can announce. */
static void pmap_proc_dump34(srv_req *req, void *args, void *res)
{
    (void)args;
    *(pgnfs_rpcb_dump_res *)res = pmap_dump_rpcb(pmap_of(req), req);
}

/* RPCBPROC_GETTIME: the server's time, seconds since the epoch. */
static void pmap_proc_gettime(srv_req *req, void *args, void *res)
{
    (void)req;
    (void)args;
    *(u_int *)res = (u_int)time(NULL);
}

static const srv_proc pmap_procs2[] = {
    [PGNFS_PMAPPROC_NULL] = {.name = "NULL", .handler = pmap_proc_null},
    [PGNFS_PMAPPROC_SET] = {.name = "SET",
                            .args_xdr = (xdrproc_t)xdr_pgnfs_pmap_mapping,
                            .res_xdr = (xdrproc_t)xdr_bool,
                            .args_size = sizeof(pgnfs_pmap_mapping),
                            .res_size = sizeof(bool_t),
                            .handler = pmap_proc_set2},
    [PGNFS_PMAPPROC_UNSET] = {.name = "UNSET",
                              .args_xdr = (xdrproc_t)xdr_pgnfs_pmap_mapping,
                              .res_xdr = (xdrproc_t)xdr_bool,
                              .args_size = sizeof(pgnfs_pmap_mapping),
                              .res_size = sizeof(bool_t),
                              .handler = pmap_proc_set2},
    [PGNFS_PMAPPROC_GETPORT] = {.name = "GETPORT",
                                .args_xdr = (xdrproc_t)xdr_pgnfs_pmap_mapping,
                                .res_xdr = (xdrproc_t)xdr_u_int,
                                .args_size = sizeof(pgnfs_pmap_mapping),
                                .res_size = sizeof(u_int),
                                .handler = pmap_proc_getport},
    [PGNFS_PMAPPROC_DUMP] = {.name = "DUMP",
                             .res_xdr = (xdrproc_t)xdr_pgnfs_pmap_dump_res,
                             .res_size = sizeof(pgnfs_pmap_dump_res),
                             .handler = pmap_proc_dump2,
                             .tcp_only = true},
};

/* rpcbind v3 serves procedures 0..6, v4 0..9 of this table. */
static const srv_proc pmap_procs34[] = {
    [PGNFS_RPCBPROC_NULL] = {.name = "NULL", .handler = pmap_proc_null},
    [PGNFS_RPCBPROC_SET] = {.name = "SET",
                            .args_xdr = (xdrproc_t)xdr_pgnfs_rpcb,
                            .res_xdr = (xdrproc_t)xdr_bool,
                            .args_size = sizeof(pgnfs_rpcb),
                            .res_size = sizeof(bool_t),
                            .handler = pmap_proc_set34},
    [PGNFS_RPCBPROC_UNSET] = {.name = "UNSET",
                              .args_xdr = (xdrproc_t)xdr_pgnfs_rpcb,
                              .res_xdr = (xdrproc_t)xdr_bool,
                              .args_size = sizeof(pgnfs_rpcb),
                              .res_size = sizeof(bool_t),
                              .handler = pmap_proc_set34},
    [PGNFS_RPCBPROC_GETADDR] = {.name = "GETADDR",
                                .args_xdr = (xdrproc_t)xdr_pgnfs_rpcb,
                                .res_xdr = (xdrproc_t)xdr_pgnfs_rpcb_addr,
                                .args_size = sizeof(pgnfs_rpcb),
                                .res_size = sizeof(pgnfs_rpcb_addr),
                                .handler = pmap_proc_getaddr34},
    [PGNFS_RPCBPROC_DUMP] = {.name = "DUMP",
                             .res_xdr = (xdrproc_t)xdr_pgnfs_rpcb_dump_res,
                             .res_size = sizeof(pgnfs_rpcb_dump_res),
                             .handler = pmap_proc_dump34,
                             .tcp_only = true},
    [PGNFS_RPCBPROC_GETTIME] = {.name = "GETTIME",
                                .res_xdr = (xdrproc_t)xdr_u_int,
                                .res_size = sizeof(u_int),
                                .handler = pmap_proc_gettime},
    [PGNFS_RPCBPROC_GETVERSADDR] = {.name = "GETVERSADDR",
                                    .args_xdr = (xdrproc_t)xdr_pgnfs_rpcb,
                                    .res_xdr = (xdrproc_t)xdr_pgnfs_rpcb_addr,
                                    .args_size = sizeof(pgnfs_rpcb),
                                    .res_size = sizeof(pgnfs_rpcb_addr),
                                    .handler = pmap_proc_getaddr34},
};

void pmap_programs(pmap_table *pm, srv_program out[PMAP_NPROGS])
{
    const srv_program common = {.prog = PGNFS_PMAP_PROG, .auth = SRV_AUTH_ANY, .ctx = pm};

    for (unsigned i = 0; i < PMAP_NPROGS; i++)
        out[i] = common;
    out[0].name = "pmap2";
    out[0].vers = PGNFS_PMAP_VERS;
    out[0].procs = pmap_procs2;
    out[0].nprocs = G_N_ELEMENTS(pmap_procs2);
    out[1].name = "rpcb3";
    out[1].vers = PGNFS_RPCB_VERS;
    out[1].procs = pmap_procs34;
    out[1].nprocs = PGNFS_RPCBPROC_GETTIME + 1;
    out[2].name = "rpcb4";
    out[2].vers = PGNFS_RPCB_VERS4;
    out[2].procs = pmap_procs34;
    out[2].nprocs = PGNFS_RPCBPROC_GETVERSADDR + 1;
}
