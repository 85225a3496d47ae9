/** The project probe: what entry detection needs to know about the working directory. */
export { classifyPath, SKIPPED_DIRECTORIES, type PathRole } from './classify-path.js';
export { globToRegExp } from './glob-to-regexp.js';
export { ProbeError } from './probe-error.js';
export {
  DEFAULT_SPEC_GLOBS,
  findSpecFiles,
  probeProject,
  type ProbeOptions,
  type ProjectProbe,
  type ProjectWalk,
  walkProject,
} from './probe-project.js';
export { systemPath } from './system-path.js';
