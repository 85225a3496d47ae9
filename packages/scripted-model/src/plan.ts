import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { resultFileOf, type ScriptedAction } from './script.js';

/** One tool call as the wire sees it: a JSON input, or free text for a freeform (custom) tool. */
export interface ToolInvocation {
  readonly tool: string;
  readonly input: Record<string, unknown> | string;
  /** OpenAI Responses only: a `custom` (freeform) tool rather than a `function`. */
  readonly freeform?: boolean;
}

/** What the conversation offers the model, as far as planning needs it. */
export interface PlanContext {
  /** The agent's working directory (absolute), when known. */
  readonly workdir: string | undefined;
  /** The allium-loop prompt (for the result file path). */
  readonly prompt: string;
  /** Tool names offered in the request, and which of them are freeform. */
  readonly tools: ReadonlyMap<string, 'function' | 'custom'>;
}

/** A planning failure: the script asks for something this conversation cannot do. */
export class PlanError extends Error {}

function absolute(path: string, context: PlanContext): string {
  if (isAbsolute(path)) return path;
  if (context.workdir === undefined)
    throw new PlanError(`cannot resolve ${path}: the request names no working directory`);
  return join(context.workdir, path);
}

function resultPath(context: PlanContext): string {
  const file = resultFileOf(context.prompt);
  if (file === undefined)
    throw new PlanError('the script writes a result but the prompt names no result file');
  return file;
}

/**
 * Claude Code's tools (`Read`, `Write`, `Edit`, `Bash` with `file_path`, `old_string` …), or opencode's, which go
 * over the same Messages API (`read`, `write`, `edit`, `bash` with `filePath`, `oldString` …). Read comes before
 * Write or Edit: both CLIs refuse to change a file they have not read.
 */
export function planForClaude(actions: readonly ScriptedAction[], context: PlanContext): ToolInvocation[] {
  const opencode = context.tools.has('write') && !context.tools.has('Write');
  const name = (tool: 'Read' | 'Write' | 'Edit' | 'Bash'): string => (opencode ? tool.toLowerCase() : tool);
  const fileKey = opencode ? 'filePath' : 'file_path';
  const out: ToolInvocation[] = [];
  for (const action of actions) {
    if (action.kind === 'shell') {
      out.push({
        tool: name('Bash'),
        input: opencode
          ? { command: action.command }
          : { command: action.command, description: 'Run a command' },
      });
      continue;
    }
    const path = absolute(action.kind === 'result' ? resultPath(context) : action.path, context);
    out.push({ tool: name('Read'), input: { [fileKey]: path } });
    if (action.kind === 'edit')
      out.push({
        tool: name('Edit'),
        input: opencode
          ? { filePath: path, oldString: action.oldText, newString: action.newText }
          : { file_path: path, old_string: action.oldText, new_string: action.newText },
      });
    else
      out.push({
        tool: name('Write'),
        input: {
          [fileKey]: path,
          content: action.kind === 'result' ? `${JSON.stringify(action.value, null, 2)}\n` : action.content,
        },
      });
  }
  return out;
}

/** Quotes a string for a POSIX shell. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function codexShell(command: string, context: PlanContext): ToolInvocation {
  if (context.tools.has('exec_command')) return { tool: 'exec_command', input: { cmd: command } };
  if (context.tools.has('shell_command')) return { tool: 'shell_command', input: { command } };
  if (context.tools.has('shell')) return { tool: 'shell', input: { command: ['bash', '-lc', command] } };
  throw new PlanError(`the request offers no shell tool (tools: ${[...context.tools.keys()].join(', ')})`);
}

function applyPatch(patch: string, context: PlanContext): ToolInvocation | undefined {
  const kind = context.tools.get('apply_patch');
  if (kind === 'custom') return { tool: 'apply_patch', input: patch, freeform: true };
  if (kind === 'function') return { tool: 'apply_patch', input: { input: patch } };
  return undefined;
}

function patchLines(text: string, prefix: string): string {
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  return body
    .split('\n')
    .map((line) => `${prefix}${line}`)
    .join('\n');
}

/**
 * Codex's tools: `apply_patch` to add a new file or edit one (when offered), the shell tool otherwise. A
 * write over an existing file goes through the shell (`printf` of the exact bytes), since a patch can only
 * replace lines it quotes.
 */
export function planForCodex(actions: readonly ScriptedAction[], context: PlanContext): ToolInvocation[] {
  return actions.map((action) => {
    if (action.kind === 'shell') return codexShell(action.command, context);
    if (action.kind === 'edit') {
      const patch = [
        '*** Begin Patch',
        `*** Update File: ${action.path}`,
        '@@',
        patchLines(action.oldText, '-'),
        patchLines(action.newText, '+'),
        '*** End Patch',
      ].join('\n');
      const viaPatch = applyPatch(`${patch}\n`, context);
      if (viaPatch !== undefined) return viaPatch;
      const args = JSON.stringify([action.path, action.oldText, action.newText]);
      const js =
        'const fs=require("fs");const [p,a,b]=JSON.parse(process.argv[1]);' +
        'const t=fs.readFileSync(p,"utf8");if(!t.includes(a))process.exit(3);fs.writeFileSync(p,t.replace(a,b));';
      return codexShell(`node -e ${shellQuote(js)} ${shellQuote(args)}`, context);
    }
    const path = action.kind === 'result' ? resultPath(context) : action.path;
    const content = action.kind === 'result' ? `${JSON.stringify(action.value, null, 2)}\n` : action.content;
    const exists = context.workdir !== undefined && existsSync(absolute(path, context));
    if (!exists && content.endsWith('\n')) {
      const viaPatch = applyPatch(
        `*** Begin Patch\n*** Add File: ${path}\n${patchLines(content, '+')}\n*** End Patch\n`,
        context,
      );
      if (viaPatch !== undefined) return viaPatch;
    }
    return codexShell(
      `mkdir -p ${shellQuote(dirname(path))} && printf '%s' ${shellQuote(content)} > ${shellQuote(path)}`,
      context,
    );
  });
}

/**
 * Gemini CLI's tools: `write_file` (`file_path`, `content`) for a whole file and the result, `replace`
 * (`file_path`, `old_string`, `new_string`, `instruction`) for an edit, `run_shell_command` (`command`) for a
 * command. Paths are absolute, resolved against the workspace directory the CLI announces.
 */
export function planForGemini(actions: readonly ScriptedAction[], context: PlanContext): ToolInvocation[] {
  return actions.map((action) => {
    if (action.kind === 'shell')
      return { tool: 'run_shell_command', input: { command: action.command, description: 'Run a command' } };
    if (action.kind === 'edit')
      return {
        tool: 'replace',
        input: {
          file_path: absolute(action.path, context),
          instruction: 'Apply the scripted edit.',
          old_string: action.oldText,
          new_string: action.newText,
        },
      };
    const path = absolute(action.kind === 'result' ? resultPath(context) : action.path, context);
    const content = action.kind === 'result' ? `${JSON.stringify(action.value, null, 2)}\n` : action.content;
    return { tool: 'write_file', input: { file_path: path, content } };
  });
}
