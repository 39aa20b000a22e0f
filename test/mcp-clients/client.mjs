// One scenario of the official TypeScript SDK client against zen, chosen by
// the environment (see clients_test.go, which runs it and checks both what
// this prints and what the fake model saw):
//
//   ZEN_TRANSPORT  http | stdio
//   ZEN_URL        the MCP endpoint (http)
//   ZEN_BIN        the zen binary, run as `zen stdio` (stdio); ZEN_CHILD_ENV
//                  is its environment as JSON
//   ZEN_ERA        modern (2026-07-28, stateless) | legacy (2025-11-25)
//   ZEN_SCENARIO   basic | slow | cancel | timeout
//
// It prints one JSON object on stdout and exits 0; the checks live in Go.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const env = process.env;
const workdir = env.ZEN_WORKDIR;

function transport() {
    if (env.ZEN_TRANSPORT === 'http') {
        return new StreamableHTTPClientTransport(new URL(env.ZEN_URL));
    }
    return new StdioClientTransport({ command: env.ZEN_BIN, args: ['stdio'], env: JSON.parse(env.ZEN_CHILD_ENV), cwd: workdir, stderr: 'ignore' });
}

function errorOf(e) {
    return { name: e?.constructor?.name, code: e?.code, message: String(e?.message ?? e) };
}

async function connect() {
    const versionNegotiation = env.ZEN_ERA === 'modern' ? { mode: { pin: '2026-07-28' } } : { mode: 'legacy' };
    const client = new Client({ name: 'zen-ts-e2e', version: '1.0.0' }, { versionNegotiation });
    await client.connect(transport());
    return client;
}

const chat = (prompt, extra = {}) => ({ name: 'chat', arguments: { prompt, working_directory_absolute_path: workdir, model: 'llama3.2', ...extra } });

async function basic(client, out) {
    out.tools = (await client.listTools()).tools.map(t => t.name);
    const first = await client.callTool(chat('hello from typescript'));
    out.first = { isError: first.isError ?? false, structured: first.structuredContent, text: first.content?.[0]?.text };
    const id = first.structuredContent?.continuation_offer?.continuation_id;
    const second = await client.callTool(chat('and again', { continuation_id: id }));
    out.second = { isError: second.isError ?? false, structured: second.structuredContent };
    try {
        await client.callTool({ name: 'no_such_tool', arguments: {} });
        out.unknownTool = { error: null };
    } catch (e) {
        out.unknownTool = errorOf(e);
    }
    const bad = await client.callTool({ name: 'chat', arguments: { prompt: 'x', working_directory_absolute_path: 'relative/dir' } }).catch(e => ({ thrown: errorOf(e) }));
    out.badPath = { isError: bad.isError ?? false, thrown: bad.thrown, text: bad.content?.[0]?.text };
    const resources = await client.listResources();
    out.resources = resources.resources.map(r => r.uri);
}

// The long calls users hit timeouts with: thinkdeep's expert analysis and
// a consensus consultation.
const slowCalls = {
    thinkdeep: { name: 'thinkdeep', arguments: { step: 'take your time', step_number: 1, total_steps: 1, next_step_required: false, findings: 'a hunch', model: 'llama3.2' } },
    consensus: {
        name: 'consensus',
        arguments: {
            step: 'take your time', step_number: 1, total_steps: 2, next_step_required: true, findings: 'a hunch',
            models: [{ model: 'llama3.2', stance: 'for' }, { model: 'llama3.2', stance: 'against' }],
        },
    },
};

// slow: a call longer than the SDK's 60 s default request timeout, which
// only succeeds because each progress notification resets the timer.
async function slow(client, out) {
    let progress = 0;
    const started = Date.now();
    const res = await client.callTool(slowCalls[env.ZEN_SLOW_TOOL] ?? chat('take your time'), {
        onprogress: () => { progress++; },
        resetTimeoutOnProgress: true,
    });
    out.elapsedMs = Date.now() - started;
    out.progress = progress;
    out.result = { isError: res.isError ?? false, structured: res.structuredContent };
}

// timeout: the same slow call with a short timeout and no progress handler
// fails: proof that slow's success is progress, not a lenient client.
async function timeout(client, out) {
    try {
        await client.callTool(chat('take your time'), { timeout: Number(env.ZEN_TIMEOUT_MS) });
        out.error = null;
    } catch (e) {
        out.error = errorOf(e);
    }
}

// cancel: abort the call half a second after zen first reports progress
// (by then the model request is under way); the Go side checks the fake saw
// its request dropped and nothing was stored.
async function cancel(client, out) {
    const abort = new AbortController();
    let progress = 0;
    try {
        await client.callTool(chat('never mind'), {
            signal: abort.signal,
            onprogress: () => {
                if (progress++ === 0) {
                    setTimeout(() => { out.abortedAt = Date.now(); abort.abort('changed my mind'); }, 500);
                }
            },
        });
        out.error = null;
    } catch (e) {
        out.error = errorOf(e);
    }
    out.progress = progress;
}

const scenarios = { basic, slow, timeout, cancel };
const out = { scenario: env.ZEN_SCENARIO };
const client = await connect();
out.era = client.getProtocolEra();
out.protocolVersion = client.getNegotiatedProtocolVersion();
out.instructions = client.getInstructions();
out.server = client.getServerVersion();
try {
    await scenarios[env.ZEN_SCENARIO](client, out);
} catch (e) {
    out.failure = errorOf(e);
}
await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
