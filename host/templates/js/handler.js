// The `{{name}}` skill handler (JavaScript, built with componentize-js).
//
// The WIT export `handle: func(task) -> result<output, failure>` is this
// exported function: returning a value is `ok`, throwing is `err`.

export function handle(task) {
  const request = task.description.trim();
  if (request === "") {
    throw { class: "InvalidInput", message: "the task is empty: say what to do" };
  }
  const context = JSON.parse(task.contextJson || "{}") || {};
  const given = typeof context.name === "string" ? context.name.trim() : "";
  const name = given === "" ? "world" : given;
  return { body: `Hello, ${name}! You asked: ${request}`, contentType: "text/plain", flags: [] };
}
