/* What the two halves of the preload library share (ob_stable_names.c: the
 * stable identities and the interposed functions; ob_lookups.c: the record of
 * lookups that found nothing). Hidden symbols (-fvisibility=hidden). */
#ifndef OB_PRELOAD_H
#define OB_PRELOAD_H

#include <fcntl.h>
#include <stddef.h>

/* Inside our own work: leave every call alone. */
extern __thread int ob_busy;
/* Zeroed memory from mmap (never malloc: we run inside any program's calls). */
void* map_zeroed(size_t bytes);

/* OB_LOOKUPS_ENV_ONLY: record lookups, leave identities alone. */
int lookups_only(void);
/* A read-only lookup of `path` (relative to `dirfd`) found nothing (errno says why). */
void record_miss(int dirfd, const char* path);
/* `path` was opened for writing: when it is the depfile, say that this process wrote it. */
void note_write(const char* path);
/* open(2) flags that only look a file up (a write or create is no lookup). */
static inline int reads_only(int flags) { return (flags & O_ACCMODE) == O_RDONLY && !(flags & O_CREAT); }

#endif
