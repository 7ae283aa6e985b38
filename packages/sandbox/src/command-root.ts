// The root directory commands run in: the holder's view, but with every filesystem of the
// machine shown through a read-only overlay. A Unix socket is found by its inode, and an
// overlay's inodes are its own: connect() to a host socket through the overlay is refused
// (ECONNREFUSED), whatever the socket's permissions, while a socket a command makes in its
// sandbox, its /tmp or a writable path (bound as they are) answers as always. Without this, a
// service's socket anywhere the view shows (docker.sock, a database, a user's agent) answered
// a command with the network off.
import path from 'node:path';
import type { ViewSpec } from './confined-view.js';
import { fstabField } from './overlay-mounts.js';

/** Where, in the holder's view, the commands' root is built: inside the state dir's cover. */
export function commandRootDir(stateDir: string): string {
  return path.join(stateDir, '.command-root');
}


// Filesystems that hold no sockets of a service, or that an overlay cannot take as a layer:
// bound as they are.
const PSEUDO = [
  'proc', 'sysfs', 'cgroup', 'cgroup2', 'devtmpfs', 'devpts', 'mqueue', 'securityfs', 'debugfs', 'tracefs', 'bpf', 'pstore',
  'hugetlbfs', 'fusectl', 'configfs', 'binfmt_misc', 'autofs', 'nsfs', 'efivarfs', 'rpc_pipefs', 'selinuxfs',
];

// Reads the view's mount table (in the order the mounts were made) and writes an fstab that
// rebuilds what is visible of it under $R/r: each mount a bind of itself, or, for a filesystem
// of the machine, a read-only overlay of it (lower layers: it and an empty directory). A mount
// hidden by one made later over it (a cover over the home, say) stays out. Bound: what is in
// IC_CMDROOT_KEEP (the writable paths), at IC_CMDROOT_EXACT, and IC_CMDROOT_NOBIND's targets
// (where an overlay failed).
const AWK = String.raw`
function within(a, b) { return b == a || a == "/" || substr(b, 1, length(a) + 1) == a "/" }
{
  n++; id[n] = $1; par[n] = $2; mp[n] = $5
  for (i = 7; $i != "-"; i++) ;
  fs[n] = $(i + 1); src[n] = $(i + 2); at[$1] = n
}
END {
  # From the environment: awk -v would turn the mount table's \040 escapes into spaces.
  root = ENVIRON["IC_CMDROOT_F"] "/r"; opts = ENVIRON["IC_CMDROOT_OPTS"]
  np = split(ENVIRON["IC_CMDROOT_PSEUDO"], P, " "); for (k = 1; k <= np; k++) isPseudo[P[k]] = 1
  nk = split(ENVIRON["IC_CMDROOT_KEEP"], K, "\n"); nb = split(ENVIRON["IC_CMDROOT_NOBIND"], B, "\n")
  nx = split(ENVIRON["IC_CMDROOT_EXACT"], X, "\n")
  for (c = 1; c <= n; c++)
    for (s = 1; s <= n; s++) {
      if (s == c) continue
      # A later mount beside it at or above its path hides it, and what is mounted in it.
      if (s > c && par[s] == par[c] && within(mp[s], mp[c])) hidden[c] = 1
      # One mounted over its own root shows in its place: it shows nothing itself.
      if (par[s] == id[c] && mp[s] == mp[c]) over[c] = 1
    }
  do {
    changed = 0
    for (c = 1; c <= n; c++)
      if (!hidden[c] && (par[c] in at) && hidden[at[par[c]]]) { hidden[c] = 1; changed = 1 }
  } while (changed)
  self = ENVIRON["IC_CMDROOT_F"]
  for (c = 1; c <= n; c++) {
    if (hidden[c] || over[c] || within(self, mp[c])) continue
    t = root (mp[c] == "/" ? "" : mp[c])
    bind = isPseudo[fs[c]] || src[c] ~ /^infinity-code-/ || mp[c] ~ /[\\:,]/
    for (k = 1; k <= nk && !bind; k++) if (K[k] != "" && within(K[k], mp[c])) bind = 1
    for (k = 1; k <= nx && !bind; k++) if (X[k] == mp[c]) bind = 1
    for (k = 1; k <= nb && !bind; k++) if (B[k] == t) bind = 1
    if (bind) print mp[c], t, "none", "bind", 0, 0
    else print "infinity-code-ro", t, "overlay", "ro," opts "lowerdir=" mp[c] ":e", 0, 0
  }
}
`;

/**
 * The holder's shell keeps the commands' mount namespace open on this descriptor (dash takes
 * single-digit ones; the anchors are 5-9, see ns-holder.ts).
 */
export const COMMAND_NS_FD = 4;

// Runs in the holder's namespace, after the view is complete (its overlays mounted). One
// mount(8) run makes every mount of the table (see overlay-mounts.ts for why, and why it must say
// "successfully mounted" as often as the table has lines). An overlay the kernel refuses (a
// filesystem it cannot take as a layer, or one stacked too deep, as in a sandbox's own sandbox)
// is bound instead, in a second run from scratch. Then a mount namespace of its own whose root is
// that tree (the view's other mounts gone from it, so a command's bubblewrap copies only what it
// shows), held by a process that sleeps in it and opened on COMMAND_NS_FD: commands join it, our
// git stays in the view, from which the tree is then unmounted (each bubblewrap our git starts
// copies the view's mounts).
const SCRIPT = `
R="$IC_CMDROOT"
mount -n -t tmpfs -o size=1m,mode=0755 infinity-code-cmdroot "$R"
mkdir "$R/r" "$R/e"
cd "$R"
nobind=
for try in 1 2; do
  IC_CMDROOT_NOBIND=$nobind awk "$IC_CMDROOT_AWK" /proc/self/mountinfo > "$R/fstab"
  want=$(wc -l < "$R/fstab")
  out=$(LC_ALL=C mount -n -a -v -T "$R/fstab" 2>&1) || true
  n=0; rest=$out
  while :; do
    case $rest in *": successfully mounted"*) rest=\${rest#*": successfully mounted"}; n=$((n+1)) ;; *) break ;; esac
  done
  [ "$n" -ne "$want" ] || break
  [ "$try" = 1 ] || { echo "the commands' root could not be built: $out" >&2; exit 1; }
  nobind=$(awk '$3 == "overlay" { print $2 }' "$R/fstab")
  umount -n -R "$R/r" 2>/dev/null || true
done
mkfifo "$R/sync"
unshare --mount --propagation private sh -c 'exec 3>"$1/sync"; cd "$1/r" && pivot_root . . && umount -l . && echo ok >&3 && exec 3>&- && exec sleep 2147483647' commands-root "$R" &
read ok < "$R/sync"
[ "$ok" = ok ] || { echo "the commands' mount namespace could not be made" >&2; exit 1; }
exec ${COMMAND_NS_FD}</proc/$!/ns/mnt
umount -n -R "$R/r"
`;

/**
 * Whether the holder of `view` builds a commands' root. Not in a user namespace: there the mounts
 * the namespace inherited are locked, and the kernel clones none that has locked mounts in it (the
 * machine's `/`, with /proc and /sys), as an overlay's layer or as a bind. There commands are the
 * user, no more: a socket only that user or anyone may use, outside the covered /run, /var/run,
 * home and /tmp, stays reachable (README, known limits).
 */
export function buildsCommandRoot(view: ViewSpec): boolean {
  return !view.userns;
}

/** The holder's setup step that builds the commands' root, and the environment it reads. */
export function commandRootStep(view: ViewSpec): { script: string; env: Record<string, string> } {
  if (!buildsCommandRoot(view)) return { script: '', env: {} };
  // Bound as they are: the writable paths and what is in them, and the private /tmp and /dev/shm.
  const keep = [...view.writable, ...view.extraWritable].map(fstabField);
  return {
    script: SCRIPT,
    env: {
      IC_CMDROOT: commandRootDir(view.stateDir),
      IC_CMDROOT_F: fstabField(commandRootDir(view.stateDir)),
      IC_CMDROOT_KEEP: keep.join('\n'),
      IC_CMDROOT_EXACT: ['/tmp', '/dev/shm'].join('\n'),
      IC_CMDROOT_OPTS: view.userns ? 'userxattr,' : '',
      IC_CMDROOT_PSEUDO: PSEUDO.join(' '),
      IC_CMDROOT_AWK: AWK,
    },
  };
}
