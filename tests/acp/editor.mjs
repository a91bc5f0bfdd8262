// Drives `ybs acp` with the official ACP TypeScript SDK as an editor that offers its files
// (`fs/read_text_file`, `fs/write_text_file`) and holds an unsaved buffer of a.txt: ybs reads
// and edits that buffer, the first write asks for permission (answered "always" with the
// narrowest rule, so the second one does not ask), then plan mode proposes a plan and
// leaving it carries the plan out. The buffer is never saved here: the disk keeps its text.
// Prints one JSON object with what the client saw; the Rust test checks it.
//
// Environment: ACP_E2E_YBS (a JSON array: the ybs program and its arguments before `acp`),
// ACP_E2E_PROJECT (the project directory).

import { spawn } from "node:child_process";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const command = JSON.parse(process.env.ACP_E2E_YBS);
const cwd = process.env.ACP_E2E_PROJECT;
const LIMIT_MS = 20000;

function within(promise, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${LIMIT_MS} ms`)), LIMIT_MS);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const report = { permissions: [], reads: [], writes: [], phases: {} };
// The editor's buffers: a.txt has unsaved changes.
const buffers = new Map([[path.join(cwd, "a.txt"), "unsaved hello\n"]]);
let updates = [];

const child = spawn(command[0], [...command.slice(1), "acp"], {
  stdio: ["pipe", "pipe", "inherit"],
});
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const editor = acp
  .client({ name: "ybs-e2e-editor" })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    report.permissions.push({
      toolCallId: params.toolCall.toolCallId,
      content: params.toolCall.content,
      options: params.options.map((option) => [option.optionId, option.kind, option.name]),
    });
    return { outcome: { outcome: "selected", optionId: "always:0" } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
    report.reads.push(params.path);
    const text = buffers.get(params.path);
    if (text === undefined) throw new Error(`no buffer of ${params.path}`);
    return { content: text };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
    report.writes.push([params.path, params.content]);
    buffers.set(params.path, params.content);
    return {};
  })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
  });

async function prompt(ctx, sessionId, text, phase) {
  updates = [];
  const response = await within(
    ctx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text }],
    }),
    `the response to "${text}"`,
  );
  report.phases[phase] = { response, updates };
}

try {
  await editor.connectWith(stream, async (ctx) => {
    await within(
      ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
        clientInfo: { name: "ybs-e2e-editor", version: "1" },
      }),
      "initialize",
    );
    const session = await within(
      ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] }),
      "session/new",
    );
    report.modes = session.modes;
    const sessionId = session.sessionId;
    await prompt(ctx, sessionId, "edit a.txt, then write it twice", "edits");
    await within(
      ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: "plan" }),
      "set_mode plan",
    );
    await prompt(ctx, sessionId, "plan the tests", "plan");
    await within(
      ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: "auto-edit" }),
      "set_mode auto-edit",
    );
    await prompt(ctx, sessionId, "go ahead", "carry");
    try {
      await ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: "yolo" });
      report.badMode = "accepted";
    } catch (error) {
      report.badMode = String(error.message ?? error);
    }
  });
} catch (error) {
  report.error = String(error.stack ?? error);
}
child.stdin.end();
report.exit = await new Promise((resolve) => child.on("exit", (code) => resolve(code)));
report.buffers = Object.fromEntries(buffers);
process.stdout.write(JSON.stringify(report) + "\n");
process.exit(report.error ? 1 : 0);
