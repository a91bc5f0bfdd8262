// Drives `ybs acp` with the official ACP TypeScript SDK as the client, as an editor would:
// a session, a prompt whose edit asks for permission (answered "allow once" here), a prompt
// cancelled while it streams, and the same session loaded again by a second process.
// Prints one JSON object with what the client saw; the Rust test that runs this script checks
// it together with the files and the requests the fake model received.
//
// Environment: ACP_E2E_YBS (a JSON array: the ybs program and its arguments before `acp`),
// ACP_E2E_PROJECT (the project directory).

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const command = JSON.parse(process.env.ACP_E2E_YBS);
const cwd = process.env.ACP_E2E_PROJECT;
const LIMIT_MS = 20000;

function connect() {
  const child = spawn(command[0], [...command.slice(1), "acp"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  return { child, stream };
}

function within(promise, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${LIMIT_MS} ms`)), LIMIT_MS);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function until(check, what) {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > LIMIT_MS) throw new Error(`no ${what} within ${LIMIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function client(seen) {
  return acp
    .client({ name: "ybs-e2e" })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      seen.permissions.push({
        toolCallId: params.toolCall.toolCallId,
        title: params.toolCall.title,
        kind: params.toolCall.kind,
        content: params.toolCall.content,
        options: params.options.map((option) => [option.optionId, option.kind]),
      });
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      seen.updates.push(params.update);
    });
}

const initialize = {
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  clientInfo: { name: "ybs-e2e", version: "1" },
};

async function firstProcess(report) {
  const seen = { permissions: [], updates: [] };
  const { child, stream } = connect();
  await client(seen).connectWith(stream, async (ctx) => {
    const init = await within(ctx.request(acp.methods.agent.initialize, initialize), "initialize");
    report.initialize = init;
    const session = await within(
      ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] }),
      "session/new",
    );
    report.session = session;
    const sessionId = session.sessionId;
    const edit = await within(
      ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "change hello to goodbye in a.txt" }],
      }),
      "the edit's prompt response",
    );
    report.edit = { response: edit, permissions: seen.permissions, updates: seen.updates.slice() };
    seen.updates.length = 0;
    const slow = ctx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "tell a long story" }],
    });
    await until(
      () => seen.updates.some((update) => update.sessionUpdate === "agent_message_chunk"),
      "first chunk of the slow reply",
    );
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
    const cancelled = await within(slow, "the cancelled prompt's response");
    report.cancel = { response: cancelled, updates: seen.updates.slice() };
  });
  child.stdin.end();
  report.firstExit = await new Promise((resolve) => child.on("exit", (code) => resolve(code)));
}

async function secondProcess(report) {
  const seen = { permissions: [], updates: [] };
  const { child, stream } = connect();
  await client(seen).connectWith(stream, async (ctx) => {
    await within(ctx.request(acp.methods.agent.initialize, initialize), "initialize");
    const loaded = await within(
      ctx.request(acp.methods.agent.session.load, {
        sessionId: report.session.sessionId,
        cwd,
        mcpServers: [],
      }),
      "session/load",
    );
    report.load = { response: loaded, updates: seen.updates.slice() };
    try {
      await ctx.request(acp.methods.agent.session.load, {
        sessionId: "../../etc/passwd",
        cwd,
        mcpServers: [],
      });
      report.badLoad = "accepted";
    } catch (error) {
      report.badLoad = String(error.message ?? error);
    }
  });
  child.stdin.end();
  report.secondExit = await new Promise((resolve) => child.on("exit", (code) => resolve(code)));
}

const report = {};
try {
  await firstProcess(report);
  await secondProcess(report);
} catch (error) {
  report.error = String(error.stack ?? error);
}
process.stdout.write(JSON.stringify(report) + "\n");
process.exit(report.error ? 1 : 0);
