/* Only the names the public headers use, for scripts/gen-api.py's parser (not a real libc). */
typedef unsigned long size_t;
#define NULL 0
