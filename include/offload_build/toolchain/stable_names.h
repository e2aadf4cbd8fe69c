/* Stable OpenMP kernel names: what the compiler is told a file's identity is.
 *
 * clang names an OpenMP kernel __omp_offloading_<dev>_<ino>_<function>_l<line>
 * after the st_dev/st_ino of the file holding the target region. The preload
 * library (src/preload/ob_stable_names.c), loaded into the compiler with
 * LD_PRELOAD, reports for every regular file an identity made of
 *     id = ob_stable_id(salt, name)
 * where `name` is the file's real path relative to the base directory (or the
 * absolute real path outside it) and `salt` is the project's (a hash of its
 * namespace: the manifest's name, --kernel-namespace):
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
#define OB_STABLE_ENV_BASE "OFFLOAD_BUILD_STABLE_BASE" /* real path of the base directory */
#define OB_STABLE_ENV_SALT "OFFLOAD_BUILD_STABLE_SALT" /* per translation unit: its flags */
/* Tests only: ids from the file's base name alone, so that a/x.h and b/x.h
 * collide. */
#define OB_STABLE_ENV_TEST_BASENAME "OFFLOAD_BUILD_STABLE_TEST_BASENAME"

/* Identity version: changing the formula below must change this too (the
 * cache keys name it). */
#define OB_STABLE_VERSION "stable-names-2"

/* `name` relative to `base` ("" or NULL: none) when it lies under it, else
 * `name` itself. Returns a pointer into `name`. */
static inline const char* ob_stable_name(const char* name, const char* base) {
  size_t n;
  if (!base || !*base) return name;
  n = strlen(base);
  while (n > 1 && base[n - 1] == '/') --n;
  if (strncmp(name, base, n) == 0 && name[n] == '/') return name + n + 1;
  return name;
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
