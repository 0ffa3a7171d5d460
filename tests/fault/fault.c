/*
 * fault.c -- helpers of the fault-injection tests (fault.h).
 */
#include "fault.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_uint_fast64_t ft_bytes;

/* The argument array handed to g_test_init (it keeps the strings, not the
 * array): freed by ft_run, not left to main, which may drop argv. */
static char **ft_args;

void ft_init(int *argc, char ***argv, const char *const *settings)
{
    /* As pt_init(), with the program's own settings. */
    char **args = ft_args = g_new0(char *, (size_t)*argc + 2);
    bool listing = false;

    for (int i = 0; i < *argc; i++) {
        args[i] = (*argv)[i];
        listing |= strcmp((*argv)[i], "-l") == 0;
    }
    args[(*argc)++] = "--keep-going";
    *argv = args; /* kept until ft_run has run the tests, as g_test_init wants */
    g_test_init(argc, argv, NULL);
    if (listing)
        return;
    pt.server = tl_server_start(settings);
    pt.port = pt.mount_port = tl_server_port(pt.server);
    pt.export_path = "/";
    nr_ctx *m = pt_open_mount(NULL);
    if (nr_mnt(m, "/", NULL, &pt.root) != MNT3_OK)
        g_error("MOUNT / failed: %s", nr_error(m));
    nr_close(m);
}

int ft_run(void)
{
    int rc = g_test_run();

    if (pt.server)
        tl_server_stop(pt.server);
    pt.server = NULL;
    g_free(ft_args);
    ft_args = NULL;
    g_printerr("# bytes verified against the model: %" G_GUINT64_FORMAT "\n", ft_verified());
    return rc;
}

void ft_rng_seed(ft_rng *r, uint64_t seed)
{
    r->s = seed ? seed : 0x9e3779b97f4a7c15ull;
}

uint64_t ft_rand(ft_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545f4914f6cdd1dull;
}

uint64_t ft_below(ft_rng *r, uint64_t n)
{
    return ft_rand(r) % n;
}

void ft_pattern(unsigned char *buf, size_t n, uint64_t key)
{
    ft_rng r;

    ft_rng_seed(&r, key * 0x9e3779b97f4a7c15ull + 1);
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = ft_rand(&r);
        for (size_t k = 0; k < 8 && i + k < n; k++)
            buf[i + k] = (unsigned char)(v >> (8 * k));
    }
}

void ft_verified_add(uint64_t n)
{
    atomic_fetch_add(&ft_bytes, n);
}

uint64_t ft_verified(void)
{
    return atomic_load(&ft_bytes);
}

/* The sum of calls= over "stats: proc prog=nfs3" lines of the last block. */
static bool ft_parse_calls(const char *log, unsigned block, uint64_t *out)
{
    const char *p = log;
    unsigned seen = 0;
    uint64_t sum = 0;
    bool in = false;

    while ((p = strstr(p, "stats: ")) != NULL) {
        p += 7;
        if (g_str_has_prefix(p, "begin reason=SIGUSR1")) {
            seen++;
            in = seen == block;
            sum = 0;
        } else if (in && g_str_has_prefix(p, "proc prog=nfs3 ")) {
            const char *c = strstr(p, " calls=");
            if (c)
                sum += g_ascii_strtoull(c + 7, NULL, 10);
        } else if (in && g_str_has_prefix(p, "end")) {
            *out = sum;
            return true;
        }
    }
    return false;
}

uint64_t ft_nfs_calls(void)
{
    static unsigned blocks; /* SIGUSR1 blocks asked for so far */
    uint64_t calls = 0;

    blocks++;
    if (kill(tl_server_pid(pt.server), SIGUSR1) != 0)
        g_error("SIGUSR1: %s", g_strerror(errno));
    for (int i = 0; i < 200; i++) {
        char *log = tl_server_log(pt.server);
        bool done = ft_parse_calls(log, blocks, &calls);
        g_free(log);
        if (done)
            return calls;
        g_usleep(50000);
    }
    g_error("no statistics in the server log after SIGUSR1");
    return 0;
}

int ft_pgnfs(char **output, const char *const *args)
{
    GPtrArray *argv = g_ptr_array_new();
    char *out = NULL, *err = NULL;
    GError *gerr = NULL;
    int status = -1;

    g_ptr_array_add(argv, (char *)tl_pgnfs_bin());
    for (const char *const *a = args; *a; a++)
        g_ptr_array_add(argv, (char *)*a);
    g_ptr_array_add(argv, NULL);
    if (!g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                      &status, &gerr))
        g_error("cannot run %s: %s", tl_pgnfs_bin(), gerr->message);
    g_ptr_array_free(argv, TRUE);
    if (output)
        *output = g_strconcat(out ? out : "", err ? err : "", NULL);
    g_free(out);
    g_free(err);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool ft_server_running(char **why)
{
    int status;
    pid_t r = waitpid(tl_server_pid(pt.server), &status, WNOHANG);

    if (r == 0)
        return true;
    if (r < 0)
        *why = g_strdup_printf("waitpid: %s", g_strerror(errno));
    else if (WIFSIGNALED(status))
        *why = g_strdup_printf("killed by signal %d", WTERMSIG(status));
    else
        *why = g_strdup_printf("exited with status %d", WEXITSTATUS(status));
    return false;
}

void ft_private_mounts_or_skip(const char *what)
{
    const char *why = NULL;

    if (geteuid() != 0)
        why = "not root: cannot mount a tmpfs";
    else if (unshare(CLONE_NEWNS) != 0)
        why = "cannot make a private mount namespace (unshare)";
    else if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        why = "cannot make the mounts private";
    if (why) {
        printf("1..0 # SKIP %s cannot run here: %s (%s)\n", what, why, g_strerror(errno));
        fprintf(stderr, "%s cannot run here: %s\n", what, why);
        exit(77);
    }
}

/* The tmpfs's cleanup: waits for end-of-file on stdin (this process has
 * ended), then unmounts $1 once nothing uses it (at most 60 s, then
 * detached) and removes the directory. */
static const char ft_tmpfs_reaper[] =
    "cat >/dev/null\n"
    "i=0\n"
    "until umount \"$1\" 2>/dev/null; do\n"
    "  i=$((i+1)); if [ $i -ge 600 ]; then umount -l \"$1\"; break; fi; sleep 0.1\n"
    "done\n"
    "rmdir \"$1\"\n";

char *ft_tmpfs(unsigned mb)
{
    const char *base = getenv("TMPDIR");
    char *dir = g_build_filename(base && *base ? base : "/tmp", "pgnfs-tmpfs-XXXXXX", NULL);
    char *opts = g_strdup_printf("size=%um,mode=0755", mb);
    GError *err = NULL;
    int fds[2];

    if (!g_mkdtemp(dir))
        g_error("cannot make a directory for a tmpfs: %s", g_strerror(errno));
    if (mount("tmpfs", dir, "tmpfs", 0, opts) != 0)
        g_error("mount tmpfs on %s (%s): %s", dir, opts, g_strerror(errno));
    if (pipe2(fds, O_CLOEXEC) != 0)
        g_error("pipe: %s", g_strerror(errno));
    char *argv[] = {"/bin/sh", "-c", (char *)ft_tmpfs_reaper, "pgnfs-tmpfs-reaper", dir, NULL};
    if (!g_spawn_async_with_fds("/", argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, NULL,
                                fds[0], -1, -1, &err))
        g_error("cannot start the cleanup process of %s: %s", dir, err->message);
    close(fds[0]);
    /* fds[1] stays open, unused, until this process ends. */
    g_free(opts);
    return dir;
}

uint64_t ft_write_verf(nr_ctx *c, const nr_fh *scratch)
{
    WRITE3res res;
    uint64_t v = 0;

    pt_ok(c, nr_write(c, scratch, 0, "v", 1, FILE_SYNC, &res));
    memcpy(&v, res.WRITE3res_u.resok.verf, sizeof v);
    return v;
}
