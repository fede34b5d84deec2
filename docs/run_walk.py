# The path of one `skillhost run` through host/src, measured on a debug
# build (docs/architecture.md says how to run it and what it gave):
#
#   WALK_SRC=$PWD/host/src WALK_OUT=walk.txt gdb -q -batch -x docs/run_walk.py \
#       --args target/debug/skillhost run "Write an email to the team" --skill email-writer
#
# It writes every call into a function of exec/mod.rs from another file
# (an async fn counts at its call, not at each poll), and the stack at the
# moment `Sandbox::call` starts, as the files it passes through.
import gdb, os, re

SRC = os.environ["WALK_SRC"]  # .../host/src
entries = []
last_pc = None
stack_at_call = []

def host_file(frame):
    try:
        sal = frame.find_sal()
    except Exception:
        return None
    if sal is None or sal.symtab is None:
        return None
    f = sal.symtab.fullname()
    return os.path.relpath(f, SRC) if f.startswith(SRC) else None

def caller_file(frame):
    f = frame.older()
    while f is not None:
        h = host_file(f)
        if h is not None:
            return h, f.name()
        f = f.older()
    return None, None

def fn_lines(rel):
    out = []
    for i, line in enumerate(open(os.path.join(SRC, rel)), 1):
        if re.match(r"\s*(pub(\([a-z]+\))? )?(async )?fn \w+", line) and "#[test]" not in line:
            out.append((i, line.strip()))
    return out

class Entry(gdb.Breakpoint):
    def __init__(self, spec, label):
        super().__init__(spec, internal=True)
        self.label = label
    def stop(self):
        here = gdb.newest_frame()
        # An async fn's body is entered again on every poll; its call is
        # the constructor's frame.
        if "{async_fn#0}" in (here.name() or ""):
            return False
        # Two breakpoints may resolve to one place (a line without code
        # moves to the next function): one call, counted once.
        global last_pc
        if here.pc() == last_pc:
            return False
        last_pc = here.pc()
        cf, cname = caller_file(here)
        if cf is not None and cf != "exec/mod.rs":
            entries.append((str(here.name()), cf, cname))
        return False

class AtCall(gdb.Breakpoint):
    def stop(self):
        f = gdb.newest_frame()
        files = []
        while f is not None:
            h = host_file(f)
            if h is not None:
                files.append((h, f.name()))
            f = f.older()
        stack_at_call.append(list(reversed(files)))
        return False

for line, text in fn_lines("exec/mod.rs"):
    Entry(f"{SRC}/exec/mod.rs:{line}", text)
for line, text in fn_lines("sandbox/mod.rs"):
    if "pub async fn call(" in text:
        AtCall(f"{SRC}/sandbox/mod.rs:{line}", internal=True)

gdb.execute("run")
out = os.environ.get("WALK_OUT", "/tmp/walk.txt")
with open(out, "w") as o:
    o.write("entries into exec/mod.rs from other files:\n")
    for label, cf, cname in entries:
        o.write(f"  {label}  <- {cf} ({cname})\n")
    for stack in stack_at_call[:1]:
        stays = []
        for h, name in stack:
            if not stays or stays[-1][0] != h:
                stays.append((h, name))
        o.write(f"stays from main to the sandbox call ({len(stays)}):\n")
        for h, name in stays:
            o.write(f"  {h}  {name}\n")
