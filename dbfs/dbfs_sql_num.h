/*
 * dbfs_sql_num.h -- numbers of dbfs.h, dbfs_perm.h and dbfs_wire.h as SQL
 * text, for the statements of dbfs_sql.c and dbfs_sql_admin.c.
 */
#ifndef DBFS_SQL_NUM_H
#define DBFS_SQL_NUM_H

#include "dbfs_perm.h"
#include "dbfs_wire.h"

/* Numbers of dbfs.h, dbfs_perm.h and dbfs_wire.h as SQL text. The admin
 * statements run before (or without) the schema's named numbers
 * (functions/05_const.sql), so the text holds the numbers themselves;
 * the compiler checks them against the C names. */
#define DBFS_SQL_ROOT_INO   "1"
#define DBFS_SQL_T_REG      "1"
#define DBFS_SQL_T_DIR      "2"
#define DBFS_SQL_DIR_NLINK  "2" /* a new directory's link count: its name and "." */
#define DBFS_SQL_MAY_READ   "4"
#define DBFS_SQL_NS_PER_DAY "86400000000000"
_Static_assert(DBFS_ROOT_INO == 1 && DBFS_REG == 1 && DBFS_DIR == 2 && DBFS_MAY_READ == 4 &&
                   DBFS_NS_PER_DAY == INT64_C(86400000000000),
               "the numbers of the SQL text are dbfs's");

#endif /* DBFS_SQL_NUM_H */
