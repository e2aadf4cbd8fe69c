/* Preloaded into the compiler (LD_PRELOAD) by offload-build: every regular
 * file reports a device and inode derived from its place and content instead
 * of the file system's, so OpenMP kernel names
 * (__omp_offloading_<dev>_<ino>_<function>_l<line>) are the same in every
 * checkout and after every save-by-rename. The formula and the environment it
 * reads are in include/offload_build/toolchain/stable_names.h; docs/CACHE.md
 * says why and what is guaranteed.
 *
 * Only st_dev and st_ino change; size, times and mode are the file's own.
 * Files are told apart by their real path, so one file reached by two
 * spellings (symlinks, "..") keeps one identity, as the compiler's header
 * deduplication (#pragma once) needs. Directories and other non-regular files
 * keep their real identity. Results are remembered per real (device, inode),
 * in a table that grows, so each file's path is resolved once per process
 * however many files it reads. Two files whose ids
 * collide would be one file to the compiler: the second keeps its real
 * identity (its kernels then get inode names, which the cache refuses to
 * store: docs/CACHE.md).
 *
 * It also records the lookups that found nothing (ob_lookups.c). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <dirent.h>
#include <unistd.h>

#include "offload_build/toolchain/stable_names.h"
#include "ob_preload.h"

#define OB_EXPORT __attribute__((visibility("default")))

/* --- memo: real identity -> stable inode ------------------------------------ */

/* Two open-addressing hash tables that grow (doubling at half full, memory
 * from mmap, never malloc: we run inside any program's stat calls): `memo`
 * maps a real (device, inode) to the id it was given, `ids` holds the ids in
 * use (a collision check in constant time). A file that cannot be remembered
 * (mmap failed) keeps its real identity, and so does every spelling of it:
 * the compiler's #pragma once still sees one file. */
struct slot {
  int used;
  dev_t dev;
  ino_t ino;
  unsigned long long id; /* 0: the file keeps its real identity */
};
enum { kFirstSlots = 8192 }; /* a power of two */
static struct slot* memo;
static size_t memo_cap, memo_count;
static unsigned long long* ids; /* 0: an empty slot (ids are never 0) */
static size_t ids_cap, ids_count;
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
__thread int ob_busy; /* inside our own work: leave every call alone */

static size_t hash_file(dev_t dev, ino_t ino) {
  unsigned long long h = ((unsigned long long)ino * 0x9E3779B97F4A7C15ULL) ^ (unsigned long long)dev;
  return (size_t)(h ^ (h >> 29));
}
static size_t hash_id(unsigned long long id) { return (size_t)((id * 0x9E3779B97F4A7C15ULL) >> 17); }

void* map_zeroed(size_t bytes) {
  void* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* 1 and *id when the file `st` describes was seen before. Under memo_lock. */
static int memo_find(const struct stat* st, unsigned long long* id) {
  size_t i;
  if (!memo) return 0;
  for (i = hash_file(st->st_dev, st->st_ino) & (memo_cap - 1); memo[i].used; i = (i + 1) & (memo_cap - 1)) {
    if (memo[i].dev == st->st_dev && memo[i].ino == st->st_ino) {
      *id = memo[i].id;
      return 1;
    }
  }
  return 0;
}

/* Whether another file already has `id`. Under memo_lock. */
static int memo_taken(unsigned long long id) {
  size_t i;
  if (!ids) return 0;
  for (i = hash_id(id) & (ids_cap - 1); ids[i]; i = (i + 1) & (ids_cap - 1))
    if (ids[i] == id) return 1;
  return 0;
}

static void put_file(struct slot* table, size_t cap, const struct slot* s) {
  size_t i = hash_file(s->dev, s->ino) & (cap - 1);
  while (table[i].used) i = (i + 1) & (cap - 1);
  table[i] = *s;
}
static void put_id(unsigned long long* table, size_t cap, unsigned long long id) {
  size_t i = hash_id(id) & (cap - 1);
  while (table[i]) i = (i + 1) & (cap - 1);
  table[i] = id;
}

/* Room for one more entry in both tables (kept at most half full). 0 when
 * memory ran out. Under memo_lock. */
static int memo_reserve(void) {
  size_t i;
  if ((memo_count + 1) * 2 > memo_cap) {
    size_t cap = memo_cap ? memo_cap * 2 : kFirstSlots;
    struct slot* grown = map_zeroed(cap * sizeof *grown);
    if (!grown) return 0;
    for (i = 0; i < memo_cap; ++i)
      if (memo[i].used) put_file(grown, cap, &memo[i]);
    if (memo) munmap(memo, memo_cap * sizeof *memo);
    memo = grown;
    memo_cap = cap;
  }
  if ((ids_count + 1) * 2 > ids_cap) {
    size_t cap = ids_cap ? ids_cap * 2 : kFirstSlots;
    unsigned long long* grown = map_zeroed(cap * sizeof *grown);
    if (!grown) return 0;
    for (i = 0; i < ids_cap; ++i)
      if (ids[i]) put_id(grown, cap, ids[i]);
    if (ids) munmap(ids, ids_cap * sizeof *ids);
    ids = grown;
    ids_cap = cap;
  }
  return 1;
}

/* Remember `st` with `id`; returns the id the file keeps: `id`, or 0 (its
 * real identity) when another file has that id or it cannot be remembered.
 * Under memo_lock. */
static unsigned long long memo_add(const struct stat* st, unsigned long long id) {
  struct slot s;
  if (!memo_reserve()) return 0;
  if (memo_taken(id)) id = 0;
  s.used = 1;
  s.dev = st->st_dev;
  s.ino = st->st_ino;
  s.id = id;
  put_file(memo, memo_cap, &s);
  ++memo_count;
  if (id) {
    put_id(ids, ids_cap, id);
    ++ids_count;
  }
  return id;
}

/* --- computing an identity ---------------------------------------------------- */

/* `value` (OB_STABLE_ENV_BASE's ':'-separated directories, or the anchor)
 * with every relative directory made the real path of that directory as seen
 * from the working directory: a remote execution's action names them
 * relative to its working directory, whose place on the worker it cannot
 * know (docs/DISTRIBUTED.md). Absolute ones are kept as they are. Computed
 * once per process (under memo_lock); NULL stays NULL. */
static const char* resolved_dirs(const char* value, char* buf, size_t n, int* done) {
  const char* v = value;
  size_t used = 0;
  if (*done) return value ? buf : NULL;
  *done = 1;
  if (!value) return NULL;
  buf[0] = 0;
  while (*v) {
    const char* end = strchr(v, ':');
    size_t len = end ? (size_t)(end - v) : strlen(v);
    char part[PATH_MAX], real[PATH_MAX];
    const char* dir = part;
    if (len >= sizeof part) len = sizeof part - 1;
    memcpy(part, v, len);
    part[len] = 0;
    if (part[0] && part[0] != '/' && realpath(part, real)) dir = real;
    if (used + strlen(dir) + 2 > n) break;
    if (used) buf[used++] = ':';
    memcpy(buf + used, dir, strlen(dir) + 1);
    used += strlen(dir);
    if (!end) break;
    v = end + 1;
  }
  return buf;
}

/* The id of the file whose real path is `real`. */
static unsigned long long compute_id(const char* real) {
  static char bases[OB_STABLE_NAME_MAX], anchor[PATH_MAX];
  static int bases_done, anchor_done;
  char relative[OB_STABLE_NAME_MAX];
  const char* b = resolved_dirs(getenv(OB_STABLE_ENV_BASE), bases, sizeof bases, &bases_done);
  const char* a = resolved_dirs(getenv(OB_STABLE_ENV_ANCHOR), anchor, sizeof anchor, &anchor_done);
  const char* name = ob_stable_name(real, b, a, relative, sizeof relative);
  const char* test = getenv(OB_STABLE_ENV_TEST_BASENAME);
  if (test && *test && strrchr(name, '/')) name = strrchr(name, '/') + 1;
  return ob_stable_id(getenv(OB_STABLE_ENV_SALT), name);
}

static void apply(struct stat* st, unsigned long long id) {
  st->st_dev = (dev_t)ob_stable_dev(id);
  st->st_ino = (ino_t)id;
}

/* After a successful stat of a regular file: `path` relative to `dirfd`, or
 * the open descriptor `fd` (path NULL). */
static void stabilize(int dirfd, const char* path, int fd, struct stat* st) {
  char real[PATH_MAX];
  unsigned long long id = 0;
  int saved = errno, known;
  if (ob_busy || !S_ISREG(st->st_mode) || lookups_only()) return;
  pthread_mutex_lock(&memo_lock);
  known = memo_find(st, &id);
  pthread_mutex_unlock(&memo_lock);
  if (known) {
    if (id) apply(st, id);
    return;
  }
  ob_busy = 1;
  if (path) {
    char joined[PATH_MAX + 32];
    const char* p = path;
    if (path[0] != '/' && dirfd != AT_FDCWD) {
      snprintf(joined, sizeof joined, "/proc/self/fd/%d/%s", dirfd, path);
      p = joined;
    }
    if (realpath(p, real)) id = compute_id(real);
  } else {
    char link[64];
    ssize_t n;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, real, sizeof real - 1);
    if (n > 0 && real[0] == '/') {
      real[n] = 0;
      id = compute_id(real);
    }
  }
  ob_busy = 0;
  if (!id) return;
  pthread_mutex_lock(&memo_lock);
  if (!memo_find(st, &id)) id = memo_add(st, id); /* another thread may have been first */
  pthread_mutex_unlock(&memo_lock);
  if (id) apply(st, id);
  errno = saved;
}

/* --- the interposed functions ---------------------------------------------------- */

typedef int (*path_fn)(const char*, struct stat*);
typedef int (*fd_fn)(int, struct stat*);
typedef int (*at_fn)(int, const char*, struct stat*, int);
typedef int (*xpath_fn)(int, const char*, struct stat*);
typedef int (*xfd_fn)(int, int, struct stat*);
typedef int (*xat_fn)(int, int, const char*, struct stat*, int);
typedef int (*statx_fn)(int, const char*, int, unsigned, struct statx*);
typedef int (*open_fn)(const char*, int, ...);
typedef int (*openat_fn)(int, const char*, int, ...);
typedef int (*open2_fn)(const char*, int);
typedef int (*openat2_fn)(int, const char*, int);
typedef int (*access_fn)(const char*, int);
typedef int (*faccessat_fn)(int, const char*, int, int);
typedef DIR* (*opendir_fn)(const char*);

/* The next definition of `name` (libc's), looked up once. */
#define REAL(name, type)                                          \
  static type real_##name;                                        \
  if (!real_##name) real_##name = (type)dlsym(RTLD_NEXT, #name); \
  if (!real_##name) {                                             \
    errno = ENOSYS;                                               \
    return -1;                                                    \
  }

OB_EXPORT int stat(const char* path, struct stat* st) {
  REAL(stat, path_fn);
  int r = real_stat(path, st);
  if (r == 0) stabilize(AT_FDCWD, path, -1, st);
  else record_miss(AT_FDCWD, path);
  return r;
}

OB_EXPORT int lstat(const char* path, struct stat* st) {
  REAL(lstat, path_fn);
  int r = real_lstat(path, st);
  if (r == 0) stabilize(AT_FDCWD, path, -1, st);
  else record_miss(AT_FDCWD, path);
  return r;
}

OB_EXPORT int fstat(int fd, struct stat* st) {
  REAL(fstat, fd_fn);
  int r = real_fstat(fd, st);
  if (r == 0) stabilize(AT_FDCWD, NULL, fd, st);
  return r;
}

OB_EXPORT int fstatat(int dirfd, const char* path, struct stat* st, int flags) {
  REAL(fstatat, at_fn);
  int r = real_fstatat(dirfd, path, st, flags);
  if (r == 0) {
    if ((flags & AT_EMPTY_PATH) && !*path) stabilize(AT_FDCWD, NULL, dirfd, st);
    else stabilize(dirfd, path, -1, st);
  } else {
    record_miss(dirfd, path);
  }
  return r;
}

/* x86_64: struct stat64 is struct stat; the *64 names are the same calls. */
OB_EXPORT int stat64(const char* path, struct stat64* st) { return stat(path, (struct stat*)st); }
OB_EXPORT int lstat64(const char* path, struct stat64* st) { return lstat(path, (struct stat*)st); }
OB_EXPORT int fstat64(int fd, struct stat64* st) { return fstat(fd, (struct stat*)st); }
OB_EXPORT int fstatat64(int dirfd, const char* path, struct stat64* st, int flags) {
  return fstatat(dirfd, path, (struct stat*)st, flags);
}

/* Programs built against glibc before 2.33 call these. */
OB_EXPORT int __xstat(int ver, const char* path, struct stat* st) {
  REAL(__xstat, xpath_fn);
  int r = real___xstat(ver, path, st);
  if (r == 0) stabilize(AT_FDCWD, path, -1, st);
  else record_miss(AT_FDCWD, path);
  return r;
}
OB_EXPORT int __lxstat(int ver, const char* path, struct stat* st) {
  REAL(__lxstat, xpath_fn);
  int r = real___lxstat(ver, path, st);
  if (r == 0) stabilize(AT_FDCWD, path, -1, st);
  else record_miss(AT_FDCWD, path);
  return r;
}
OB_EXPORT int __fxstat(int ver, int fd, struct stat* st) {
  REAL(__fxstat, xfd_fn);
  int r = real___fxstat(ver, fd, st);
  if (r == 0) stabilize(AT_FDCWD, NULL, fd, st);
  return r;
}
OB_EXPORT int __fxstatat(int ver, int dirfd, const char* path, struct stat* st, int flags) {
  REAL(__fxstatat, xat_fn);
  int r = real___fxstatat(ver, dirfd, path, st, flags);
  if (r == 0) stabilize(dirfd, path, -1, st);
  else record_miss(dirfd, path);
  return r;
}
OB_EXPORT int __xstat64(int ver, const char* path, struct stat64* st) {
  return __xstat(ver, path, (struct stat*)st);
}
OB_EXPORT int __lxstat64(int ver, const char* path, struct stat64* st) {
  return __lxstat(ver, path, (struct stat*)st);
}
OB_EXPORT int __fxstat64(int ver, int fd, struct stat64* st) {
  return __fxstat(ver, fd, (struct stat*)st);
}
OB_EXPORT int __fxstatat64(int ver, int dirfd, const char* path, struct stat64* st, int flags) {
  return __fxstatat(ver, dirfd, path, (struct stat*)st, flags);
}

/* statx: the same identity, in its own fields. */
OB_EXPORT int statx(int dirfd, const char* path, int flags, unsigned mask, struct statx* sx) {
  REAL(statx, statx_fn);
  int r = real_statx(dirfd, path, flags, mask, sx);
  if (r != 0) record_miss(dirfd, path);
  if (r == 0 && S_ISREG(sx->stx_mode) && !ob_busy && !lookups_only()) {
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_mode = sx->stx_mode;
    st.st_dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);
    st.st_ino = sx->stx_ino;
    st.st_size = (off_t)sx->stx_size;
    st.st_mtim.tv_sec = sx->stx_mtime.tv_sec;
    st.st_mtim.tv_nsec = sx->stx_mtime.tv_nsec;
    if ((flags & AT_EMPTY_PATH) && !*path) stabilize(AT_FDCWD, NULL, dirfd, &st);
    else stabilize(dirfd, path, -1, &st);
    if (st.st_ino != sx->stx_ino) {
      sx->stx_dev_major = major(st.st_dev);
      sx->stx_dev_minor = minor(st.st_dev);
      sx->stx_ino = st.st_ino;
    }
  }
  return r;
}

/* --- lookups: open, access, opendir ------------------------------------------ */

/* The mode argument, present when the flags create a file. */
#define MODE_ARG(flags, mode)                                                \
  if ((flags) & O_CREAT || ((flags) & O_TMPFILE) == O_TMPFILE) {             \
    va_list ap;                                                              \
    va_start(ap, flags);                                                     \
    mode = va_arg(ap, mode_t);                                               \
    va_end(ap);                                                              \
  }

OB_EXPORT int open(const char* path, int flags, ...) {
  mode_t mode = 0;
  REAL(open, open_fn);
  MODE_ARG(flags, mode);
  int r = real_open(path, flags, mode);
  if (r < 0 && reads_only(flags)) record_miss(AT_FDCWD, path);
  else if (r >= 0 && !reads_only(flags)) note_write(path);
  return r;
}

OB_EXPORT int open64(const char* path, int flags, ...) {
  mode_t mode = 0;
  REAL(open64, open_fn);
  MODE_ARG(flags, mode);
  int r = real_open64(path, flags, mode);
  if (r < 0 && reads_only(flags)) record_miss(AT_FDCWD, path);
  else if (r >= 0 && !reads_only(flags)) note_write(path);
  return r;
}

OB_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  mode_t mode = 0;
  REAL(openat, openat_fn);
  MODE_ARG(flags, mode);
  int r = real_openat(dirfd, path, flags, mode);
  if (r < 0 && reads_only(flags)) record_miss(dirfd, path);
  else if (r >= 0 && !reads_only(flags)) note_write(path);
  return r;
}

OB_EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  mode_t mode = 0;
  REAL(openat64, openat_fn);
  MODE_ARG(flags, mode);
  int r = real_openat64(dirfd, path, flags, mode);
  if (r < 0 && reads_only(flags)) record_miss(dirfd, path);
  else if (r >= 0 && !reads_only(flags)) note_write(path);
  return r;
}

/* What _FORTIFY_SOURCE builds call for an open whose flags are not constant. */
OB_EXPORT int __open_2(const char* path, int flags) {
  REAL(__open_2, open2_fn);
  int r = real___open_2(path, flags);
  if (r < 0 && reads_only(flags)) record_miss(AT_FDCWD, path);
  else if (r >= 0 && !reads_only(flags)) note_write(path);
  return r;
}
OB_EXPORT int __open64_2(const char* path, int flags) {
  REAL(__open64_2, open2_fn);
  int r = real___open64_2(path, flags);
  if (r < 0 && reads_only(flags)) record_miss(AT_FDCWD, path);
  else if (r >= 0 && !reads_only(flags)) note_write(path);
  return r;
}
OB_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  REAL(__openat_2, openat2_fn);
  int r = real___openat_2(dirfd, path, flags);
  if (r < 0 && reads_only(flags)) record_miss(dirfd, path);
  else if (r >= 0 && !reads_only(flags)) note_write(path);
  return r;
}
OB_EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  REAL(__openat64_2, openat2_fn);
  int r = real___openat64_2(dirfd, path, flags);
  if (r < 0 && reads_only(flags)) record_miss(dirfd, path);
  else if (r >= 0 && !reads_only(flags)) note_write(path);
  return r;
}

/* GCC writes its depfile through stdio, whose own open glibc does not let
 * us see: a file opened to write is noted as the open above notes it. */
typedef FILE* (*fopen_fn)(const char*, const char*);
static int stdio_writes(const char* mode) {
  return mode && (strchr(mode, 'w') || strchr(mode, 'a') || strchr(mode, '+'));
}
#define STDIO_OPEN(name)                                                  \
  OB_EXPORT FILE* name(const char* path, const char* mode) {              \
    static fopen_fn real;                                                 \
    FILE* f;                                                              \
    if (!real) real = (fopen_fn)dlsym(RTLD_NEXT, #name);                  \
    if (!real) {                                                          \
      errno = ENOSYS;                                                     \
      return NULL;                                                        \
    }                                                                     \
    f = real(path, mode);                                                 \
    if (f && stdio_writes(mode)) note_write(path);                        \
    return f;                                                             \
  }
STDIO_OPEN(fopen)
STDIO_OPEN(fopen64)

/* The driver looks programs up along PATH with access(2). */
OB_EXPORT int access(const char* path, int mode) {
  REAL(access, access_fn);
  int r = real_access(path, mode);
  if (r != 0) record_miss(AT_FDCWD, path);
  return r;
}
OB_EXPORT int faccessat(int dirfd, const char* path, int mode, int flags) {
  REAL(faccessat, faccessat_fn);
  int r = real_faccessat(dirfd, path, mode, flags);
  if (r != 0) record_miss(dirfd, path);
  return r;
}

OB_EXPORT DIR* opendir(const char* path) {
  static opendir_fn real_opendir;
  if (!real_opendir) real_opendir = (opendir_fn)dlsym(RTLD_NEXT, "opendir");
  if (!real_opendir) {
    errno = ENOSYS;
    return NULL;
  }
  DIR* d = real_opendir(path);
  if (!d) record_miss(AT_FDCWD, path);
  return d;
}
