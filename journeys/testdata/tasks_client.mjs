// The official TypeScript SDK's client uses the in-core tasks of MCP
// 2025-11-25 against a wield server (TestJourneyMCPTasksTS): node
// tasks_client.mjs SDK_DIR URL prints what it saw, as one JSON line.
const [sdk, url] = process.argv.slice(2);
const { Client } = await import(`file://${sdk}/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`file://${sdk}/dist/esm/client/streamableHttp.js`);

const client = new Client({ name: 'ts-tasks', version: '1' }, { capabilities: { tasks: { list: {}, cancel: {} } } });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const out = { caps: client.getServerCapabilities()?.tasks };
const tools = await client.listTools();
out.execution = tools.tools.find((t) => t.name === 'nap')?.execution;
out.stream = [];
for await (const m of client.experimental.tasks.callToolStream({ name: 'nap', arguments: { duration: 1 } })) {
  if (m.type === 'result') out.stream.push({ type: m.type, text: m.result.content?.[0]?.text });
  else if (m.type === 'error') out.stream.push({ type: m.type, error: String(m.error) });
  else out.stream.push({ type: m.type, status: m.task?.status, taskId: m.task?.taskId });
}
out.listed = (await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
let long;
for await (const m of client.experimental.tasks.callToolStream({ name: 'nap', arguments: { duration: 60 } })) {
  if (m.type === 'taskCreated') {
    long = m.task.taskId;
    break;
  }
}
out.canceled = (await client.experimental.tasks.cancelTask(long)).status;
out.after = (await client.experimental.tasks.getTask(long)).status;
out.long = long;
console.log(JSON.stringify(out));
await client.close();
