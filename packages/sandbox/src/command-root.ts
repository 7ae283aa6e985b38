// The root directory commands run in: the holder's view, but with every filesystem of the
// machine shown through a read-only overlay. A Unix socket is found by its inode, and an
// overlay's inodes are its own: connect() to a host socket through the overlay is refused
// (ECONNREFUSED), whatever the socket's permissions, while a socket a command makes in its
// sandbox, its /tmp or a writable path (bound as they are) answers as always. Without this, a
// service's socket anywhere the view shows (docker.sock, a database, a user's agent) answered
// a command with the network off.
//
// In a user namespace (a regular user's CLI) the mounts the namespace inherited from the machine
// are locked to it, and the kernel takes no mount as an overlay layer (nor binds it alone) while
// a locked mount sits inside it: the machine's `/` always has some (/proc, /sys, /dev). Such a
// mount is shown through a skeleton instead: a directory of its own whose entries are each an
// overlay of the entry (a bind for a file, the same link for a symlink), down to the directories
// that hold a locked mount, which are skeletons again. Its sockets, fifos and devices are left
// out. A bind of a mount with a locked mount inside it takes what is inside along (rbind).
import { readFileSync } from 'node:fs';
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

// Reads the view's mount table (in the order the mounts were made) and writes the plan that
// rebuilds what is visible of it under $R/r, a record a mount: "KIND SOURCE TARGET", paths as the
// mount table escapes them. KIND: overlay (a filesystem of the machine, read-only, with an empty
// directory as the second layer), bind, rbind (a bind with locked mounts inside it: they come
// along, and are not listed again), or split (a skeleton, see above; the record goes on with the
// mount's children, "L:path" for a locked one and "U:path" for the others). A mount hidden by one
// made later over it (a cover over the home, say) stays out. Bound: what is in IC_CMDROOT_KEEP
// (the writable paths) and at IC_CMDROOT_EXACT. Locked: a mount whose "device root mountpoint"
// is in IC_CMDROOT_LOCKED (the mounts of the namespace the holder was made from).
const PLAN = String.raw`
function within(a, b) { return b == a || a == "/" || substr(b, 1, length(a) + 1) == a "/" }
{
  n++; id[n] = $1; par[n] = $2; mp[n] = $5; key[n] = $3 " " $4 " " $5
  for (i = 7; $i != "-"; i++) ;
  fs[n] = $(i + 1); src[n] = $(i + 2); at[$1] = n
}
END {
  # From the environment: awk -v would turn the mount table's \040 escapes into spaces.
  root = ENVIRON["IC_CMDROOT_F"] "/r"
  np = split(ENVIRON["IC_CMDROOT_PSEUDO"], P, " "); for (k = 1; k <= np; k++) isPseudo[P[k]] = 1
  nk = split(ENVIRON["IC_CMDROOT_KEEP"], K, "\n"); nx = split(ENVIRON["IC_CMDROOT_EXACT"], X, "\n")
  nl = split(ENVIRON["IC_CMDROOT_LOCKED"], L, "\n"); for (k = 1; k <= nl; k++) isLocked[L[k]] = 1
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
  for (s = 1; s <= n; s++) if (par[s] in at) {
    c = at[par[s]]; locked = isLocked[key[s]]
    kids[c] = kids[c] " " (locked ? "L:" : "U:") mp[s]
    if (locked) lockedKid[c] = 1
  }
  self = ENVIRON["IC_CMDROOT_F"]
  for (c = 1; c <= n; c++) {
    if (hidden[c] || over[c] || within(self, mp[c])) continue
    bind = isPseudo[fs[c]] || src[c] ~ /^infinity-code-/ || mp[c] ~ /[\\:,]/
    for (k = 1; k <= nk && !bind; k++) if (K[k] != "" && within(K[k], mp[c])) bind = 1
    for (k = 1; k <= nx && !bind; k++) if (X[k] == mp[c]) bind = 1
    kind[c] = bind ? (lockedKid[c] ? "rbind" : "bind") : (lockedKid[c] ? "split" : "overlay")
  }
  do {
    changed = 0
    for (c = 1; c <= n; c++)
      if (!under[c] && (par[c] in at) && (kind[at[par[c]]] == "rbind" || under[at[par[c]]])) { under[c] = 1; changed = 1 }
  } while (changed)
  for (c = 1; c <= n; c++)
    if (kind[c] != "" && !under[c]) print kind[c], mp[c], root (mp[c] == "/" ? "" : mp[c]) (kind[c] == "split" ? kids[c] : "")
}
`;

// The plan's records, skeletons expanded, as an fstab. An overlay whose target is in
// IC_CMDROOT_NOBIND (the kernel refused it) is bound instead. A skeleton is bound read-only: in a
// user namespace, what the holder makes is the commands' own to change.
const RENDER = String.raw`
BEGIN { nb = split(ENVIRON["IC_CMDROOT_NOBIND"], B, "\n"); for (k = 1; k <= nb; k++) noOverlay[B[k]] = 1; opts = ENVIRON["IC_CMDROOT_OPTS"] }
$1 == "overlay" && !($3 in noOverlay) { print "infinity-code-ro", $3, "overlay", "ro," opts "lowerdir=" $2 ":e", 0, 0; next }
{ print $2, $3, "none", ($1 == "rbind" ? "rbind" : $1 == "skeleton" ? "bind,ro" : "bind"), 0, 0 }
`;

/**
 * The holder's shell keeps the commands' mount namespace open on this descriptor (dash takes
 * single-digit ones; the anchors are 5-9, see ns-holder.ts).
 */
export const COMMAND_NS_FD = 4;

// Runs in the holder's namespace, after the view is complete (its overlays mounted).
// expand: the records of one skeleton's entries ($1 the directory as the mount table writes it,
// $2 as it is, $3 the skeleton directory, relative to $R, $4 the target as written), with $all the mount's
// children and $locked the locked ones. An entry that is a child's mount point is left empty for
// that child's own record; one that holds a locked child is a skeleton again; a name with a space,
// a tab, a newline or a backslash is left out (the records are written as the mount table writes
// paths, and these would need escaping). printf, not echo: dash's echo reads the mount table's
// escapes (\040) as its own.
// Then one mount(8) run makes every mount of the table (see overlay-mounts.ts for why, and why it
// must say "successfully mounted" as often as the table has lines). An overlay the kernel refuses
// (a filesystem it cannot take as a layer, or one stacked too deep, as in a sandbox's own sandbox)
// is bound instead, in a second run from scratch. Then a mount namespace of its own whose root is
// that tree (the view's other mounts gone from it, so a command's bubblewrap copies only what it
// shows), held by a process that sleeps in it and opened on COMMAND_NS_FD: commands join it, our
// git stays in the view, from which the tree is then unmounted (each bubblewrap our git starts
// copies the view's mounts).
const SCRIPT = `
R="$IC_CMDROOT"; F="$IC_CMDROOT_F"
tab=$(printf '\\t'); nl='
'
mount -n -t tmpfs -o size=1m,mode=0755 infinity-code-cmdroot "$R"
cd "$R"
expand() {
  local w="$1" d="$2" s="$3" t="$4" e n c k
  if [ "$w" = / ]; then w=; d=; fi
  for e in "$d"/* "$d"/.[!.]* "$d"/..?*; do
    if [ ! -e "$e" ] && [ ! -L "$e" ]; then continue; fi
    n=\${e##*/}
    case $n in *" "*|*"$tab"*|*"$nl"*|*\\\\*) continue ;; esac
    k=
    for c in $all; do if [ "$c" = "$w/$n" ]; then k=point; fi; done
    if [ -z "$k" ]; then for c in $locked; do case $c in "$w/$n"/*) k=inner ;; esac; done; fi
    if [ "$k" = point ]; then
      if [ -d "$e" ]; then dirs="$dirs $s/$n"; else files="$files $s/$n"; fi
    elif [ "$k" = inner ]; then
      dirs="$dirs $s/$n"
      expand "$w/$n" "$e" "$s/$n" "$t/$n"
    elif [ -L "$e" ]; then
      printf '%s\\n%s\\n' "$s/$n" "$e" >> links
    elif [ -d "$e" ]; then
      dirs="$dirs $s/$n"
      case $n in *[:,]*) k=bind ;; *) k=overlay ;; esac
      printf '%s %s %s\\n' "$k" "$w/$n" "$t/$n"
    elif [ -f "$e" ]; then
      files="$files $s/$n"
      printf 'bind %s %s\\n' "$w/$n" "$t/$n"
    fi
  done
}
awk "$IC_CMDROOT_PLAN" /proc/self/mountinfo > "$R/plan"
: > links
k=0; dirs="r e s"; files=
while read -r kind src tgt rest; do
  if [ "$kind" = split ]; then
    k=$((k+1)); dirs="$dirs s/$k"
    printf 'skeleton %s %s\\n' "$F/s/$k" "$tgt"
    all=; locked=
    for c in $rest; do
      all="$all \${c#?:}"
      case $c in L:*) locked="$locked \${c#L:}" ;; esac
    done
    expand "$src" "$(printf '%b' "$src")" "s/$k" "$tgt"
  else
    printf '%s %s %s\\n' "$kind" "$src" "$tgt"
  fi
done < "$R/plan" > "$R/records"
# The skeletons, made at once (a process each would cost more than all the rest): the names are
# free of blanks, but not of glob characters. The links are copied a directory at a time.
set -f
mkdir $dirs
for f in $files; do : > "$f"; done
set +f
at=; set --
while read -r link && read -r e; do
  if [ "\${link%/*}" != "$at" ] && [ $# -gt 0 ]; then cp -P -t "$at" "$@"; set --; fi
  at=\${link%/*}; set -- "$@" "$e"
done < links
if [ $# -gt 0 ]; then cp -P -t "$at" "$@"; fi
nobind=
for try in 1 2; do
  IC_CMDROOT_NOBIND=$nobind awk "$IC_CMDROOT_RENDER" "$R/records" > "$R/fstab"
  want=$(wc -l < "$R/fstab")
  out=$(LC_ALL=C mount -n -a -v -T "$R/fstab" 2>&1) || true
  n=0; rest=$out
  while :; do
    case $rest in *": successfully mounted"*) rest=\${rest#*": successfully mounted"}; n=$((n+1)) ;; *) break ;; esac
  done
  [ "$n" -ne "$want" ] || break
  [ "$try" = 1 ] || { echo "the commands' root could not be built: $out" >&2; exit 1; }
  nobind=$(awk '$3 == "overlay" { print $2 }' "$R/fstab")
  umount -n -l "$R/r" 2>/dev/null || true
done
mkfifo "$R/sync"
unshare --mount --propagation private sh -c 'exec 3>"$1/sync"; cd "$1/r" && pivot_root . . && umount -l . && echo ok >&3 && exec 3>&- && exec sleep 2147483647' commands-root "$R" &
read ok < "$R/sync"
[ "$ok" = ok ] || { echo "the commands' mount namespace could not be made" >&2; exit 1; }
exec ${COMMAND_NS_FD}</proc/$!/ns/mnt
umount -n -l "$R/r"
`;

/**
 * The mounts this process sees, as "device root mountpoint" (the mount table's escapes kept): in
 * a user namespace the holder makes from here, their copies are locked.
 */
function inheritedMounts(): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ').slice(2, 5).join(' '));
}

/** The holder's setup step that builds the commands' root, and the environment it reads. */
export function commandRootStep(view: ViewSpec): { script: string; env: Record<string, string> } {
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
      IC_CMDROOT_LOCKED: view.userns ? inheritedMounts().join('\n') : '',
      IC_CMDROOT_PLAN: PLAN,
      IC_CMDROOT_RENDER: RENDER,
    },
  };
}
