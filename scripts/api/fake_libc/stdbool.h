/* Only the names the public headers use, for scripts/gen-api.py's parser (not a real libc). */
typedef _Bool bool;
#define true 1
#define false 0
