"""One `query()` of the Claude Agent SDK, timed, with cli_path set to each
CLI given: the same hello task against the same loopback mock model.

Usage: agent_sdk.py RUNS WORK URL NAME=CLI [NAME=CLI ...]
Prints, per CLI, the min and median wall time of a whole query() (spawn,
handshake, the model's two calls, the write, the result, exit).
"""

import asyncio
import os
import statistics
import sys
import tempfile
import time

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query


async def once(cli, work, url, home):
    env = {
        "HOME": home, "COX_HOME": os.path.join(home, ".cox"),
        "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1",
    }
    options = ClaudeAgentOptions(
        cli_path=cli, cwd=work, env=env, permission_mode="acceptEdits",
    )
    started = time.perf_counter()
    result = None
    async for message in query(prompt="create hello.txt containing hi", options=options):
        if isinstance(message, ResultMessage):
            result = message
    took = time.perf_counter() - started
    if result is None or result.is_error:
        raise SystemExit(f"{cli}: no good result: {result}")
    return took


async def main(runs, work, url, *clis):
    for named in clis:
        name, cli = named.split("=", 1)
        home = tempfile.mkdtemp()
        await once(cli, work, url, home)  # warm-up, not counted
        times = [await once(cli, work, url, home) for _ in range(int(runs))]
        print(
            f"{name}: query() min {min(times) * 1000:.0f} ms, "
            f"median {statistics.median(times) * 1000:.0f} ms over {runs} runs"
        )


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
