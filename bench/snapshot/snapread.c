/*
 * snapread.c -- the client of bench/snapshot/read: a tree read over NFS
 * the way `find` and `cat` with cold client caches read it, one call at a
 * time on one connection: READDIRPLUS of every directory (which brings the
 * handles and attributes of its entries), then for every regular file the
 * GETATTR a kernel client sends at open and READs of all of it.
 *
 *   snapread PORT make PATH NDIRS NFILES SIZE
 *       make PATH/dK/fI (K < NDIRS, I < NFILES) of SIZE bytes each,
 *       FILE_SYNC writes of the pattern below; PATH's parent must exist
 *   snapread PORT read PATH [ROUNDS]
 *       read the tree under PATH ROUNDS times (default 1); per round a
 *       line "round N seconds S files F dirs D bytes B calls C"; every
 *       byte is checked
 *
 * PORT: the server's NFS and MOUNT port on 127.0.0.1; the export is "/".
 * PATH is looked up name by name from the root, so /.snapshots/NAME/...
 * reads a snapshot. Calls go as root (AUTH_SYS uid 0).
 *
 * NOTES
 *   Exit status 0, or 1 after a message naming the call and the status.
 *   The client is tests/proto/nfsraw.c (blocking calls over libnfs's raw
 *   API); the arena is cleared after every directory and file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nfsraw.h"

#define SR_IO (1024u * 1024u)

typedef struct {
    nr_ctx *c;
    unsigned char *buf;
    uint64_t files, dirs, bytes, calls;
} sr_run;

static double sr_now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sr_check(const sr_run *r, int st, const char *what, const char *name)
{
    if (st == NFS3_OK)
        return;
    fprintf(stderr, "snapread: %s %s: %s\n", what, name,
            st == NR_RPC_FAILED ? nr_error(r->c) : "NFS error");
    if (st != NR_RPC_FAILED)
        fprintf(stderr, "snapread: status %d\n", st);
    exit(1);
}

/* The pattern byte at offset off of file number seed. */
static unsigned char sr_byte(uint64_t seed, uint64_t off)
{
    return (unsigned char)(((off + seed * 7919u) * 2654435761u) >> 13);
}

/* The handle of PATH, looked up name by name from root. */
static nr_fh sr_resolve(sr_run *r, nr_fh root, const char *path)
{
    char *copy = strdup(path), *save = NULL;
    nr_fh fh = root;

    for (char *n = strtok_r(copy, "/", &save); n; n = strtok_r(NULL, "/", &save)) {
        LOOKUP3res res;

        sr_check(r, nr_lookup(r->c, &fh, n, &res), "LOOKUP", n);
        fh = nr_fh_from(&res.LOOKUP3res_u.resok.object);
        nr_arena_clear(r->c);
    }
    free(copy);
    return fh;
}

/* Read file fh (seed: its number in the tree, from its name) whole. */
static void sr_file(sr_run *r, const nr_fh *fh, const char *name, uint64_t seed)
{
    GETATTR3res ga;
    uint64_t size, off = 0;

    sr_check(r, nr_getattr(r->c, fh, &ga), "GETATTR", name);
    size = ga.GETATTR3res_u.resok.obj_attributes.size;
    r->calls++;
    for (;;) {
        READ3res res;

        sr_check(r, nr_read(r->c, fh, off, SR_IO, &res), "READ", name);
        r->calls++;
        const READ3resok *ok = &res.READ3res_u.resok;
        for (uint32_t i = 0; i < ok->data.data_len; i++)
            if ((unsigned char)ok->data.data_val[i] != sr_byte(seed, off + i)) {
                fprintf(stderr, "snapread: %s: byte %llu differs\n", name,
                        (unsigned long long)(off + i));
                exit(1);
            }
        off += ok->data.data_len;
        bool eof = ok->eof || ok->data.data_len == 0;
        nr_arena_clear(r->c);
        if (eof)
            break;
    }
    if (off != size) {
        fprintf(stderr, "snapread: %s: read %llu bytes of %llu\n", name, (unsigned long long)off,
                (unsigned long long)size);
        exit(1);
    }
    r->files++;
    r->bytes += off;
}

/* The file number of name "fI" in directory "dK" (seed of its pattern). */
static uint64_t sr_seed(uint64_t dir, const char *name)
{
    return dir * 1000003u + strtoull(name + 1, NULL, 10);
}

/* Walk dir (number dirno: from its name "dK", else 0). */
static void sr_walk(sr_run *r, const nr_fh *dir, uint64_t dirno)
{
    uint64_t cookie = 0;
    char verf[NFS3_COOKIEVERFSIZE] = {0};
    GArray *fhs = g_array_new(FALSE, FALSE, sizeof(nr_fh));
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    GArray *types = g_array_new(FALSE, FALSE, sizeof(int));

    r->dirs++;
    for (bool eof = false; !eof;) {
        READDIRPLUS3res res;

        sr_check(r, nr_readdirplus(r->c, dir, cookie, verf, 8192, 65536, &res), "READDIRPLUS", "");
        r->calls++;
        const READDIRPLUS3resok *ok = &res.READDIRPLUS3res_u.resok;
        memcpy(verf, ok->cookieverf, sizeof verf);
        for (const entryplus3 *e = ok->reply.entries; e; e = e->nextentry) {
            cookie = e->cookie;
            if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0)
                continue;
            if (!e->name_handle.handle_follows || !e->name_attributes.attributes_follow) {
                fprintf(stderr, "snapread: READDIRPLUS sent %s without handle or attributes\n",
                        e->name);
                exit(1);
            }
            nr_fh fh = nr_fh_from(&e->name_handle.post_op_fh3_u.handle);
            int type = (int)e->name_attributes.post_op_attr_u.attributes.type;
            g_array_append_val(fhs, fh);
            g_array_append_val(types, type);
            g_ptr_array_add(names, g_strdup(e->name));
        }
        eof = ok->reply.eof;
        nr_arena_clear(r->c);
    }
    for (guint i = 0; i < names->len; i++) {
        const char *n = names->pdata[i];
        const nr_fh *fh = &g_array_index(fhs, nr_fh, i);

        if (g_array_index(types, int, i) == NF3DIR)
            sr_walk(r, fh, n[0] == 'd' ? strtoull(n + 1, NULL, 10) : 0);
        else if (g_array_index(types, int, i) == NF3REG)
            sr_file(r, fh, n, sr_seed(dirno, n));
    }
    g_array_free(fhs, TRUE);
    g_array_free(types, TRUE);
    g_ptr_array_free(names, TRUE);
}

static void sr_make(sr_run *r, nr_fh root, const char *path, unsigned ndirs, unsigned nfiles,
                    uint32_t size)
{
    char *parent = g_path_get_dirname(path), *base = g_path_get_basename(path);
    nr_fh top, pfh = sr_resolve(r, root, parent);
    sattr3 dm = nr_sattr_mode(0755), fm = nr_sattr_mode(0644);
    MKDIR3res mk;

    sr_check(r, nr_mkdir(r->c, &pfh, base, &dm, &mk), "MKDIR", base);
    top = nr_fh_from(&mk.MKDIR3res_u.resok.obj.post_op_fh3_u.handle);
    nr_arena_clear(r->c);
    for (unsigned k = 0; k < ndirs; k++) {
        char dname[32];
        nr_fh d;

        snprintf(dname, sizeof dname, "d%u", k);
        sr_check(r, nr_mkdir(r->c, &top, dname, &dm, &mk), "MKDIR", dname);
        d = nr_fh_from(&mk.MKDIR3res_u.resok.obj.post_op_fh3_u.handle);
        nr_arena_clear(r->c);
        for (unsigned i = 0; i < nfiles; i++) {
            char fname[32];
            CREATE3res cr;
            nr_fh f;
            uint64_t seed;

            snprintf(fname, sizeof fname, "f%u", i);
            seed = sr_seed(k, fname);
            sr_check(r, nr_create(r->c, &d, fname, UNCHECKED, &fm, NULL, &cr), "CREATE", fname);
            f = nr_fh_from(&cr.CREATE3res_u.resok.obj.post_op_fh3_u.handle);
            nr_arena_clear(r->c);
            for (uint32_t off = 0; off < size;) {
                uint32_t n = size - off < SR_IO ? size - off : SR_IO;
                WRITE3res wr;

                for (uint32_t j = 0; j < n; j++)
                    r->buf[j] = sr_byte(seed, off + j);
                sr_check(r, nr_write(r->c, &f, off, r->buf, n, FILE_SYNC, &wr), "WRITE", fname);
                nr_arena_clear(r->c);
                off += n;
            }
        }
    }
    g_free(parent);
    g_free(base);
}

int main(int argc, char **argv)
{
    sr_run r = {0};
    mountres3 mr;
    nr_fh root;

    if (argc < 4 || (strcmp(argv[2], "make") == 0 && argc != 7) ||
        (strcmp(argv[2], "read") == 0 && argc > 5) ||
        (strcmp(argv[2], "make") != 0 && strcmp(argv[2], "read") != 0)) {
        fprintf(stderr, "usage: snapread PORT make PATH NDIRS NFILES SIZE\n"
                        "       snapread PORT read PATH [ROUNDS]\n");
        return 2;
    }
    r.c = nr_open((unsigned)strtoul(argv[1], NULL, 10), NULL);
    r.buf = malloc(SR_IO);
    if (!r.c || !r.buf)
        return 1;
    if (nr_mnt(r.c, "/", &mr, &root) != 0) {
        fprintf(stderr, "snapread: MNT /: %s\n", nr_error(r.c));
        return 1;
    }
    nr_arena_clear(r.c);
    if (strcmp(argv[2], "make") == 0) {
        sr_make(&r, root, argv[3], (unsigned)strtoul(argv[4], NULL, 10),
                (unsigned)strtoul(argv[5], NULL, 10), (uint32_t)strtoul(argv[6], NULL, 10));
    } else {
        nr_fh top = sr_resolve(&r, root, argv[3]);
        unsigned rounds = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 10) : 1;

        for (unsigned k = 1; k <= rounds; k++) {
            double t0 = sr_now();

            r.files = r.dirs = r.bytes = r.calls = 0;
            sr_walk(&r, &top, 0);
            printf("round %u seconds %.4f files %llu dirs %llu bytes %llu calls %llu\n", k,
                   sr_now() - t0, (unsigned long long)r.files, (unsigned long long)r.dirs,
                   (unsigned long long)r.bytes, (unsigned long long)r.calls);
            fflush(stdout);
        }
    }
    free(r.buf);
    nr_close(r.c);
    return 0;
}
