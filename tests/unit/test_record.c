/*
 * test_record.c -- RPC record marking reassembly (srv_record.c): single and
 * multi-fragment records, input split at every byte boundary and fed one
 * byte at a time, oversize records and zero-length fragments.
 */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "srv.h"
#include "srv_record.h"

/* Append a fragment (mark + payload) to s. */
static void put_fragment(GByteArray *s, const void *data, uint32_t len, bool last)
{
    uint32_t m = (last ? SRV_RECORD_LAST : 0) | len;
    unsigned char mark[4] = {(unsigned char)(m >> 24), (unsigned char)(m >> 16),
                             (unsigned char)(m >> 8), (unsigned char)m};

    g_byte_array_append(s, mark, 4);
    g_byte_array_append(s, data, len);
}

/* Feed the whole stream in pieces of the given sizes (0-terminated, the
 * last size repeats); collect the records. Returns the first error or 0. */
static int feed_pieces(srv_record *r, const GByteArray *s, const size_t *sizes, GPtrArray *out)
{
    size_t pos = 0, k = 0;

    while (pos < s->len) {
        size_t n = sizes[k] ? sizes[k] : s->len - pos;
        if (sizes[k] && sizes[k + 1])
            k++;
        if (n > s->len - pos)
            n = s->len - pos;
        size_t off = 0;
        while (off < n) {
            size_t used;
            int rc = srv_record_feed(r, s->data + pos + off, n - off, &used);
            g_assert_cmpuint(used, <=, n - off);
            off += used;
            if (rc < 0)
                return rc;
            if (rc == SRV_RECORD_COMPLETE) {
                size_t len;
                unsigned char *rec = srv_record_take(r, &len);
                g_ptr_array_add(out, g_bytes_new_take(rec, len));
            } else {
                g_assert_cmpuint(off, ==, n);
            }
        }
        pos += n;
    }
    return 0;
}

static void assert_record(GPtrArray *recs, unsigned i, const char *want)
{
    gsize len;
    const char *data = g_bytes_get_data(recs->pdata[i], &len);

    g_assert_cmpmem(data, len, want, strlen(want));
}

static void test_single(void)
{
    srv_record r;
    GByteArray *s = g_byte_array_new();
    GPtrArray *recs = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    const size_t whole[] = {0};

    srv_record_init(&r, 1024);
    put_fragment(s, "hello world!", 12, true);
    g_assert_cmpint(feed_pieces(&r, s, whole, recs), ==, 0);
    g_assert_cmpuint(recs->len, ==, 1);
    assert_record(recs, 0, "hello world!");
    g_assert_false(srv_record_partial(&r));
    srv_record_clear(&r);
    g_ptr_array_unref(recs);
    g_byte_array_unref(s);
}

static void test_mark(void)
{
    unsigned char m[4];

    srv_record_mark(m, 0x123456);
    g_assert_cmphex(m[0], ==, 0x80);
    g_assert_cmphex(m[1], ==, 0x12);
    g_assert_cmphex(m[2], ==, 0x34);
    g_assert_cmphex(m[3], ==, 0x56);
}

/* A stream of three records: one single-fragment, one of three fragments
 * (with an empty last fragment closing it), one single. */
static GByteArray *three_records(void)
{
    GByteArray *s = g_byte_array_new();

    put_fragment(s, "first", 5, true);
    put_fragment(s, "sec", 3, false);
    put_fragment(s, "ond-", 4, false);
    put_fragment(s, "record", 6, true);
    put_fragment(s, "x", 1, false);
    put_fragment(s, "", 0, true);
    put_fragment(s, "last one", 8, true);
    return s;
}

static void check_three(GPtrArray *recs)
{
    g_assert_cmpuint(recs->len, ==, 4);
    assert_record(recs, 0, "first");
    assert_record(recs, 1, "second-record");
    assert_record(recs, 2, "x");
    assert_record(recs, 3, "last one");
}

static void test_multi_fragment(void)
{
    GByteArray *s = three_records();
    srv_record r;
    GPtrArray *recs = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    const size_t whole[] = {0};

    srv_record_init(&r, 1024);
    g_assert_cmpint(feed_pieces(&r, s, whole, recs), ==, 0);
    check_three(recs);
    srv_record_clear(&r);
    g_ptr_array_unref(recs);
    g_byte_array_unref(s);
}

static void test_every_split(void)
{
    GByteArray *s = three_records();

    for (size_t cut = 1; cut < s->len; cut++) {
        srv_record r;
        GPtrArray *recs = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
        const size_t sizes[] = {cut, s->len, 0};

        srv_record_init(&r, 1024);
        g_assert_cmpint(feed_pieces(&r, s, sizes, recs), ==, 0);
        check_three(recs);
        srv_record_clear(&r);
        g_ptr_array_unref(recs);
    }
    /* and one byte at a time */
    srv_record r;
    GPtrArray *recs = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    const size_t ones[] = {1, 0};
    srv_record_init(&r, 1024);
    g_assert_cmpint(feed_pieces(&r, s, ones, recs), ==, 0);
    check_three(recs);
    srv_record_clear(&r);
    g_ptr_array_unref(recs);
    g_byte_array_unref(s);
}

static void test_partial(void)
{
    srv_record r;
    size_t used;
    unsigned char mark[4];

    srv_record_init(&r, 1024);
    g_assert_false(srv_record_partial(&r));
    srv_record_mark(mark, 4);
    g_assert_cmpint(srv_record_feed(&r, mark, 2, &used), ==, SRV_RECORD_NEED);
    g_assert_cmpuint(used, ==, 2);
    g_assert_true(srv_record_partial(&r));
    g_assert_cmpint(srv_record_feed(&r, mark + 2, 2, &used), ==, SRV_RECORD_NEED);
    g_assert_true(srv_record_partial(&r));
    g_assert_cmpint(srv_record_feed(&r, "abcdEXTRA", 9, &used), ==, SRV_RECORD_COMPLETE);
    g_assert_cmpuint(used, ==, 4); /* stops at the end of the record */
    size_t len;
    unsigned char *rec = srv_record_take(&r, &len);
    g_assert_cmpmem(rec, len, "abcd", 4);
    g_free(rec);
    g_assert_false(srv_record_partial(&r));
    srv_record_clear(&r);
}

static void test_oversize(void)
{
    srv_record r;
    size_t used;
    GByteArray *s = g_byte_array_new();
    unsigned char big[64] = {0};

    /* One fragment over the limit: refused at its mark, before any payload. */
    srv_record_init(&r, 100);
    put_fragment(s, big, 64, false);
    put_fragment(s, big, 37, true); /* 101 bytes in all */
    g_assert_cmpint(srv_record_feed(&r, s->data, 68, &used), ==, SRV_RECORD_NEED);
    g_assert_cmpint(srv_record_feed(&r, s->data + 68, 4, &used), ==, -EMSGSIZE);
    srv_record_clear(&r);

    /* Exactly the limit is fine. */
    g_byte_array_set_size(s, 0);
    put_fragment(s, big, 64, false);
    put_fragment(s, big, 36, true);
    srv_record_init(&r, 100);
    g_assert_cmpint(srv_record_feed(&r, s->data, s->len, &used), ==, SRV_RECORD_COMPLETE);
    g_assert_cmpuint(used, ==, s->len);
    size_t len;
    g_free(srv_record_take(&r, &len));
    g_assert_cmpuint(len, ==, 100);
    srv_record_clear(&r);

    /* A mark announcing 2 GiB. */
    const unsigned char huge[4] = {0xff, 0xff, 0xff, 0xff};
    srv_record_init(&r, SRV_RECORD_MAX);
    g_assert_cmpint(srv_record_feed(&r, huge, 4, &used), ==, -EMSGSIZE);
    srv_record_clear(&r);
    g_byte_array_unref(s);
}

static void test_zero_length(void)
{
    srv_record r;
    size_t used;
    const unsigned char empty_last[4] = {0x80, 0, 0, 0};
    const unsigned char empty_more[4] = {0, 0, 0, 0};

    /* An empty record. */
    srv_record_init(&r, 1024);
    g_assert_cmpint(srv_record_feed(&r, empty_last, 4, &used), ==, -EBADMSG);
    srv_record_clear(&r);

    /* An empty fragment that is not the last. */
    srv_record_init(&r, 1024);
    g_assert_cmpint(srv_record_feed(&r, empty_more, 4, &used), ==, -EBADMSG);
    srv_record_clear(&r);

    /* ... also in the middle of a record. */
    GByteArray *s = g_byte_array_new();
    put_fragment(s, "ab", 2, false);
    put_fragment(s, "", 0, false);
    srv_record_init(&r, 1024);
    g_assert_cmpint(srv_record_feed(&r, s->data, s->len, &used), ==, -EBADMSG);
    srv_record_clear(&r);
    g_byte_array_unref(s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/record/single", test_single);
    g_test_add_func("/record/mark", test_mark);
    g_test_add_func("/record/multi_fragment", test_multi_fragment);
    g_test_add_func("/record/every_split", test_every_split);
    g_test_add_func("/record/partial", test_partial);
    g_test_add_func("/record/oversize", test_oversize);
    g_test_add_func("/record/zero_length", test_zero_length);
    return g_test_run();
}
