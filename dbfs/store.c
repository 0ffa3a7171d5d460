/*
 * store.c -- the storage layouts by name (store.h): which operations serve
 * a file system's layout.
 *
 * NOTES
 *   Stateless; cannot fail.
 */
#include "store.h"

/* store_for -- the operations of a layout, or NULL (see store.h). */
const store_ops *store_for(dbfs_storage storage)
{
    switch (storage) {
    case DBFS_STORAGE_SINGLE:
        return &store_single;
    case DBFS_STORAGE_INVERSION:
        return &store_inversion;
    case DBFS_STORAGE_HYBRID:
        return &store_hybrid;
    }
    return NULL;
}
