/*
 * ptest.c -- the shared fixture of the protocol test programs: the server,
 * fresh directories per case, status assertions and small helpers.
 */
#include "ptest.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

const nr_cred pt_root = {.uid = 0, .gid = 0};
const nr_cred pt_owner = {.uid = PT_OWNER_UID, .gid = PT_OWNER_GID};
const nr_cred pt_other = {.uid = PT_OTHER_UID, .gid = PT_OTHER_GID};

pt_env pt;

void pt_init(int *argc, char ***argv)
{
    const char *port = getenv("PGNFS_TEST_NFS_PORT");
    bool listing = false;

    for (int i = 1; i < *argc; i++)
        listing |= strcmp((*argv)[i], "-l") == 0;
    /* Go on after a failed case (each runs in its own process, see pt_add). */
    char **args = g_new0(char *, (size_t)*argc + 2);
    for (int i = 0; i < *argc; i++)
        args[i] = (*argv)[i];
    args[(*argc)++] = "--keep-going";
    *argv = args; /* kept for the life of the program, as g_test_init wants */
    g_test_init(argc, argv, NULL);
    if (listing)
        return; /* g_test_run() only prints the case names */
    if (port && *port) {
        pt.port = (unsigned)strtoul(port, NULL, 10);
        const char *mport = getenv("PGNFS_TEST_MOUNT_PORT");
        pt.mount_port = mport && *mport ? (unsigned)strtoul(mport, NULL, 10) : pt.port;
        pt.export_path = getenv("PGNFS_TEST_NFS_EXPORT");
        if (!pt.export_path || !*pt.export_path)
            pt.export_path = "/";
        g_printerr("# using the NFS server at 127.0.0.1:%u, export %s (PGNFS_TEST_NFS_PORT)\n",
                   pt.port, pt.export_path);
    } else {
        pt.server = tl_server_start(NULL);
        pt.port = tl_server_port(pt.server);
        pt.mount_port = pt.port;
        pt.export_path = "/";
    }

    nr_ctx *c = pt_open_mount(NULL);
    mountres3 res;
    int st = nr_mnt(c, pt.export_path, &res, &pt.root);
    if (st != MNT3_OK)
        g_error("MOUNT MNT %s failed: %d %s", pt.export_path, st, nr_error(c));
    nr_umnt(c, pt.export_path);
    nr_close(c);
}

/* Run the case fn in a child process; its failure fails this case. */
static void pt_forked(gconstpointer data)
{
    void (*fn)(void) = (void (*)(void))(uintptr_t)data;
    int status;

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        g_error("fork: %s", g_strerror(errno));
    if (pid == 0) {
        /* A failed assertion aborts the child: no core file for that. */
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        /* Its messages (a failure's "Bail out!" too) go to stderr: the TAP
         * stream on stdout is the parent's, which reports the result. */
        dup2(STDERR_FILENO, STDOUT_FILENO);
        fn();
        fflush(stdout);
        fflush(stderr);
        _exit(0);
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            g_error("waitpid: %s", g_strerror(errno));
    if (WIFSIGNALED(status))
        g_test_fail_printf("the case's process died of signal %d (%s): see its message above",
                           WTERMSIG(status), g_strsignal(WTERMSIG(status)));
    else if (WEXITSTATUS(status) != 0)
        g_test_fail_printf("the case's process exited with status %d", WEXITSTATUS(status));
}

void pt_add(const char *path, void (*fn)(void))
{
    const char *nofork = getenv("PGNFS_TEST_NOFORK");

    if (nofork && *nofork && strcmp(nofork, "0") != 0)
        g_test_add_func(path, fn);
    else
        g_test_add_data_func(path, (gconstpointer)(uintptr_t)fn, pt_forked);
}

void pt_add_inproc(const char *path, void (*fn)(void))
{
    g_test_add_func(path, fn);
}

int pt_run(void)
{
    int rc = g_test_run();

    if (pt.server)
        tl_server_stop(pt.server);
    pt.server = NULL;
    return rc;
}

bool pt_restart(void)
{
    if (!pt.server)
        return false;
    tl_server_restart(pt.server);
    return true;
}

nr_ctx *pt_open(const nr_cred *cred)
{
    nr_ctx *c = nr_open(pt.port, cred);

    if (!c)
        g_error("cannot connect to the NFS server on port %u", pt.port);
    return c;
}

nr_ctx *pt_open_mount(const nr_cred *cred)
{
    nr_ctx *c = nr_open(pt.mount_port, cred);

    if (!c)
        g_error("cannot connect to the MOUNT server on port %u", pt.mount_port);
    return c;
}

nr_fh pt_mount_root(const char *path)
{
    nr_ctx *m = pt_open_mount(NULL);
    nr_fh root;

    if (nr_mnt(m, path, NULL, &root) != MNT3_OK)
        g_error("MOUNT %s failed: %s", path, nr_error(m));
    nr_close(m);
    return root;
}

nr_fh pt_fresh_dir(void)
{
    static unsigned counter;
    GString *name = g_string_new(NULL);
    const char *path = g_test_get_path();
    nr_ctx *c = pt_open(NULL);
    sattr3 sa = nr_sattr_mode(0777);
    MKDIR3res res;

    for (const char *p = path && *path ? path : "case"; *p; p++)
        g_string_append_c(name, g_ascii_isalnum(*p) ? *p : '_');
    g_string_append_printf(name, "-%d-%u", (int)getpid(), ++counter);
    pt_ok(c, nr_mkdir(c, &pt.root, name->str, &sa, &res));
    nr_fh fh = pt_post_fh(&res.MKDIR3res_u.resok.obj);
    /* In case the server applied a umask to the mode asked for. */
    pt_chmod(c, &fh, 0777);
    nr_close(c);
    g_string_free(name, TRUE);
    return fh;
}

void pt_check_stat(nr_ctx *c, const char *file, int line, const char *expr, int got, int want)
{
    if (got == want)
        return;
    char *msg = g_strdup_printf("%s: expected %s (%d), got %s (%d)%s%s", expr, nr_stat_name(want),
                                want, nr_stat_name(got), got, got == NR_RPC_FAILED ? ": " : "",
                                got == NR_RPC_FAILED && c ? nr_error(c) : "");
    g_assertion_message("pgnfs-test", file, line, "", msg);
    g_free(msg);
}

void pt_check_time(const char *file, int line, const char *an, nfstime3 a, const char *bn,
                   nfstime3 b)
{
    if (a.seconds == b.seconds && a.nseconds == b.nseconds)
        return;
    char *msg = g_strdup_printf("%s (%u.%09u) != %s (%u.%09u)", an, a.seconds, a.nseconds, bn,
                                b.seconds, b.nseconds);
    g_assertion_message("pgnfs-test", file, line, "", msg);
    g_free(msg);
}

fattr3 pt_getattr(nr_ctx *c, const nr_fh *fh)
{
    GETATTR3res res;

    pt_ok(c, nr_getattr(c, fh, &res));
    return res.GETATTR3res_u.resok.obj_attributes;
}

nr_fh pt_lookup(nr_ctx *c, const nr_fh *dir, const char *name)
{
    LOOKUP3res res;

    pt_ok(c, nr_lookup(c, dir, name, &res));
    return nr_fh_from(&res.LOOKUP3res_u.resok.object);
}

nr_fh pt_create(nr_ctx *c, const nr_fh *dir, const char *name, uint32_t mode)
{
    CREATE3res res;
    sattr3 sa = nr_sattr_mode(mode);

    pt_ok(c, nr_create(c, dir, name, GUARDED, &sa, NULL, &res));
    return pt_post_fh(&res.CREATE3res_u.resok.obj);
}

nr_fh pt_mkdir(nr_ctx *c, const nr_fh *dir, const char *name, uint32_t mode)
{
    MKDIR3res res;
    sattr3 sa = nr_sattr_mode(mode);

    pt_ok(c, nr_mkdir(c, dir, name, &sa, &res));
    return pt_post_fh(&res.MKDIR3res_u.resok.obj);
}

void pt_write(nr_ctx *c, const nr_fh *fh, uint64_t off, const void *data, uint32_t len)
{
    WRITE3res res;

    pt_ok(c, nr_write(c, fh, off, data, len, FILE_SYNC, &res));
    g_assert_cmpuint(res.WRITE3res_u.resok.count, ==, len);
}

GByteArray *pt_read_all(nr_ctx *c, const nr_fh *fh)
{
    GByteArray *out = g_byte_array_new();
    READ3res res;

    for (;;) {
        pt_ok(c, nr_read(c, fh, out->len, 65536, &res));
        const READ3resok *ok = &res.READ3res_u.resok;
        g_byte_array_append(out, (const guint8 *)ok->data.data_val, ok->data.data_len);
        if (ok->eof || ok->data.data_len == 0)
            break;
    }
    nr_arena_clear(c);
    return out;
}

void pt_chmod(nr_ctx *c, const nr_fh *fh, uint32_t mode)
{
    sattr3 sa = nr_sattr_mode(mode);

    pt_ok(c, nr_setattr(c, fh, &sa, NULL, NULL));
}

void pt_chown(nr_ctx *c, const nr_fh *fh, uint32_t uid, uint32_t gid)
{
    sattr3 sa = nr_sattr_none();

    sa.uid.set_it = 1;
    sa.uid.set_uid3_u.uid = uid;
    sa.gid.set_it = 1;
    sa.gid.set_gid3_u.gid = gid;
    pt_ok(c, nr_setattr(c, fh, &sa, NULL, NULL));
}

nr_fh pt_post_fh(const post_op_fh3 *p)
{
    g_assert_true(p->handle_follows);
    return nr_fh_from(&p->post_op_fh3_u.handle);
}

fattr3 pt_post_attr(const post_op_attr *p)
{
    g_assert_true(p->attributes_follow);
    return p->post_op_attr_u.attributes;
}

nr_cred pt_cred(uint32_t uid, uint32_t gid, uint32_t ngroups, const uint32_t *groups)
{
    nr_cred c = {.uid = uid, .gid = gid, .ngroups = ngroups};

    g_assert_cmpuint(ngroups, <=, NR_NGROUPS_MAX);
    for (uint32_t i = 0; i < ngroups; i++)
        c.groups[i] = groups[i];
    return c;
}
