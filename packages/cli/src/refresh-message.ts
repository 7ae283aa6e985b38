/** What `/refresh` did, for the transcript. */
export function describeRefresh(r: { files: readonly string[]; overridden: readonly string[] }): string {
  if (r.files.length === 0) return 'Nothing to refresh: your working tree matches what the agent sees.';
  const kept = new Set(r.overridden);
  const taken = r.files.filter((f) => !kept.has(f));
  const lines: string[] = [];
  if (taken.length > 0) lines.push(`The agent now sees your version of ${list(taken)}.`);
  if (r.overridden.length > 0) {
    lines.push(
      `The agent had changed ${list(r.overridden)} itself: its version stays in its sandbox, and a review of that ` +
        'file shows its changes against yours.',
    );
  }
  return lines.join('\n');
}

function list(paths: readonly string[]): string {
  const named = paths.slice(0, 5).join(', ');
  return paths.length > 5 ? `${named} and ${paths.length - 5} more` : named;
}
