/**
 * Source of the service's native memory helper, a Node-API module of two functions,
 * compiled once per version with the system compiler (./malloc-trim.ts). Kept as a
 * string so it travels with the compiled JavaScript, as the job wrapper's source does.
 *
 * Why it exists (docs/performance.md, "Soak memory"): under constant mixed load the C
 * library's malloc keeps the memory freed by TLS connections, request buffers and
 * SQLite in its arenas instead of giving it back; measured under the soak mix, 42 of
 * the main arena's 71 MiB were free and held, and one `malloc_trim(0)` took the
 * service from 207 to 152 MiB resident. glibc returns only the top of an arena by
 * itself; `malloc_trim` also releases the free pages inside it (madvise), in every
 * arena.
 *
 *   trim()      -> boolean  malloc_trim(0) now: whether memory was given back
 *   trimAsync() -> boolean  malloc_trim(0) on a thread of its own; false (and nothing
 *                           started) while the previous one still runs
 *   lastTrim()  -> number   milliseconds the last trim on that thread took; -1 while one
 *                           runs, -2 before the first
 *   held()      -> number   bytes free in the main arena but held by malloc (mallinfo2:
 *                           fordblks; what a trim can give back, less what is still in
 *                           use on the same pages)
 *
 * A trim takes the kernel's time to take the pages back (on a loaded virtual machine,
 * tens to hundreds of milliseconds for a few MiB): on its own thread the event loop
 * goes on meanwhile, waiting only where it allocates from the arena being trimmed.
 *
 * The Node-API declarations are written out (the ABI is stable across Node versions,
 * https://nodejs.org/api/n-api.html) so that no header files are needed: a compiler
 * and the C library's headers suffice. Node looks the module up by the symbol
 * `napi_register_module_v1`.
 */
export const MALLOC_C_SOURCE = String.raw`/* Ceres native memory helper. Generated source: do not edit. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;
typedef struct napi_callback_info__ *napi_callback_info;
typedef int napi_status;
typedef napi_value (*napi_callback)(napi_env, napi_callback_info);

extern napi_status napi_create_function(napi_env, const char *, size_t, napi_callback, void *, napi_value *);
extern napi_status napi_set_named_property(napi_env, napi_value, const char *, napi_value);
extern napi_status napi_get_boolean(napi_env, bool, napi_value *);
extern napi_status napi_create_double(napi_env, double, napi_value *);

static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value r = NULL;
  napi_get_boolean(env, malloc_trim(0) != 0, &r);
  return r;
}

/* -2: never ran; -1: running; else the last trim's milliseconds. */
static _Atomic double last_ms = -2;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void *trim_thread(void *arg) {
  (void)arg;
  double t0 = now_ms();
  malloc_trim(0);
  atomic_store(&last_ms, now_ms() - t0);
  return NULL;
}

static napi_value trim_async(napi_env env, napi_callback_info info) {
  (void)info;
  bool started = false;
  double prev = atomic_load(&last_ms);
  if (prev != -1 && atomic_compare_exchange_strong(&last_ms, &prev, -1)) {
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    started = pthread_create(&t, &a, trim_thread, NULL) == 0;
    pthread_attr_destroy(&a);
    if (!started) atomic_store(&last_ms, prev);
  }
  napi_value r = NULL;
  napi_get_boolean(env, started, &r);
  return r;
}

static napi_value last_trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value r = NULL;
  napi_create_double(env, atomic_load(&last_ms), &r);
  return r;
}

static napi_value held(napi_env env, napi_callback_info info) {
  (void)info;
  struct mallinfo2 m = mallinfo2();
  napi_value r = NULL;
  napi_create_double(env, (double)m.fordblks, &r);
  return r;
}

static void export_fn(napi_env env, napi_value exports, const char *name, napi_callback cb) {
  napi_value f = NULL;
  if (napi_create_function(env, name, (size_t)-1, cb, NULL, &f) == 0) napi_set_named_property(env, exports, name, f);
}

__attribute__((visibility("default"))) napi_value napi_register_module_v1(napi_env env, napi_value exports) {
  export_fn(env, exports, "trim", trim);
  export_fn(env, exports, "held", held);
  export_fn(env, exports, "trimAsync", trim_async);
  export_fn(env, exports, "lastTrim", last_trim);
  return exports;
}
`;
