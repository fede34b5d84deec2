"""The `{{name}}` skill handler (Python, built with componentize-py).

componentize-py generates the `wit_world` bindings from wit/ at build time:
the WIT export `handle` is a method of `WitWorld`; returning an `Output` is
`ok`, raising `Err(Failure(...))` is `err`.
"""

import json

import wit_world
from componentize_py_types import Err
from wit_world.imports.types import Failure, Output, Task


class WitWorld(wit_world.WitWorld):
    def handle(self, task: Task) -> Output:
        request = task.description.strip()
        if not request:
            raise Err(Failure(class_="InvalidInput", message="the task is empty: say what to do"))
        context = json.loads(task.context_json or "{}") or {}
        given = context.get("name")
        name = given.strip() if isinstance(given, str) and given.strip() else "world"
        return Output(body=f"Hello, {name}! You asked: {request}", content_type="text/plain", flags=[])
