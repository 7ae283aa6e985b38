import { Text } from 'ink';
import type { ReviewRequest } from './controller.js';

const NAMED = 3;

/** "a.ts, b.ts, c.ts and 2 more". */
export function nameFiles(paths: readonly string[], named = NAMED): string {
  const shown = paths.slice(0, named).join(', ');
  return paths.length > named ? `${shown} and ${paths.length - named} more` : shown;
}

/** The files the user changed in the working tree since the sandboxes' base: the agent can't see those yet. */
export function UserEdits({ paths }: { paths: string[] }) {
  if (paths.length === 0) return null;
  const files = paths.length === 1 ? '1 file' : `${paths.length} files`;
  return (
    <Text color="yellow" wrap="truncate-end">
      ✎ You edited {files} since the session began ({nameFiles(paths)}); the agent still works on the old version: /refresh to give it yours.
    </Text>
  );
}

/** The files of a diff under review that the user edited too, and what that means for this review. */
export function editWarning(review: Pick<ReviewRequest, 'kind' | 'diff'>, userEdited: readonly string[]): { files: string[]; text: string } | undefined {
  const edited = new Set(userEdited);
  const files = review.diff.files.map((f) => f.path).filter((p) => edited.has(p));
  if (files.length === 0) return undefined;
  const which = nameFiles(files);
  const text =
    review.kind === 'working-tree'
      ? `You edited ${which} yourself since the session began: applying merges 3-way, and may leave conflict markers there.`
      : `You edited ${which} yourself since the session began: these changes were made on the older version (/refresh gives the agent yours).`;
  return { files, text };
}
