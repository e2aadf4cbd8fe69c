/* The preload library's record of the lookups that found nothing
 * (OB_LOOKUPS_ENV in include/offload_build/toolchain/stable_names.h): a header
 * that appears later where a compile once looked for it must make the cache
 * miss, and the compiler's depfile lists only the files it read. The
 * interposed functions (ob_stable_names.c) call record_miss and note_write. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "offload_build/toolchain/stable_names.h"
#include "ob_preload.h"

/* --- lookups that found nothing ----------------------------------------------- */

/* The record file (OB_LOOKUPS_ENV + OB_LOOKUPS_SUFFIX), opened once per
 * process; -1: not recording. `seen` holds the hashes of the paths written
 * (open addressing, mmap'd, OB_LOOKUPS_MAX * 2 slots), so each is written
 * once per process. */
static pthread_once_t lookups_once = PTHREAD_ONCE_INIT;
static int lookups_fd = -1;
static int only_lookups;
static unsigned long long* seen;
static size_t seen_count;
static int lost; /* OB_LOOKUPS_LOST written: nothing more to say */
static char depfile_name[NAME_MAX + 1]; /* the last component of OB_LOOKUPS_ENV */
static int wrote_depfile;
static pthread_mutex_t lookups_lock = PTHREAD_MUTEX_INITIALIZER;

static void write_all(const char* text, size_t n);

static void lookups_init(void) {
  const char* only = getenv(OB_LOOKUPS_ENV_ONLY);
  const char* file = getenv(OB_LOOKUPS_ENV);
  char path[PATH_MAX];
  int n;
  only_lookups = only && only[0] == '1';
  if (!file || !*file) return;
  {
    const char* slash = strrchr(file, '/');
    const char* base = slash ? slash + 1 : file;
    if (strlen(base) < sizeof depfile_name) strcpy(depfile_name, base);
  }
  n = snprintf(path, sizeof path, "%s%s", file, OB_LOOKUPS_SUFFIX);
  if (n <= 0 || (size_t)n >= sizeof path) return; /* no header: offload-build stores nothing */
  ob_busy = 1;
  lookups_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  ob_busy = 0;
  if (lookups_fd >= 0) write_all(OB_LOOKUPS_HEADER "\n", sizeof OB_LOOKUPS_HEADER);
}

/* At load, so that the header is written by every process that loads us. */
__attribute__((constructor)) static void lookups_at_load(void) { pthread_once(&lookups_once, lookups_init); }

int lookups_only(void) {
  pthread_once(&lookups_once, lookups_init);
  return only_lookups;
}

/* One line, whole (O_APPEND: lines of several processes never interleave);
 * a failed write makes the record untrustworthy. */
static void write_all(const char* text, size_t n) {
  while (n > 0) {
    ssize_t w = write(lookups_fd, text, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (!lost) (void)!write(lookups_fd, "\n" OB_LOOKUPS_LOST "\n", sizeof OB_LOOKUPS_LOST + 1);
      lost = 1;
      return;
    }
    text += w;
    n -= (size_t)w;
  }
}

static void say_lost(void) {
  if (!lost) write_all(OB_LOOKUPS_LOST "\n", sizeof OB_LOOKUPS_LOST);
  lost = 1;
}

/* Under lookups_lock: 1 when `h` was not seen before (and is now). */
static int first_sight(unsigned long long h) {
  const size_t cap = (size_t)OB_LOOKUPS_MAX * 2;
  size_t i;
  if (!h) h = 1;
  if (!seen && !(seen = map_zeroed(cap * sizeof *seen))) return -1;
  for (i = (size_t)(h * 0x9E3779B97F4A7C15ULL >> 17) & (cap - 1); seen[i]; i = (i + 1) & (cap - 1))
    if (seen[i] == h) return 0;
  if (seen_count >= OB_LOOKUPS_MAX) return -1;
  seen[i] = h;
  ++seen_count;
  return 1;
}

/* A read-only lookup of `path` (relative to `dirfd`) found nothing. */
void record_miss(int dirfd, const char* path) {
  char line[PATH_MAX * 2 + 2];
  size_t len = 0, plen;
  int saved = errno, fresh;
  /* Every error clang's header search takes for "not there" and goes on
     past: absent, a file where a directory was expected, a symlink loop, a
     name too long, no permission. */
  if (ob_busy || !path || !*path ||
      (saved != ENOENT && saved != ENOTDIR && saved != ELOOP && saved != ENAMETOOLONG && saved != EACCES))
    return;
  pthread_once(&lookups_once, lookups_init);
  if (lookups_fd < 0) return;
  ob_busy = 1;
  pthread_mutex_lock(&lookups_lock);
  if (lost) goto done;
  plen = strlen(path);
  if (path[0] != '/') {
    /* Made absolute where the compiler stands now: its directory, or the
       directory `dirfd` names. */
    ssize_t n;
    if (dirfd == AT_FDCWD) {
      if (!getcwd(line, PATH_MAX)) {
        say_lost();
        goto done;
      }
      len = strlen(line);
    } else {
      char link[64];
      snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
      n = readlink(link, line, PATH_MAX - 1);
      if (n <= 0 || line[0] != '/') {
        say_lost();
        goto done;
      }
      len = (size_t)n;
    }
    line[len++] = '/';
  }
  if (len + plen + 1 >= sizeof line || memchr(path, '\n', plen)) {
    say_lost();
    goto done;
  }
  memcpy(line + len, path, plen);
  len += plen;
  fresh = first_sight(XXH3_64bits(line, len));
  if (fresh < 0) {
    say_lost(); /* over OB_LOOKUPS_MAX, or no memory to tell */
  } else if (fresh) {
    line[len++] = '\n';
    write_all(line, len);
  }
done:
  pthread_mutex_unlock(&lookups_lock);
  ob_busy = 0;
  errno = saved;
}


/* `path` was opened for writing: when it is the depfile, say that this
 * process (which recorded its lookups) wrote it. */
void note_write(const char* path) {
  const char* slash;
  int saved = errno;
  if (ob_busy || !path) return;
  pthread_once(&lookups_once, lookups_init);
  if (lookups_fd < 0 || !depfile_name[0]) return;
  slash = strrchr(path, '/');
  if (strcmp(slash ? slash + 1 : path, depfile_name) != 0) return;
  pthread_mutex_lock(&lookups_lock);
  if (!wrote_depfile && !lost) write_all(OB_LOOKUPS_WROTE "\n", sizeof OB_LOOKUPS_WROTE);
  wrote_depfile = 1;
  pthread_mutex_unlock(&lookups_lock);
  errno = saved;
}
