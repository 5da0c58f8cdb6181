/* LD_PRELOAD library that kills its process with SIGKILL at a chosen file operation, to crash a
 * writer at an exact point (during the collections file, during training_job_end.ts, ...):
 *
 *   SMD_KILL_MATCH=<substring of the path>   which files count
 *   SMD_KILL_AT=open|rename|renamed          before the file is opened for writing, before its
 *                                             rename to the final name, or right after the rename
 *   SMD_KILL_NTH=<n>                         the n-th matching operation (default 1)
 *
 * Without SMD_KILL_MATCH it does nothing. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_count;

static int matches(const char* path, const char* at) {
  const char* m = getenv("SMD_KILL_MATCH");
  const char* when = getenv("SMD_KILL_AT");
  if (m == NULL || when == NULL || path == NULL || strcmp(when, at) != 0) return 0;
  if (strstr(path, m) == NULL) return 0;
  const char* nth = getenv("SMD_KILL_NTH");
  return __atomic_add_fetch(&g_count, 1, __ATOMIC_SEQ_CST) == (nth ? atoi(nth) : 1);
}

static void die(void) {
  kill(getpid(), SIGKILL);
  for (;;) pause();
}

#define OPEN_WRAPPER(fn, ...)                                                 \
  int fn(__VA_ARGS__, int flags, ...) {                                       \
    mode_t mode = 0;                                                          \
    if (flags & (O_CREAT | O_TMPFILE)) {                                      \
      va_list ap;                                                             \
      va_start(ap, flags);                                                    \
      mode = (mode_t)va_arg(ap, int);                                         \
      va_end(ap);                                                             \
    }                                                                         \
    if ((flags & (O_WRONLY | O_RDWR)) && matches(path, "open")) die();        \
    return OPEN_CALL;                                                         \
  }

typedef int (*open_fn)(const char*, int, ...);
typedef int (*openat_fn)(int, const char*, int, ...);
typedef int (*rename_fn)(const char*, const char*);
typedef int (*renameat_fn)(int, const char*, int, const char*);

#define OPEN_CALL ((open_fn)dlsym(RTLD_NEXT, "open"))(path, flags, mode)
OPEN_WRAPPER(open, const char* path)
#undef OPEN_CALL
#define OPEN_CALL ((open_fn)dlsym(RTLD_NEXT, "open64"))(path, flags, mode)
OPEN_WRAPPER(open64, const char* path)
#undef OPEN_CALL
#define OPEN_CALL ((openat_fn)dlsym(RTLD_NEXT, "openat"))(dir, path, flags, mode)
OPEN_WRAPPER(openat, int dir, const char* path)
#undef OPEN_CALL
#define OPEN_CALL ((openat_fn)dlsym(RTLD_NEXT, "openat64"))(dir, path, flags, mode)
OPEN_WRAPPER(openat64, int dir, const char* path)
#undef OPEN_CALL

int rename(const char* from, const char* to) {
  if (matches(to, "rename")) die();
  int rc = ((rename_fn)dlsym(RTLD_NEXT, "rename"))(from, to);
  if (rc == 0 && matches(to, "renamed")) die();
  return rc;
}

int renameat(int fd1, const char* from, int fd2, const char* to) {
  if (matches(to, "rename")) die();
  int rc = ((renameat_fn)dlsym(RTLD_NEXT, "renameat"))(fd1, from, fd2, to);
  if (rc == 0 && matches(to, "renamed")) die();
  return rc;
}
