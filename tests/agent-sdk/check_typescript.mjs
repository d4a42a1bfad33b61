// The TypeScript Claude Agent SDK (@anthropic-ai/claude-agent-sdk, pinned by
// scripts/agent-sdk-check.sh) drives the real fleet binary (`pathToClaudeCodeExecutable`; a
// path without a .js/.mjs/.ts ending is run directly, with no node in between) against the fake
// model server.
//
// The script copies this file next to its node_modules before running it, so the imports below
// resolve there. Each check runs in a fresh git repository with its own home, sends a prompt
// carrying its marker (see scenario.yaml), and asserts what an SDK user relies on.

import { query, tool, createSdkMcpServer } from '@anthropic-ai/claude-agent-sdk';
import { z } from 'zod';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const AGENT_SDK_CLI = process.env.AGENT_SDK_CLI;
const BASE_URL = process.env.FAKE_MODEL_URL;
const WORK = process.env.AGENT_SDK_WORK;
const REPOS = path.join(WORK, 'repos');
const CHECK_TIMEOUT_MS = Number(process.env.AGENT_SDK_CHECK_TIMEOUT ?? '30') * 1000;
const SCENARIO = JSON.parse(fs.readFileSync(path.join(WORK, 'scenario.json'), 'utf8'));
const SDK = 'sdk=typescript';

// --- helpers -----------------------------------------------------------------------------------

function ruleText(name) {
  const rule = SCENARIO.rules.find((r) => r.name === name);
  if (!rule) throw new Error(`scenario has no rule named ${name}`);
  return rule.respond.filter((b) => 'text' in b).map((b) => b.text).join('');
}

function expect(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}:\n  expected ${e}\n  actual   ${a}`);
}

function check(condition, what) {
  if (!condition) throw new Error(what);
}

async function requestsFor(...needles) {
  const log = await (await fetch(`${BASE_URL}/_fake/requests`)).json();
  return log.filter((r) => {
    const first = (r.body?.messages ?? []).find((m) => m.role === 'user');
    const text = first ? JSON.stringify(first.content) : '';
    return needles.every((n) => text.includes(n));
  });
}

/** The text of the last message of a request (its tool results, for a follow-up request). */
function lastMessageText(request) {
  const messages = request.body.messages;
  return JSON.stringify(messages[messages.length - 1].content);
}

function newRepo(name) {
  const repo = path.join(REPOS, name);
  fs.mkdirSync(repo, { recursive: true });
  fs.mkdirSync(path.join(WORK, 'homes', name), { recursive: true });
  fs.writeFileSync(path.join(repo, 'README.md'), `# ${name}\n`);
  const git = (...args) =>
    execFileSync('git', ['-c', 'user.name=agent-sdk-check', '-c', 'user.email=check@example.invalid', '-C', repo, ...args]);
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  git('add', '.');
  git('commit', '-q', '-m', 'start');
  return repo;
}

let stderrLines = [];
let stderrTail = '';

/** fleet's stderr arrives in chunks that need not end at a line's end. */
function collectStderr(chunk) {
  const lines = (stderrTail + String(chunk)).split('\n');
  stderrTail = lines.pop();
  stderrLines.push(...lines.filter((l) => l));
}
// Aborted when the current check times out, which stops its fleet.
let abortController = new AbortController();

function options(name, extra = {}) {
  const home = path.join(WORK, 'homes', name);
  return {
    pathToClaudeCodeExecutable: AGENT_SDK_CLI,
    cwd: path.join(REPOS, name),
    env: {
      ...process.env,
      ANTHROPIC_BASE_URL: BASE_URL,
      ANTHROPIC_API_KEY: 'sk-ant-agent-sdk-check-dummy',
      FLEET_PROVIDER: 'anthropic',
      HOME: home,
      FLEET_HOME: path.join(home, '.fleet'),
    },
    stderr: collectStderr,
    abortController,
    ...extra,
  };
}

/** A prompt stream the check feeds one message at a time, as a chat would. */
class Input {
  constructor() {
    this.queue = [];
    this.waiting = null;
    this.ended = false;
  }
  push(text) {
    this.queue.push({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, session_id: '' });
    this.wake();
  }
  end() {
    this.ended = true;
    this.wake();
  }
  wake() {
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve();
    }
  }
  async *[Symbol.asyncIterator]() {
    for (;;) {
      if (this.queue.length) yield this.queue.shift();
      else if (this.ended) return;
      else await new Promise((resolve) => (this.waiting = resolve));
    }
  }
}

let seenMessages = [];

/** Reads messages until `predicate` holds; every message is kept for the failure report. */
async function until(iterator, predicate, what) {
  for (;;) {
    const { value, done } = await iterator.next();
    if (done) throw new Error(`the stream ended before ${what}`);
    seenMessages.push(value);
    if (predicate(value)) return value;
  }
}

/** Drains a query to its end. An error result makes the SDK throw after yielding it; that is
 * the result's business, so the error is kept only when no result came. */
async function drain(iterator) {
  try {
    for (;;) {
      const { value, done } = await iterator.next();
      if (done) return;
      seenMessages.push(value);
    }
  } catch (e) {
    if (!seenMessages.some((m) => m.type === 'result')) throw e;
  }
}

/** One message in, everything out: the prompt stream ends after the first result. */
async function converse(prompt, opts) {
  const input = new Input();
  input.push(prompt);
  const q = query({ prompt: input, options: opts });
  const it = q[Symbol.asyncIterator]();
  const result = await until(it, (m) => m.type === 'result', 'the result');
  input.end();
  await drain(it);
  return result;
}

function expectSuccess(result, rule) {
  expect([result.subtype, result.is_error], ['success', false], 'result subtype, is_error');
  expect(result.result, ruleText(rule), 'result text');
}

/** Live processes working in `folder` (the check's own fleet and the commands it ran). */
function processesIn(folder) {
  const found = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = fs.readlinkSync(`/proc/${entry}/cwd`);
      const state = fs.readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ').pop().split(' ')[0];
      if (state === 'Z') continue;
      const name = fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
      if (cwd === folder || cwd.startsWith(folder + '/')) found.push({ pid: Number(entry), name });
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(predicate, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (predicate()) return true;
    await sleep(50);
  }
  return predicate();
}

// --- the checks --------------------------------------------------------------------------------

async function plainQuery(name) {
  newRepo(name);
  const q = query({ prompt: `[agent-sdk:plain] ${SDK} say hello`, options: options(name) });
  await drain(q[Symbol.asyncIterator]());
  const init = seenMessages.find((m) => m.type === 'system' && m.subtype === 'init');
  const result = seenMessages.find((m) => m.type === 'result');
  check(init, 'no system/init message');
  check(result, 'no result message');
  expectSuccess(result, 'plain');
  const text = seenMessages
    .filter((m) => m.type === 'assistant')
    .flatMap((m) => m.message.content)
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('');
  expect(text, ruleText('plain'), 'assistant text');
  check(result.session_id, 'result has no session_id');
  expect(result.session_id, init.session_id, 'result session_id = init session_id');
  expect([result.usage?.input_tokens, result.usage?.output_tokens], [120, 9], 'result usage (input, output)');
  expect((await requestsFor('[agent-sdk:plain]', SDK)).length, 1, 'model requests');
}

async function canUseToolAllowAndDeny(name) {
  const repo = newRepo(name);
  const asked = [];
  const canUseTool = async (toolName, input, { toolUseID }) => {
    asked.push([toolName, input.command, toolUseID]);
    if (String(input.command).includes('allowed.txt')) return { behavior: 'allow', updatedInput: input };
    return { behavior: 'deny', message: 'denied by the agent-sdk check' };
  };
  const result = await converse(
    `[agent-sdk:can-use-tool] ${SDK} make two files`,
    options(name, { canUseTool, permissionMode: 'default' }),
  );
  expect(
    asked.sort(),
    [
      ['Bash', 'touch allowed.txt', 'toolu_cut_allow'],
      ['Bash', 'touch denied.txt', 'toolu_cut_deny'],
    ],
    'canUseTool calls (tool, command, toolUseID)',
  );
  check(fs.existsSync(path.join(repo, 'allowed.txt')), 'allowed.txt was not created');
  check(!fs.existsSync(path.join(repo, 'denied.txt')), 'denied.txt was created');
  expectSuccess(result, 'can-use-tool-done');
  expect(
    (result.permission_denials ?? []).map((d) => [d.tool_name, d.tool_use_id]),
    [['Bash', 'toolu_cut_deny']],
    'permission_denials',
  );
  const requests = await requestsFor('[agent-sdk:can-use-tool]', SDK);
  const sent = lastMessageText(requests[requests.length - 1]);
  check(sent.includes('denied by the agent-sdk check'), `the deny message did not reach the model: ${sent}`);
}

async function preToolUseHookDeniesBash(name) {
  const repo = newRepo(name);
  const seen = [];
  const deny = async (input, toolUseID) => {
    seen.push([input.hook_event_name, input.tool_name, toolUseID]);
    return {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'blocked by the agent-sdk check hook',
      },
    };
  };
  const allowAll = async (_tool, input) => ({ behavior: 'allow', updatedInput: input });
  const result = await converse(
    `[agent-sdk:hook-pre] ${SDK} make a file`,
    options(name, { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [deny] }] }, canUseTool: allowAll }),
  );
  expect(seen, [['PreToolUse', 'Bash', 'toolu_hook_pre']], 'hook calls (event, tool, toolUseID)');
  check(!fs.existsSync(path.join(repo, 'hooked.txt')), 'hooked.txt was created despite the hook');
  expectSuccess(result, 'hook-pre-done');
  const requests = await requestsFor('[agent-sdk:hook-pre]', SDK);
  const sent = lastMessageText(requests[requests.length - 1]);
  check(sent.includes('blocked by the agent-sdk check hook'), `the hook's reason did not reach the model: ${sent}`);
}

async function interruptStopsARunningCommand(name) {
  const repo = newRepo(name);
  const sleeps = () => processesIn(repo).filter((p) => p.name === 'sleep');
  const input = new Input();
  input.push(`[agent-sdk:interrupt] ${SDK} run the long command`);
  const q = query({
    prompt: input,
    options: options(name, { allowedTools: ['Bash'] }),
  });
  const it = q[Symbol.asyncIterator]();
  await until(
    it,
    (m) => m.type === 'assistant' && m.message.content.some((b) => b.type === 'tool_use'),
    'the Bash call',
  );
  check(await waitFor(() => sleeps().length > 0, 10000), '`sleep 30` never started');
  const started = performance.now();
  await q.interrupt();
  const took = performance.now() - started;
  console.log(`    ${name}: interrupt acknowledged in ${took.toFixed(0)} ms`);
  check(took < 10000, `interrupt took ${(took / 1000).toFixed(1)} s to be acknowledged`);
  const interrupted = await until(it, (m) => m.type === 'result', 'the interrupted result');
  expect(interrupted.subtype, 'error_during_execution', 'result subtype after interrupt');
  check(await waitFor(() => sleeps().length === 0, 5000), `\`sleep 30\` still runs after the interrupt`);
  input.push('after the interrupt');
  const after = await until(it, (m) => m.type === 'result', 'the next result');
  input.end();
  await drain(it);
  expectSuccess(after, 'interrupt-after');
}

async function sdkMcpTool(name) {
  newRepo(name);
  const calls = [];
  const add = tool('add', 'Add two numbers', { a: z.number(), b: z.number() }, async (args) => {
    calls.push(args);
    return { content: [{ type: 'text', text: `SUM=${args.a + args.b}` }] };
  });
  const calc = createSdkMcpServer({ name: 'calc', version: '1.0.0', tools: [add] });
  const result = await converse(
    `[agent-sdk:mcp] ${SDK} add two and three`,
    options(name, { mcpServers: { calc }, allowedTools: ['mcp__calc__add'] }),
  );
  const init = seenMessages.find((m) => m.type === 'system' && m.subtype === 'init');
  check(init, 'no system/init message');
  check(init.tools?.includes('mcp__calc__add'), `system/init does not list mcp__calc__add: ${init.tools}`);
  expect(calls, [{ a: 2, b: 3 }], 'calls of the SDK tool');
  // mcp-done answers only a request whose tool result holds the tool's SUM=5.
  expectSuccess(result, 'mcp-done');
}

async function partialMessages(name) {
  newRepo(name);
  const result = await converse(`[agent-sdk:partial] ${SDK} stream it`, options(name, { includePartialMessages: true }));
  const events = seenMessages.filter((m) => m.type === 'stream_event').map((m) => m.event);
  const kinds = events.map((e) => e.type);
  check(kinds.length, 'no stream_event messages');
  expect([kinds[0], kinds[kinds.length - 1]], ['message_start', 'message_stop'], 'first and last event');
  for (const kind of ['content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta']) {
    check(kinds.includes(kind), `no ${kind} among ${kinds}`);
  }
  const deltas = events
    .filter((e) => e.type === 'content_block_delta' && e.delta.type === 'text_delta')
    .map((e) => e.delta.text);
  check(deltas.length > 1, `the text came in ${deltas.length} delta(s)`);
  expect(deltas.join(''), ruleText('partial'), 'text deltas joined');
  expectSuccess(result, 'partial');
}

// --- the runner --------------------------------------------------------------------------------

const CHECKS = [
  ['plain', plainQuery],
  ['can-use-tool', canUseToolAllowAndDeny],
  ['hook-pre', preToolUseHookDeniesBash],
  ['interrupt', interruptStopsARunningCommand],
  ['mcp', sdkMcpTool],
  ['partial', partialMessages],
];

function withTimeout(promise, ms) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function report(error) {
  // The message and this file's frames; the SDK's and node's own frames say little to a reader.
  const lines = String(error?.stack ?? error)
    .split('\n')
    .filter((line) => !/^\s+at /.test(line) || line.includes('check_typescript.mjs'));
  for (const line of lines) console.log(`    ${line}`);
  console.log('    -- messages the SDK yielded (fleet> after its parsing), then fleet\'s stderr (err>):');
  for (const m of seenMessages.slice(-40)) {
    const text = JSON.stringify(m);
    console.log(`    fleet> ${text.length > 600 ? text.slice(0, 600) + '…' : text}`);
  }
  for (const line of [...stderrLines, stderrTail].filter((l) => l).slice(-40)) console.log(`    err> ${line}`);
}

// While debugging: AGENT_SDK_ONLY=agents,ts-mcp runs only those checks.
const only = (process.env.AGENT_SDK_ONLY ?? '').split(',').filter((n) => n);
let failed = 0;
for (const [short, fn] of CHECKS) {
  const name = `ts-${short}`;
  if (only.length && !only.includes(name) && !only.includes(short)) continue;
  seenMessages = [];
  stderrLines = [];
  stderrTail = '';
  abortController = new AbortController();
  const started = performance.now();
  let error = null;
  try {
    await withTimeout(fn(name), CHECK_TIMEOUT_MS);
  } catch (e) {
    error = e;
    abortController.abort();
  }
  const folder = path.join(REPOS, name);
  if (!(await waitFor(() => processesIn(folder).length === 0, 3000))) {
    const left = processesIn(folder);
    for (const { pid } of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    if (!error) error = new Error(`processes still running after the check: ${JSON.stringify(left)}`);
  }
  const took = ((performance.now() - started) / 1000).toFixed(1);
  if (!error) {
    console.log(`  ok   ${name} (${took} s)`);
    continue;
  }
  failed += 1;
  console.log(`  FAIL ${name} (${took} s)`);
  report(error);
}
process.exit(failed ? 1 : 0);
