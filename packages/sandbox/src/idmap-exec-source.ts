// The C source of idmap-exec (see command-user.ts). A string, so that it travels with the bundled
// CLI: the helper is compiled on the machine it runs on.
export const IDMAP_EXEC_SOURCE = String.raw`/*
 * idmap-exec: runs a program (a sandbox holder's bubblewrap) in a mount namespace of its own in
 * which the given directories are idmapped: what the disk records as owned by uid/gid 0 shows as
 * owned by the command user (argv[1]), and the reverse; every other id stays itself. Commands then
 * run as that unprivileged user and still own the repository's and the sandbox's files, while the
 * disk keeps root's ownership. Needs root and a kernel with idmapped mounts (5.19 for overlayfs
 * on idmapped layers, 6.3 for tmpfs).
 *
 *   idmap-exec <uid> <dir>... -- <program> [args...]    (?<dir>: optional, see idmap_dir)
 *   idmap-exec <uid> --probe <dir>      exits 0 when <dir> can be idmapped here
 *
 * C because Node cannot call open_tree, mount_setattr or move_mount, and Debian 12's mount(8)
 * has no X-mount.idmap.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

struct idmap_attr {
  unsigned long long attr_set, attr_clr, propagation, userns_fd;
};

static void fail(const char *what, const char *detail) {
  fprintf(stderr, "idmap-exec: %s%s%s: %s\n", what, detail ? " " : "", detail ? detail : "", strerror(errno));
  exit(1);
}

/* A user namespace that maps 0 <-> uid and every other id to itself: the idmapping's source. */
static int mapping_userns(unsigned long uid) {
  int gate[2], ready[2];
  if (pipe2(gate, O_CLOEXEC) || pipe2(ready, O_CLOEXEC)) fail("pipe", NULL);
  pid_t child = fork();
  if (child < 0) fail("fork", NULL);
  if (child == 0) {
    char b = 0;
    close(gate[1]);
    close(ready[0]);
    if (unshare(CLONE_NEWUSER)) _exit(1);
    if (write(ready[1], &b, 1) != 1) _exit(1);
    if (read(gate[0], &b, 1) < 0) _exit(1);
    _exit(0);
  }
  close(gate[0]);
  close(ready[1]);
  char b;
  if (read(ready[0], &b, 1) != 1) {
    errno = EPERM;
    fail("unshare(CLONE_NEWUSER)", NULL);
  }
  char map[256];
  snprintf(map, sizeof map, "0 %lu 1\n1 1 %lu\n%lu 0 1\n%lu %lu %lu\n", uid, uid - 1, uid, uid + 1, uid + 1, 4294967294UL - uid);
  const char *files[] = {"uid_map", "gid_map"};
  char p[64];
  for (int i = 0; i < 2; i++) {
    snprintf(p, sizeof p, "/proc/%d/%s", (int)child, files[i]);
    int fd = open(p, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, map, strlen(map)) != (ssize_t)strlen(map)) fail("writing", p);
    close(fd);
  }
  snprintf(p, sizeof p, "/proc/%d/ns/user", (int)child);
  int ns = open(p, O_RDONLY | O_CLOEXEC);
  if (ns < 0) fail("opening", p);
  close(gate[1]);
  waitpid(child, NULL, 0);
  return ns;
}

/*
 * Mounts an idmapped copy of dir (with its submounts where their filesystems allow) over it. An
 * optional dir (one only read) that cannot be idmapped is left as it is.
 */
static void idmap_dir(const char *dir, int userns, int optional) {
  struct idmap_attr attr = {MOUNT_ATTR_IDMAP, 0, 0, (unsigned long long)userns};
  int tree = syscall(SYS_open_tree, AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (tree < 0) {
    if (optional) return;
    fail("cloning", dir);
  }
  if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr)) {
    /* A submount on a filesystem without idmapped mounts: the directory's own mount alone. */
    close(tree);
    tree = syscall(SYS_open_tree, AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (tree < 0) fail("cloning", dir);
    if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr)) {
      if (optional) {
        close(tree);
        return;
      }
      fail("idmapping (no idmapped mounts on its filesystem or in this kernel)", dir);
    }
  }
  if (syscall(SYS_move_mount, tree, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH)) fail("mounting", dir);
  close(tree);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: idmap-exec <uid> <dir>... -- <program> [args...] | idmap-exec <uid> --probe <dir>\n");
    return 2;
  }
  char *end;
  unsigned long uid = strtoul(argv[1], &end, 10);
  if (*end || uid < 2 || uid > 4000000000UL) {
    fprintf(stderr, "idmap-exec: bad uid %s\n", argv[1]);
    return 2;
  }
  /* The working directory, found again once mounted over: the idmapped copy where it is one. */
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) fail("getcwd", NULL);
  if (unshare(CLONE_NEWNS)) fail("unshare(CLONE_NEWNS)", NULL);
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) fail("making / private", NULL);
  int userns = mapping_userns(uid);
  if (strcmp(argv[2], "--probe") == 0) {
    struct stat st;
    idmap_dir(argv[3], userns, 0);
    if (stat(argv[3], &st)) fail("stat", argv[3]);
    return st.st_uid == (uid_t)uid || st.st_uid != 0 ? 0 : 1;
  }
  int i = 2;
  for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
    if (argv[i][0] == '?') idmap_dir(argv[i] + 1, userns, 1);
    else idmap_dir(argv[i], userns, 0);
  }
  close(userns);
  if (chdir(cwd)) fail("chdir", cwd);
  if (i + 1 >= argc) {
    fprintf(stderr, "idmap-exec: no program after --\n");
    return 2;
  }
  execvp(argv[i + 1], argv + i + 1);
  fail("running", argv[i + 1]);
  return 1;
}
`;
