/* smd_scenario: runs a hook scenario given as a script, using only the public C API.
 *
 *   smd_scenario SCRIPT
 *
 * The interop tests write the same scenario for this program and for the real smdebug hook, then
 * compare what both wrote. One command per line, fields separated by TAB:
 *
 *   option  save_config  MODE|all  INTERVAL  START  END|-  STEPS|-     (STEPS: 1,5,9)
 *   option  reduction_config  SPEC  RAW(0/1)  SHAPE(0/1)
 *   option  include_collection  NAME          option  include_regex  REGEX
 *   option  save_all  0|1                     option  worker  NAME
 *   option  num_workers  N                    option  include_workers  one|all
 *   option  wall_time_base  SECONDS           option  real_crc  0|1
 *   option  end_marker  0|1                   option  memory_budget  BYTES
 *   option  export_tensorboard  0|1           option  tensorboard_dir  DIR
 *   create  OUT_DIR
 *   collection  NAME  regex  REGEX
 *   collection  NAME  tensor  TENSOR_NAME
 *   collection  NAME  reduction_config  SPEC  RAW  SHAPE
 *   collection  NAME  save_config  MODE|all  INTERVAL  START  END|-  STEPS|-
 *   collection  NAME  histogram  0|1
 *   include  NAME
 *   mode  TRAIN|EVAL|PREDICT|GLOBAL
 *   step
 *   tensor  NAME  DTYPE  SHAPE  HEX  [COLLECTIONS]   (SHAPE: "-" for 0-d, else 2x3; COLLECTIONS: a,b)
 *   scalar  NAME  VALUE
 *   scalar_typed  NAME  DTYPE  HEX              (one element of DTYPE, little-endian bytes)
 *   strings  NAME  HEX,HEX,...|-                (a 1-D string tensor: each element UTF-8 in hex;
 *                                                "-" for none)
 *   sleep  MILLISECONDS                         (paces a writer that a reader follows)
 *   await  PATH                                 (waits up to 120 s for the file PATH to exist)
 *   close
 *
 * Exit status 0 on success; any failing call prints its error and exits 1.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smd/smd.h"

#define MAX_FIELDS 16
#define MAX_COLLS 64

static int line_no = 0;

static void die(const char *what, smd_error *err) {
  fprintf(stderr, "smd_scenario: line %d: %s: %s: %s\n", line_no, what,
          err ? smd_code_name(smd_error_code(err)) : "", err ? smd_error_message(err) : "");
  smd_error_free(err);
  exit(1);
}

#define CALL(expr)                    \
  do {                                \
    smd_error *e_ = (expr);           \
    if (e_ != NULL) die(#expr, e_);   \
  } while (0)

static smd_mode mode_arg(const char *s) {
  if (strcmp(s, "all") == 0) return SMD_MODE_ALL;
  smd_mode m;
  CALL(smd_mode_from_name(s, &m));
  return m;
}

/* Applies "MODE INTERVAL START END STEPS" fields to a save config. */
static void set_save_config(smd_save_config *sc, char **f) {
  int64_t steps[256];
  size_t n = 0;
  if (strcmp(f[4], "-") != 0) {
    char *save = NULL;
    for (char *tok = strtok_r(f[4], ",", &save); tok && n < 256; tok = strtok_r(NULL, ",", &save)) {
      steps[n++] = strtoll(tok, NULL, 10);
    }
  }
  int64_t end = strcmp(f[3], "-") == 0 ? -1 : strtoll(f[3], NULL, 10);
  CALL(smd_save_config_set(sc, mode_arg(f[0]), strtoll(f[1], NULL, 10), strtoll(f[2], NULL, 10),
                           end, steps, n));
}

static smd_reduction_config *reduction_config(const char *spec, const char *raw, const char *shape) {
  smd_reduction_config *rc = NULL;
  CALL(smd_reduction_config_parse(spec, &rc));
  CALL(smd_reduction_config_set_save_raw_tensor(rc, strcmp(raw, "1") == 0));
  CALL(smd_reduction_config_set_save_shape(rc, strcmp(shape, "1") == 0));
  return rc;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  fprintf(stderr, "smd_scenario: line %d: bad hex digit '%c'\n", line_no, c);
  exit(2);
}

struct coll_state {
  char name[256];
  smd_save_config *sc;
};

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: smd_scenario SCRIPT\n");
    return 2;
  }
  FILE *in = fopen(argv[1], "r");
  if (in == NULL) {
    perror(argv[1]);
    return 2;
  }
  smd_hook_options *opts = NULL;
  smd_save_config *hook_sc = NULL;
  smd_hook *hook = NULL;
  struct coll_state colls[MAX_COLLS];
  size_t ncolls = 0;
  CALL(smd_hook_options_create(&opts));

  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, in)) >= 0) {
    ++line_no;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
    if (len == 0 || line[0] == '#') continue;
    char *f[MAX_FIELDS] = {0};
    int nf = 0;
    char *p = line;
    while (nf < MAX_FIELDS) {
      f[nf++] = p;
      char *tab = strchr(p, '\t');
      if (tab == NULL) break;
      *tab = '\0';
      p = tab + 1;
    }
    const char *cmd = f[0];
    if (strcmp(cmd, "option") == 0 && nf >= 3) {
      const char *k = f[1];
      if (strcmp(k, "save_config") == 0) {
        if (hook_sc == NULL) CALL(smd_save_config_create(&hook_sc));
        set_save_config(hook_sc, f + 2);
        CALL(smd_hook_options_set_save_config(opts, hook_sc));
      } else if (strcmp(k, "reduction_config") == 0) {
        smd_reduction_config *rc = reduction_config(f[2], f[3], f[4]);
        CALL(smd_hook_options_set_reduction_config(opts, rc));
        smd_reduction_config_free(rc);
      } else if (strcmp(k, "include_collection") == 0) {
        CALL(smd_hook_options_add_include_collection(opts, f[2]));
      } else if (strcmp(k, "include_regex") == 0) {
        CALL(smd_hook_options_add_include_regex(opts, f[2]));
      } else if (strcmp(k, "save_all") == 0) {
        CALL(smd_hook_options_set_save_all(opts, strcmp(f[2], "1") == 0));
      } else if (strcmp(k, "worker") == 0) {
        CALL(smd_hook_options_set_worker(opts, f[2]));
      } else if (strcmp(k, "num_workers") == 0) {
        CALL(smd_hook_options_set_num_workers(opts, strtoll(f[2], NULL, 10)));
      } else if (strcmp(k, "include_workers") == 0) {
        CALL(smd_hook_options_set_include_workers(
            opts, strcmp(f[2], "all") == 0 ? SMD_INCLUDE_WORKERS_ALL : SMD_INCLUDE_WORKERS_ONE));
      } else if (strcmp(k, "wall_time_base") == 0) {
        CALL(smd_hook_options_set_wall_time_base(opts, strtod(f[2], NULL)));
      } else if (strcmp(k, "real_crc") == 0) {
        CALL(smd_hook_options_set_real_payload_crc(opts, strcmp(f[2], "1") == 0));
      } else if (strcmp(k, "end_marker") == 0) {
        CALL(smd_hook_options_set_write_end_marker(opts, strcmp(f[2], "1") == 0));
      } else if (strcmp(k, "export_tensorboard") == 0) {
        CALL(smd_hook_options_set_export_tensorboard(opts, strcmp(f[2], "1") == 0));
      } else if (strcmp(k, "tensorboard_dir") == 0) {
        CALL(smd_hook_options_set_tensorboard_dir(opts, f[2]));
      } else if (strcmp(k, "memory_budget") == 0) {
        CALL(smd_hook_options_set_memory_budget(opts, (size_t)strtoull(f[2], NULL, 10)));
      } else {
        fprintf(stderr, "line %d: unknown option %s\n", line_no, k);
        return 2;
      }
    } else if (strcmp(cmd, "create") == 0 && nf >= 2) {
      CALL(smd_hook_create(f[1], opts, &hook));
    } else if (strcmp(cmd, "collection") == 0 && nf >= 4) {
      smd_collection *c = NULL;
      CALL(smd_hook_get_collection(hook, f[1], &c));
      const char *k = f[2];
      if (strcmp(k, "regex") == 0) {
        CALL(smd_collection_add_include_regex(c, f[3]));
      } else if (strcmp(k, "tensor") == 0) {
        CALL(smd_collection_add_tensor_name(c, f[3]));
      } else if (strcmp(k, "reduction_config") == 0) {
        smd_reduction_config *rc = reduction_config(f[3], f[4], f[5]);
        CALL(smd_collection_set_reduction_config(c, rc));
        smd_reduction_config_free(rc);
      } else if (strcmp(k, "save_config") == 0) {
        struct coll_state *st = NULL;
        for (size_t i = 0; i < ncolls; ++i) {
          if (strcmp(colls[i].name, f[1]) == 0) st = &colls[i];
        }
        if (st == NULL) {
          if (ncolls == MAX_COLLS) return 2;
          st = &colls[ncolls++];
          snprintf(st->name, sizeof st->name, "%s", f[1]);
          CALL(smd_save_config_create(&st->sc));
        }
        set_save_config(st->sc, f + 3);
        CALL(smd_collection_set_save_config(c, st->sc));
      } else if (strcmp(k, "histogram") == 0) {
        CALL(smd_collection_set_save_histogram(c, strcmp(f[3], "1") == 0));
      } else {
        fprintf(stderr, "line %d: unknown collection setting %s\n", line_no, k);
        return 2;
      }
      smd_collection_free(c);
    } else if (strcmp(cmd, "include") == 0 && nf >= 2) {
      CALL(smd_hook_include_collection(hook, f[1]));
    } else if (strcmp(cmd, "mode") == 0 && nf >= 2) {
      smd_mode m;
      CALL(smd_mode_from_name(f[1], &m));
      CALL(smd_hook_set_mode(hook, m));
    } else if (strcmp(cmd, "step") == 0) {
      CALL(smd_hook_begin_step(hook));
    } else if (strcmp(cmd, "sleep") == 0 && nf >= 2) {
      const long ms = strtol(f[1], NULL, 10);
      struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
      nanosleep(&ts, NULL);
    } else if (strcmp(cmd, "await") == 0 && nf >= 2) {
      FILE *gate;
      int waited_ms = 0;
      while ((gate = fopen(f[1], "r")) == NULL) {
        if (waited_ms >= 120000) {
          fprintf(stderr, "smd_scenario: line %d: %s did not appear within 120 s\n", line_no, f[1]);
          return 1;
        }
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
        waited_ms += 20;
      }
      fclose(gate);
    } else if (strcmp(cmd, "tensor") == 0 && nf >= 5) {
      smd_dtype dt;
      CALL(smd_dtype_from_name(f[2], &dt));
      int64_t shape[32];
      size_t ndim = 0;
      if (strcmp(f[3], "-") != 0) {
        char *save = NULL;
        for (char *tok = strtok_r(f[3], "x", &save); tok && ndim < 32; tok = strtok_r(NULL, "x", &save)) {
          shape[ndim++] = strtoll(tok, NULL, 10);
        }
      }
      size_t hexlen = strlen(f[4]);
      size_t nbytes = hexlen / 2;
      unsigned char *data = malloc(nbytes ? nbytes : 1);
      for (size_t i = 0; i < nbytes; ++i) data[i] = (unsigned char)(hexval(f[4][2 * i]) << 4 | hexval(f[4][2 * i + 1]));
      const char *names[MAX_COLLS];
      size_t nnames = 0;
      if (nf >= 6 && f[5][0] != '\0') {
        char *save = NULL;
        for (char *tok = strtok_r(f[5], ",", &save); tok && nnames < MAX_COLLS;
             tok = strtok_r(NULL, ",", &save)) {
          names[nnames++] = tok;
        }
      }
      CALL(smd_hook_save_tensor(hook, f[1], dt, shape, ndim, data, nbytes, names, nnames));
      free(data);
    } else if (strcmp(cmd, "scalar") == 0 && nf >= 3) {
      CALL(smd_hook_save_scalar(hook, f[1], strtod(f[2], NULL)));
    } else if (strcmp(cmd, "scalar_typed") == 0 && nf >= 4) {
      smd_dtype dt;
      CALL(smd_dtype_from_name(f[2], &dt));
      unsigned char bytes[16];
      size_t nbytes = strlen(f[3]) / 2;
      if (nbytes > sizeof bytes) return 2;
      for (size_t i = 0; i < nbytes; ++i) bytes[i] = (unsigned char)(hexval(f[3][2 * i]) << 4 | hexval(f[3][2 * i + 1]));
      CALL(smd_hook_save_scalar_typed(hook, f[1], dt, bytes, nbytes));
    } else if (strcmp(cmd, "strings") == 0 && nf >= 3) {
      /* Elements are separated by ',' and may be empty, so split by hand (strtok skips empties). */
      size_t n = 0, cap = 0;
      char **strs = NULL;
      size_t *lens = NULL;
      if (strcmp(f[2], "-") != 0) {
        for (char *p = f[2];;) {
          char *comma = strchr(p, ',');
          size_t hexlen = comma ? (size_t)(comma - p) : strlen(p);
          if (n == cap) {
            cap = cap ? 2 * cap : 8;
            strs = realloc(strs, cap * sizeof *strs);
            lens = realloc(lens, cap * sizeof *lens);
          }
          lens[n] = hexlen / 2;
          strs[n] = malloc(lens[n] + 1);
          for (size_t i = 0; i < lens[n]; ++i) strs[n][i] = (char)(hexval(p[2 * i]) << 4 | hexval(p[2 * i + 1]));
          strs[n][lens[n]] = '\0';
          ++n;
          if (comma == NULL) break;
          p = comma + 1;
        }
      }
      CALL(smd_hook_save_strings(hook, f[1], (const char *const *)strs, lens, n, NULL, 0));
      for (size_t i = 0; i < n; ++i) free(strs[i]);
      free(strs);
      free(lens);
    } else if (strcmp(cmd, "close") == 0) {
      CALL(smd_hook_close(hook));
    } else {
      fprintf(stderr, "line %d: cannot parse command '%s'\n", line_no, cmd);
      return 2;
    }
  }
  free(line);
  fclose(in);
  smd_hook_free(hook);
  smd_hook_options_free(opts);
  smd_save_config_free(hook_sc);
  for (size_t i = 0; i < ncolls; ++i) smd_save_config_free(colls[i].sc);
  return 0;
}
