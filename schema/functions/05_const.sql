-- 05_const.sql -- the numbers the metadata functions speak, by name.
--
-- Each is a tiny IMMUTABLE LANGUAGE sql function without arguments: the
-- planner inlines it and folds it to a constant when it plans the
-- statement or PL/pgSQL expression that calls it (once per session for
-- PL/pgSQL, whose plans are kept), so a name costs nothing per call: the
-- hot functions called one transaction at a time, or 20000 times in a
-- loop, take the same time as with the bare numbers. This file comes
-- first: LANGUAGE sql bodies are checked when they are created.
--
-- The C side holds the same numbers: dbfs.h (file types, DBFS_SET_*,
-- create modes), dbfs_sql.h (roles), dbfs_perm.h (permission masks and
-- mode bits), dbfs_err.c (Linux errno numbers).

-- Statuses: Linux errno numbers (dbfs maps them to the local errno).
CREATE OR REPLACE FUNCTION pgnfs_eperm() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 1 $$;
CREATE OR REPLACE FUNCTION pgnfs_enoent() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 2 $$;
CREATE OR REPLACE FUNCTION pgnfs_eacces() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 13 $$;
CREATE OR REPLACE FUNCTION pgnfs_eexist() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 17 $$;
CREATE OR REPLACE FUNCTION pgnfs_enotdir() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 20 $$;
CREATE OR REPLACE FUNCTION pgnfs_eisdir() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 21 $$;
CREATE OR REPLACE FUNCTION pgnfs_einval() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 22 $$;
CREATE OR REPLACE FUNCTION pgnfs_emlink() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 31 $$;
CREATE OR REPLACE FUNCTION pgnfs_enotempty() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 39 $$;
CREATE OR REPLACE FUNCTION pgnfs_ebadmsg() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 74 $$;
CREATE OR REPLACE FUNCTION pgnfs_estale() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 116 $$;

-- The SQLSTATE a function raises to stop a change before it stores
-- anything: 'PN' and the three digits of Linux errno e (dbfs_err.c).
CREATE OR REPLACE FUNCTION pgnfs_errcode(e int) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 'PN' || lpad(e::text, 3, '0') $$;

-- Roles of the rows the metadata functions return (pgnfs_result.role).
CREATE OR REPLACE FUNCTION pgnfs_role_none() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 0 $$;
-- the object (created, linked, moved)
CREATE OR REPLACE FUNCTION pgnfs_role_obj() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 1 $$;
-- the (first) directory before and after; for setattr and write the file
CREATE OR REPLACE FUNCTION pgnfs_role_pre() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 2 $$;
CREATE OR REPLACE FUNCTION pgnfs_role_post() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 3 $$;
-- the second directory of a rename, before and after
CREATE OR REPLACE FUNCTION pgnfs_role_pre2() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 4 $$;
CREATE OR REPLACE FUNCTION pgnfs_role_post2() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 5 $$;
-- an object whose name went and that still exists (after), or that is
-- gone with it (before)
CREATE OR REPLACE FUNCTION pgnfs_role_victim() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 6 $$;
CREATE OR REPLACE FUNCTION pgnfs_role_gone() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 7 $$;

-- File types (fileatt.type).
CREATE OR REPLACE FUNCTION pgnfs_t_reg() RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 1::smallint $$;
CREATE OR REPLACE FUNCTION pgnfs_t_dir() RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 2::smallint $$;
CREATE OR REPLACE FUNCTION pgnfs_t_blk() RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 3::smallint $$;
CREATE OR REPLACE FUNCTION pgnfs_t_chr() RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 4::smallint $$;
CREATE OR REPLACE FUNCTION pgnfs_t_lnk() RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 5::smallint $$;
CREATE OR REPLACE FUNCTION pgnfs_t_sock() RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 6::smallint $$;
CREATE OR REPLACE FUNCTION pgnfs_t_fifo() RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 7::smallint $$;

-- What a caller wants of a file ("want" masks: the rwx bits of a class).
CREATE OR REPLACE FUNCTION pgnfs_want_x() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 1 $$;
CREATE OR REPLACE FUNCTION pgnfs_want_w() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 2 $$;
CREATE OR REPLACE FUNCTION pgnfs_want_r() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 4 $$;
-- write and search: changing a directory's names
CREATE OR REPLACE FUNCTION pgnfs_want_wx() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 3 $$;
CREATE OR REPLACE FUNCTION pgnfs_want_rwx() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 7 $$;

-- Mode bits (fileatt.mode holds 07777 only).
CREATE OR REPLACE FUNCTION pgnfs_s_isuid() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 2048 $$;                            -- 04000
CREATE OR REPLACE FUNCTION pgnfs_s_isgid() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 1024 $$;                            -- 02000
CREATE OR REPLACE FUNCTION pgnfs_s_isvtx() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 512 $$;                             -- 01000, sticky
CREATE OR REPLACE FUNCTION pgnfs_s_ixgrp() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 8 $$;                               -- 00010
CREATE OR REPLACE FUNCTION pgnfs_s_ixany() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 73 $$;                              -- 00111, any execute bit
CREATE OR REPLACE FUNCTION pgnfs_s_mask() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 4095 $$;                            -- 07777
CREATE OR REPLACE FUNCTION pgnfs_s_link_mode() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 511 $$;                             -- 0777, every symbolic link's
-- Where a class's rwx bits sit in the mode.
CREATE OR REPLACE FUNCTION pgnfs_s_user_shift() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 6 $$;
CREATE OR REPLACE FUNCTION pgnfs_s_group_shift() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 3 $$;

-- The attributes a SETATTR or CREATE sets (s_set; dbfs.h's DBFS_SET_*).
CREATE OR REPLACE FUNCTION pgnfs_set_mode() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 1 $$;
CREATE OR REPLACE FUNCTION pgnfs_set_uid() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 2 $$;
CREATE OR REPLACE FUNCTION pgnfs_set_gid() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 4 $$;
CREATE OR REPLACE FUNCTION pgnfs_set_size() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 8 $$;
-- the client's atime, the server's; the client's mtime, the server's
CREATE OR REPLACE FUNCTION pgnfs_set_atime() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 16 $$;
CREATE OR REPLACE FUNCTION pgnfs_set_atime_now() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 32 $$;
CREATE OR REPLACE FUNCTION pgnfs_set_mtime() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 64 $$;
CREATE OR REPLACE FUNCTION pgnfs_set_mtime_now() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 128 $$;

-- CREATE's modes (p_how; dbfs.h's dbfs_createmode).
CREATE OR REPLACE FUNCTION pgnfs_how_unchecked() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 0 $$;
CREATE OR REPLACE FUNCTION pgnfs_how_exclusive() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 2 $$;

-- Limits and units.
CREATE OR REPLACE FUNCTION pgnfs_nlink_max() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 2147483647 $$;                      -- fileatt.nlink is int4
CREATE OR REPLACE FUNCTION pgnfs_root_ino() RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 1::bigint $$;
CREATE OR REPLACE FUNCTION pgnfs_ns_per_sec() RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 1000000000::bigint $$;
CREATE OR REPLACE FUNCTION pgnfs_ns_per_day() RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 86400 * pgnfs_ns_per_sec() $$;

-- The transaction advisory lock that serializes renames of directories
-- to another parent (60_rename.sql).
CREATE OR REPLACE FUNCTION pgnfs_rename_lock_key() RETURNS bigint LANGUAGE sql IMMUTABLE
PARALLEL SAFE
AS $$ SELECT 7365981274301::bigint $$;
