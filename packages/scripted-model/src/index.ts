export {
  startScriptedModel,
  type ModelApi,
  type RecordedRequest,
  type ScriptedModelOptions,
  type ScriptedModelServer,
} from './server.js';
export {
  DEFAULT_TURN_USAGE,
  resultFileOf,
  workdirOf,
  type ScriptedAction,
  type ScriptedCall,
  type ScriptedFault,
  type TurnUsage,
} from './script.js';
export {
  CLAUDE_OFFLINE_ENV,
  CODEX_SCRIPTED_MODEL,
  GEMINI_SCRIPTED_MODEL,
  OPENCODE_OFFLINE_ENV,
  OPENCODE_SCRIPTED_MODEL,
  PINNED_CLI_VERSIONS,
  SCRIPTED_API_KEY,
  claudeEnvFor,
  codexEnvFor,
  geminiEnvFor,
  locateRealCli,
  opencodeEnvFor,
  type RealCli,
  type RealCliEnvOptions,
  type RealCliName,
} from './real-clis.js';
export {
  RECORDINGS,
  RECORDINGS_DIR,
  eventKind,
  keyPaths,
  parseJsonLines,
  readRecording,
  shapeDrift,
  type RecordingName,
} from './recordings.js';
