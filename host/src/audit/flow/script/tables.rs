//! What the calls of each language do: the tables the token flow reads
//! (fetches, secret sources, decoders, runners, sends, file writes).

use super::super::Lang;

/// What the calls of a language do, by the last one or two parts of the
/// callee (`requests.get`, `urlopen`); `=name` is the bare name only.
pub(super) struct Table {
    pub fetch: &'static [&'static str],
    pub secret: &'static [&'static str],
    /// Calls that decode data (base64, hex, compression, char codes).
    pub decode: &'static [&'static str],
    pub exec: &'static [&'static str],
    pub send: &'static [&'static str],
    /// Calls writing a file: the callee, the path argument, the data
    /// argument (`None`: what the call fetches).
    pub writes: &'static [(&'static str, usize, Option<usize>)],
}

const PYTHON: Table = Table {
    fetch: &[
        "urlopen",
        "urlretrieve",
        "requests.get",
        "requests.post",
        "requests.request",
        "httpx.get",
        "httpx.post",
        "httpx.stream",
        "recv",
        "recvfrom",
        "wget.download",
        "session.get",
        "client.get",
        // DNS answers (dnspython): TXT records can stage code.
        "resolver.resolve",
        "resolver.query",
    ],
    // The clipboard holds what was just copied: passwords, keys, seeds.
    secret: &["pyperclip.paste", "clipboard.paste", "clipboard_get"],
    decode: &[
        "b64decode",
        "b32decode",
        "b85decode",
        "a85decode",
        "urlsafe_b64decode",
        "decodebytes",
        "zlib.decompress",
        "gzip.decompress",
        "bz2.decompress",
        "lzma.decompress",
        "fromhex",
        "unhexlify",
        "codecs.decode",
    ],
    exec: &[
        "=exec",
        "=eval",
        "=compile",
        "os.system",
        "os.popen",
        "subprocess.run",
        "subprocess.call",
        "subprocess.Popen",
        "subprocess.check_output",
        "subprocess.check_call",
        "subprocess.getoutput",
        "pickle.loads",
        "marshal.loads",
        "os.startfile",
        "os.execv",
        "os.execvp",
        "runpy.run_path",
        "=__import__",
        "pty.spawn",
        // Native code loaded runs its constructors.
        "=CDLL",
        "ctypes.CDLL",
        "=PyDLL",
        "=WinDLL",
        "=OleDLL",
        "LoadLibrary",
        "importlib.import_module",
        "spec_from_file_location",
        // A file or folder put on the import path is code the next
        // import runs (a zip is importable as it is).
        "path.insert",
        "path.append",
        "site.addsitedir",
        "zipimporter",
    ],
    send: &[
        "requests.post",
        "requests.put",
        "requests.get",
        "requests.request",
        "requests.patch",
        "httpx.post",
        "httpx.put",
        "httpx.get",
        "urlopen",
        "Request",
        "send",
        "sendall",
        "sendto",
        "sendmail",
        "send_message",
        "post",
        "conn.request",
    ],
    writes: &[("urlretrieve", 1, None), ("copyfileobj", 1, Some(0))],
};

const JAVASCRIPT: Table = Table {
    fetch: &[
        "=fetch",
        "http.get",
        "https.get",
        "http.request",
        "https.request",
        "axios.get",
        "=axios",
        "=got",
        "got.get",
        "request.get",
        "net.connect",
        "net.createConnection",
        "tls.connect",
        // DNS answers: TXT records can stage code.
        "resolveTxt",
        "resolveAny",
    ],
    secret: &[
        "clipboardy.read",
        "clipboardy.readSync",
        "clipboard.readText",
    ],
    decode: &[
        "fromCharCode",
        "=atob",
        "inflateSync",
        "gunzipSync",
        "brotliDecompressSync",
    ],
    exec: &[
        "=eval",
        "=Function",
        "child_process.exec",
        "cp.exec",
        "=exec",
        "execSync",
        "=execFile",
        "execFileSync",
        "=spawn",
        "spawnSync",
        "child_process.spawn",
        "runInThisContext",
        "runInNewContext",
        "runInContext",
        "vm.Script",
        "=require",
        "=import",
        "process.dlopen",
    ],
    send: &[
        "=fetch",
        "http.request",
        "https.request",
        "axios.post",
        "axios.put",
        "=axios",
        "got.post",
        "request.post",
        "req.write",
        "request.write",
        "socket.write",
        "client.write",
        "sock.write",
        "send",
        "sendBeacon",
        "post",
    ],
    writes: &[
        ("writeFileSync", 0, Some(1)),
        ("writeFile", 0, Some(1)),
        ("appendFileSync", 0, Some(1)),
    ],
};

const POWERSHELL: Table = Table {
    fetch: &[
        "invoke-webrequest",
        "iwr",
        "invoke-restmethod",
        "irm",
        "downloadstring",
        "downloaddata",
        "downloadfile",
        "start-bitstransfer",
        "curl",
        "wget",
        "openread",
        // Clients whose output is what a remote host answers: DNS
        // records (TXT staging), finger, a remote shell.
        // .NET's HttpClient, reached from PowerShell.
        "getbytearrayasync",
        "getstringasync",
        "getstreamasync",
        "resolve-dnsname",
        "nslookup",
        "finger",
        "ssh",
    ],
    secret: &["getenvironmentvariables", "get-clipboard"],
    decode: &["frombase64string"],
    exec: &[
        "iex",
        "invoke-expression",
        "scriptblock.create",
        // `$ExecutionContext.InvokeCommand.InvokeScript($code)`.
        "invokescript",
        "newscriptblock",
        "invoke-command",
        "start-process",
        "invoke-item",
        "add-type",
        "loadfile",
        "loadfrom",
        // `[Reflection.Assembly]::Load($bytes)`: a .NET program from bytes.
        "assembly.load",
        "start-job",
        "saps",
        "start",
        // Interpreters and loaders handed a file: it runs (not `cmd`,
        // whose `/c` line names its own program).
        "powershell",
        "pwsh",
        "wscript",
        "cscript",
        "mshta",
        "msiexec",
        "rundll32",
        "regsvr32",
    ],
    send: &[
        "invoke-restmethod",
        "irm",
        "invoke-webrequest",
        "iwr",
        "uploadstring",
        "uploadfile",
        "uploaddata",
        "uploadvalues",
        "send-mailmessage",
        "send",
    ],
    writes: &[
        ("downloadfile", 1, None),
        ("writeallbytes", 0, Some(1)),
        ("writealltext", 0, Some(1)),
    ],
};

/// Methods that add their arguments to the container they are called on.
pub(super) const ADDS: &[&str] = &[
    "push",
    "append",
    "extend",
    "insert",
    "unshift",
    "add",
    "appendleft",
];

/// Perl scripts and one-liners: LWP and sockets fetch; `eval`, `system`,
/// `exec` run.
const PERL: Table = Table {
    fetch: &["=get", "getstore", "mirror", "recv", "=readline"],
    secret: &[],
    decode: &["decode_base64", "=pack", "uncompress", "memGunzip"],
    exec: &["=eval", "=system", "=exec"],
    send: &["=post", "=put", "=send", "=request"],
    writes: &[("getstore", 1, None), ("mirror", 1, None)],
};

/// Ruby scripts and one-liners: open-uri and Net::HTTP fetch; `eval`,
/// `system`, `load` run.
const RUBY: Table = Table {
    fetch: &[
        "URI.open",
        "HTTP.get",
        "HTTP.get_response",
        "Faraday.get",
        "RestClient.get",
        "HTTParty.get",
        "recv",
    ],
    secret: &[],
    decode: &[
        "decode64",
        "strict_decode64",
        "urlsafe_decode64",
        "Zlib.inflate",
        "=unpack1",
    ],
    exec: &[
        "=eval",
        "instance_eval",
        "class_eval",
        "=system",
        "=exec",
        "=spawn",
        "=load",
    ],
    send: &[
        "HTTP.post",
        "HTTP.post_form",
        "Faraday.post",
        "RestClient.post",
        "HTTParty.post",
        "send",
        "write",
    ],
    writes: &[
        ("File.write", 0, Some(1)),
        ("File.binwrite", 0, Some(1)),
        ("IO.write", 0, Some(1)),
        ("IO.binwrite", 0, Some(1)),
    ],
};

/// PHP: streams and cURL fetch; `eval`, the shell functions, `include`
/// of a file run.
const PHP: Table = Table {
    fetch: &["file_get_contents", "curl_exec", "fsockopen"],
    secret: &["=getenv"],
    decode: &[
        "base64_decode",
        "gzinflate",
        "gzuncompress",
        "gzdecode",
        "str_rot13",
        "hex2bin",
        "convert_uudecode",
        "strrev",
    ],
    exec: &[
        "=eval",
        "=system",
        "=exec",
        "=shell_exec",
        "=passthru",
        "=popen",
        "=proc_open",
        "=pcntl_exec",
        "=assert",
        "=create_function",
        "=include",
        "=include_once",
        "=require",
        "=require_once",
    ],
    send: &["=mail", "curl_exec", "=socket_write", "=socket_sendto"],
    writes: &[("file_put_contents", 0, Some(1))],
};

/// Go: net/http fetches; os/exec and syscall run.
const GO: Table = Table {
    fetch: &[
        "http.Get",
        "http.Head",
        "client.Get",
        "client.Do",
        "net.Dial",
    ],
    secret: &["os.Environ", "clipboard.ReadAll"],
    decode: &[
        "DecodeString",
        "hex.DecodeString",
        "gzip.NewReader",
        "zlib.NewReader",
    ],
    exec: &[
        "exec.Command",
        "exec.CommandContext",
        "syscall.Exec",
        "os.StartProcess",
        "plugin.Open",
    ],
    send: &[
        "http.Post",
        "http.PostForm",
        "client.Post",
        "client.Do",
        "http.NewRequest",
        "conn.Write",
    ],
    writes: &[
        ("os.WriteFile", 0, Some(1)),
        ("ioutil.WriteFile", 0, Some(1)),
    ],
};

/// Lua: LuaSocket's http fetches; `os.execute`, `io.popen` and the
/// loaders run.
const LUA: Table = Table {
    fetch: &["http.request", "=request", "receive"],
    secret: &["os.getenv"],
    decode: &["unb64", "=dec", "mime.unb64"],
    exec: &[
        "os.execute",
        "io.popen",
        "=loadstring",
        "=load",
        "=dofile",
        "=loadfile",
        "=require",
    ],
    send: &["http.request", "=request", "send"],
    writes: &[],
};

pub(super) fn table(lang: Lang) -> &'static Table {
    match lang {
        Lang::Php => &PHP,
        Lang::Go => &GO,
        Lang::Lua => &LUA,
        Lang::Python => &PYTHON,
        Lang::Perl => &PERL,
        Lang::Ruby => &RUBY,
        Lang::JavaScript => &JAVASCRIPT,
        _ => &POWERSHELL,
    }
}
