-- 002_storage.sql -- storage layouts (single, inversion, hybrid), chunk
-- encodings (binary, base64) and the storage parameters of the data tables.
--
-- Layouts: "single" keeps every file's chunks in allfiles; "inversion" gives
-- every file that holds data its own table inv<inode> (chunk, data), created
-- by the file's first write and dropped with its last link; "hybrid" keeps a
-- file in allfiles until a write makes it larger than hybrid_threshold bytes
-- and then moves it to its own table, in the transaction of that write (a
-- truncation to at most the threshold moves it back). The functions of
-- schema/functions/20_data.sql and 80_write.sql answer for every layout.
--
-- Encodings: "binary" stores the chunk's bytes; "base64" stores the ASCII
-- text of the chunk's base64 encoding (no line breaks) in the same bytea
-- column, so both encodings share one schema and every statement. The length
-- of a stored value is what the database stores, and what fileatt.used
-- counts, in both.

-- The size past which a hybrid file gets its own table (chosen at mkfs).
ALTER TABLE pgnfs_fs ADD COLUMN hybrid_threshold bigint NOT NULL DEFAULT 65536
    CHECK (hybrid_threshold BETWEEN 0 AND 1099511627776);

-- The files whose data lives in their own table inv<inode> rather than in
-- allfiles. Read in the statement's snapshot like any row, so a reader never
-- looks for a table that its snapshot should not see, and written only by a
-- transaction that holds the file's fileatt row lock (every data writer
-- does). Empty in the single layout.
-- tab is the table's oid: a name can be dropped and made again (a hybrid
-- file moved back to allfiles and out again), and a reader whose snapshot
-- predates the new table must not take it for the one it knows.
CREATE TABLE pgnfs_filetab (
    inode bigint PRIMARY KEY,
    tab   oid NOT NULL
);

-- allfiles is an insert/delete table: a deleted file leaves dead tuples in
-- the heap and in the TOAST table that only VACUUM makes reusable. Vacuum
-- it after a fixed number of dead rows rather than a fraction of the table
-- (a large file system would otherwise let gigabytes of dead chunks pile up
-- before autovacuum looks), and without cost-based sleeping: the point is
-- to keep the table from growing under a create/delete cycle.
ALTER TABLE allfiles SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 2000,
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_insert_threshold = 20000,
    autovacuum_vacuum_cost_delay = 0,
    toast.autovacuum_vacuum_scale_factor = 0,
    toast.autovacuum_vacuum_threshold = 8000,
    toast.autovacuum_vacuum_insert_scale_factor = 0,
    toast.autovacuum_vacuum_insert_threshold = 80000,
    toast.autovacuum_vacuum_cost_delay = 0
);
