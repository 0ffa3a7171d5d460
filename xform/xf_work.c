/*
 * xf_work.c -- what one worker thread keeps for encoding and decoding:
 * one scratch buffer (the second of the two buffers stages ping-pong
 * between; the first is the caller's output), and each stage kind's
 * per-worker slot (compression contexts, cipher contexts), freed by the
 * kind's worker_fini.
 *
 * The scratch buffer grows when a call needs more than it holds (to the
 * larger of the need and twice its size, at least XF_SCRATCH_MIN, at most
 * XF_ROOM_MAX) and never shrinks: after the first chunks of the largest
 * size, no call allocates. Once asked for, it exists, even for 0 bytes
 * (a stage never gets a NULL buffer).
 *
 * NOTES
 *   One thread at a time. Must be freed before its env (the kinds'
 *   worker_fini live in plug-ins the env unloads).
 */
#include <errno.h>
#include <stdlib.h>

#include "xf_int.h"

#define XF_SCRATCH_MIN 4096

/* xf_work_new -- see xf.h. */
int xf_work_new(xf_env *env, xf_work **out)
{
    xf_work *w = calloc(1, sizeof *w);

    *out = NULL;
    if (!w)
        return -ENOMEM;
    w->env = env;
    *out = w;
    return 0;
}

/* xf_work_free -- see xf.h. */
void xf_work_free(xf_work *w)
{
    int n;

    if (!w)
        return;
    n = atomic_load(&w->env->nkinds);
    for (int i = 0; i < n && i < XF_MAX_KINDS; i++)
        if (w->slot[i] && w->env->kinds[i]->d->worker_fini)
            w->env->kinds[i]->d->worker_fini(w->slot[i]);
    free(w->scratch);
    free(w);
}

/* xf_work_scratch -- see xf_int.h. */
int xf_work_scratch(xf_work *w, size_t n)
{
    size_t want;
    unsigned char *p;

    if (n <= w->scratch_room && w->scratch)
        return 0;
    if (n > XF_ROOM_MAX)
        return -ENOBUFS;
    want = w->scratch_room * 2 > n ? w->scratch_room * 2 : n;
    if (want < XF_SCRATCH_MIN)
        want = XF_SCRATCH_MIN;
    if (want > XF_ROOM_MAX)
        want = XF_ROOM_MAX;
    p = malloc(want);
    if (!p)
        return -ENOMEM;
    free(w->scratch);
    w->scratch = p;
    w->scratch_room = want;
    return 0;
}
