/**
 * Source of the fork backend's launcher in C, compiled once per version with the system
 * compiler into the backend's work directory (./launcher-build.ts), as the job wrapper is.
 * Without a compiler the Node launcher (./launcher.ts) does the same job; both speak the
 * protocol below (./launcher-protocol.ts is the service's side). Design:
 * docs/batch-backends.md ("Why a launcher process").
 *
 * Protocol: binary frames, integers little-endian. stdin carries requests, stdout answers.
 *   request:  u32 n, then n bytes: u32 id, u32 argc, u32 envc, then argc + envc + 1 strings,
 *             each ended by a NUL: the file, its argc arguments (argv[0] is the file), its
 *             envc environment entries "NAME=value" (exactly that environment)
 *   answer:   u32 n, then n bytes: u8 op, u32 a, i32 b, text (n - 9 bytes)
 *     'S' started: a = request id, b = pid, text = the wrapper's first line without its
 *                  newline (at most LINE_MAX bytes; what it wrote before ending, trimmed,
 *                  when it ended or closed its stdout without one)
 *     'E' error:   a = request id, b = errno, text = why it could not be started
 *     'X' exit:    a = pid, b = 1 if its first line began "ok " (it ran a job), else 0;
 *                  always after its 'S'
 * Every child is reaped (waitpid) and every exit reported; answers are written with
 * blocking writes, so none is ever dropped, however many end at once. At most
 * MAX_STARTING wrappers wait for their first line at a time (one pipe each); further
 * requests wait in the pipe. Wrappers start with posix_spawn (vfork + exec): own session
 * (setsid), stdin and stderr /dev/null, stdout a pipe, default signal handling and an
 * empty signal mask; every descriptor of the launcher is close-on-exec, and those it
 * inherited are closed at start. What a wrapper writes after its first line is read and
 * dropped. When stdin closes (the service went away) the launcher answers the wrappers
 * still starting (for up to 2 s) and ends; the wrappers keep running.
 */
export const LAUNCHER_C_SOURCE = String.raw`/* Ceres launcher (fork backend). Generated source: do not edit. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#define LINE_MAX_ 4096
#define MAX_STARTING 256
#define MAX_REQUEST (64u << 20)
#define BUCKETS 4096

struct kid {
  pid_t pid;
  int fd;            /* read end of its stdout, -1 once closed */
  uint32_t id;
  int answered;
  int claimed;
  size_t len;
  char *line;        /* first-line buffer while starting */
  struct kid *next;  /* hash chain by pid */
};

static struct kid *table[BUCKETS];
static int starting = 0;
static int ep = -1;
static int devnull = -1;
static unsigned char *out = NULL;
static size_t out_len = 0, out_cap = 0;
static const char SIG_TAG = 0, IN_TAG = 0;

static void die(const char *what) { perror(what); exit(2); }

static void flush_out(void) {
  size_t off = 0;
  while (off < out_len) {
    ssize_t w = write(1, out + off, out_len - off);
    if (w > 0) { off += (size_t)w; continue; }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) { struct pollfd p = { 1, POLLOUT, 0 }; poll(&p, 1, -1); continue; }
    break; /* the service is gone: stdin's end follows */
  }
  out_len = 0;
}

static void put32(unsigned char *p, uint32_t v) { p[0] = v & 255; p[1] = (v >> 8) & 255; p[2] = (v >> 16) & 255; p[3] = v >> 24; }
static uint32_t get32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static void answer(char op, uint32_t a, int32_t b, const char *text, size_t tlen) {
  size_t need = 4 + 9 + tlen;
  if (out_len + need > out_cap) {
    size_t cap = out_cap ? out_cap : 65536;
    while (cap < out_len + need) cap *= 2;
    unsigned char *n = realloc(out, cap);
    if (!n) die("realloc");
    out = n; out_cap = cap;
  }
  unsigned char *p = out + out_len;
  put32(p, (uint32_t)(9 + tlen));
  p[4] = (unsigned char)op;
  put32(p + 5, a);
  put32(p + 9, (uint32_t)b);
  if (tlen) memcpy(p + 13, text, tlen);
  out_len += need;
  if (out_len >= 65536) flush_out();
}

static struct kid **slot(pid_t pid) {
  struct kid **k = &table[(unsigned)pid % BUCKETS];
  while (*k && (*k)->pid != pid) k = &(*k)->next;
  return k;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* The wrapper's first line, or (final) what it wrote, trimmed. */
static void answer_started(struct kid *k, size_t n, int final) {
  const char *s = k->line ? k->line : "";
  if (final) {
    while (n > 0 && is_space(s[n - 1])) n--;
    while (n > 0 && is_space(s[0])) { s++; n--; }
  }
  k->claimed = n >= 3 && memcmp(s, "ok ", 3) == 0;
  answer('S', k->id, k->pid, s, n);
  k->answered = 1;
  free(k->line);
  k->line = NULL;
  starting--;
}

/* Removed from the epoll set first: a close alone leaves it there while a child being
   spawned still holds a copy of the descriptor (exec wakes the vfork parent before it
   closes the close-on-exec ones), and an event would then name a freed kid. */
static void close_kid_fd(struct kid *k) {
  if (k->fd >= 0) { epoll_ctl(ep, EPOLL_CTL_DEL, k->fd, NULL); close(k->fd); k->fd = -1; }
}

/* Read what is there; answer at the first newline, a full buffer, or the end. */
static void read_kid(struct kid *k) {
  char scratch[4096];
  for (;;) {
    if (k->fd < 0) return;
    char *buf = k->answered ? scratch : k->line + k->len;
    size_t room = k->answered ? sizeof scratch : LINE_MAX_ - k->len;
    ssize_t r = read(k->fd, buf, room);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno == EAGAIN) return;
    if (r <= 0) {
      if (!k->answered) answer_started(k, k->len, 1);
      close_kid_fd(k);
      return;
    }
    if (k->answered) continue;
    char *nl = memchr(buf, '\n', (size_t)r);
    k->len += (size_t)r;
    if (nl) answer_started(k, (size_t)(nl - k->line), 0);
    else if (k->len == LINE_MAX_) answer_started(k, k->len, 0);
  }
}

static void reap(void) {
  for (;;) {
    int st;
    pid_t pid = waitpid(-1, &st, WNOHANG);
    if (pid <= 0) return;
    struct kid **s = slot(pid);
    struct kid *k = *s;
    if (!k) { answer('X', (uint32_t)pid, 0, NULL, 0); continue; }
    /* What it wrote before it ended is in the pipe: its answer comes first. */
    if (!k->answered) read_kid(k);
    if (!k->answered) answer_started(k, k->len, 1);
    close_kid_fd(k);
    answer('X', (uint32_t)pid, k->claimed, NULL, 0);
    *s = k->next;
    free(k);
  }
}

static void fail(uint32_t id, int err, const char *what) {
  char msg[256];
  int n = snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  answer('E', id, err, msg, n > 0 ? (size_t)n : 0);
}

static void start(uint32_t id, char *file, char **argv, char **envp) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) { fail(id, errno, "pipe"); return; }
  fcntl(p[0], F_SETFL, O_NONBLOCK); /* our end only: the child writes to a blocking pipe */
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, devnull, 0);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  posix_spawn_file_actions_adddup2(&fa, devnull, 2);
  posix_spawnattr_init(&at);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &all);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid;
  int e = posix_spawn(&pid, file, &fa, &at, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  close(p[1]);
  if (e != 0) { close(p[0]); fail(id, e, file); return; }
  struct kid *k = calloc(1, sizeof *k);
  char *line = malloc(LINE_MAX_);
  if (!k || !line) die("malloc");
  k->pid = pid; k->fd = p[0]; k->id = id; k->line = line;
  struct kid **s = slot(pid);
  k->next = *s;
  *s = k;
  starting++;
  struct epoll_event ev = { .events = EPOLLIN, .data.ptr = k };
  if (epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) != 0) die("epoll_ctl");
}

/* One request frame (its n bytes after the length). */
static void request(unsigned char *f, uint32_t n) {
  if (n < 12) return;
  uint32_t id = get32(f), argc = get32(f + 4), envc = get32(f + 8);
  char *s = (char *)f + 12, *end = (char *)f + n;
  if (argc > n || envc > n) { fail(id, EINVAL, "malformed request"); return; }
  char **v = malloc(sizeof(char *) * ((size_t)argc + envc + 3));
  if (!v) die("malloc");
  size_t count = (size_t)argc + envc + 1;
  for (size_t i = 0; i < count; i++) {
    char *z = s < end ? memchr(s, 0, (size_t)(end - s)) : NULL;
    if (!z) { free(v); fail(id, EINVAL, "malformed request"); return; }
    v[i < argc + 1 ? i : i + 1] = s;
    s = z + 1;
  }
  char **argv = v;                 /* v[0] = file = argv[0], v[1..argc] */
  argv[argc + 1] = NULL;
  char **envp = v + argc + 2;
  envp[envc] = NULL;
  start(id, v[0], argv, envp);
  free(v);
}

static unsigned char *in = NULL;
static size_t in_len = 0, in_cap = 0, in_off = 0;

/* Start what has arrived, as long as few enough wrappers are starting. */
static void process_input(void) {
  while (starting < MAX_STARTING && in_len - in_off >= 4) {
    uint32_t n = get32(in + in_off);
    if (n > MAX_REQUEST) { fprintf(stderr, "launcher: request of %u bytes\n", n); exit(2); }
    if (in_len - in_off - 4 < n) break;
    request(in + in_off + 4, n);
    in_off += 4 + (size_t)n;
  }
  if (in_off == in_len) in_off = in_len = 0;
}

/* Read stdin; 0 at its end. */
static int read_input(void) {
  if (in_off > 0 && in_off == in_len) in_off = in_len = 0;
  if (in_off > 0 && in_cap - in_len < 65536) {
    memmove(in, in + in_off, in_len - in_off);
    in_len -= in_off;
    in_off = 0;
  }
  if (in_cap - in_len < 65536) {
    size_t cap = in_cap ? in_cap * 2 : 262144;
    unsigned char *n = realloc(in, cap);
    if (!n) die("realloc");
    in = n; in_cap = cap;
  }
  for (;;) {
    ssize_t r = read(0, in + in_len, in_cap - in_len);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno == EAGAIN) return 1;
    if (r <= 0) return 0;
    in_len += (size_t)r;
    return 1;
  }
}

static void close_inherited(void) {
  if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0) return;
  DIR *d = opendir("/proc/self/fd");
  if (!d) { for (int fd = 3; fd < 1024; fd++) close(fd); return; }
  int own = dirfd(d);
  struct dirent *e;
  int fds[1024], n = 0;
  while ((e = readdir(d)) && n < 1024) {
    int fd = atoi(e->d_name);
    if (fd > 2 && fd != own) fds[n++] = fd;
  }
  closedir(d);
  for (int i = 0; i < n; i++) close(fds[i]);
}

static long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

int main(void) {
  close_inherited();
  signal(SIGPIPE, SIG_IGN);
  devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) die("/dev/null");
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &chld, NULL) != 0) die("sigprocmask");
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) die("signalfd");
  ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die("epoll_create1");
  struct epoll_event ev = { .events = EPOLLIN, .data.ptr = (void *)&SIG_TAG };
  if (epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev) != 0) die("epoll_ctl");
  ev.data.ptr = (void *)&IN_TAG;
  if (epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev) != 0) die("epoll_ctl stdin");
  int input_open = 1, watching_input = 1;
  long deadline = 0;
  struct epoll_event evs[256];
  for (;;) {
    if (!input_open && (starting == 0 || now_ms() >= deadline)) break;
    int want = input_open && starting < MAX_STARTING;
    if (want != watching_input) {
      struct epoll_event e2 = { .events = want ? EPOLLIN : 0, .data.ptr = (void *)&IN_TAG };
      epoll_ctl(ep, EPOLL_CTL_MOD, 0, &e2);
      watching_input = want;
    }
    int timeout = input_open ? -1 : (int)(deadline - now_ms());
    int n = epoll_wait(ep, evs, 256, timeout < 0 && !input_open ? 0 : timeout);
    if (n < 0 && errno != EINTR) die("epoll_wait");
    int sig = 0;
    for (int i = 0; i < n; i++) {
      void *tag = evs[i].data.ptr;
      if (tag == &SIG_TAG) sig = 1;
      else if (tag == &IN_TAG) {
        if (!read_input()) {
          input_open = 0;
          deadline = now_ms() + 2000;
          epoll_ctl(ep, EPOLL_CTL_DEL, 0, NULL);
          watching_input = 0;
          in_len = in_off = 0; /* requests not yet started are not started: nobody waits for them */
        }
      } else read_kid((struct kid *)tag);
    }
    if (sig) {
      struct signalfd_siginfo si[16];
      while (read(sfd, si, sizeof si) > 0) {}
      reap();
    }
    if (input_open) process_input();
    flush_out();
  }
  flush_out();
  return 0;
}
`;
