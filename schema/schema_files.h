/*
 * schema_files.h -- the SQL files of schema/, compiled into the binary so an
 * installed pgnfs needs no data files. Generated at build time by
 * schema/embed.cmake from schema/NNN_*.sql (migrations, applied once each in
 * numeric order) and schema/functions/NAME.sql (CREATE OR REPLACE definitions,
 * applied by mkfs and whenever a server finds them out of date).
 */
#ifndef PGNFS_SCHEMA_FILES_H
#define PGNFS_SCHEMA_FILES_H

typedef struct {
    const char *name; /* file name, e.g. "001_base.sql" */
    int version;      /* NNN for migrations; 0 for function files */
    const char *sql;  /* the file's text */
} schema_file;

/* Migrations in ascending version order, then function files by name. */
extern const schema_file schema_files[];
extern const unsigned schema_nfiles;
/* The highest migration version: what a new file system gets. */
extern const int schema_version;
/* A hex digest over the function files: stored in the database so a
 * server can tell whether its functions are current. */
extern const char schema_functions_digest[];

#endif
