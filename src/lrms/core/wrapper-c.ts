/**
 * Source of the fork backend's job wrapper in C, compiled once per version with the
 * system compiler into the backend's work directory (./wrapper-build.ts). Kept as a
 * string so it travels with the compiled JavaScript. Design: docs/batch-backends.md.
 *
 * Arguments (the same for the sh fallback, ./wrapper-sh.ts):
 *   wrapper DIR SESSION STDIN STDOUT STDERR JOIN WALL CPU MEMKB GRACE SAMPLEMS CGROUP MARK CRED SCRATCH
 * on the command line, or, with no argument at all, read from the file named by the
 * environment variable CERES_WRAPPER_ARGS (each argument ended by a NUL): what the fork
 * backend does, because every local user reads a process's command line with ps, and
 * DIR and SESSION name the job (docs/security.md, "What `ps` shows"). The file lies in
 * DIR (0700, the service's); the environment of a root process is readable by root only.
 * The variable is removed before anything else, so the job never inherits it.
 * DIR is the job's lrms directory holding job.sh; STDIN/STDOUT/STDERR are
 * session-relative ('' = /dev/null); JOIN 1 sends stderr to stdout; WALL/GRACE in
 * seconds, CPU in seconds, MEMKB in KiB (0 = no limit); SAMPLEMS is the memory/CPU
 * sampling period. CGROUP ('' = none) is a cgroup v2 directory the wrapper creates and
 * puts the job in (a process cannot leave it by itself); MARK goes into the job's
 * environment as CERES_JOB_MARK, what the backend's process sweep looks for
 * (./job-processes.ts). CRED ('' = stay who we are) is `UID:GID:G1,G2,...`: the local
 * account the job runs as (docs/security.md). The wrapper itself keeps running as the
 * service's user (root), so its files stay out of the job's reach; only the job's
 * process switches, in the child right before the exec: supplementary groups, then the
 * gid, then the uid (real, effective and saved, each checked), before it touches
 * anything in the session directory, so every file it opens there is opened as the
 * account (a link the job planted cannot make root write through it).
 *
 * SCRATCH ('' = none; only with CRED) gives the job a private /tmp, /var/tmp and /dev/shm,
 * as HTCondor does: the wrapper (root) makes SCRATCH (0700, root's) with `tmp` and `shm`
 * in it (0700, the account's), made and opened without following a link; the child,
 * still root, enters a mount namespace of its own (unshare CLONE_NEWNS), makes every
 * mount private (nothing it mounts propagates back to the host) and bind-mounts `tmp`
 * onto /tmp and /var/tmp and `shm` onto /dev/shm (nosuid, nodev), then sets TMPDIR=/tmp.
 * The namespace ends with the job's last process; after reaping everything the wrapper
 * removes SCRATCH (no process of the job is left to race it, and SCRATCH's parents are
 * root's: nobody else reaches it). Where the kernel refuses (no CAP_SYS_ADMIN), the job
 * runs with the shared folders and the status file says why (`tmp=shared: ...`).
 *
 * job.sh is opened by the wrapper and read by the shell through /proc/self/fd/N: the
 * lrms directory stays 0700 and unreachable for the account. Descriptor 3 of job.sh is
 * a pipe to the wrapper for the reason the job could not start (./job-script.ts).
 *
 * Protocol with the launcher: the wrapper claims DIR by hard-linking a pid file
 * (`pid`: "<pid> <start ticks>"); it prints "ok <pid> <start ticks>" (claimed) or "dup" (another
 * wrapper owns DIR) on stdout, then detaches stdout. When the job has ended it writes
 * `diag` and then `status` (the completion marker), each atomically (temp + rename),
 * and exits 0. One it cannot write (DIR taken from the job's account, the disk full) is
 * said on the output the wrapper was started with when that is a file (kept as
 * `report`: Slurm's slurm.out; the fork launcher's pipe is let go after the first line)
 * as `error cannot write the <name> file <path>: <reason>`, and a status file not
 * written makes it exit STATUS_UNWRITTEN_EXIT (./job-files.ts), not 0.
 */
import { STATUS_UNWRITTEN_EXIT } from './job-files.js';

export const WRAPPER_C_SOURCE = String.raw`/* Ceres job wrapper (fork backend). Generated source: do not edit. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

static const char *dir;
static int report = -1;           /* the output the wrapper was started with (close-on-exec) */
static const char *cgroup = "";  /* the job's cgroup v2 directory, or "" */
static pid_t job = -1;          /* main process of the job; also its process group */
static char reason[600];        /* failure reason, first one wins */
static int stopping = 0, killed = 0;
static double kill_at = 0;

static double mono(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long long wall_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void set_reason(const char *r) {
  if (reason[0] == 0) snprintf(reason, sizeof reason, "%s", r);
}

static void path_in(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", dir, name); }

/* Say on the wrapper's own output which file could not be written, and why (errno). */
static void cannot_write(const char *name) {
  char p[4200];
  int e = errno;
  path_in(p, sizeof p, name);
  if (report >= 0) dprintf(report, "error cannot write the %s file %s: %s\n", name, p, strerror(e));
}

/* Write DIR/name atomically: a reader sees the old file, no file, or all of it. */
static int write_atomic(const char *name, const char *text) {
  char tmp[4200], dst[4200];
  snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
  path_in(dst, sizeof dst, name);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  size_t len = strlen(text), off = 0;
  while (off < len) {
    ssize_t w = write(fd, text + off, len - off);
    if (w < 0) { if (errno == EINTR) continue; close(fd); return -1; }
    off += (size_t)w;
  }
  if (close(fd) != 0) return -1;
  return rename(tmp, dst);
}

/* The fields of /proc/<pid>/stat after the command name, from field 3 (the state) on, read
 * into buf; NULL if the process is gone or the line is cut. The name is in parentheses and may
 * itself hold spaces and ')', so the fields start after the last ')'. */
static char *stat_fields(const char *pid, char *buf, size_t size) {
  char p[64];
  snprintf(p, sizeof p, "/proc/%s/stat", pid);
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  ssize_t r = read(fd, buf, size - 1);
  close(fd);
  if (r <= 0) return NULL;
  buf[r] = 0;
  char *s = strrchr(buf, ')');
  return s && s[1] == ' ' ? s + 2 : NULL;
}

/* Field 22 of /proc/<pid>/stat: start time in clock ticks since boot ("0" if unknown). */
static void start_ticks(pid_t pid, char *out, size_t n) {
  char id[24], buf[1024];
  snprintf(out, n, "0");
  snprintf(id, sizeof id, "%d", (int)pid);
  char *s = stat_fields(id, buf, sizeof buf);
  if (!s) return;
  for (int field = 3; field < 22 && s; field++) { s = strchr(s, ' '); if (s) s++; }
  if (!s) return;
  size_t k = strcspn(s, " ");
  if (k >= n) k = n - 1;
  memcpy(out, s, k);
  out[k] = 0;
}

struct sample { long long rss_kb; double cpu_s; };

/* Resident memory and CPU time of the live processes in the job's process group. */
static struct sample sample_group(void) {
  struct sample acc = {0, 0};
  long page_kb = sysconf(_SC_PAGESIZE) / 1024;
  long hz = sysconf(_SC_CLK_TCK);
  DIR *d = opendir("/proc");
  if (!d) return acc;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!isdigit((unsigned char)e->d_name[0])) continue;
    char buf[1024];
    char *s = stat_fields(e->d_name, buf, sizeof buf);
    if (!s) continue;
    char state;
    long ppid, pgrp, session, tty, tpgid;
    unsigned long flags, minflt, cminflt, majflt, cmajflt, ut, st;
    long cut, cst, prio, nice, threads, itreal;
    unsigned long long starttime, vsize;
    long rss;
    int got = sscanf(s, "%c %ld %ld %ld %ld %ld %lu %lu %lu %lu %lu %lu %lu %ld %ld %ld %ld %ld %ld %llu %llu %ld",
                     &state, &ppid, &pgrp, &session, &tty, &tpgid, &flags, &minflt, &cminflt, &majflt, &cmajflt, &ut, &st,
                     &cut, &cst, &prio, &nice, &threads, &itreal, &starttime, &vsize, &rss);
    if (got != 22 || pgrp != (long)job || state == 'Z') continue;
    acc.rss_kb += (long long)rss * page_kb;
    acc.cpu_s += (double)(ut + st + (unsigned long)cut + (unsigned long)cst) / (double)hz;
  }
  closedir(d);
  return acc;
}

/* Ask the whole job to stop: TERM now, KILL after the grace time. */
static void stop(const char *why, double grace) {
  set_reason(why);
  if (stopping) return;
  stopping = 1;
  kill(-job, SIGTERM);
  kill_at = mono() + grace;
}

/* Write text to the existing file p; 0 on success. */
static int put(const char *p, const char *text) {
  int fd = open(p, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t w = write(fd, text, strlen(text));
  close(fd);
  return w == (ssize_t)strlen(text) ? 0 : -1;
}

/*
 * fork(), with the child created inside the job's cgroup when the kernel can (clone3 with
 * CLONE_INTO_CGROUP, Linux 5.7). Moving a running process into a cgroup by writing
 * cgroup.procs waits for an RCU grace period under a lock shared by the whole system
 * (10-15 ms per job measured here, most of a trivial job's turnaround); a process created
 * there pays nothing. *placed says whether it was; otherwise the caller moves the child
 * the classic way. The struct is the kernel's stable clone_args layout (v2, 88 bytes).
 */
struct ceres_clone_args {
  unsigned long long flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
      set_tid_size, cgroup;
};
static pid_t fork_into(int cgfd, int *placed) {
  *placed = 0;
#if defined(__linux__) && defined(SYS_clone3)
  if (cgfd >= 0) {
    struct ceres_clone_args ca;
    memset(&ca, 0, sizeof ca);
    ca.flags = 0x200000000ULL; /* CLONE_INTO_CGROUP */
    ca.exit_signal = SIGCHLD;
    ca.cgroup = (unsigned long long)cgfd;
    long r = syscall(SYS_clone3, &ca, sizeof ca);
    if (r >= 0) {
      *placed = 1;
      return (pid_t)r;
    }
    /* ENOSYS/E2BIG (older kernel), EINVAL, EPERM, EBUSY: fork and move the child instead */
  }
#endif
  return fork();
}

/* SIGKILL every process of the job's cgroup; 1 while any is left. */
static int kill_cgroup(void) {
  if (!cgroup[0]) return 0;
  char p[4200], buf[4096];
  snprintf(p, sizeof p, "%s/cgroup.kill", cgroup);
  int killed = put(p, "1") == 0;
  snprintf(p, sizeof p, "%s/cgroup.procs", cgroup);
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t r = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (r <= 0) return 0;
  buf[r] = 0;
  if (!killed) { /* no cgroup.kill (before Linux 5.14): one by one */
    char *save = NULL;
    for (char *t = strtok_r(buf, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) if (atol(t) > 0) kill((pid_t)atol(t), SIGKILL);
  }
  return 1;
}

/* Kill and reap every process left: the job's group, its cgroup and any orphan adopted by this subreaper. */
static void reap_all(void) {
  double until = mono() + 10;
  for (;;) {
    kill(-job, SIGKILL);
    int in_cgroup = kill_cgroup();
    pid_t w;
    int st;
    while ((w = waitpid(-1, &st, WNOHANG)) > 0) {}
    if (w < 0 && errno == ECHILD && !in_cgroup) {
      if (cgroup[0]) rmdir(cgroup);
      return; /* the usual case: nothing left, no /proc scan */
    }
    DIR *d = opendir("/proc");
    if (d) {
      struct dirent *e;
      while ((e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        char buf[512];
        char *s = stat_fields(e->d_name, buf, sizeof buf);
        char state;
        long ppid;
        if (s && sscanf(s, "%c %ld", &state, &ppid) == 2 && ppid == (long)getpid()) kill((pid_t)atol(e->d_name), SIGKILL);
      }
      closedir(d);
    }
    if (mono() > until) return;
    usleep(20000);
  }
}

static const char *sig_name(int s) {
  static char other[16];
  switch (s) {
    case SIGHUP: return "SIGHUP"; case SIGINT: return "SIGINT"; case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL"; case SIGTRAP: return "SIGTRAP"; case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS"; case SIGFPE: return "SIGFPE"; case SIGKILL: return "SIGKILL";
    case SIGUSR1: return "SIGUSR1"; case SIGSEGV: return "SIGSEGV"; case SIGUSR2: return "SIGUSR2";
    case SIGPIPE: return "SIGPIPE"; case SIGALRM: return "SIGALRM"; case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU"; case SIGXFSZ: return "SIGXFSZ"; case SIGSYS: return "SIGSYS";
    default: snprintf(other, sizeof other, "SIG%d", s); return other;
  }
}

static void mds_time(long long ms, char *out, size_t n) {
  time_t t = (time_t)(ms / 1000);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, n, "%Y%m%d%H%M%SZ", &tm);
}

/* One-line text: control characters become spaces (the status file is line based). */
static void clean_line(char *s) {
  for (; *s; s++) if ((unsigned char)*s < 0x20) *s = ' ';
}

/* In the child: report why the job could not be started, then give up. */
static void child_fail(int fd, const char *what, const char *name) {
  char msg[600];
  int n = snprintf(msg, sizeof msg, "%s%s%s: %s", what, name ? " " : "", name ? name : "", strerror(errno));
  if (n > 0) { ssize_t ignored = write(fd, msg, (size_t)n); (void)ignored; }
  _exit(127);
}

/* fd moved to a number >= 10, close-on-exec: the child's 0..3 can be set without clobbering it. */
static int high(int fd) {
  if (fd < 0 || fd >= 10) return fd;
  int h = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  close(fd);
  return h;
}

/* CRED "UID:GID:G1,G2,..." into its parts; 0 when malformed. At most 1024 groups. */
static gid_t groups[1024];
static int parse_cred(const char *cred, uid_t *uid, gid_t *gid, int *ngroups) {
  char *end;
  unsigned long u = strtoul(cred, &end, 10);
  if (end == cred || *end != ':') return 0;
  const char *p = end + 1;
  unsigned long g = strtoul(p, &end, 10);
  if (end == p || *end != ':') return 0;
  p = end + 1;
  int n = 0;
  while (*p) {
    unsigned long x = strtoul(p, &end, 10);
    if (end == p || n >= 1024) return 0;
    groups[n++] = (gid_t)x;
    if (*end == ',') end++;
    else if (*end) return 0;
    p = end;
  }
  if (u == 0) return 0; /* never "switch" to root: the backend refuses such accounts too */
  *uid = (uid_t)u;
  *gid = (gid_t)g;
  *ngroups = n;
  return 1;
}

/* In the child: become the account (groups, gid, uid, in that order) or fail the job. */
static void become(int fd_err, uid_t uid, gid_t gid, int ngroups) {
  if (setgroups((size_t)ngroups, groups) != 0) child_fail(fd_err, "cannot set the supplementary groups of the local account", NULL);
  if (setresgid(gid, gid, gid) != 0) child_fail(fd_err, "cannot switch to the group of the local account", NULL);
  if (setresuid(uid, uid, uid) != 0) child_fail(fd_err, "cannot switch to the local account", NULL);
  uid_t r, e, s;
  gid_t rg, eg, sg;
  if (getresuid(&r, &e, &s) != 0 || r != uid || e != uid || s != uid || getresgid(&rg, &eg, &sg) != 0 || rg != gid || eg != gid || sg != gid) {
    errno = EPERM;
    child_fail(fd_err, "the switch to the local account did not hold", NULL);
  }
  /* No way back: root's uid must be out of reach now. */
  if (setuid(0) == 0 || setgid(0) == 0) { errno = EPERM; child_fail(fd_err, "the job could regain root after the account switch", NULL); }
}

/*
 * In the child: close every descriptor above 3 but keep1 and keep2, so the job inherits
 * nothing the wrapper's ancestors had open without close-on-exec (a log pipe, a socket
 * of the service's parent, a file only root may read).
 */
static void close_others(int keep1, int keep2) {
  int fds[4096], n = 0;
  DIR *d = opendir("/proc/self/fd");
  if (d == NULL) {
    for (int fd = 4; fd < 4096; fd++) if (fd != keep1 && fd != keep2) close(fd);
    return;
  }
  int own = dirfd(d);
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < 4096) {
    if (!isdigit((unsigned char)e->d_name[0])) continue;
    int fd = atoi(e->d_name);
    if (fd > 3 && fd != keep1 && fd != keep2 && fd != own) fds[n++] = fd;
  }
  closedir(d);
  for (int i = 0; i < n; i++) close(fds[i]);
}

/* The arguments from the file named by CERES_WRAPPER_ARGS (each ended by a NUL) into fargv[1..]; 0 on failure. */
#define NARGS 15
static char argbuf[65536];
static char *fargv[NARGS + 2];
static int args_from_file(const char *path, int *argc) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t len = 0;
  for (;;) {
    ssize_t r = read(fd, argbuf + len, sizeof argbuf - 1 - len);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) { close(fd); return 0; }
    if (r == 0) break;
    len += (size_t)r;
    if (len == sizeof argbuf - 1) { close(fd); errno = E2BIG; return 0; }
  }
  close(fd);
  int n = 1;
  size_t off = 0;
  while (off < len) {
    char *z = memchr(argbuf + off, 0, len - off);
    if (!z || n > NARGS) { errno = EINVAL; return 0; }
    fargv[n++] = argbuf + off;
    off = (size_t)(z - argbuf) + 1;
  }
  fargv[n] = NULL;
  *argc = n;
  return 1;
}

/* The private temporary folders: SCRATCH, its tmp and shm (descriptors, -1 = none). */
static int scratch_fd = -1, tmp_fd = -1, shm_fd = -1;
static char tmp_note[300]; /* "private", "shared: why", or "" when none was asked for */

/* parent/name as a directory of uid:gid, mode 0700, made and opened without following a link. */
static int own_dir(int parent, const char *name, uid_t uid, gid_t gid) {
  if (mkdirat(parent, name, 0700) != 0 && errno != EEXIST) return -1;
  int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  if (fchown(fd, uid, gid) != 0 || fchmod(fd, 0700) != 0) { close(fd); return -1; }
  return high(fd);
}

/* In the wrapper, as root: SCRATCH (root's, 0700) with tmp and shm (the account's); NULL or why not. */
static const char *prepare_scratch(const char *scratch, uid_t uid, gid_t gid) {
  if (mkdir(scratch, 0700) != 0 && errno != EEXIST) return "cannot make the scratch directory";
  scratch_fd = high(open(scratch, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st;
  if (scratch_fd < 0 || fstat(scratch_fd, &st) != 0 || st.st_uid != geteuid()) return "the scratch directory is not the wrapper's";
  if (fchmod(scratch_fd, 0700) != 0) return "cannot protect the scratch directory";
  tmp_fd = own_dir(scratch_fd, "tmp", uid, gid);
  shm_fd = own_dir(scratch_fd, "shm", uid, gid);
  if (tmp_fd < 0 || shm_fd < 0) return "cannot make the private temporary folders";
  return NULL;
}

/* A real directory at p (not a link): a folder to cover; a missing one is left alone. */
static int is_dir(const char *p) {
  struct stat st;
  return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * Bind-mount the directory of fd onto dst (if dst is a directory); 0 on success. A bind
 * mount's source must be a mount of the caller's namespace: fd, opened before the
 * unshare, is in the host's, so the folder is opened again by its path (SCRATCH/name,
 * without following a link) and must be the same directory.
 */
static int bind_onto(int fd, const char *scratch, const char *name, const char *dst) {
  if (!is_dir(dst)) return 0;
  char path[4200], src[64];
  snprintf(path, sizeof path, "%s/%s", scratch, name);
  int again = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat was, now;
  if (again < 0) return -1;
  if (fstat(fd, &was) != 0 || fstat(again, &now) != 0 || was.st_dev != now.st_dev || was.st_ino != now.st_ino) {
    close(again);
    errno = ESTALE;
    return -1;
  }
  snprintf(src, sizeof src, "/proc/self/fd/%d", again);
  int r = mount(src, dst, NULL, MS_BIND, NULL);
  int e = errno;
  /* Hardening, best effort: nothing set-uid or a device node is usable from there. */
  if (r == 0) mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV, NULL);
  close(again);
  errno = e;
  return r;
}

/* A mount namespace of our own whose mounts never propagate to the host's; NULL or why not. */
static const char *own_mount_ns(void) {
  if (unshare(CLONE_NEWNS) != 0) return "the kernel refused a mount namespace";
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return "cannot make the mounts private";
  return NULL;
}

/* In the child, still root: cover /tmp, /var/tmp and /dev/shm with the job's own folders. */
static void private_tmp(const char *scratch) {
  const char *why = own_mount_ns(), *over = NULL;
  if (!why) {
    if (bind_onto(tmp_fd, scratch, "tmp", "/tmp") != 0) over = "/tmp";
    else if (bind_onto(tmp_fd, scratch, "tmp", "/var/tmp") != 0) over = "/var/tmp";
    else if (bind_onto(shm_fd, scratch, "shm", "/dev/shm") != 0) over = "/dev/shm";
  }
  if (why || over) {
    snprintf(tmp_note, sizeof tmp_note, "shared: %s%s (%s)", why ? why : "cannot bind-mount over ", why ? "" : over, strerror(errno));
    return;
  }
  setenv("TMPDIR", "/tmp", 1);
}

/* Whether this host lets the wrapper give jobs a private /tmp: prints "ok" or "no <why>". */
static int probe_private_tmp(void) {
  const char *why = own_mount_ns();
  if (!why && mount("/tmp", "/tmp", NULL, MS_BIND, NULL) != 0) why = "cannot bind-mount over /tmp";
  if (why) printf("no %s (%s)\n", why, strerror(errno));
  else printf("ok\n");
  return 0;
}

static int remove_entry(const char *p, const struct stat *sb, int flag, struct FTW *f) {
  (void)sb;
  (void)f;
  if (flag == FTW_DP || flag == FTW_D || flag == FTW_DNR) rmdir(p);
  else unlink(p);
  return 0;
}

/*
 * SCRATCH and all in it, after every process of the job was reaped: nothing of the job is
 * left to swap a directory for a link, and SCRATCH's parents are root's (nobody else
 * reaches it). Never follows a link, never leaves the file system.
 */
static void remove_scratch(const char *scratch) {
  if (scratch_fd < 0) return;
  nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

static int open_or(const char *name, int flags, int fd_err, const char *what) {
  int fd = name[0] ? open(name, flags | O_CLOEXEC, 0644) : open("/dev/null", flags | O_CLOEXEC);
  if (fd < 0) child_fail(fd_err, what, name);
  return fd;
}

int main(int argc, char **argv) {
  /* Copied, then removed from the environment the job would inherit. */
  char argpath[4200] = "";
  const char *from_env = getenv("CERES_WRAPPER_ARGS");
  if (from_env) snprintf(argpath, sizeof argpath, "%s", from_env);
  unsetenv("CERES_WRAPPER_ARGS");
  if (argc == 1 && argpath[0]) {
    fargv[0] = argv[0];
    if (!args_from_file(argpath, &argc)) {
      printf("error cannot read the wrapper's arguments: %s\n", strerror(errno));
      return 1;
    }
    argv = fargv;
  }
  if (argc == 2 && strcmp(argv[1], "--probe-private-tmp") == 0) return probe_private_tmp();
  if (argc != 16) {
    fprintf(stderr, "usage: %s DIR SESSION STDIN STDOUT STDERR JOIN WALL CPU MEMKB GRACE SAMPLEMS CGROUP MARK CRED SCRATCH\n", argv[0]);
    return 2;
  }
  dir = argv[1];
  const char *session = argv[2], *in = argv[3], *out = argv[4], *err = argv[5];
  int join = atoi(argv[6]);
  double wall = atof(argv[7]);
  long cpu = atol(argv[8]);
  long long memkb = atoll(argv[9]);
  double grace = atof(argv[10]);
  double sample_every = atof(argv[11]) / 1000.0;
  if (sample_every <= 0) sample_every = 1;
  cgroup = argv[12];
  const char *mark = argv[13];
  const char *cred = argv[14];
  const char *scratch = argv[15];
  uid_t as_uid = 0;
  gid_t as_gid = 0;
  int as_ngroups = 0;
  if (cred[0] && !parse_cred(cred, &as_uid, &as_gid, &as_ngroups)) {
    printf("error invalid account credentials: %s\n", cred);
    return 1;
  }

  signal(SIGPIPE, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  if (getsid(0) != getpid()) setsid();
  /* Blocked from the start: a cancel that arrives early waits for the main loop. */
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigprocmask(SIG_BLOCK, &set, &old);

  /* Claim DIR: link() fails if a pid file exists, so exactly one wrapper runs the job. */
  char ticks[32], line[96], tmp[4200], pidfile[4200];
  start_ticks(getpid(), ticks, sizeof ticks);
  snprintf(line, sizeof line, "%d %s\n", (int)getpid(), ticks);
  snprintf(tmp, sizeof tmp, "%s/.pid.%d", dir, (int)getpid());
  path_in(pidfile, sizeof pidfile, "pid");
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || write(fd, line, strlen(line)) != (ssize_t)strlen(line) || close(fd) != 0) {
    printf("error cannot write the pid file: %s\n", strerror(errno));
    return 1;
  }
  if (link(tmp, pidfile) != 0) {
    int e = errno;
    unlink(tmp);
    if (e == EEXIST) { printf("dup\n"); return 0; }
    printf("error cannot claim the job directory: %s\n", strerror(e));
    return 1;
  }
  unlink(tmp);
  printf("ok %d %s\n", (int)getpid(), ticks);
  fflush(stdout);
  /* Kept only when it is a file (Slurm's slurm.out): the fork launcher's pipe must see its end now. */
  struct stat out_st;
  if (fstat(1, &out_st) == 0 && S_ISREG(out_st.st_mode)) report = fcntl(1, F_DUPFD_CLOEXEC, 10);
  int devnull = open("/dev/null", O_RDWR);
  if (devnull >= 0) { dup2(devnull, 0); dup2(devnull, 1); dup2(devnull, 2); if (devnull > 2) close(devnull); }

#ifdef PR_SET_CHILD_SUBREAPER
  /* Orphans of the job are re-parented here, so they can be reaped and killed. */
  prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
  /* The job's cgroup: what the job cannot leave even when it kills this wrapper. */
  if (cgroup[0]) {
    char parent[4200];
    snprintf(parent, sizeof parent, "%s", cgroup);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) { *slash = 0; mkdir(parent, 0755); } /* removed when it was last empty */
    if (mkdir(cgroup, 0755) != 0 && errno != EEXIST) cgroup = "";
  }

  int errpipe[2], failpipe[2], notepipe[2];
  if (pipe2(errpipe, O_CLOEXEC) != 0) { errpipe[0] = -1; errpipe[1] = -1; }
  if (pipe2(failpipe, O_CLOEXEC) != 0) { failpipe[0] = -1; failpipe[1] = -1; }
  errpipe[0] = high(errpipe[0]);
  errpipe[1] = high(errpipe[1]);
  failpipe[0] = high(failpipe[0]);
  failpipe[1] = high(failpipe[1]);
  /* Private temporary folders: only for a job under an account (the folders are its). */
  notepipe[0] = notepipe[1] = -1;
  if (scratch[0] && cred[0]) {
    const char *why = prepare_scratch(scratch, as_uid, as_gid);
    if (why) snprintf(tmp_note, sizeof tmp_note, "shared: %s (%s)", why, strerror(errno));
    else if (pipe2(notepipe, O_CLOEXEC) == 0) { notepipe[0] = high(notepipe[0]); notepipe[1] = high(notepipe[1]); }
    else snprintf(tmp_note, sizeof tmp_note, "shared: no pipe to the job (%s)", strerror(errno));
  }
  char jobsh[4200];
  path_in(jobsh, sizeof jobsh, "job.sh");
  /* Opened here, as the wrapper's user: the job's shell reads it through the descriptor. */
  int script = high(open(jobsh, O_RDONLY | O_CLOEXEC));

  long long start_ms = wall_ms();
  double start = mono();
  int cgfd = cgroup[0] ? high(open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) : -1;
  int placed = 0;
  job = fork_into(cgfd, &placed);
  if (job == 0) {
    setpgid(0, 0);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (errpipe[0] >= 0) close(errpipe[0]);
    if (failpipe[0] >= 0) close(failpipe[0]);
    if (notepipe[0] >= 0) close(notepipe[0]);
    if (cgroup[0] && !placed) {
      char procs[4200];
      snprintf(procs, sizeof procs, "%s/cgroup.procs", cgroup);
      put(procs, "0"); /* best effort: the backend's sweep by mark and session still applies */
    }
    setenv("CERES_JOB_MARK", mark, 1);
    if (script < 0) child_fail(errpipe[1], "cannot open the job script", NULL);
    /* Set while still privileged: the job cannot raise its hard limit afterwards. */
    if (cpu > 0) {
      struct rlimit rl = { (rlim_t)cpu, (rlim_t)cpu + (rlim_t)(grace < 1 ? 1 : grace) };
      setrlimit(RLIMIT_CPU, &rl);
    }
    /* Root is needed for the mounts: before the switch. What happened goes to the wrapper. */
    if (notepipe[1] >= 0) {
      private_tmp(scratch);
      const char *note = tmp_note[0] ? tmp_note : "private";
      ssize_t ignored = write(notepipe[1], note, strlen(note));
      (void)ignored;
      close(notepipe[1]);
    }
    if (cred[0]) become(errpipe[1], as_uid, as_gid, as_ngroups);
    if (chdir(session) != 0) child_fail(errpipe[1], "cannot enter the session directory", NULL);
    int i = open_or(in, O_RDONLY, errpipe[1], "cannot open the stdin file");
    int o = open_or(out, O_WRONLY | O_CREAT | O_TRUNC, errpipe[1], "cannot open the stdout file");
    int e2 = join ? o : open_or(err, O_WRONLY | O_CREAT | O_TRUNC, errpipe[1], "cannot open the stderr file");
    dup2(i, 0);
    dup2(o, 1);
    dup2(e2, 2);
    /* 3: where job.sh reports why it could not run the job; closed for the executable. */
    if (failpipe[1] < 0 || dup2(failpipe[1], 3) != 3) child_fail(errpipe[1], "cannot set up the failure channel", NULL);
    char via[64];
    snprintf(via, sizeof via, "/proc/self/fd/%d", script);
    int flags = fcntl(script, F_GETFD);
    if (flags < 0 || fcntl(script, F_SETFD, flags & ~FD_CLOEXEC) != 0) child_fail(errpipe[1], "cannot pass the job script", NULL);
    close_others(script, errpipe[1]); /* errpipe[1] is close-on-exec: it goes at the exec */
    /* Without an account the path works as well (and needs no /proc). */
    execl("/bin/sh", "sh", cred[0] ? via : jobsh, (char *)NULL);
    child_fail(errpipe[1], "cannot start the job shell", NULL);
  }
  if (cgfd >= 0) close(cgfd);
  if (errpipe[1] >= 0) close(errpipe[1]);
  if (failpipe[1] >= 0) close(failpipe[1]);
  if (notepipe[1] >= 0) close(notepipe[1]);
  if (script >= 0) close(script);
  if (failpipe[0] >= 0) fcntl(failpipe[0], F_SETFL, O_NONBLOCK);
  if (job < 0) {
    set_reason("cannot start the job: fork failed");
  } else {
    setpgid(job, job);
  }

  int status = 0, done = job < 0;
  double next_sample = start + sample_every;
  int sampling = memkb > 0 || cpu > 0;
  while (!done) {
    double now = mono(), wake = now + 3600;
    if (wall > 0 && !stopping && start + wall < wake) wake = start + wall;
    if (stopping && !killed && kill_at < wake) wake = kill_at;
    if (sampling && !stopping && next_sample < wake) wake = next_sample;
    double dt = wake - now;
    if (dt < 0) dt = 0;
    struct timespec ts = { (time_t)dt, (long)((dt - (double)(time_t)dt) * 1e9) };
    siginfo_t info;
    int sig = sigtimedwait(&set, &info, &ts);
    if (sig == SIGTERM || sig == SIGINT) stop("cancelled", grace);
    pid_t w;
    int st;
    while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
      if (w == job) { status = st; done = 1; }
    }
    now = mono();
    if (done) break;
    if (wall > 0 && now >= start + wall) stop("wall time limit exceeded", grace);
    if (stopping && !killed && now >= kill_at) { kill(-job, SIGKILL); killed = 1; }
    if (sampling && !stopping && now >= next_sample) {
      struct sample s = sample_group();
      struct rusage gone;
      getrusage(RUSAGE_CHILDREN, &gone);
      double cpu_now = s.cpu_s + (double)gone.ru_utime.tv_sec + (double)gone.ru_utime.tv_usec / 1e6 +
                       (double)gone.ru_stime.tv_sec + (double)gone.ru_stime.tv_usec / 1e6;
      if (memkb > 0 && s.rss_kb > memkb) stop("memory limit exceeded", grace);
      else if (cpu > 0 && cpu_now > (double)cpu) stop("cpu time limit exceeded", grace);
      next_sample = now + sample_every;
    }
  }
  long long end_ms = wall_ms();
  double elapsed = mono() - start;
  if (job > 0) reap_all();
  /* What the child said about the temporary folders (it wrote before the exec). */
  if (notepipe[0] >= 0) {
    char note[sizeof tmp_note];
    ssize_t n = read(notepipe[0], note, sizeof note - 1);
    close(notepipe[0]);
    if (n > 0) { note[n] = 0; clean_line(note); snprintf(tmp_note, sizeof tmp_note, "%s", note); }
    else if (job > 0) snprintf(tmp_note, sizeof tmp_note, "shared: the job did not say");
  }
  remove_scratch(scratch);

  /* Why the job could not start (from the child), or what job.sh found wrong. */
  if (errpipe[0] >= 0) {
    char msg[600];
    ssize_t n = read(errpipe[0], msg, sizeof msg - 1);
    if (n > 0) { msg[n] = 0; clean_line(msg); set_reason(msg); }
    close(errpipe[0]);
  }
  /* Everything of the job is gone (reap_all): nothing holds the pipe open any more. */
  if (failpipe[0] >= 0) {
    char msg[600];
    ssize_t n = read(failpipe[0], msg, sizeof msg - 1);
    close(failpipe[0]);
    if (n > 0) {
      msg[n] = 0;
      msg[strcspn(msg, "\n")] = 0;
      clean_line(msg);
      if (msg[0]) set_reason(msg);
    }
  }

  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  double ut = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
  double kt = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
  long long maxrss = ru.ru_maxrss; /* KiB on Linux */

  int code = -1;
  const char *signame = "";
  if (job > 0 && WIFEXITED(status)) code = WEXITSTATUS(status);
  else if (job > 0 && WIFSIGNALED(status)) { code = 128 + WTERMSIG(status); signame = sig_name(WTERMSIG(status)); }
  if (job > 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU) set_reason("cpu time limit exceeded");
  if (cpu > 0 && ut + kt >= (double)cpu) set_reason("cpu time limit exceeded");
  if (memkb > 0 && maxrss > memkb) set_reason("memory limit exceeded");

  struct utsname un;
  const char *node = uname(&un) == 0 ? un.nodename : "localhost";
  char t0[32], t1[32];
  mds_time(start_ms, t0, sizeof t0);
  mds_time(end_ms, t1, sizeof t1);
  double cpu_pct = elapsed > 0 ? (ut + kt) * 100.0 / elapsed : 0;

  static char text[8192];
  int n = snprintf(text, sizeof text,
                   "nodename=%s\nWallTime=%.2fs\nUserTime=%.2fs\nKernelTime=%.2fs\nCPUUsage=%.0f%%\nMaxResidentMemory=%lldkB\n"
                   "LRMSStartTime=%s\nLRMSEndTime=%s\nexitcode=%d\n",
                   node, elapsed, ut, kt, cpu_pct, maxrss, t0, t1, code);
  if (reason[0] && n > 0 && (size_t)n < sizeof text) snprintf(text + n, sizeof text - (size_t)n, "LRMSMessage=%s\n", reason);
  if (write_atomic("diag", text) != 0) cannot_write("diag");

  snprintf(text, sizeof text,
           "exitcode=%d\nsignal=%s\nfailure=%s\nwalltime=%.3f\nusertime=%.3f\nkerneltime=%.3f\nmaxrss=%lld\nstart=%lld\nend=%lld\nnodename=%s\n",
           code, signame, reason, elapsed, ut, kt, maxrss, start_ms, end_ms, node);
  if (tmp_note[0]) {
    size_t used = strlen(text);
    snprintf(text + used, sizeof text - used, "tmp=%s\n", tmp_note);
  }
  if (write_atomic("status", text) != 0) {
    cannot_write("status");
    return ${STATUS_UNWRITTEN_EXIT};
  }
  return 0;
}
`;
