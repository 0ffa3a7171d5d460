/*
 * test_cache_hist.c -- which chunks of a file changed since when
 * (cache/cache_hist.c) and the chunk buffer cache's use of it
 * (cache_chunk_current, cache_chunk_get): a stream written in many
 * transactions stays current; a gap in the reports, a late report,
 * another file in the slot, or a change of the chunk itself make it
 * stale; and, against a model of a file's whole history (reported and
 * unreported changes, random ranges, queries at random ctimes), the
 * history never calls current what changed.
 */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "cache_chunk.h"
#include "cache_hist.h"

/* A stream: transaction i takes ctime 100+i to 101+i and writes chunks
 * 128i .. 128i+127. */
static void test_stream(void)
{
    cache_hist *h = cache_hist_new();
    int64_t head;

    g_assert_false(cache_hist_head(h, 7, &head));
    for (int i = 0; i < 100; i++)
        cache_hist_moved(h, 7, 100 + i, 101 + i, 128u * i, 128u * i + 127);
    g_assert_true(cache_hist_head(h, 7, &head));
    g_assert_cmpint(head, ==, 200);
    for (int i = 0; i < 100; i++) {
        /* Written by transaction i (tagged 101+i), current at 200. */
        g_assert_true(cache_hist_current(h, 7, 128u * i + 5, 101 + i, 200));
        /* An entry from before that write is not. */
        g_assert_false(cache_hist_current(h, 7, 128u * i + 5, 100 + i, 200));
    }
    /* Chunks never written are as they were at the base. */
    g_assert_true(cache_hist_current(h, 7, 1u << 30, 100, 200));
    /* Not before the base, not for another ctime than the head, not in the
     * future, not for another file. */
    g_assert_false(cache_hist_current(h, 7, 1u << 30, 99, 200));
    g_assert_false(cache_hist_current(h, 7, 5, 101, 201));
    g_assert_false(cache_hist_current(h, 7, 5, 201, 200));
    g_assert_false(cache_hist_current(h, 8, 5, 101, 200));
    /* The exact tag is always current. */
    g_assert_true(cache_hist_current(h, 8, 5, 42, 42));
    cache_hist_free(h);
}

/* A change nobody reported (a truncation) between two reported ones. */
static void test_gap(void)
{
    cache_hist *h = cache_hist_new();

    cache_hist_moved(h, 1, 10, 11, 0, 0);
    /* 11 -> 12: unreported. */
    cache_hist_moved(h, 1, 12, 13, 5, 5);
    g_assert_false(cache_hist_current(h, 1, 3, 11, 13)); /* across the gap */
    g_assert_true(cache_hist_current(h, 1, 3, 12, 13));  /* after it */
    g_assert_false(cache_hist_current(h, 1, 5, 12, 13)); /* written at 13 */
    /* An unreported change after the last report: head != now. */
    g_assert_false(cache_hist_current(h, 1, 3, 12, 14));
    cache_hist_free(h);
}

/* Reports that arrive out of order (two writers finishing in reverse). */
static void test_late(void)
{
    cache_hist *h = cache_hist_new();

    cache_hist_moved(h, 1, 20, 21, 0, 0); /* committed second, reported first */
    cache_hist_moved(h, 1, 19, 20, 9, 9); /* committed first: ignored */
    g_assert_false(cache_hist_current(h, 1, 3, 19, 21));
    g_assert_true(cache_hist_current(h, 1, 3, 20, 21));
    g_assert_true(cache_hist_current(h, 1, 9, 20, 21));
    g_assert_false(cache_hist_current(h, 1, 0, 20, 21));
    cache_hist_free(h);
}

/* A range cut by a later one keeps its outer parts. */
static void test_cut(void)
{
    cache_hist *h = cache_hist_new();

    cache_hist_moved(h, 1, 1, 2, 0, 10);
    cache_hist_moved(h, 1, 2, 3, 3, 5);
    cache_hist_moved(h, 1, 3, 4, 1, 1); /* no data? still a change of chunk 1 */
    cache_hist_moved(h, 1, 4, 5, 1, 0); /* a change that touched no chunk */
    g_assert_true(cache_hist_current(h, 1, 2, 2, 5));
    g_assert_true(cache_hist_current(h, 1, 8, 2, 5));
    g_assert_false(cache_hist_current(h, 1, 4, 2, 5));
    g_assert_true(cache_hist_current(h, 1, 4, 3, 5));
    g_assert_false(cache_hist_current(h, 1, 1, 3, 5));
    g_assert_true(cache_hist_current(h, 1, 1, 4, 5));
    g_assert_true(cache_hist_current(h, 1, 11, 1, 5));
    cache_hist_free(h);
}

/*
 * The model: one file, a list of changes (ctime i -> i+1), each touching
 * a chunk range or, when unreported, possibly anything. truth(k, tag,
 * now): no change after tag up to now touched chunk k.
 */
#define M_CHANGES 3000
#define M_CHUNKS  1500

typedef struct {
    bool reported;
    uint64_t lo, hi;
} m_change;

static bool m_truth(const m_change *ch, uint64_t k, int64_t tag, int64_t now)
{
    for (int64_t c = tag; c < now; c++) { /* change c: ctime c -> c+1 */
        if (!ch[c].reported || (ch[c].lo <= k && k <= ch[c].hi))
            return false;
    }
    return true;
}

/* Random changes, some unreported, some reported late or twice, two files
 * sharing a slot, more ranges than the bound: every "current" is true. */
static void test_model(void)
{
    static m_change ch[M_CHANGES];
    cache_hist *h = cache_hist_new();
    GRand *r = g_rand_new_with_seed(20261125);
    uint64_t a = 3, b = 3 + CACHE_HIST_SLOTS * 1000003ull; /* same slot? maybe: either way */
    unsigned yes = 0, checked = 0, truths = 0;
    int64_t pending = -1;

    for (int64_t c = 0; c < M_CHANGES; c++) {
        uint64_t lo = (uint64_t)g_rand_int_range(r, 0, M_CHUNKS);
        uint64_t len = g_rand_boolean(r) ? 1 : (uint64_t)g_rand_int_range(r, 1, 40);

        ch[c].reported = g_rand_int_range(r, 0, 50) != 0;
        ch[c].lo = lo;
        ch[c].hi = lo + len - 1;
        if (ch[c].reported) {
            /* Sometimes hold a report back and send it after the next. */
            if (pending < 0 && g_rand_int_range(r, 0, 20) == 0) {
                pending = c;
            } else {
                cache_hist_moved(h, a, c, c + 1, ch[c].lo, ch[c].hi);
                if (pending >= 0) {
                    cache_hist_moved(h, a, pending, pending + 1, ch[pending].lo, ch[pending].hi);
                    pending = -1;
                }
            }
        }
        if (g_rand_int_range(r, 0, 100) == 0) /* another file passing by */
            cache_hist_moved(h, b, c, c + 1, 0, 0);
        /* Queries at now = c + 1 (the file's current ctime). */
        for (int q = 0; q < 20; q++) {
            int64_t tag = c + 1 - g_rand_int_range(r, 0, (int)(c + 2 < 400 ? c + 2 : 400));
            uint64_t k = (uint64_t)g_rand_int_range(r, 0, M_CHUNKS + 10);
            bool got = cache_hist_current(h, a, k, tag, c + 1);
            bool truth = m_truth(ch, k, tag, c + 1);

            checked++;
            truths += truth;
            if (got) {
                yes++;
                g_assert_true(truth);
            }
        }
    }
    /* The history is useful too, not only safe: it finds most of what is
     * current (gaps and late reports cost it the rest). */
    g_test_message("%u queries, %u current, %u found current", checked, truths, yes);
    g_assert_cmpuint(yes, >, truths / 3);
    g_rand_free(r);
    cache_hist_free(h);
}

/* The chunk cache: a chunk written early in a stream is a hit at the
 * file's latest ctime, and is retagged so. */
static void test_chunk_cache(void)
{
    enum { CS = 4096 };
    cache_chunk *cc;
    unsigned char data[CS], out[CS];
    int64_t tag;

    g_assert_cmpint(cache_chunk_new(1u << 20, CS, &cc), ==, 0);
    memset(data, 0x3c, sizeof data);
    /* Transaction 1 writes chunk 0 (ctime 10 -> 11), transaction 2 chunk
     * 1 (11 -> 12). */
    g_assert_cmpint(cache_chunk_wrote(cc, 9, 0, 10, 11, 0, data, CS, CS), ==, 0);
    cache_chunk_moved(cc, 9, 10, 11, 0, 0);
    g_assert_cmpint(cache_chunk_wrote(cc, 9, 1, 11, 12, 0, data, CS, CS), ==, 0);
    cache_chunk_moved(cc, 9, 11, 12, 1, 1);
    g_assert_cmpint(cache_chunk_get(cc, 9, 0, 12, 0, CS, out), ==, CS);
    g_assert_cmpmem(out, CS, data, CS);
    g_assert_cmpint(cache_chunk_peek(cc, 9, 0, 0, 0, out, &tag), ==, CS);
    g_assert_cmpint(tag, ==, 12); /* retagged */
    /* A change nobody reported (12 -> 13): not current at 13. */
    g_assert_cmpint(cache_chunk_get(cc, 9, 1, 13, 0, CS, out), ==, -ENOENT);
    cache_chunk_free(cc);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cache_hist/stream", test_stream);
    g_test_add_func("/cache_hist/gap", test_gap);
    g_test_add_func("/cache_hist/late", test_late);
    g_test_add_func("/cache_hist/cut", test_cut);
    g_test_add_func("/cache_hist/model", test_model);
    g_test_add_func("/cache_hist/chunk-cache", test_chunk_cache);
    return g_test_run();
}
