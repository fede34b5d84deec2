//! Commands that copy, pack and unpack files: what a copy, an archive or
//! an unpacked folder holds.

use super::super::super::paths;
use super::super::{Run, Value};
use super::{Opts, Span};
use crate::audit::flow::Taint;

impl Run<'_, '_> {
    /// `cp SRC… DEST`: DEST (and DEST/name of each source) holds what the
    /// sources held.
    pub(super) fn copy(&mut self, args: &[Value], span: Span) -> Taint {
        let opts = Opts::parse(
            args,
            "mogtS",
            &["mode", "owner", "group", "target-directory", "suffix"],
        );
        let mut ops: Vec<&Value> = opts.operands().collect();
        let target = opts.values(&["-t", "--target-directory"]).next();
        let dest = match target {
            Some(t) => t,
            None => match ops.pop() {
                Some(d) => d,
                None => return Taint::default(),
            },
        };
        for src in ops {
            let t = src.taint.union(self.secret_file(&src.text, span.0));
            self.me.write_file(&dest.text, t);
            let inside = format!("{}/{}", dest.text, paths::basename(&src.text));
            self.me.write_file(&inside, t);
        }
        Taint::default()
    }

    /// Unpacking a tainted archive taints what comes out; packing files
    /// taints the archive.
    pub(super) fn archive(&mut self, prog: &str, args: &[Value], span: Span) -> Taint {
        // `tar xzf F`: the old form's first word is a cluster of flags.
        let args: Vec<Value> = args
            .iter()
            .enumerate()
            .map(|(i, a)| match a.text.chars().next() {
                Some(c) if i == 0 && prog.ends_with("tar") && c != '-' => Value {
                    text: format!("-{}", a.text),
                    taint: a.taint,
                },
                _ => a.clone(),
            })
            .collect();
        let opts = Opts::parse(&args, "fCdo", &["file", "directory"]);
        let ops: Vec<&Value> = opts.operands().collect();
        let creating = match prog {
            "zip" => true,
            "7z" | "7za" => ops.first().is_some_and(|o| o.text == "a"),
            "tar" | "bsdtar" => {
                args.first().is_some_and(|a| {
                    let flags = a.text.trim_start_matches('-');
                    !a.text.starts_with("--") && flags.contains('c') && !flags.contains('x')
                }) || opts.has(&["--create"])
            }
            _ => false,
        };
        if creating {
            return self.pack(prog, &opts, span);
        }
        let archive = opts
            .values(&["-f", "--file"])
            .next()
            .or_else(|| ops.iter().copied().find(|o| o.text != "x" && o.text != "e"));
        let taint = archive.map_or(Taint::default(), |a| self.file_arg(a, Taint::default()));
        let from_stdin = archive.is_none() || archive.is_some_and(|a| a.text == "-");
        let taint = if from_stdin {
            taint.union(self.piped_in)
        } else {
            taint
        };
        if taint.is_clean() {
            return Taint::default();
        }
        let dest = opts.values(&["-C", "--directory", "-d", "-o"]).next();
        match dest {
            Some(d) => self.me.taint_dir(d.text.trim_start_matches("-o"), taint),
            None => self.me.extracted_here = self.me.extracted_here.union(taint),
        }
        if let Some(stem) = archive.and_then(|a| paths::archive_stem(&a.text)) {
            let stem = dest.map_or(stem.to_owned(), |d| format!("{}/{stem}", d.text));
            self.me.taint_dir(&stem, taint);
        }
        if matches!(prog, "gunzip" | "bunzip2" | "unxz")
            && let Some(a) = archive
        {
            let out = a.text.rsplit_once('.').map_or(a.text.as_str(), |(s, _)| s);
            self.me.write_file(out, taint);
        }
        taint
    }

    pub(super) fn pack(&mut self, prog: &str, opts: &Opts, span: Span) -> Taint {
        let mut ops = opts.operands().filter(|o| o.text != "a");
        let out = match prog {
            "tar" | "bsdtar" => opts.values(&["-f", "--file"]).next(),
            _ => ops.next(),
        };
        // A folder packed holds what was written inside it.
        let t = ops.fold(Taint::default(), |t, m| {
            t.union(self.secret_file(&m.text, span.0))
                .union(self.me.files_under(&paths::normalize(&m.text)))
        });
        match out {
            Some(o) if o.text != "-" => {
                self.me.write_file(&o.text, t);
                Taint::default()
            }
            _ => t,
        }
    }
}
