"""The official MCP Python SDK as the client of `ybs mcp-server`, as another agent would use
it: list the tools, run a task (against the fake model the test started), continue the
session, and call with bad arguments. Prints one JSON object with what the client saw; the
Rust test that runs this script checks it together with the files and the model's requests.

Environment: MCP_E2E_YBS (a JSON array: the ybs program and its arguments before
`mcp-server`), MCP_E2E_PROJECT (the project directory).
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def seen(result):
    return {
        "text": [block.text for block in result.content if block.type == "text"],
        "structured": result.structured_content,
        "is_error": bool(result.is_error),
    }


async def main():
    command = json.loads(os.environ["MCP_E2E_YBS"])
    project = os.environ["MCP_E2E_PROJECT"]
    server = StdioServerParameters(
        command=command[0],
        args=command[1:] + ["mcp-server"],
        env=dict(os.environ),
        cwd=project,
    )
    report = {"progress": []}

    async def progress(value, total, message):
        report["progress"].append(message)

    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            report["tools"] = {tool.name: tool.input_schema for tool in tools.tools}
            run = await session.call_tool(
                "run_task",
                {"prompt": "create notes.txt", "cwd": project, "approval": "auto"},
                progress_callback=progress,
            )
            report["run"] = seen(run)
            session_id = (run.structured_content or {}).get("session_id")
            again = await session.call_tool(
                "continue_session",
                {"session_id": session_id, "prompt": "now delete nothing, just say done"},
            )
            report["continue"] = seen(again)
            refused = await session.call_tool(
                "run_task", {"prompt": "write x", "cwd": project}
            )
            report["refused"] = seen(refused)
            bad = await session.call_tool("run_task", {"prompt": "x", "approval": "ask"})
            report["bad"] = seen(bad)
    print(json.dumps(report))


if __name__ == "__main__":
    try:
        asyncio.run(asyncio.wait_for(main(), 60))
    except Exception as error:  # the report says what failed
        print(json.dumps({"error": repr(error)}))
        sys.exit(1)
