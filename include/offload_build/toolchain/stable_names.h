/* Stable OpenMP kernel names: what the compiler is told a file's identity is.
 *
 * clang names an OpenMP kernel __omp_offloading_<dev>_<ino>_<function>_l<line>
 * after the st_dev/st_ino of the file holding the target region. The preload
 * library (src/preload/ob_stable_names.c), loaded into the compiler with
 * LD_PRELOAD, reports for every regular file an identity made of
 *     id = ob_stable_id(salt, name)
 * where `name` is ob_stable_name(): for a file under one of the base
 * directories (--base-dir; a manifest build's project directory; the CMake
 * package's source and build trees) its real path relative to the anchor
 * (the compile's working directory, or the project directory holding it:
 * the manifest's, the CMake build tree's top), written with ".." where it
 * climbs out of it, as ccache's base_dir makes paths relative to the working
 * directory; for any other file the absolute real path. `salt` is the
 * project's (a hash of its namespace: the manifest's name, --kernel-namespace):
 *     st_dev = OB_STABLE_DEV_MARK | (id >> 44)   (the marker plus 20 bits)
 *     st_ino = id
 * so a file at the same place in any checkout, before and after any edit,
 * gets the same kernel names, which carry 52 bits of the id
 * (__omp_offloading_b5dXXXXX_XXXXXXXX_...). offload-build keys its cache on
 * the same inputs (docs/CACHE.md).
 *
 * Plain C, header-only: compiled into the preload library and the C++ code. */
#ifndef OFFLOAD_BUILD_STABLE_NAMES_H
#define OFFLOAD_BUILD_STABLE_NAMES_H

#include <stdint.h>
#include <string.h>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

/* The high bits of the device number every file reports: kernel names start
 * __omp_offloading_b5d, which is how a probe, the cache (which stores no
 * output naming other kernels) and a reader tell stable names from inode names. */
#define OB_STABLE_DEV_MARK 0xb5d00000ULL
#define OB_STABLE_DEV_HEX "b5d"
#define OB_STABLE_NAME_PREFIX "__omp_offloading_" OB_STABLE_DEV_HEX

/* Environment of the compiler process. */
/* Real paths of the base directories, separated by ':' (a directory whose
 * path holds ':' cannot be one). */
#define OB_STABLE_ENV_BASE "OFFLOAD_BUILD_STABLE_BASE"
/* Real path of the directory names are relative to (unset: the base
 * directory a file lies under). */
#define OB_STABLE_ENV_ANCHOR "OFFLOAD_BUILD_STABLE_ANCHOR"
#define OB_STABLE_ENV_SALT "OFFLOAD_BUILD_STABLE_SALT" /* per translation unit: its flags */
/* Tests only: ids from the file's base name alone, so that a/x.h and b/x.h
 * collide. */
#define OB_STABLE_ENV_TEST_BASENAME "OFFLOAD_BUILD_STABLE_TEST_BASENAME"

/* Lookups that found nothing (docs/CACHE.md, "Lookups that found nothing"):
 * with OB_LOOKUPS_ENV set to a path P, every process that loads the library
 * appends to P OB_LOOKUPS_SUFFIX one line per distinct absolute path a
 * read-only open, stat, access or opendir failed to find (ENOENT, ENOTDIR),
 * after a first line OB_LOOKUPS_HEADER that says the library was there, and
 * a line OB_LOOKUPS_WROTE once a process opens P (the depfile) for writing:
 * the process that wrote the depfile, the compiler, recorded its lookups (a
 * wrapper script may load the library and then run a compiler without it). A
 * path it cannot write (too long, a newline in it), more than
 * OB_LOOKUPS_MAX paths, or a failed write: a line OB_LOOKUPS_LOST, and the
 * record is not to be trusted. With OB_LOOKUPS_ENV_ONLY=1 the library only
 * records: every file keeps its real identity (compiles without stable names). */
#define OB_LOOKUPS_ENV "OFFLOAD_BUILD_LOOKUPS"
#define OB_LOOKUPS_ENV_ONLY "OFFLOAD_BUILD_LOOKUPS_ONLY"
#define OB_LOOKUPS_SUFFIX ".lookups"
#define OB_LOOKUPS_HEADER "offload-build lookups 2"
#define OB_LOOKUPS_LOST "!"
#define OB_LOOKUPS_WROTE "="
#define OB_LOOKUPS_MAX 65536

/* Identity version: changing the formula below must change this too (the
 * cache keys name it). */
#define OB_STABLE_VERSION "stable-names-3"

/* The size of the buffer a name is written into, the same in the library and
 * in offload-build (a name that does not fit is the absolute path in both). */
#define OB_STABLE_NAME_MAX 8192

/* Whether `path` lies under the directory `dir` (`dir_len` bytes, no
 * trailing '/' unless it is "/"). */
static inline int ob_stable_under(const char* path, const char* dir, size_t dir_len) {
  if (dir_len == 1 && dir[0] == '/') return path[0] == '/';
  return strncmp(path, dir, dir_len) == 0 && path[dir_len] == '/';
}

/* `real` (an absolute real path) relative to `anchor` (an absolute real
 * directory): "../" once per component of `anchor` below their common
 * directory, then the rest of `real`. NULL when it does not fit in `n` bytes. */
static inline const char* ob_stable_relative(const char* real, const char* anchor, size_t anchor_len,
                                             char* buf, size_t n) {
  size_t i = 0, k = 0, used = 0, climbs = 0, rest_len;
  const char* rest;
  /* k: the longest prefix both share that ends at a component boundary. */
  for (;; ++i) {
    const char a = i < anchor_len ? anchor[i] : 0, r = real[i];
    if ((a == 0 || a == '/') && (r == 0 || r == '/')) k = i;
    if (a != r || a == 0) break;
  }
  for (i = k; i < anchor_len; ++i)
    if (anchor[i] != '/' && (i == 0 || anchor[i - 1] == '/')) ++climbs;
  rest = real + k;
  while (*rest == '/') ++rest;
  rest_len = strlen(rest);
  if (climbs * 3 + rest_len + 1 > n) return NULL;
  for (i = 0; i < climbs; ++i, used += 3) memcpy(buf + used, "../", 3);
  memcpy(buf + used, rest, rest_len + 1);
  if (used && !rest_len) buf[used - 1] = 0; /* the anchor's ancestor itself: "..", not "../" */
  return buf;
}

/* A file's name: `real` (its real path) relative to `anchor` when it lies
 * under one of `bases` (':'-separated real paths; "" or NULL: none); with no
 * anchor ("" or NULL), relative to the base it lies under; else `real`
 * itself. Returns `real`, or `buf` (`n` bytes) holding the relative name. */
static inline const char* ob_stable_name(const char* real, const char* bases, const char* anchor,
                                         char* buf, size_t n) {
  const char* b = bases;
  if (!b) return real;
  while (*b) {
    const char* end = strchr(b, ':');
    size_t len = end ? (size_t)(end - b) : strlen(b);
    size_t dir_len = len;
    while (dir_len > 1 && b[dir_len - 1] == '/') --dir_len;
    if (dir_len && ob_stable_under(real, b, dir_len)) {
      const char* name;
      if (anchor && *anchor) {
        size_t anchor_len = strlen(anchor);
        while (anchor_len > 1 && anchor[anchor_len - 1] == '/') --anchor_len;
        name = ob_stable_relative(real, anchor, anchor_len, buf, n);
      } else {
        name = ob_stable_relative(real, b, dir_len, buf, n);
      }
      return name ? name : real;
    }
    if (!end) break;
    b = end + 1;
  }
  return real;
}

/* A file's id. Never 0 (some code treats inode 0 as "none"). */
static inline uint64_t ob_stable_id(const char* salt, const char* name) {
  XXH3_state_t st;
  uint64_t id;
  unsigned char sep = 0;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, OB_STABLE_VERSION, sizeof OB_STABLE_VERSION);
  if (salt) XXH3_64bits_update(&st, salt, strlen(salt));
  XXH3_64bits_update(&st, &sep, 1);
  XXH3_64bits_update(&st, name, strlen(name));
  id = XXH3_64bits_digest(&st);
  return id ? id : 1;
}

static inline uint64_t ob_stable_dev(uint64_t id) { return OB_STABLE_DEV_MARK | (id >> 44); }

#endif
