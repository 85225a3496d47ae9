/**
 * @allium-loop/agents/testing — fakes for other packages' tests.
 */
export { FakeAgentRunner, type FakeAgentResponse, type FakeAgentScript } from './fake-agent-runner.js';
