/*
 * dbfs_perm.h -- the permission rule of dbfs and the names of the mode
 * bits it reads: who may read, write or execute (search) a file with
 * given attributes, and the owner override and execute-for-read rules of
 * the data calls. The SQL functions pgnfs_may and pgnfs_may_io
 * (schema/functions/10_common.sql) are the same rules, and tests check
 * that they agree.
 *
 * NOTES
 *   Pure functions of the attributes and the credentials: no state, no
 *   database, no logging; they cannot fail.
 */
#ifndef PGNFS_DBFS_PERM_H
#define PGNFS_DBFS_PERM_H

#include <stdbool.h>

#include "dbfs.h"

/* What a caller wants of a file (the rwx bits of one class, as the "want"
 * masks of dbfs_perm_allows() and pgnfs_may()). */
enum {
    DBFS_MAY_EXEC = 1, /* execute a file, search a directory */
    DBFS_MAY_WRITE = 2,
    DBFS_MAY_READ = 4,
    DBFS_MAY_RWX = DBFS_MAY_READ | DBFS_MAY_WRITE | DBFS_MAY_EXEC,
};

/* Mode bits (dbfs_attr.mode holds DBFS_MODE_MASK only). */
#define DBFS_MODE_SETUID 04000u
#define DBFS_MODE_SETGID 02000u
#define DBFS_MODE_STICKY 01000u
#define DBFS_MODE_MASK   07777u
#define DBFS_MODE_ANY_X  0111u /* an execute bit of any class */
/* Where each class's rwx bits sit in the mode. */
#define DBFS_MODE_USER_SHIFT  6
#define DBFS_MODE_GROUP_SHIFT 3

/*
 * dbfs_perm_may_io -- may cred read (want DBFS_MAY_READ) or write
 * (DBFS_MAY_WRITE) the data of the regular file a, as READ, WRITE and a
 * SETATTR of the size ask (Linux knfsd's nfsd_permission() with
 * NFSD_MAY_OWNER_OVERRIDE, and its read-if-exec rule)? The owner always
 * may (a file created 0444 stays writable through the descriptor that
 * created it; an owner's chmod 000 does not stop the reads of an open
 * file); otherwise dbfs_perm_allows(); and a read is allowed to whoever
 * may execute the file (a client runs a program by READing it, so a
 * program of mode 0111 or 0711 is executable by those its x bits admit).
 * ACCESS does not use this: it reports the mode bits as they are.
 */
bool dbfs_perm_may_io(const dbfs_attr *a, const dbfs_cred *cred, unsigned want);

#endif /* PGNFS_DBFS_PERM_H */
