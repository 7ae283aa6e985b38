// From what the user typed to what the model is sent: a project command expanded, the files its
// `@` mentions name attached. Both front ends send through these.
import { attachMentions, attachmentNotes } from './mentions.js';
import { expandCommand, findProjectCommand, type ProjectCommands } from './project-commands.js';
import type { PromptWorkspace } from './prompt-workspace.js';

export interface PreparedMessage {
  /** What the model is sent. */
  message: string;
  /** One line each, for the user: what was attached, what was not and why. */
  notes: string[];
}

/** The files `text` mentions, attached (paths from the directory the user works in first). */
export function withAttachments(text: string, workspace: Pick<PromptWorkspace, 'read' | 'base'>): PreparedMessage {
  const r = attachMentions(text, (path) => workspace.read(path), undefined, workspace.base);
  return { message: r.message, notes: attachmentNotes(r) };
}

/**
 * A headless task: `/name args` naming a project command is that command's prompt. Any other
 * text, `/etc/hosts` or a name no command has included, is sent as written (headless has no
 * built-in commands); `warnings` then say why a name the user may have meant isn't a command.
 */
export function prepareTask(task: string, workspace: Pick<PromptWorkspace, 'read' | 'commands' | 'base'>): PreparedMessage & { warnings: string[] } {
  const name = /^\/([A-Za-z0-9_][\w.:-]*)(?:\s|$)/.exec(task.trim())?.[1];
  if (name === undefined) return { ...withAttachments(task, workspace), warnings: [] };
  const project = workspace.commands();
  const found = findProjectCommand(task, project.commands);
  if (found) return { ...withAttachments(expandCommand(found.command, found.args), workspace), warnings: [] };
  return { ...withAttachments(task, workspace), warnings: unknownCommandWarnings(name, project) };
}

/** Why `/name` ran no command: its file is wrong, or no file defines it (with those that exist). */
export function unknownCommandWarnings(name: string, project: ProjectCommands): string[] {
  const broken = project.problems.filter((p) => p.name === name).map((p) => p.message);
  if (broken.length > 0) return [...broken, `/${name} was sent to the model as written.`];
  if (project.commands.length === 0) return [];
  const names = project.commands.map((c) => `/${c.name}`).join(', ');
  return [`/${name} is not a project command (${names}); it was sent to the model as written.`];
}
