/** Child process for the read-only `.gitignore` test: prints the JSON outcome of `ensureGitIgnored(argv[2])`. */
import { ensureGitIgnored } from '../ensure-git-ignored.js';

const [projectDir] = process.argv.slice(2);
if (projectDir === undefined) throw new Error('usage: gitignore-child <projectDir>');
process.stdout.write(`${JSON.stringify(await ensureGitIgnored(projectDir))}\n`);
