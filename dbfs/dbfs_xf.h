/*
 * dbfs_xf.h -- transformation chains on file data inside dbfs (xform/xf.h
 * does the transforming; schema/004_xform.sql and functions/25_xform.sql
 * hold the chains): the environment made at open, a file's chain by id,
 * the decode of a fetched chunk, and the write path of guarded files.
 *
 * A file whose fileatt.chain is NULL or 0 is unguarded: its data takes the
 * plain path, unchanged, and nothing here runs for it. A guarded file's
 * chunks are stored as xf_encode made them, one whole value per chunk;
 * the buffer cache, the small-file cache and the write-back buffer hold
 * plain bytes; transforming happens at flush (dbfs_xf_store) and at fetch
 * (dbfs_xf_decode).
 *
 * NOTES
 *   The plain write path learns that a file is guarded when the database
 *   refuses it (DBFS_XF_EGUARDED, before anything is stored) and then
 *   calls dbfs_xf_store; dbfs_xf_seen remembers such files so that later
 *   writes go the guarded way at once (a guess only: dbfs_xf_store checks
 *   the file's chain in the database).
 *   Errors: 0 or a negative errno as dbfs.h says; a chunk that fails its
 *   checks is -EIO with a WARNING naming the file and the chunk.
 */
#ifndef PGNFS_DBFS_XF_H
#define PGNFS_DBFS_XF_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dbfs_int.h"
#include "store.h"
#include "xf.h"

/* The most a guarded chunk of cs plain bytes may store (any chain: the
 * header of 32 stages with the largest meta, twice the plain bytes). */
#define DBFS_XF_STORED_MAX(cs) (2 * (uint64_t)(cs) + 4096)

/* The database refused a plain write or cut of a guarded file (PN077). */
#define DBFS_XF_EGUARDED (-EBADFD)
/* The file changed between the guarded write's read and its write
 * (PN078): run it again. */
#define DBFS_XF_ECHANGED (-EREMCHG)

/* The database refused a plain write, or a new size, of a transformation
 * link (PN067): the link's path serves it (dbfs_xf_link.c). */
#define DBFS_XF_ELINK (-ENOLINK)

/*
 * dbfs_xf_open -- make fs->xf from cfg's [xform] keys; on session a (in a
 * transaction of its own): take a nonce epoch, check the key's id against
 * the file system's (record it the first time), set the root's chain when
 * cfg names one. Returns 0, -EINVAL (a chain or setting), -EACCES, -ENOENT,
 * -ENOKEY, -ELIBBAD (plug-in), -EKEYREJECTED (another key than the file
 * system's), or a database error; every refusal logged with what to fix.
 */
int dbfs_xf_open(dbfs *fs, const dbfs_config *cfg, dbfs_conn *a);
/*
 * dbfs_xf_sql_problem -- why chain ch's in-database stages cannot be used
 * on the database of c (a function missing, or an inverse that does not
 * undo its forward on probe bytes): *why (the caller's, g_free) or NULL
 * when they can or ch has none. Returns 0 or a database error.
 */
int dbfs_xf_sql_problem(dbfs_conn *c, const xf_chain *ch, char **why);

/* dbfs_xf_close -- free fs->xf (every connection closed first). */
void dbfs_xf_close(dbfs *fs);

/*
 * dbfs_xf_chain -- the chain with this id (not 0): from the env, or made
 * from its text in pgnfs_xform_chain (one statement on c, the first time
 * this process meets it). Returns 0 and *out (owned by fs), or -EIO (no
 * such chain, or one that does not make here: logged).
 */
int dbfs_xf_chain(dbfs_conn *c, uint64_t id, const xf_chain **out);

/* dbfs_xf_want_text -- whether a read of file ino should bring its chain's
 * text (the READ statements' $5): the file was not seen under a chain
 * this server holds. A guess: a wrong true costs an index lookup, a wrong
 * false the chain's own query (dbfs_xf_chain). */
bool dbfs_xf_want_text(dbfs *fs, uint64_t ino);

/* dbfs_xf_chain_learn -- make chain id from its text (len bytes, as the
 * database holds it) unless fs holds it already. Returns 0, or -EIO
 * (logged) when the text does not make a chain of that id here. */
int dbfs_xf_chain_learn(dbfs *fs, uint64_t id, const char *text, size_t len);

/* dbfs_xf_chain_on -- the same for file system fs through any connection
 * c (a session of the admin paths too). */
int dbfs_xf_chain_on(dbfs *fs, dbfs_conn *c, uint64_t id, const xf_chain **out);

/* PostgreSQL type oids of the array elements dbfs_xf_array builds. */
#define DBFS_XF_INT8OID  20
#define DBFS_XF_BYTEAOID 17

/* dbfs_xf_put_be -- v as n big-endian bytes at p. Cannot fail. */
void dbfs_xf_put_be(unsigned char *p, uint64_t v, int n);
/*
 * dbfs_xf_array -- an array of n elements of type elem in PostgreSQL's
 * binary format (one dimension, no NULLs): element i is lens[i] bytes at
 * vals[i]. Returns a malloc'd buffer and *len, or NULL (out of memory).
 */
unsigned char *dbfs_xf_array(uint32_t elem, size_t n, const void *const *vals, const size_t *lens,
                             size_t *len);

/*
 * dbfs_xf_decode_to -- dbfs_xf_decode into out (room bytes, which the
 * decode may use whole as its working space) when room is enough for any
 * chunk of the chain (*plain == out then), else as dbfs_xf_decode does.
 */
int dbfs_xf_decode_to(dbfs_conn *c, uint64_t id, uint64_t ino, uint64_t chunk, const void *v,
                      size_t vlen, void *out, size_t room, const char **plain, size_t *plain_len);

/*
 * dbfs_xf_decode -- the plain bytes of stored chunk `chunk` of file ino
 * (v, vlen: the value after the encoding's decode) under chain id, into
 * c's plain buffer: *plain (valid until the next call on c) and *plain_len
 * (at most the chunk size). Returns 0, -EIO (the chunk fails its checks:
 * logged naming file and chunk; no byte of it is returned), -ENOMEM.
 */
int dbfs_xf_decode(dbfs_conn *c, uint64_t id, uint64_t ino, uint64_t chunk, const void *v,
                   size_t vlen, const char **plain, size_t *plain_len);

/* A file seen guarded whose chain is not known yet (a new file whose
 * attributes said it is guarded: dbfs_xf_hint). */
#define DBFS_XF_SEEN_GUARDED UINT64_MAX

/* dbfs_xf_hint -- new file a (CREATE in directory dir) says it is guarded:
 * its writes take the guarded path at once, with the chain the
 * directory's last new file had when it is known (a guess: the store
 * checks it). */
void dbfs_xf_hint(dbfs *fs, uint64_t dir, const dbfs_attr *a);

/* dbfs_xf_seen -- the chain id file ino was last seen guarded with
 * (DBFS_XF_SEEN_GUARDED: its chain unknown), or 0.
 * (A guess; see NOTES.) */
uint64_t dbfs_xf_seen(dbfs *fs, uint64_t ino);
/* dbfs_xf_note -- remember file ino's chain (0: unguarded). */
void dbfs_xf_note(dbfs *fs, uint64_t ino, uint64_t chain);

/*
 * dbfs_xf_store -- the writes ws[0 .. n) of guarded file fh (as
 * dbfs_data_store takes them: pieces with their raw bytes), in one
 * transaction: every chunk they touch decoded where they do not cover it,
 * overlaid, encoded whole and stored. *pre, *post: the attributes before
 * and after. An unguarded file (its chain was cleared) goes back to
 * dbfs_data_store. Errors as dbfs_data_store's, and -EIO when a chunk
 * fails to decode or encode (nothing stored).
 */
int dbfs_xf_store(dbfs_conn *c, dbfs_fh fh, const store_write *ws, size_t n, dbfs_attr *pre,
                  dbfs_attr *post);

/*
 * dbfs_xf_cut -- cut the chunk of guarded file fh where `size` falls to
 * its first size % chunk_size plain bytes (decode, cut, encode, store, one
 * transaction), so that a truncation to size has nothing left to cut in
 * SQL. The caller's write permission is checked. Returns 0 or as
 * dbfs_xf_store.
 */
int dbfs_xf_cut(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t size);

/* --- transformation links (dbfs_xf_link.c; 27_xform_link.sql) -------------
 * A link is a regular file (dbfs_attr_is_xlink) whose bytes are its
 * base's plain bytes after its chain's forward, chunk by chunk (each
 * chunk's output without the header), and which a WRITE stores into the
 * base through the inverse when the chain is bare (xf_traits). Every call
 * reads what the link is in one round trip first; a link whose base is
 * gone answers -EIO (logged). */

/*
 * dbfs_xf_link_read -- READ of link *a (its attributes, from the READ's
 * round trip) for cred: [off, off + count) into buf, *nread bytes, *eof.
 * Reads the base (as cred: the base's permission holds too) whole chunks
 * at a time. For a chain that changes lengths, computes the link's size
 * first when it is not current (*a learns it). Returns 0, -EIO, -EACCES,
 * -EAGAIN (the base changed under the read: the client retries), -ENOMEM,
 * or the base read's errors.
 */
int dbfs_xf_link_read(dbfs_conn *c, const dbfs_cred *cred, dbfs_attr *a, uint64_t off,
                      uint32_t count, void *buf, uint32_t *nread, bool *eof);

/*
 * dbfs_xf_link_write -- WRITE of len bytes at off to link fh for cred
 * (whose permission on the link was checked): the base's chunks touched
 * are read, passed forward, overlaid, passed back through the inverse and
 * stored (one write of the base, FILE_SYNC). *wcc: the link's attributes
 * before and after. Returns 0, -EACCES (a link that is not writable),
 * -EIO, or the base's read or write errors.
 */
int dbfs_xf_link_write(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off,
                       const void *data, uint32_t len, dbfs_wcc *wcc);

/*
 * dbfs_xf_link_size -- when link *a's size is not current (a chain that
 * changes lengths, after its base changed), compute it (every chunk of the
 * base through the chain), record it and put the link's new attributes in
 * *a. Nothing to do otherwise. Returns 0 or as dbfs_xf_link_read.
 */
int dbfs_xf_link_size(dbfs_conn *c, dbfs_attr *a);

/* dbfs_xf_link_known -- has a READ met link ino (what it is in *out)? */
bool dbfs_xf_link_known(dbfs *fs, uint64_t ino, dbfs_xl_slot *out);

/*
 * dbfs_xf_link_read_known -- dbfs_xf_link_read of link fh, which a READ
 * met before and whose chain preserves lengths (*known), in one round
 * trip: *a its attributes. Returns 0, -ESTALE (the link went), -EACCES
 * (the caller may not read the link or its base), -EIO (its base went, a
 * chunk that does not decode; logged), -ENOMEM, or a database error.
 */
int dbfs_xf_link_read_known(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh,
                            const dbfs_xl_slot *known, uint64_t off, uint32_t count, void *buf,
                            uint32_t *nread, bool *eof, dbfs_attr *a);

/* dbfs_xf_link_base -- the base of link ino, for a change of the link's
 * size: *base. Returns 0, -EACCES (not writable), -EIO (gone). */
int dbfs_xf_link_base(dbfs_conn *c, uint64_t ino, dbfs_fh *base);

#endif /* PGNFS_DBFS_XF_H */
