-- 85_lock.sql -- the lock manager's decisions (NLM locks, DOS shares, NSM
-- host status), over the tables of 003_locks.sql. Each function is one
-- transaction of its caller and one round trip; the C side (dbfs_lock.c)
-- calls nothing else for locks.
--
-- Rules
--   * Every function that changes the locks or waiters of a file first
--     takes that file's transaction advisory lock (pgnfs_nlm_file_lock),
--     so conflicts on one file are decided one call at a time, in any
--     server; functions that touch several files take theirs in inode
--     order. Then the file's fileatt row FOR KEY SHARE (a removal of the
--     file waits for the call, or the call finds the handle stale), then
--     lock rows. Removing a file drops its locks and waiters with it (ON
--     DELETE CASCADE): nothing to grant on a file that is gone.
--   * One owner's locks follow POSIX (pgnfs_nlm_apply): a new lock
--     replaces the owner's overlapping locks where it lies, merges with
--     its locks of the same type that overlap or touch it, and leaves the
--     rest of a lock of the other type in place; an unlock of the middle
--     of a lock splits it.
--   * Whatever releases a range (UNLOCK, a shared lock over the owner's
--     exclusive one, FREE_ALL, a host's reboot, the end of a grace
--     period) grants, in the same transaction, the blocked requests of
--     that file that no longer conflict, oldest first (pgnfs_nlm_grant).
--     Those of the calling server come back as kind 2 rows for it to call
--     back; those of other servers stay marked granted and NOTIFY
--     pgnfs_nlm tells them to take them (pgnfs_nlm_take).
--   * Grace: a server in its grace period grants only reclaims; TEST,
--     UNLOCK, CANCEL, UNSHARE and new locks answer "grace", as Linux's
--     lockd does. The period ends at grace_until (pgnfs_nlm_grace_end
--     then drops the locks nobody reclaimed) or as soon as a reclaim
--     leaves no old lock of the server.

-- Outcomes (pgnfs_nlm_res.outcome; dbfs.h's dbfs_lock_outcome).
CREATE OR REPLACE FUNCTION pgnfs_nlm_granted() RETURNS smallint LANGUAGE sql IMMUTABLE
PARALLEL SAFE AS $$ SELECT 0::smallint $$;
CREATE OR REPLACE FUNCTION pgnfs_nlm_denied() RETURNS smallint LANGUAGE sql IMMUTABLE
PARALLEL SAFE AS $$ SELECT 1::smallint $$;
CREATE OR REPLACE FUNCTION pgnfs_nlm_blocked() RETURNS smallint LANGUAGE sql IMMUTABLE
PARALLEL SAFE AS $$ SELECT 2::smallint $$;
CREATE OR REPLACE FUNCTION pgnfs_nlm_grace() RETURNS smallint LANGUAGE sql IMMUTABLE
PARALLEL SAFE AS $$ SELECT 3::smallint $$;
CREATE OR REPLACE FUNCTION pgnfs_nlm_nolocks() RETURNS smallint LANGUAGE sql IMMUTABLE
PARALLEL SAFE AS $$ SELECT 4::smallint $$;
CREATE OR REPLACE FUNCTION pgnfs_nlm_deadlock() RETURNS smallint LANGUAGE sql IMMUTABLE
PARALLEL SAFE AS $$ SELECT 5::smallint $$;

-- The first key of the files' advisory locks ("NLM" in ASCII); the
-- second is a hash of the inode (two files may share one: they are then
-- serialized together, which is slower, never wrong).
CREATE OR REPLACE FUNCTION pgnfs_nlm_lock_class() RETURNS int LANGUAGE sql IMMUTABLE
PARALLEL SAFE AS $$ SELECT 5131341 $$;

-- How deep the deadlock check follows "waits for a lock held by".
CREATE OR REPLACE FUNCTION pgnfs_nlm_deadlock_depth() RETURNS int LANGUAGE sql IMMUTABLE
PARALLEL SAFE AS $$ SELECT 16 $$;

-- Owners scanned per garbage collection.
CREATE OR REPLACE FUNCTION pgnfs_nlm_gc_batch() RETURNS int LANGUAGE sql IMMUTABLE
PARALLEL SAFE AS $$ SELECT 10000 $$;

CREATE OR REPLACE FUNCTION pgnfs_nlm_file_lock(p_ino bigint)
RETURNS void LANGUAGE sql AS $$
SELECT pg_advisory_xact_lock(pgnfs_nlm_lock_class(), hashint8(p_ino))
$$;

-- Result rows.
CREATE OR REPLACE FUNCTION pgnfs_nlm_status(st int, outcome smallint, grace boolean)
RETURNS pgnfs_nlm_res LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT ROW(0::smallint, st, outcome, grace, NULL, NULL, NULL, NULL, NULL, NULL)::pgnfs_nlm_res
$$;

-- Is server s in its grace period (at the transaction's time)?
CREATE OR REPLACE FUNCTION pgnfs_nlm_in_grace(s int)
RETURNS boolean LANGUAGE sql STABLE AS $$
SELECT coalesce((SELECT grace_until > now() FROM pgnfs_nlm_server WHERE id = s), false)
$$;

-- The file a lock call names, locked against removal until the call ends:
-- its fileatt row, or NULL when the handle is stale.
CREATE OR REPLACE FUNCTION pgnfs_nlm_file(p_ino bigint, p_gen int)
RETURNS fileatt LANGUAGE sql AS $$
SELECT * FROM fileatt WHERE inode = p_ino AND generation = p_gen FOR KEY SHARE
$$;

-- May the caller lock file f (shared: read, exclusive: write; the owner
-- always may, and for a shared lock whoever may execute it, as for READ)?
-- 0, or the errno: EINVAL for what is not a regular file, EACCES.
CREATE OR REPLACE FUNCTION pgnfs_nlm_may(f fileatt, c_uid bigint, c_gid bigint,
                                         c_groups bigint[], excl boolean)
RETURNS int LANGUAGE sql IMMUTABLE AS $$
SELECT CASE
    WHEN f.type <> pgnfs_t_reg() THEN pgnfs_einval()
    WHEN NOT pgnfs_may_io(f, c_uid, c_gid, c_groups,
                          CASE WHEN excl THEN pgnfs_want_w() ELSE pgnfs_want_r() END)
        THEN pgnfs_eacces()
    ELSE 0 END
$$;

-- The host named p_name (made if new), its address and server recorded
-- when they changed, marked monitored when p_monitor. Locked FOR KEY
-- SHARE so that garbage collection leaves it while the call runs.
CREATE OR REPLACE FUNCTION pgnfs_nlm_host_id(p_name bytea, p_addr inet, p_srv int, p_local inet,
                                             p_monitor boolean)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    h pgnfs_nlm_host;
BEGIN
    LOOP
        SELECT * INTO h FROM pgnfs_nlm_host WHERE name = p_name FOR KEY SHARE;
        IF FOUND THEN
            IF h.addr IS DISTINCT FROM p_addr OR h.srv IS DISTINCT FROM p_srv
               OR h.local IS DISTINCT FROM p_local OR (p_monitor AND NOT h.monitored) THEN
                UPDATE pgnfs_nlm_host SET addr = p_addr, srv = p_srv, local = p_local,
                                          monitored = monitored OR p_monitor
                 WHERE id = h.id;
            END IF;
            RETURN h.id;
        END IF;
        INSERT INTO pgnfs_nlm_host (name, addr, srv, local, monitored)
        VALUES (p_name, p_addr, p_srv, p_local, p_monitor)
        ON CONFLICT (name) DO NOTHING RETURNING id INTO h.id;
        IF h.id IS NOT NULL THEN
            RETURN h.id;
        END IF;
    END LOOP;
END
$$;

-- The owner (host, svid, oh), made if new, locked FOR KEY SHARE.
CREATE OR REPLACE FUNCTION pgnfs_nlm_owner_id(p_host bigint, p_svid bigint, p_oh bytea)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    o bigint;
BEGIN
    LOOP
        SELECT id INTO o FROM pgnfs_nlm_owner
         WHERE host = p_host AND svid = p_svid AND oh = p_oh FOR KEY SHARE;
        IF FOUND THEN
            RETURN o;
        END IF;
        INSERT INTO pgnfs_nlm_owner (host, svid, oh) VALUES (p_host, p_svid, p_oh)
        ON CONFLICT (host, svid, oh) DO NOTHING RETURNING id INTO o;
        IF o IS NOT NULL THEN
            RETURN o;
        END IF;
    END LOOP;
END
$$;

-- The owner (host name, svid, oh) if it exists (never made): its id or
-- NULL.
CREATE OR REPLACE FUNCTION pgnfs_nlm_owner_find(p_host bytea, p_svid bigint, p_oh bytea)
RETURNS bigint LANGUAGE sql STABLE AS $$
SELECT o.id FROM pgnfs_nlm_owner o JOIN pgnfs_nlm_host h ON h.id = o.host
 WHERE h.name = p_host AND o.svid = p_svid AND o.oh = p_oh
$$;

-- The first lock of another owner than o on file i that conflicts with
-- range r (excl e), as a kind 1 row; no row when none does.
CREATE OR REPLACE FUNCTION pgnfs_nlm_conflict(i bigint, o bigint, r int8range, e boolean)
RETURNS SETOF pgnfs_nlm_res LANGUAGE sql STABLE AS $$
SELECT 1::smallint, 0, NULL::smallint, NULL::boolean, l.excl, w.svid, w.oh, lower(l.range),
       upper(l.range), NULL::bytea
  FROM pgnfs_nlm_lock l JOIN pgnfs_nlm_owner w ON w.id = l.owner
 WHERE l.inode = i AND l.range && r AND l.owner IS DISTINCT FROM o AND (l.excl OR e)
 ORDER BY lower(l.range)
 LIMIT 1
$$;

-- Would owner o, waiting for range r (excl e) of file i, close a cycle of
-- owners each waiting for a lock another holds? Followed
-- pgnfs_nlm_deadlock_depth() steps deep.
CREATE OR REPLACE FUNCTION pgnfs_nlm_would_deadlock(i bigint, o bigint, r int8range, e boolean)
RETURNS boolean LANGUAGE sql STABLE AS $$
WITH RECURSIVE wf(owner, depth) AS (
    SELECT l.owner, 1 FROM pgnfs_nlm_lock l
     WHERE l.inode = i AND l.range && r AND l.owner <> o AND (l.excl OR e)
  UNION
    SELECT l.owner, wf.depth + 1
      FROM wf
      JOIN pgnfs_nlm_wait w ON w.owner = wf.owner AND NOT w.granted
      JOIN pgnfs_nlm_lock l ON l.inode = w.inode AND l.range && w.range
                           AND l.owner <> w.owner AND (l.excl OR w.excl)
     WHERE wf.depth < pgnfs_nlm_deadlock_depth()
)
SELECT EXISTS (SELECT 1 FROM wf WHERE owner = o)
$$;

-- Give owner o the lock r (excl e) on file i, POSIX style (see the top of
-- this file), as server s at epoch ep, the owner's NSM state cs. The
-- caller holds the file's advisory lock and has checked that no other
-- owner's lock conflicts. Returns true when part of what was the owner's
-- exclusive lock is now shared (waiters for shared locks may go).
CREATE OR REPLACE FUNCTION pgnfs_nlm_apply(i bigint, o bigint, r int8range, e boolean, s int,
                                           ep int, cs int)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    g record;
    n int8range := r;
    down boolean := false;
BEGIN
    FOR g IN DELETE FROM pgnfs_nlm_lock
              WHERE inode = i AND owner = o AND (range && r OR (excl = e AND range -|- r))
          RETURNING range, excl, srv, epoch, cstate LOOP
        IF g.excl = e THEN
            n := range_merge(n, g.range);
            CONTINUE;
        END IF;
        down := down OR g.excl;
        IF lower(g.range) < lower(r) THEN
            INSERT INTO pgnfs_nlm_lock (inode, owner, range, excl, srv, epoch, cstate)
            VALUES (i, o, int8range(lower(g.range), lower(r)), g.excl, g.srv, g.epoch, g.cstate);
        END IF;
        IF NOT upper_inf(r) AND (upper_inf(g.range) OR upper(g.range) > upper(r)) THEN
            INSERT INTO pgnfs_nlm_lock (inode, owner, range, excl, srv, epoch, cstate)
            VALUES (i, o, int8range(upper(r), upper(g.range)), g.excl, g.srv, g.epoch, g.cstate);
        END IF;
    END LOOP;
    INSERT INTO pgnfs_nlm_lock (inode, owner, range, excl, srv, epoch, cstate)
    VALUES (i, o, n, e, s, ep, cs);
    RETURN down;
END
$$;

-- Take away owner o's locks on range r of file i, leaving the parts
-- outside r. Returns whether anything was released.
CREATE OR REPLACE FUNCTION pgnfs_nlm_release(i bigint, o bigint, r int8range)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    g record;
    released boolean := false;
BEGIN
    FOR g IN DELETE FROM pgnfs_nlm_lock WHERE inode = i AND owner = o AND range && r
          RETURNING range, excl, srv, epoch, cstate LOOP
        released := true;
        IF lower(g.range) < lower(r) THEN
            INSERT INTO pgnfs_nlm_lock (inode, owner, range, excl, srv, epoch, cstate)
            VALUES (i, o, int8range(lower(g.range), lower(r)), g.excl, g.srv, g.epoch, g.cstate);
        END IF;
        IF NOT upper_inf(r) AND (upper_inf(g.range) OR upper(g.range) > upper(r)) THEN
            INSERT INTO pgnfs_nlm_lock (inode, owner, range, excl, srv, epoch, cstate)
            VALUES (i, o, int8range(upper(r), upper(g.range)), g.excl, g.srv, g.epoch, g.cstate);
        END IF;
    END LOOP;
    RETURN released;
END
$$;

-- Grant the blocked requests on file i that no longer conflict, oldest
-- first, again from the start after a grant that turned an exclusive lock
-- shared. The caller holds the file's advisory lock. Requests of server
-- p_srv come back as kind 2 rows (and are gone from the table); those of
-- other servers are marked granted and their servers told (NOTIFY
-- pgnfs_nlm, payload the server's id).
CREATE OR REPLACE FUNCTION pgnfs_nlm_grant(p_srv int, i bigint)
RETURNS SETOF pgnfs_nlm_res LANGUAGE plpgsql AS $$
DECLARE
    w pgnfs_nlm_wait;
    again boolean := true;
    down boolean;
    told int[] := '{}';
BEGIN
    WHILE again LOOP
        again := false;
        FOR w IN SELECT * FROM pgnfs_nlm_wait WHERE inode = i AND NOT granted ORDER BY id LOOP
            CONTINUE WHEN EXISTS (SELECT 1 FROM pgnfs_nlm_conflict(i, w.owner, w.range, w.excl));
            down := pgnfs_nlm_apply(i, w.owner, w.range, w.excl, w.srv,
                                    (SELECT state FROM pgnfs_nlm_server WHERE id = w.srv), w.cstate);
            IF w.srv = p_srv THEN
                DELETE FROM pgnfs_nlm_wait WHERE id = w.id;
                RETURN NEXT ROW(2::smallint, 0, NULL, NULL, w.excl, NULL, NULL, lower(w.range),
                                upper(w.range), w.notify)::pgnfs_nlm_res;
            ELSE
                UPDATE pgnfs_nlm_wait SET granted = true WHERE id = w.id;
                IF NOT w.srv = ANY (told) THEN
                    told := told || w.srv;
                    PERFORM pg_notify('pgnfs_nlm', w.srv::text);
                END IF;
            END IF;
            IF down THEN
                again := true;
                EXIT;
            END IF;
        END LOOP;
    END LOOP;
END
$$;

-- Has server s no old lock or share left (every client reclaimed)? Then
-- its grace period ends now. Returns whether it is still in grace.
CREATE OR REPLACE FUNCTION pgnfs_nlm_grace_check(s int)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    st int;
BEGIN
    SELECT state INTO st FROM pgnfs_nlm_server WHERE id = s;
    IF EXISTS (SELECT 1 FROM pgnfs_nlm_lock WHERE srv = s AND epoch <> st)
       OR EXISTS (SELECT 1 FROM pgnfs_nlm_share WHERE srv = s AND epoch <> st) THEN
        RETURN pgnfs_nlm_in_grace(s);
    END IF;
    UPDATE pgnfs_nlm_server SET grace_until = NULL WHERE id = s AND grace_until IS NOT NULL;
    RETURN false;
END
$$;

-- NLM LOCK (and NM_LOCK: p_monitor false): owner (p_host, p_svid, p_oh)
-- wants range [p_lo, p_hi) of file (p_ino, p_gen), exclusive or shared,
-- as the credential given, through server p_srv. Granted at once when no
-- other owner's lock conflicts; else, with p_block, queued (p_notify
-- stored for the callback; at most p_max_host requests of one host and
-- p_max_all in all, else "nolocks") unless that would deadlock; else
-- denied with the lock in the way. During the server's grace period only
-- a reclaim is taken; a reclaim outside it is an ordinary request (the
-- database kept the locks). A downgrade grants waiters.
CREATE OR REPLACE FUNCTION pgnfs_nlm_lock(p_srv int, p_ino bigint, p_gen int, p_uid bigint,
                                          p_gid bigint, p_groups bigint[], p_host bytea,
                                          p_addr inet, p_local inet, p_svid bigint, p_oh bytea,
                                          p_lo bigint, p_hi bigint, p_excl boolean,
                                          p_block boolean, p_reclaim boolean, p_monitor boolean,
                                          p_cstate int, p_notify bytea, p_max_host int,
                                          p_max_all int)
RETURNS SETOF pgnfs_nlm_res LANGUAGE plpgsql AS $$
DECLARE
    f fileatt;
    r int8range := int8range(p_lo, p_hi);
    grace boolean;
    h bigint;
    o bigint;
    st int;
    c pgnfs_nlm_res;
BEGIN
    PERFORM pgnfs_nlm_file_lock(p_ino);
    f := pgnfs_nlm_file(p_ino, p_gen);
    IF f.inode IS NULL THEN
        RETURN NEXT pgnfs_nlm_status(pgnfs_estale(), NULL, NULL);
        RETURN;
    END IF;
    IF pgnfs_nlm_may(f, p_uid, p_gid, p_groups, p_excl) <> 0 THEN
        RETURN NEXT pgnfs_nlm_status(pgnfs_nlm_may(f, p_uid, p_gid, p_groups, p_excl), NULL, NULL);
        RETURN;
    END IF;
    grace := pgnfs_nlm_in_grace(p_srv);
    IF grace AND NOT p_reclaim THEN
        RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_grace(), true);
        RETURN;
    END IF;
    h := pgnfs_nlm_host_id(p_host, p_addr, p_srv, p_local, p_monitor);
    o := pgnfs_nlm_owner_id(h, p_svid, p_oh);
    SELECT * INTO c FROM pgnfs_nlm_conflict(p_ino, o, r, p_excl);
    IF FOUND THEN
        IF NOT p_block OR p_reclaim THEN
            RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_denied(), grace);
            RETURN NEXT c;
            RETURN;
        END IF;
        IF pgnfs_nlm_would_deadlock(p_ino, o, r, p_excl) THEN
            RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_deadlock(), grace);
            RETURN NEXT c;
            RETURN;
        END IF;
        UPDATE pgnfs_nlm_wait SET notify = p_notify, srv = p_srv, cstate = p_cstate
         WHERE owner = o AND inode = p_ino AND range = r AND excl = p_excl;
        IF NOT FOUND THEN
            IF (SELECT count(*) FROM (SELECT 1 FROM pgnfs_nlm_wait w
                                        JOIN pgnfs_nlm_owner x ON x.id = w.owner
                                       WHERE x.host = h LIMIT p_max_host) a) >= p_max_host
               OR (SELECT count(*) FROM (SELECT 1 FROM pgnfs_nlm_wait LIMIT p_max_all) b)
                  >= p_max_all THEN
                RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_nolocks(), grace);
                RETURN;
            END IF;
            INSERT INTO pgnfs_nlm_wait (inode, owner, range, excl, srv, cstate, notify)
            VALUES (p_ino, o, r, p_excl, p_srv, p_cstate, p_notify);
        END IF;
        RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_blocked(), grace);
        RETURN;
    END IF;
    SELECT state INTO st FROM pgnfs_nlm_server WHERE id = p_srv;
    IF pgnfs_nlm_apply(p_ino, o, r, p_excl, p_srv, st, p_cstate) THEN
        RETURN QUERY SELECT * FROM pgnfs_nlm_grant(p_srv, p_ino);
    END IF;
    -- A blocked request its owner sent again (the client polls) is granted now.
    DELETE FROM pgnfs_nlm_wait WHERE owner = o AND inode = p_ino AND range = r AND excl = p_excl;
    IF grace THEN
        grace := pgnfs_nlm_grace_check(p_srv);
    END IF;
    RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_granted(), grace);
END
$$;

-- NLM TEST: would the lock be granted? Denied with the lock in the way, or
-- granted; "grace" during the server's grace period. Reads only.
CREATE OR REPLACE FUNCTION pgnfs_nlm_test(p_srv int, p_ino bigint, p_gen int, p_uid bigint,
                                          p_gid bigint, p_groups bigint[], p_host bytea,
                                          p_svid bigint, p_oh bytea, p_lo bigint, p_hi bigint,
                                          p_excl boolean)
RETURNS SETOF pgnfs_nlm_res LANGUAGE plpgsql STABLE AS $$
DECLARE
    f fileatt;
    c pgnfs_nlm_res;
BEGIN
    IF pgnfs_nlm_in_grace(p_srv) THEN
        RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_grace(), true);
        RETURN;
    END IF;
    SELECT * INTO f FROM fileatt WHERE inode = p_ino AND generation = p_gen;
    IF NOT FOUND THEN
        RETURN NEXT pgnfs_nlm_status(pgnfs_estale(), NULL, false);
        RETURN;
    END IF;
    IF pgnfs_nlm_may(f, p_uid, p_gid, p_groups, p_excl) <> 0 THEN
        RETURN NEXT pgnfs_nlm_status(pgnfs_nlm_may(f, p_uid, p_gid, p_groups, p_excl), NULL,
                                     false);
        RETURN;
    END IF;
    SELECT * INTO c FROM pgnfs_nlm_conflict(p_ino, pgnfs_nlm_owner_find(p_host, p_svid, p_oh),
                                           int8range(p_lo, p_hi), p_excl);
    IF FOUND THEN
        RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_denied(), false);
        RETURN NEXT c;
    ELSE
        RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_granted(), false);
    END IF;
END
$$;

-- NLM UNLOCK: owner (p_host, p_svid, p_oh) gives up range [p_lo, p_hi) of
-- the file (granted whether it held any of it or not), and the waiters
-- that can go are granted.
CREATE OR REPLACE FUNCTION pgnfs_nlm_unlock(p_srv int, p_ino bigint, p_gen int, p_host bytea,
                                            p_svid bigint, p_oh bytea, p_lo bigint,
                                            p_hi bigint)
RETURNS SETOF pgnfs_nlm_res LANGUAGE plpgsql AS $$
DECLARE
    o bigint;
BEGIN
    IF pgnfs_nlm_in_grace(p_srv) THEN
        RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_grace(), true);
        RETURN;
    END IF;
    PERFORM pgnfs_nlm_file_lock(p_ino);
    IF (pgnfs_nlm_file(p_ino, p_gen)).inode IS NULL THEN
        RETURN NEXT pgnfs_nlm_status(pgnfs_estale(), NULL, false);
        RETURN;
    END IF;
    o := pgnfs_nlm_owner_find(p_host, p_svid, p_oh);
    IF o IS NOT NULL AND pgnfs_nlm_release(p_ino, o, int8range(p_lo, p_hi)) THEN
        RETURN QUERY SELECT * FROM pgnfs_nlm_grant(p_srv, p_ino);
    END IF;
    RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_granted(), false);
END
$$;

-- NLM CANCEL: the owner no longer waits for that request (granted whether
-- it waited or not, as Linux's lockd answers). A request already granted
-- stays granted.
CREATE OR REPLACE FUNCTION pgnfs_nlm_cancel(p_srv int, p_ino bigint, p_gen int, p_host bytea,
                                            p_svid bigint, p_oh bytea, p_lo bigint,
                                            p_hi bigint, p_excl boolean)
RETURNS SETOF pgnfs_nlm_res LANGUAGE plpgsql AS $$
BEGIN
    IF pgnfs_nlm_in_grace(p_srv) THEN
        RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_grace(), true);
        RETURN;
    END IF;
    PERFORM pgnfs_nlm_file_lock(p_ino);
    IF (pgnfs_nlm_file(p_ino, p_gen)).inode IS NULL THEN
        RETURN NEXT pgnfs_nlm_status(pgnfs_estale(), NULL, false);
        RETURN;
    END IF;
    DELETE FROM pgnfs_nlm_wait
     WHERE owner = pgnfs_nlm_owner_find(p_host, p_svid, p_oh) AND inode = p_ino
       AND range = int8range(p_lo, p_hi) AND excl = p_excl AND NOT granted;
    RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_granted(), false);
END
$$;

-- NLM SHARE: owner (p_host, p_oh) wants to open the file with access
-- p_access denying p_deny to others (bits: 1 read, 2 write). Denied when
-- another owner's reservation denies what it wants or wants what it
-- denies; else its reservation on the file is set (replaced).
CREATE OR REPLACE FUNCTION pgnfs_nlm_share(p_srv int, p_ino bigint, p_gen int, p_uid bigint,
                                           p_gid bigint, p_groups bigint[], p_host bytea,
                                           p_addr inet, p_local inet, p_oh bytea,
                                           p_access int, p_deny int, p_reclaim boolean)
RETURNS SETOF pgnfs_nlm_res LANGUAGE plpgsql AS $$
DECLARE
    f fileatt;
    grace boolean;
    o bigint;
BEGIN
    PERFORM pgnfs_nlm_file_lock(p_ino);
    f := pgnfs_nlm_file(p_ino, p_gen);
    IF f.inode IS NULL THEN
        RETURN NEXT pgnfs_nlm_status(pgnfs_estale(), NULL, NULL);
        RETURN;
    END IF;
    IF pgnfs_nlm_may(f, p_uid, p_gid, p_groups, false) <> 0 THEN
        RETURN NEXT pgnfs_nlm_status(pgnfs_nlm_may(f, p_uid, p_gid, p_groups, false), NULL, NULL);
        RETURN;
    END IF;
    grace := pgnfs_nlm_in_grace(p_srv);
    IF grace AND NOT p_reclaim THEN
        RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_grace(), true);
        RETURN;
    END IF;
    o := pgnfs_nlm_owner_id(pgnfs_nlm_host_id(p_host, p_addr, p_srv, p_local, false), -1, p_oh);
    IF EXISTS (SELECT 1 FROM pgnfs_nlm_share
                WHERE inode = p_ino AND owner <> o
                  AND ((access & p_deny) <> 0 OR (deny & p_access) <> 0)) THEN
        RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_denied(), grace);
        RETURN;
    END IF;
    INSERT INTO pgnfs_nlm_share (inode, owner, access, deny, srv, epoch)
    VALUES (p_ino, o, p_access, p_deny, p_srv,
            (SELECT state FROM pgnfs_nlm_server WHERE id = p_srv))
    ON CONFLICT (inode, owner) DO UPDATE
        SET access = EXCLUDED.access, deny = EXCLUDED.deny, srv = EXCLUDED.srv,
            epoch = EXCLUDED.epoch;
    IF grace THEN
        grace := pgnfs_nlm_grace_check(p_srv);
    END IF;
    RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_granted(), grace);
END
$$;

-- NLM UNSHARE: drop the owner's reservation on the file (granted either way).
CREATE OR REPLACE FUNCTION pgnfs_nlm_unshare(p_srv int, p_ino bigint, p_gen int, p_host bytea,
                                             p_oh bytea)
RETURNS SETOF pgnfs_nlm_res LANGUAGE plpgsql AS $$
BEGIN
    IF pgnfs_nlm_in_grace(p_srv) THEN
        RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_grace(), true);
        RETURN;
    END IF;
    PERFORM pgnfs_nlm_file_lock(p_ino);
    IF (pgnfs_nlm_file(p_ino, p_gen)).inode IS NULL THEN
        RETURN NEXT pgnfs_nlm_status(pgnfs_estale(), NULL, false);
        RETURN;
    END IF;
    DELETE FROM pgnfs_nlm_share
     WHERE inode = p_ino AND owner = pgnfs_nlm_owner_find(p_host, -1, p_oh);
    RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_granted(), false);
END
$$;

-- Host p_name rebooted: free its locks taken before (p_state NULL: all of
-- them, as FREE_ALL; else those it took in another NSM state than
-- p_state, as SM_NOTIFY), its shares and its blocked requests; record its
-- state; grant the waiters of the files concerned. Unknown hosts: nothing.
CREATE OR REPLACE FUNCTION pgnfs_nlm_free_host(p_srv int, p_name bytea, p_state int)
RETURNS SETOF pgnfs_nlm_res LANGUAGE plpgsql AS $$
DECLARE
    h bigint;
    i bigint;
    files bigint[];
BEGIN
    SELECT id INTO h FROM pgnfs_nlm_host WHERE name = p_name;
    IF NOT FOUND THEN
        RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_granted(), NULL);
        RETURN;
    END IF;
    SELECT array_agg(DISTINCT x.inode ORDER BY x.inode) INTO files FROM (
        SELECT l.inode FROM pgnfs_nlm_lock l JOIN pgnfs_nlm_owner o ON o.id = l.owner
         WHERE o.host = h
        UNION SELECT w.inode FROM pgnfs_nlm_wait w JOIN pgnfs_nlm_owner o ON o.id = w.owner
         WHERE o.host = h
        UNION SELECT s.inode FROM pgnfs_nlm_share s JOIN pgnfs_nlm_owner o ON o.id = s.owner
         WHERE o.host = h) x;
    FOREACH i IN ARRAY coalesce(files, '{}') LOOP
        PERFORM pgnfs_nlm_file_lock(i);
    END LOOP;
    DELETE FROM pgnfs_nlm_wait w USING pgnfs_nlm_owner o WHERE o.id = w.owner AND o.host = h;
    DELETE FROM pgnfs_nlm_share s USING pgnfs_nlm_owner o WHERE o.id = s.owner AND o.host = h;
    DELETE FROM pgnfs_nlm_lock l USING pgnfs_nlm_owner o
     WHERE o.id = l.owner AND o.host = h AND (p_state IS NULL OR l.cstate <> p_state);
    UPDATE pgnfs_nlm_host SET state = p_state WHERE id = h;
    FOREACH i IN ARRAY coalesce(files, '{}') LOOP
        RETURN QUERY SELECT * FROM pgnfs_nlm_grant(p_srv, i);
    END LOOP;
    RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_granted(), NULL);
END
$$;

-- A server starts: server p_name (made if new) gets its next NSM state
-- (odd, 2 more each start) and forgets its blocked requests (their callers
-- ask again). With locks of its own in the database and p_grace_s > 0 it
-- enters its grace period: those locks are old until reclaimed. With
-- p_grace_s = 0 they are kept as they are. Rows: the server (host NULL),
-- then each host it monitors (to be told of the restart).
CREATE OR REPLACE FUNCTION pgnfs_nlm_start(p_name text, p_grace_s int)
RETURNS TABLE (srv int, state int, grace_ms bigint, host bytea, addr inet, local inet)
LANGUAGE plpgsql AS $$
DECLARE
    s pgnfs_nlm_server;
BEGIN
    INSERT INTO pgnfs_nlm_server AS x (name) VALUES (p_name)
    ON CONFLICT (name) DO UPDATE SET state = x.state + 2, started = now(), grace_until = NULL
    RETURNING * INTO s;
    DELETE FROM pgnfs_nlm_wait w WHERE w.srv = s.id;
    IF p_grace_s > 0 AND (EXISTS (SELECT 1 FROM pgnfs_nlm_lock l WHERE l.srv = s.id)
                          OR EXISTS (SELECT 1 FROM pgnfs_nlm_share h WHERE h.srv = s.id)) THEN
        UPDATE pgnfs_nlm_server SET grace_until = now() + make_interval(secs => p_grace_s)
         WHERE id = s.id RETURNING * INTO s;
    ELSE
        UPDATE pgnfs_nlm_lock l SET epoch = s.state WHERE l.srv = s.id;
        UPDATE pgnfs_nlm_share h SET epoch = s.state WHERE h.srv = s.id;
    END IF;
    RETURN QUERY
        SELECT s.id, s.state,
               CASE WHEN s.grace_until IS NULL THEN 0::bigint
                    ELSE (extract(epoch FROM s.grace_until - now()) * 1000)::bigint END,
               NULL::bytea, NULL::inet, NULL::inet
        UNION ALL
        SELECT s.id, s.state, 0::bigint, h.name, h.addr, h.local
          FROM pgnfs_nlm_host h WHERE h.srv = s.id AND h.monitored AND h.addr IS NOT NULL;
END
$$;

-- The grace period of server p_srv is over when its time has come (else
-- nothing changes): the locks and shares nobody reclaimed go, and the
-- waiters they held up are granted.
CREATE OR REPLACE FUNCTION pgnfs_nlm_grace_end(p_srv int)
RETURNS SETOF pgnfs_nlm_res LANGUAGE plpgsql AS $$
DECLARE
    s pgnfs_nlm_server;
    i bigint;
    files bigint[];
BEGIN
    SELECT * INTO s FROM pgnfs_nlm_server WHERE id = p_srv FOR UPDATE;
    IF s.grace_until IS NULL OR s.grace_until > now() THEN
        RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_granted(), s.grace_until IS NOT NULL);
        RETURN;
    END IF;
    SELECT array_agg(DISTINCT x.inode ORDER BY x.inode) INTO files FROM (
        SELECT l.inode FROM pgnfs_nlm_lock l WHERE l.srv = p_srv AND l.epoch <> s.state
        UNION SELECT h.inode FROM pgnfs_nlm_share h WHERE h.srv = p_srv AND h.epoch <> s.state) x;
    FOREACH i IN ARRAY coalesce(files, '{}') LOOP
        PERFORM pgnfs_nlm_file_lock(i);
    END LOOP;
    DELETE FROM pgnfs_nlm_lock l WHERE l.srv = p_srv AND l.epoch <> s.state;
    DELETE FROM pgnfs_nlm_share h WHERE h.srv = p_srv AND h.epoch <> s.state;
    UPDATE pgnfs_nlm_server SET grace_until = NULL WHERE id = p_srv;
    FOREACH i IN ARRAY coalesce(files, '{}') LOOP
        RETURN QUERY SELECT * FROM pgnfs_nlm_grant(p_srv, i);
    END LOOP;
    RETURN NEXT pgnfs_nlm_status(0, pgnfs_nlm_granted(), false);
END
$$;

-- The requests of server p_srv that other servers granted: taken (gone
-- from the table) as kind 2 rows, for the server to call back.
CREATE OR REPLACE FUNCTION pgnfs_nlm_take(p_srv int)
RETURNS SETOF pgnfs_nlm_res LANGUAGE sql AS $$
DELETE FROM pgnfs_nlm_wait WHERE srv = p_srv AND granted
RETURNING 2::smallint, 0, NULL::smallint, NULL::boolean, excl, NULL::bigint, NULL::bytea,
          lower(range), upper(range), notify
$$;

-- Forget owners that hold and wait for nothing (a batch at a time, never
-- one a running call uses), and hosts left without owners. Returns how
-- many owners went.
CREATE OR REPLACE FUNCTION pgnfs_nlm_gc()
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    n int;
BEGIN
    DELETE FROM pgnfs_nlm_owner WHERE id IN (
        SELECT o.id FROM pgnfs_nlm_owner o
         WHERE NOT EXISTS (SELECT 1 FROM pgnfs_nlm_lock l WHERE l.owner = o.id)
           AND NOT EXISTS (SELECT 1 FROM pgnfs_nlm_wait w WHERE w.owner = o.id)
           AND NOT EXISTS (SELECT 1 FROM pgnfs_nlm_share s WHERE s.owner = o.id)
         LIMIT pgnfs_nlm_gc_batch() FOR UPDATE SKIP LOCKED);
    GET DIAGNOSTICS n = ROW_COUNT;
    DELETE FROM pgnfs_nlm_host WHERE id IN (
        SELECT h.id FROM pgnfs_nlm_host h
         WHERE NOT EXISTS (SELECT 1 FROM pgnfs_nlm_owner o WHERE o.host = h.id)
         LIMIT pgnfs_nlm_gc_batch() FOR UPDATE SKIP LOCKED);
    RETURN n;
END
$$;

-- Counts for statistics: locks held, blocked requests, and of server
-- p_srv its grace period's remaining milliseconds (0: none) and its NSM state.
CREATE OR REPLACE FUNCTION pgnfs_nlm_counts(p_srv int)
RETURNS TABLE (held bigint, waiting bigint, grace_ms bigint, state int)
LANGUAGE sql STABLE AS $$
SELECT (SELECT count(*) FROM pgnfs_nlm_lock),
       (SELECT count(*) FROM pgnfs_nlm_wait WHERE NOT granted),
       coalesce((SELECT greatest(0, (extract(epoch FROM grace_until - now()) * 1000)::bigint)
                   FROM pgnfs_nlm_server WHERE id = p_srv AND grace_until IS NOT NULL), 0),
       (SELECT state FROM pgnfs_nlm_server WHERE id = p_srv)
$$;

-- A path of inode p_ino from the root ("/a/b"; "/" for the root; NULL when
-- no name leads to it), for listings.
CREATE OR REPLACE FUNCTION pgnfs_nlm_path(p_ino bigint)
RETURNS bytea LANGUAGE sql STABLE AS $$
WITH RECURSIVE up(ino, path, depth) AS (
    SELECT p_ino, ''::bytea, 0
  UNION ALL
    SELECT n.parent, '/'::bytea || n.name || up.path, up.depth + 1
      FROM up, LATERAL (SELECT parent, name FROM naming WHERE inode = up.ino
                         ORDER BY parent, name LIMIT 1) n
     WHERE up.ino <> pgnfs_root_ino() AND up.depth < 4096
)
SELECT CASE WHEN p_ino = pgnfs_root_ino() THEN '/'::bytea ELSE path END
  FROM up WHERE ino = pgnfs_root_ino()
$$;

-- Every lock, blocked request and share, for `pgnfs locks`: state is
-- "granted", "old" (from before its server's restart, not reclaimed yet),
-- "waiting" or "share".
CREATE OR REPLACE FUNCTION pgnfs_nlm_list()
RETURNS TABLE (state text, inode bigint, path bytea, lo bigint, hi bigint, excl boolean,
               host bytea, svid bigint, oh bytea, server text, since timestamptz)
LANGUAGE sql STABLE AS $$
SELECT CASE WHEN l.epoch = s.state THEN 'granted' ELSE 'old' END, l.inode,
       pgnfs_nlm_path(l.inode), lower(l.range), upper(l.range), l.excl, h.name, o.svid, o.oh,
       s.name, l.since
  FROM pgnfs_nlm_lock l JOIN pgnfs_nlm_owner o ON o.id = l.owner
  JOIN pgnfs_nlm_host h ON h.id = o.host JOIN pgnfs_nlm_server s ON s.id = l.srv
UNION ALL
SELECT CASE WHEN w.granted THEN 'granting' ELSE 'waiting' END, w.inode, pgnfs_nlm_path(w.inode),
       lower(w.range), upper(w.range), w.excl, h.name, o.svid, o.oh, s.name, w.since
  FROM pgnfs_nlm_wait w JOIN pgnfs_nlm_owner o ON o.id = w.owner
  JOIN pgnfs_nlm_host h ON h.id = o.host JOIN pgnfs_nlm_server s ON s.id = w.srv
UNION ALL
SELECT 'share', x.inode, pgnfs_nlm_path(x.inode), x.access, x.deny, NULL, h.name, NULL, o.oh,
       s.name, NULL
  FROM pgnfs_nlm_share x JOIN pgnfs_nlm_owner o ON o.id = x.owner
  JOIN pgnfs_nlm_host h ON h.id = o.host JOIN pgnfs_nlm_server s ON s.id = x.srv
ORDER BY 2, 4, 1
$$;
