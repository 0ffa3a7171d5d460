/*
 * dbfs_perm.c -- the permission rule (dbfs.h: dbfs_perm_allows) and the
 * rule of the data calls (dbfs_perm.h: dbfs_perm_may_io). pgnfs_may and
 * pgnfs_may_io in schema/functions/10_common.sql are the same rules in
 * SQL; test_attr checks that the two agree on every mode and caller.
 *
 * NOTES
 *   Stateless; nothing here can fail.
 */
#include "dbfs_perm.h"

/* Is cred in group gid (primary or supplementary)? */
static bool dbfs_perm_in_group(const dbfs_cred *cred, uint32_t gid)
{
    if (cred->gid == gid)
        return true;
    for (uint32_t i = 0; i < cred->ngroups && i < DBFS_NGROUPS_MAX; i++)
        if (cred->groups[i] == gid)
            return true;
    return false;
}

/*
 * dbfs_perm_allows -- see dbfs.h: the mode bits of the caller's class
 * (owner, group, other) decide; root may read and write anything,
 * execute a file with any execute bit, and search any directory. Cannot
 * fail.
 */
bool dbfs_perm_allows(const dbfs_attr *a, const dbfs_cred *cred, unsigned want)
{
    unsigned bits;

    want &= DBFS_MAY_RWX;
    if (cred->uid == 0)
        return !(want & DBFS_MAY_EXEC) || a->type == DBFS_DIR || (a->mode & DBFS_MODE_ANY_X);
    if (cred->uid == a->uid)
        bits = a->mode >> DBFS_MODE_USER_SHIFT;
    else if (dbfs_perm_in_group(cred, a->gid))
        bits = a->mode >> DBFS_MODE_GROUP_SHIFT;
    else
        bits = a->mode;
    return (bits & want) == want;
}

/* dbfs_perm_may_io -- see dbfs_perm.h. */
bool dbfs_perm_may_io(const dbfs_attr *a, const dbfs_cred *cred, unsigned want)
{
    if (cred->uid == a->uid || dbfs_perm_allows(a, cred, want))
        return true;
    return want == DBFS_MAY_READ && a->type == DBFS_REG && dbfs_perm_allows(a, cred, DBFS_MAY_EXEC);
}
